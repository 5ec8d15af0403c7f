"""Recurrent layers, as ``torch.nn``: ``RNN`` (tanh / relu), ``LSTM`` (with ``proj_size``) and
``GRU`` over ``RNNBase``; the single-step cells live in ``rnn_cell`` and are re-exported here.

Parameter names, shapes, order and initialisation are torch's, so a torch ``state_dict`` loads
as it is. Each layer and direction runs as one op (``lucid.ops.rnn``): one GEMM projects every
time step's input, then the time loop runs the hidden-to-hidden GEMM and fused gate math.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

from ... import ops
from ..._tensor import Tensor
from ...ops.rnn_functional import group_params, pack_rows, packed_rows, run_layers
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module
from .rnn_cell import GRUCell, LSTMCell, RNNCell, RNNCellBase

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_LABEL = {"LSTM": "LSTM", "GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}


def _same_dtype(x: Tensor, h: Tensor) -> None:
    if h.dtype != x.dtype:
        raise RuntimeError("Input and hidden tensors are not the same dtype, found input tensor "
                           f"with {x.dtype} and hidden tensor with {h.dtype}")


class RNNBase(Module):
    """The shared body of ``RNN``, ``LSTM`` and ``GRU`` (``mode`` is "RNN_TANH", "RNN_RELU",
    "LSTM" or "GRU"), with torch's constructor checks and parameter layout: per layer and
    direction ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}``
    (``bias``), ``weight_hr_l{k}`` (``proj_size``), with ``_reverse`` for the second direction.

    Example::

        lstm = nn.LSTM(10, 20, num_layers=2, batch_first=True)
        out, (h, c) = lstm(lucid.randn(4, 7, 10))
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(
                f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        dirs = 2 if bidirectional else 1
        gate = _GATES[mode] * hidden_size
        real = proj_size if proj_size > 0 else hidden_size
        kw = {"device": device, "dtype": dtype}
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(dirs):
                layer_in = input_size if layer == 0 else real * dirs
                sfx = "_reverse" if direction == 1 else ""
                params = [(f"weight_ih_l{layer}{sfx}", (gate, layer_in)),
                          (f"weight_hh_l{layer}{sfx}", (gate, real))]
                if bias:
                    params += [(f"bias_ih_l{layer}{sfx}", (gate,)),
                               (f"bias_hh_l{layer}{sfx}", (gate,))]
                if proj_size > 0:
                    params.append((f"weight_hr_l{layer}{sfx}", (proj_size, hidden_size)))
                for name, shape in params:
                    setattr(self, name, Parameter(ops.empty(shape, **kw)))
                self._flat_weights_names.extend(n for n, _ in params)
                self._all_weights.append([n for n, _ in params])
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list[Tensor | None]:
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters per layer and direction, in torch's order.

        Example::

            w_ih, w_hh, b_ih, b_hh = nn.GRU(3, 4).all_weights[0]
        """
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op kept for torch compatibility (cuDNN's weight packing).

        Example::

            lstm.flatten_parameters()
        """

    def reset_parameters(self) -> None:
        """Re-draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

        Example::

            gru.reset_parameters()
        """
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---- argument checks (torch's messages) ---------------------------------------------------
    def check_input(self, input: Tensor, batch_sizes: Any) -> None:
        """Raise torch's errors for a wrong input dtype, rank or feature size."""
        w = self._flat_weights[0]
        if w is not None and input.dtype != w.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). "
                f"Convert input: input.to({w.dtype}), or convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Any) -> tuple[int, int, int]:
        """``(num_layers * num_directions, batch, proj_size or hidden_size)``."""
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.shape[0] if self.batch_first else input.shape[1]
        dirs = 2 if self.bidirectional else 1
        real = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * dirs, mini_batch, real)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        """Raise torch's error when ``hx`` does not have the expected shape."""
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(tuple(expected_hidden_size), list(hx.shape)))

    # ---- the shared forward -------------------------------------------------------------------
    def _prepare(self, input: Any, hx: Any) -> tuple:
        """(time-major input, hx as a tuple, batch sizes or None, sorted, unsorted, batched)."""
        lstm = self.mode == "LSTM"
        if isinstance(input, PackedSequence):
            data, bs_t, sorted_idx, unsorted_idx = input
            bs = np.asarray(bs_t.tolist(), dtype=np.int64)
            self.check_input(data, bs)
            x = packed_rows(data, bs)
            if hx is not None and sorted_idx is not None:
                hx = tuple(h.index_select(1, sorted_idx) for h in hx) if lstm else \
                    hx.index_select(1, sorted_idx)
            return x, hx, bs, sorted_idx, unsorted_idx, True
        if input.dim() not in (2, 3):
            tail = "tensor instead" if self.mode.startswith("RNN") else "instead"
            raise ValueError(f"{_LABEL[self.mode]}: Expected input to be 2D or 3D, got "
                             f"{input.dim()}D {tail}")
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        if hx is not None:
            if lstm:
                want = 3 if batched else 2
                if hx[0].dim() != want or hx[1].dim() != want:
                    kind = "batched 3-D" if batched else "unbatched 2-D"
                    raise RuntimeError(
                        f"For {kind} input, hx and cx should also be {want}-D but got "
                        f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                if not batched:
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            elif batched and hx.dim() != 3:
                raise RuntimeError(
                    f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            elif not batched:
                if hx.dim() != 2:
                    raise RuntimeError("For unbatched 2-D input, hx should also be 2-D but got "
                                       f"{hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
        self.check_input(input, None)
        x = input.transpose(0, 1) if self.batch_first else input
        return x, hx, None, None, None, batched

    def _run(self, input: Any, hx: Any) -> tuple[Any, Any]:
        lstm = self.mode == "LSTM"
        x, hx, bs, sorted_idx, unsorted_idx, batched = self._prepare(input, hx)
        packed = bs is not None
        t_len, b_len = x.shape[0], x.shape[1]
        if t_len == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        dirs = 2 if self.bidirectional else 1
        real = self.proj_size if self.proj_size > 0 else self.hidden_size
        hsize = (self.num_layers * dirs, b_len, real)
        if hx is None:
            h0 = ops.zeros(hsize, dtype=x.dtype, device=x.device)
            c0 = (ops.zeros((hsize[0], b_len, self.hidden_size), dtype=x.dtype, device=x.device)
                  if lstm else None)
        else:
            h0, c0 = hx if lstm else (hx, None)
            if lstm:
                self.check_hidden_size(h0, hsize, "Expected hidden[0] size {}, got {}")
                self.check_hidden_size(c0, (hsize[0], b_len, self.hidden_size),
                                       "Expected hidden[1] size {}, got {}")
            else:
                self.check_hidden_size(h0, hsize)
            for h in (h0, c0) if lstm else (h0,):
                _same_dtype(x, h)
        inp, h_n, c_n = run_layers(self.mode, x, h0, c0,
                                   group_params(self._flat_weights, self.bias, self.proj_size > 0),
                                   self.num_layers, self.dropout, self.training,
                                   self.bidirectional, bs)
        if packed:
            out: Any = PackedSequence(pack_rows(inp, bs), input.batch_sizes, sorted_idx,
                                      unsorted_idx)
            if unsorted_idx is not None:
                h_n = h_n.index_select(1, unsorted_idx)
                c_n = c_n.index_select(1, unsorted_idx) if lstm else None
        else:
            out = inp.transpose(0, 1) if self.batch_first else inp
            if not batched:
                out = out.squeeze(0 if self.batch_first else 1)
                h_n = h_n.squeeze(1)
                c_n = c_n.squeeze(1) if lstm else None
        return out, ((h_n, c_n) if lstm else h_n)

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:
        """Run the layers over ``input`` (a tensor or a ``PackedSequence``) from ``hx``
        (zeros when None); returns ``(output, h_n)`` (LSTM: ``(output, (h_n, c_n))``).

        Example::

            out, h = nn.GRU(3, 5)(lucid.randn(7, 2, 3))
        """
        return self._run(input, hx)


class RNN(RNNBase):
    """Elman RNN, ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` with act = tanh or
    relu (``nonlinearity``), as ``torch.nn.RNN``.

    Example::

        rnn = nn.RNN(10, 20, num_layers=2, nonlinearity="relu")
        out, h_n = rnn(lucid.randn(5, 3, 10))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory, as ``torch.nn.LSTM`` (gates i, f, g, o; ``proj_size`` > 0
    projects each hidden state through ``weight_hr``).

    Example::

        lstm = nn.LSTM(10, 20, proj_size=5)
        out, (h_n, c_n) = lstm(lucid.randn(5, 3, 10))   # h_n (1, 3, 5), c_n (1, 3, 20)
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit, as ``torch.nn.GRU`` (gates r, z, n with
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``).

    Example::

        gru = nn.GRU(10, 20, bidirectional=True)
        out, h_n = gru(lucid.randn(5, 3, 10))           # out (5, 3, 40)
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)
