"""Single-step recurrent cells, as ``torch.nn``: ``RNNCell``, ``LSTMCell``, ``GRUCell`` over
``RNNCellBase`` (parameters ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``). A step
is the recurrent op of ``lucid.ops.rnn`` over one time step (``lucid.ops.rnn_functional``)."""

from __future__ import annotations

import math
from typing import Any

from ... import ops
from ..._tensor import Tensor
from ...ops.rnn_functional import cell_step
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


class RNNCellBase(Module):
    """The parameters of a cell with ``num_chunks`` gate blocks: ``weight_ih``
    (num_chunks * hidden, input), ``weight_hh`` (num_chunks * hidden, hidden) and, with
    ``bias``, ``bias_ih`` / ``bias_hh``; all from U(-1/sqrt(hidden), 1/sqrt(hidden)).

    Example::

        cell = nn.LSTMCell(10, 20)
        cell.weight_ih.shape          # lucid.Size([80, 10])
    """

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(ops.empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(ops.empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(ops.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(ops.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nl = self.__dict__.get("nonlinearity", "tanh")
        if nl != "tanh":
            s += f", nonlinearity={nl}"
        return s

    def reset_parameters(self) -> None:
        """Re-draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

        Example::

            cell.reset_parameters()
        """
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _step(self, mode: str, input: Tensor, hx: Tensor, cx: Tensor | None) -> Any:
        """One step: the (B, H) state, or (state, cell) for LSTM."""
        return cell_step(mode, input, hx, cx, self.weight_ih, self.weight_hh, self.bias_ih,
                         self.bias_hh)

    def _zeros(self, input: Tensor) -> Tensor:
        return ops.zeros((input.shape[0], self.hidden_size), dtype=input.dtype,
                         device=input.device)


def _check_dims(name: str, input: Tensor, hx: Tensor | None) -> bool:
    if input.dim() not in (1, 2):
        raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
    if hx is not None and hx.dim() not in (1, 2):
        raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
    return input.dim() == 2


class RNNCell(RNNCellBase):
    """One Elman step, ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (act = tanh or relu),
    as ``torch.nn.RNNCell``.

    Example::

        cell = nn.RNNCell(10, 20)
        h = cell(lucid.randn(3, 10))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """The next hidden state (zeros stand for a missing ``hx``).

        Example::

            h = cell(x, h)
        """
        batched = _check_dims("RNNCell", input, hx)
        if not batched:
            input = input.unsqueeze(0)
        hx = self._zeros(input) if hx is None else (hx if batched else hx.unsqueeze(0))
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        out = self._step(mode, input, hx, None)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step, as ``torch.nn.LSTMCell``; returns ``(h', c')``.

    Example::

        cell = nn.LSTMCell(10, 20)
        h, c = cell(lucid.randn(3, 10))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, Tensor]:
        """The next ``(h, c)`` (zeros stand for a missing ``hx``).

        Example::

            h, c = cell(x, (h, c))
        """
        if input.dim() not in (1, 2):
            raise ValueError(
                f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            h0 = c0 = self._zeros(input)
        else:
            h0, c0 = (hx[0], hx[1]) if batched else (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = self._step("LSTM", input, h0, c0)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step, as ``torch.nn.GRUCell``.

    Example::

        cell = nn.GRUCell(10, 20)
        h = cell(lucid.randn(3, 10))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """The next hidden state (zeros stand for a missing ``hx``).

        Example::

            h = cell(x, h)
        """
        batched = _check_dims("GRUCell", input, hx)
        if not batched:
            input = input.unsqueeze(0)
        hx = self._zeros(input) if hx is None else (hx if batched else hx.unsqueeze(0))
        out = self._step("GRU", input, hx, None)
        return out if batched else out.squeeze(0)
