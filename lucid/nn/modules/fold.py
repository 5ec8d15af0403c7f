"""``Fold`` and ``Unfold``: sliding blocks to columns and back (col2im / im2col)."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from .. import functional as F
from ..module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sum (N, C * prod(kernel_size), L) columns back into (N, C, *output_size) images.

    Example::

        nn.Fold(output_size=(4, 5), kernel_size=2)(lucid.randn(1, 12, 12)).shape  # [1, 3, 4, 5]
    """

    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        """Fold the columns.

        Example::

            fold(cols)
        """
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        """The text inside this module's repr.

        Example::

            nn.Fold((4, 5), 2).extra_repr()
        """
        return ("output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, "
                "padding={padding}, stride={stride}").format(**self.__dict__)


class Unfold(Module):
    """Extract sliding blocks of (N, C, H, W) into (N, C * prod(kernel_size), L) columns.

    Example::

        nn.Unfold(kernel_size=2)(lucid.randn(1, 3, 4, 5)).shape     # lucid.Size([1, 12, 12])
    """

    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        """Unfold the blocks.

        Example::

            unfold(images)
        """
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        """The text inside this module's repr.

        Example::

            nn.Unfold(3, padding=1).extra_repr()
        """
        return ("kernel_size={kernel_size}, dilation={dilation}, padding={padding}, "
                "stride={stride}").format(**self.__dict__)
