"""The lazy convolutions beyond lazy.py's ``LazyConv1d`` / ``LazyConv2d``: ``LazyConv3d`` and
``LazyConvTranspose1d`` / ``2d`` / ``3d``, as torch's: ``in_channels`` comes from the first
input, then the module becomes its regular class."""

from __future__ import annotations

from typing import Any

from .conv import Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .lazy import _LazyConv, _LazyConvMixin

__all__ = ["LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]


class LazyConv3d(_LazyConv, Conv3d):
    """A ``Conv3d`` whose ``in_channels`` is taken from the first input.

    Example::

        conv = nn.LazyConv3d(8, 3, padding=1)
        conv(lucid.randn(2, 4, 6, 6, 6)).shape     # lucid.Size([2, 8, 6, 6, 6])
    """

    cls_to_become = Conv3d
    _n = 3


class _LazyConvTranspose(_LazyConvMixin):
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding,  # type: ignore[call-arg]
                         output_padding, groups, False, dilation, padding_mode, device=device,
                         dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ``ConvTranspose1d`` whose ``in_channels`` is taken from the first input.

    Example::

        up = nn.LazyConvTranspose1d(4, 2, stride=2)
        up(lucid.randn(1, 8, 5)).shape             # lucid.Size([1, 4, 10])
    """

    cls_to_become = ConvTranspose1d
    _n = 1


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ``ConvTranspose2d`` whose ``in_channels`` is taken from the first input.

    Example::

        up = nn.LazyConvTranspose2d(4, 2, stride=2)
        up(lucid.randn(1, 8, 5, 5)).shape          # lucid.Size([1, 4, 10, 10])
    """

    cls_to_become = ConvTranspose2d
    _n = 2


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ``ConvTranspose3d`` whose ``in_channels`` is taken from the first input.

    Example::

        up = nn.LazyConvTranspose3d(4, 2, stride=2)
        up(lucid.randn(1, 8, 3, 3, 3)).shape       # lucid.Size([1, 4, 6, 6, 6])
    """

    cls_to_become = ConvTranspose3d
    _n = 3
