"""torch's functional recurrent ops over a flat parameter list: ``lstm``, ``gru``, ``rnn_tanh``,
``rnn_relu`` (a padded sequence, or packed ``data`` + ``batch_sizes``) and the one-step
``lstm_cell``, ``gru_cell``, ``rnn_tanh_cell``, ``rnn_relu_cell``.

``params`` lists, per layer and direction (the reverse direction after the forward one),
``w_ih, w_hh`` then ``b_ih, b_hh`` (``has_biases``) then ``w_hr`` (LSTM with projections, seen
from ``hx[0]`` being narrower than ``hx[1]``): ``nn.LSTM(...)._flat_weights``'s order. Every
layer and direction runs as one ``lucid.ops.rnn`` recurrence, as ``nn.RNN`` / ``nn.LSTM`` /
``nn.GRU`` do (they run through ``run_layers`` here too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from . import movement as _mv
from .dropout import dropout as _dropout
from .matmul import linear
from .rnn import gather_rows, recurrence

__all__ = ["lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell",
           "rnn_relu_cell"]

Weights = tuple[Tensor, Tensor, Tensor | None, Tensor | None, Tensor | None]
_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


# ---- packed rows ------------------------------------------------------------------------------
def active_rows(batch_sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(t, b) of every packed row, in packed order."""
    width = int(batch_sizes[0]) if batch_sizes.size else 0
    return np.nonzero(np.arange(width)[None, :] < batch_sizes[:, None])


def packed_rows(data: Tensor, batch_sizes: np.ndarray) -> Tensor:
    """Packed ``data`` (N, *) as a time-major padded batch (T, B, *) in sorted order (zeros
    where a sequence has ended)."""
    t_len = batch_sizes.size
    if not t_len or batch_sizes.min() <= 0 or np.any(np.diff(batch_sizes) > 0) \
            or int(batch_sizes.sum()) != data.shape[0]:
        raise RuntimeError(
            f"PackedSequence: batch_sizes {batch_sizes.tolist()} must be positive and "
            f"non-increasing and sum to the {data.shape[0]} rows of data")
    b_len = int(batch_sizes[0])
    tt, bb = active_rows(batch_sizes)
    idx = np.full(t_len * b_len, -1, np.int64)
    idx[tt * b_len + bb] = np.arange(tt.size)
    return gather_rows(data, idx).reshape(t_len, b_len, *data.shape[1:])


def pack_rows(padded: Tensor, batch_sizes: np.ndarray) -> Tensor:
    """A time-major padded batch (T, B, *) in sorted order as packed data (N, *)."""
    b_len = padded.shape[1]
    tt, bb = active_rows(batch_sizes)
    return gather_rows(padded.reshape(-1, *padded.shape[2:]), tt * b_len + bb)


# ---- the layer stack --------------------------------------------------------------------------
def group_params(params: Sequence[Tensor], has_biases: bool, has_projections: bool = False
                 ) -> list[Weights]:
    """``params`` as one ``(w_ih, w_hh, b_ih, b_hh, w_hr)`` per layer and direction."""
    stride = (4 if has_biases else 2) + (1 if has_projections else 0)
    params = list(params)
    if len(params) % stride:
        raise RuntimeError("got an incorrect number of RNN parameters")
    out: list[Weights] = []
    for k in range(0, len(params), stride):
        w = params[k:k + stride]
        b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
        out.append((w[0], w[1], b_ih, b_hh, w[-1] if has_projections else None))
    return out


def run_layers(mode: str, x: Tensor, h0: Tensor, c0: Tensor | None, weights: Sequence[Weights],
               num_layers: int, dropout: float, train: bool, bidirectional: bool,
               batch_sizes: np.ndarray | None = None) -> tuple[Tensor, Tensor, Tensor | None]:
    """Run ``num_layers`` recurrent layers over time-major ``x`` (T, B, I) from ``h0``
    (L * D, B, P) (and, for "LSTM", ``c0`` (L * D, B, H)); ``batch_sizes`` lets only the first
    rows of a step advance (a packed batch). Dropout ``dropout`` falls on every layer's output
    but the last when ``train``. Returns ``(output (T, B, D * P), h_n, c_n or None)``."""
    t_len = x.shape[0]
    if t_len == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    lstm = mode == "LSTM"
    dirs = 2 if bidirectional else 1
    hn: list[Tensor] = []
    cn: list[Tensor] = []
    inp = x
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w_ih, w_hh, b_ih, b_hh, w_hr = weights[k]
            y = recurrence(linear(inp, w_ih, b_ih), h0[k], None if c0 is None else c0[k], w_hh,
                           b_hh, w_hr, mode, reverse=d == 1, batch_sizes=batch_sizes)
            last = 0 if d == 1 else t_len - 1
            if lstm:
                y, cs = y
                cn.append(cs[last])
            outs.append(y)
            hn.append(y[last])
        inp = _mv.cat(outs, 2) if dirs == 2 else outs[0]
        if dropout != 0 and train and layer < num_layers - 1:
            inp = _dropout(inp, dropout, True)
    return inp, _mv.stack(hn, 0), (_mv.stack(cn, 0) if lstm else None)


def _check_stack(hx: Tensor, weights: list[Weights], num_layers: int,
                 bidirectional: bool) -> None:
    if bidirectional and (len(weights) % 2 or hx.shape[0] % 2):
        raise RuntimeError("Odd number of params or hiddens given to a bidirectional RNN")
    dirs = 2 if bidirectional else 1
    if hx.shape[0] // dirs != num_layers:
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    if len(weights) // dirs != num_layers:
        raise RuntimeError("Expected more weights in stacked_rnn")


def _check_hidden(x: Tensor, h0: Tensor, c0: Tensor | None) -> None:
    for k, h in enumerate((h0,) if c0 is None else (h0, c0)):
        if h.shape[0] != h0.shape[0] or h.shape[1] != x.shape[1]:
            raise RuntimeError(f"Expected hidden[{k}] size {(h0.shape[0], x.shape[1], h.shape[2])}"
                               f", got {list(h.shape)}")
        if h.dtype != x.dtype:
            raise RuntimeError("Input and hidden tensors are not the same dtype, found input "
                               f"tensor with {x.dtype} and hidden tensor with {h.dtype}")


def check_weights(mode: str, weights: Weights, hidden: int, real: int, dtype: Any) -> None:
    """Raise for a weight of one layer and direction whose shape does not fit ``hidden``
    units with ``real``-wide states (``proj_size`` or ``hidden``), or whose dtype is not
    ``dtype``."""
    gates = _GATES[mode] * hidden
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    want = [("w_ih", w_ih, (gates, w_ih.shape[-1])), ("w_hh", w_hh, (gates, real)),
            ("b_ih", b_ih, (gates,)), ("b_hh", b_hh, (gates,)), ("w_hr", w_hr, (real, hidden))]
    for what, w, shape in want:
        if w is None:
            continue
        if tuple(w.shape) != shape:
            raise RuntimeError(f"{what} has shape {list(w.shape)}, expected {list(shape)} for "
                               f"{_GATES[mode]} gate block(s) of {hidden} units")
        if w.dtype != dtype:
            raise RuntimeError(f"{what} has dtype {w.dtype}, expected the input's {dtype}")


def _hidden(name: str, hx: Any) -> tuple[Tensor, Tensor | None]:
    if name != "lstm":
        return hx, None
    if isinstance(hx, Tensor) or len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    return hx[0], hx[1]


def _dims(what: str, t: Tensor, want: int) -> None:
    if t.dim() != want:
        err = IndexError if t.dim() < want else RuntimeError
        raise err(f"{what} must have {want} dimensions, got {t.dim()}")


def _batch_sizes(batch_sizes: Tensor) -> np.ndarray:
    if not isinstance(batch_sizes, Tensor):
        raise TypeError(f"batch_sizes must be a Tensor, not {type(batch_sizes).__name__}")
    if batch_sizes.dtype != _dtype.int64:
        raise RuntimeError(
            f"expected scalar type Long but found {_dtype.torch_name(batch_sizes.dtype)}")
    return np.asarray(batch_sizes.tolist(), dtype=np.int64).reshape(-1)


def _is_packed(name: str, args: tuple, kwargs: dict) -> bool:
    """Whether a call matches the packed overload (as torch's argument parser tells them apart
    by the types of the leading positional arguments)."""
    if "data" in kwargs or "batch_sizes" in kwargs:
        return True
    if "input" in kwargs or "batch_first" in kwargs:
        return False
    if name == "lstm":
        return len(args) > 1 and isinstance(args[1], Tensor)
    if len(args) > 2:
        return isinstance(args[2], Tensor)
    return len(args) == 2 and "hx" in kwargs


def _sequence(name: str, mode: str, args: tuple, kwargs: dict) -> Any:
    """Dispatch torch's two overloads: ``(input, hx, params, has_biases, num_layers, dropout,
    train, bidirectional, batch_first)`` and the packed ``(data, batch_sizes, hx, params,
    has_biases, num_layers, dropout, train, bidirectional)``."""
    padded = ("input", "hx", "params", "has_biases", "num_layers", "dropout", "train",
              "bidirectional", "batch_first")
    packed = ("data", "batch_sizes", "hx", "params", "has_biases", "num_layers", "dropout",
              "train", "bidirectional")
    names = packed if _is_packed(name, args, kwargs) else padded
    if len(args) > len(names):
        raise TypeError(f"{name}() takes {len(names)} positional arguments but {len(args)} "
                        "were given")
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
        if key in bound:
            raise TypeError(f"{name}() got multiple values for argument '{key}'")
        bound[key] = value
    missing = [n for n in names if n not in bound]
    if missing:
        raise TypeError(f"{name}() missing required arguments: {', '.join(missing)}")
    h0, c0 = _hidden(name, bound["hx"])
    _dims("hx[0]" if c0 is not None else "hx", h0, 3)
    if c0 is not None:
        _dims("hx[1]", c0, 3)
    has_proj = c0 is not None and h0.shape[-1] != c0.shape[-1]
    weights = group_params(bound["params"], bool(bound["has_biases"]), has_proj)
    num_layers, bidir = int(bound["num_layers"]), bool(bound["bidirectional"])
    dropout, train = float(bound["dropout"]), bool(bound["train"])
    _check_stack(h0, weights, num_layers, bidir)
    bs = None
    if "data" in bound:
        data = bound["data"]
        _dims("data", data, 2)
        bs = _batch_sizes(bound["batch_sizes"])
        x = packed_rows(data, bs)
    else:
        _dims("input", bound["input"], 3)
        batch_first = bool(bound["batch_first"])
        x = bound["input"].transpose(0, 1) if batch_first else bound["input"]
    _check_hidden(x, h0, c0)
    hidden = h0.shape[2] if c0 is None else c0.shape[2]
    for w in weights:
        check_weights(mode, w, hidden, h0.shape[2], x.dtype)
    y, hn, cn = run_layers(mode, x, h0, c0, weights, num_layers, dropout, train, bidir, bs)
    if bs is not None:
        out = pack_rows(y, bs)
    else:
        out = y.transpose(0, 1) if batch_first else y
    return (out, hn, cn) if name == "lstm" else (out, hn)


@overload
def lstm(input: Tensor, hx: Sequence[Tensor], params: Sequence[Tensor], has_biases: bool,
         num_layers: int, dropout: float, train: bool, bidirectional: bool,
         batch_first: bool) -> tuple[Tensor, Tensor, Tensor]: ...
@overload
def lstm(data: Tensor, batch_sizes: Tensor, hx: Sequence[Tensor], params: Sequence[Tensor],
         has_biases: bool, num_layers: int, dropout: float, train: bool,
         bidirectional: bool) -> tuple[Tensor, Tensor, Tensor]: ...


def lstm(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor, Tensor]:
    """A stack of LSTM layers over a flat parameter list, as ``torch.lstm``; returns
    ``(output, h_n, c_n)``. Two forms:

    ``lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first)`` with ``input`` (T, B, I) ((B, T, I) when ``batch_first``) and ``hx = (h_0,
    c_0)``, each (num_layers * num_directions, B, ·); or ``lstm(data, batch_sizes, hx, params,
    has_biases, num_layers, dropout, train, bidirectional)`` over packed rows (``data`` (N, I),
    ``batch_sizes`` an int64 tensor), whose output is packed the same way. ``h_0`` narrower than
    ``c_0`` means projections: each group of ``params`` then ends with ``w_hr``.

    Example::

        m = nn.LSTM(3, 5, num_layers=2)
        out, h, c = lucid.lstm(x, (h0, c0), m._flat_weights, True, 2, 0.0, False, False, False)
    """
    return _sequence("lstm", "LSTM", args, kwargs)


@overload
def gru(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool,
        num_layers: int, dropout: float, train: bool, bidirectional: bool,
        batch_first: bool) -> tuple[Tensor, Tensor]: ...
@overload
def gru(data: Tensor, batch_sizes: Tensor, hx: Tensor, params: Sequence[Tensor],
        has_biases: bool, num_layers: int, dropout: float, train: bool,
        bidirectional: bool) -> tuple[Tensor, Tensor]: ...


def gru(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """A stack of GRU layers over a flat parameter list, as ``torch.gru``; returns
    ``(output, h_n)``. ``gru(input, hx, params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first)`` or, over packed rows, ``gru(data, batch_sizes, hx, params,
    has_biases, num_layers, dropout, train, bidirectional)`` (see ``lstm``).

    Example::

        m = nn.GRU(3, 5, bidirectional=True)
        out, h = lucid.gru(x, h0, m._flat_weights, True, 1, 0.0, False, True, False)
    """
    return _sequence("gru", "GRU", args, kwargs)


@overload
def rnn_tanh(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool,
             num_layers: int, dropout: float, train: bool, bidirectional: bool,
             batch_first: bool) -> tuple[Tensor, Tensor]: ...
@overload
def rnn_tanh(data: Tensor, batch_sizes: Tensor, hx: Tensor, params: Sequence[Tensor],
             has_biases: bool, num_layers: int, dropout: float, train: bool,
             bidirectional: bool) -> tuple[Tensor, Tensor]: ...


def rnn_tanh(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """A stack of Elman layers with tanh over a flat parameter list, as ``torch.rnn_tanh``;
    returns ``(output, h_n)`` (the two argument forms of ``gru``).

    Example::

        m = nn.RNN(3, 5)
        out, h = lucid.rnn_tanh(x, h0, m._flat_weights, True, 1, 0.0, False, False, False)
    """
    return _sequence("rnn_tanh", "RNN_TANH", args, kwargs)


@overload
def rnn_relu(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool,
             num_layers: int, dropout: float, train: bool, bidirectional: bool,
             batch_first: bool) -> tuple[Tensor, Tensor]: ...
@overload
def rnn_relu(data: Tensor, batch_sizes: Tensor, hx: Tensor, params: Sequence[Tensor],
             has_biases: bool, num_layers: int, dropout: float, train: bool,
             bidirectional: bool) -> tuple[Tensor, Tensor]: ...


def rnn_relu(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """A stack of Elman layers with relu over a flat parameter list, as ``torch.rnn_relu``;
    returns ``(output, h_n)`` (the two argument forms of ``gru``).

    Example::

        m = nn.RNN(3, 5, nonlinearity="relu")
        out, h = lucid.rnn_relu(x, h0, m._flat_weights, True, 1, 0.0, False, False, False)
    """
    return _sequence("rnn_relu", "RNN_RELU", args, kwargs)


# ---- one step ---------------------------------------------------------------------------------
def cell_step(mode: str, input: Tensor, hx: Tensor, cx: Tensor | None, w_ih: Tensor,
              w_hh: Tensor, b_ih: Tensor | None, b_hh: Tensor | None) -> Any:
    """One recurrent step of a (B, I) ``input`` from (B, H) ``hx`` (and ``cx`` for "LSTM"),
    with torch's checks: the next state, or ``(h, c)`` for "LSTM"."""
    _dims("input", input, 2)
    if input.shape[1] != w_ih.shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                           f"expected {w_ih.shape[1]}")
    for k, h in enumerate((hx,) if cx is None else (hx, cx)):
        _dims(f"hidden{k}", h, 2)
        if input.shape[0] != h.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match "
                               f"hidden{k} batch size {h.shape[0]}")
        if h.shape[1] != w_hh.shape[1]:
            raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {h.shape[1]}, "
                               f"expected {w_hh.shape[1]}")
        if h.dtype != input.dtype:
            raise RuntimeError("Input and hidden tensors are not the same dtype, found input "
                               f"tensor with {input.dtype} and hidden tensor with {h.dtype}")
    check_weights(mode, (w_ih, w_hh, b_ih, b_hh, None), w_hh.shape[1], w_hh.shape[1],
                  input.dtype)
    gx = linear(input, w_ih, b_ih).unsqueeze(0)
    y = recurrence(gx, hx, cx, w_hh, b_hh, None, mode)
    return (y[0][0], y[1][0]) if mode == "LSTM" else y[0]


def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor,
              b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """One LSTM step, as ``torch.lstm_cell``: ``input`` (B, I), ``hx = (h, c)`` each (B, H),
    ``w_ih`` (4H, I), ``w_hh`` (4H, H); returns ``(h', c')``.

    Example::

        h, c = lucid.lstm_cell(x, (h, c), cell.weight_ih, cell.weight_hh, cell.bias_ih,
                               cell.bias_hh)
    """
    if isinstance(hx, Tensor) or len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    return cell_step("LSTM", input, hx[0], hx[1], w_ih, w_hh, b_ih, b_hh)


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None) -> Tensor:
    """One GRU step, as ``torch.gru_cell``: ``input`` (B, I), ``hx`` (B, H), ``w_ih`` (3H, I),
    ``w_hh`` (3H, H).

    Example::

        h = lucid.gru_cell(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
    """
    return cell_step("GRU", input, hx, None, w_ih, w_hh, b_ih, b_hh)


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One Elman step ``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``, as ``torch.rnn_tanh_cell``.

    Example::

        h = lucid.rnn_tanh_cell(x, h, cell.weight_ih, cell.weight_hh)
    """
    return cell_step("RNN_TANH", input, hx, None, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One Elman step ``relu(x W_ih^T + b_ih + h W_hh^T + b_hh)``, as ``torch.rnn_relu_cell``.

    Example::

        h = lucid.rnn_relu_cell(x, h, cell.weight_ih, cell.weight_hh)
    """
    return cell_step("RNN_RELU", input, hx, None, w_ih, w_hh, b_ih, b_hh)
