"""Convolution layers: ``Conv1d``, ``Conv2d``, ``Conv3d``, ``ConvTranspose1d``,
``ConvTranspose2d``, ``ConvTranspose3d``."""

from __future__ import annotations

import math
from typing import Any

from ... import ops
from ..._tensor import Tensor
from ...kernels._geometry import conv_transpose_output_size, same_padding
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]


def _ntuple(v: Any, n: int) -> tuple:
    if isinstance(v, (tuple, list)):
        return tuple(v)
    return (v,) * n


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode",
                     "output_padding", "in_channels", "out_channels", "kernel_size"]
    _n = 2
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
                 output_padding: Any = 0) -> None:
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_modes:
            raise ValueError(f"padding_mode must be one of {valid_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string '{padding}', should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        if self.transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(ops.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(ops.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default initialisation: kaiming_uniform_(a=sqrt(5)) and a uniform bias.

        Example::

            conv.reset_parameters()
        """
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        """PyTorch's text: channels, kernel_size, stride and only non-default options.

        Example::

            nn.Conv2d(1, 16, 3).extra_repr()   # "1, 16, kernel_size=(3, 3), stride=(1, 1)"
        """
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        n = self._n
        if self.padding != (0,) * n:
            s += ", padding={padding}"
        if self.dilation != (1,) * n:
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * n:
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def _padded(self, input: Tensor) -> tuple[Tensor, Any]:
        if self.padding_mode == "zeros":
            return input, self.padding
        if isinstance(self.padding, str):
            if self.padding == "valid":
                return input, 0
            pads = []
            for k, d in reversed(list(zip(self.kernel_size, self.dilation))):
                pads += list(same_padding(k, d))
        else:
            pads = []
            for p in reversed(self.padding):
                pads += [p, p]
        return F.pad(input, pads, mode=self.padding_mode), 0


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L) inputs, as ``torch.nn.Conv1d``.

    Example::

        nn.Conv1d(4, 8, 3, padding=1)(lucid.randn(2, 4, 10)).shape   # (2, 8, 10)
    """

    _n = 1

    def forward(self, input: Tensor) -> Tensor:
        """Convolve ``input``.

        Example::

            conv(lucid.randn(2, 4, 10))
        """
        x, pad = self._padded(input)
        return F.conv1d(x, self.weight, self.bias, self.stride, pad, self.dilation, self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W) inputs, as ``torch.nn.Conv2d``.

    Example::

        nn.Conv2d(1, 16, 3, padding=1)(lucid.randn(8, 1, 28, 28)).shape   # (8, 16, 28, 28)
    """

    _n = 2

    def forward(self, input: Tensor) -> Tensor:
        """Convolve ``input``.

        Example::

            conv(lucid.randn(8, 1, 28, 28))
        """
        x, pad = self._padded(input)
        return F.conv2d(x, self.weight, self.bias, self.stride, pad, self.dilation, self.groups)


class _ConvTransposeNd(_ConvNd):
    """The transposed convolutions' options and ``output_size`` handling."""

    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple:
        n = self._n
        if output_size is None:
            return self.output_padding
        size = tuple(output_size)[-n:]
        return tuple(
            s - conv_transpose_output_size(i, k, st, p, d, 0)
            for s, i, st, p, d, k in zip(size, input.shape[-n:], self.stride, self.padding,
                                         self.dilation, self.kernel_size))


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution over (N, C, L) or (C, L), as ``torch.nn.ConvTranspose1d``.

    Example::

        nn.ConvTranspose1d(16, 8, 2, stride=2)(lucid.randn(1, 16, 7)).shape     # (1, 8, 14)
    """

    _n = 1

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        """Apply the transposed convolution (``output_size`` picks the output padding).

        Example::

            up(lucid.randn(1, 16, 7))
        """
        op = self._output_padding(input, output_size)
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding, op,
                                  self.groups, self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution, as ``torch.nn.ConvTranspose2d``.

    Example::

        nn.ConvTranspose2d(16, 8, 2, stride=2)(lucid.randn(1, 16, 7, 7)).shape  # (1, 8, 14, 14)
    """

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        """Apply the transposed convolution.

        Example::

            up(lucid.randn(1, 16, 7, 7))
        """
        op = self._output_padding(input, output_size)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, op,
                                  self.groups, self.dilation)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W) inputs, as ``torch.nn.Conv3d`` (computed as one
    2-D convolution over the depth taps; see ``F.conv3d``).

    Example::

        nn.Conv3d(1, 8, 3, padding=1)(lucid.randn(2, 1, 8, 16, 16)).shape   # (2, 8, 8, 16, 16)
    """

    _n = 3

    def forward(self, input: Tensor) -> Tensor:
        """Convolve ``input``.

        Example::

            conv(lucid.randn(2, 1, 8, 16, 16))
        """
        x, pad = self._padded(input)
        return F.conv3d(x, self.weight, self.bias, self.stride, pad, self.dilation, self.groups)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution, as ``torch.nn.ConvTranspose3d``.

    Example::

        nn.ConvTranspose3d(8, 4, 2, stride=2)(lucid.randn(1, 8, 4, 4, 4)).shape  # (1, 4, 8, 8, 8)
    """

    _n = 3

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        """Apply the transposed convolution (``output_size`` picks the output padding).

        Example::

            up(lucid.randn(1, 8, 4, 4, 4))
        """
        op = self._output_padding(input, output_size)
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding, op,
                                  self.groups, self.dilation)
