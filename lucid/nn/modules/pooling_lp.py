"""Power-average pooling layers, as ``torch.nn``: ``LPPool1d``, ``LPPool2d``, ``LPPool3d``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._tensor import Tensor
from .. import functional as F
from ..module import Module

__all__ = ["LPPool1d", "LPPool2d", "LPPool3d"]


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    _fn: Callable[..., Tensor]

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input``: ``(sum over the window of x ** p) ** (1 / p)``.

        Example::

            nn.LPPool2d(2, 3)(lucid.randn(1, 3, 9, 9))
        """
        return self._fn(input, float(self.norm_type), self.kernel_size, self.stride,
                        self.ceil_mode)

    def extra_repr(self) -> str:
        """PyTorch's text for the options.

        Example::

            nn.LPPool2d(2, 3).extra_repr()
        """
        return ("norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, "
                "ceil_mode={ceil_mode}").format(**self.__dict__)


class LPPool1d(_LPPoolNd):
    """1-D power-average pooling, as ``torch.nn.LPPool1d``.

    Example::

        nn.LPPool1d(2, 3, stride=2)(lucid.randn(2, 4, 11)).shape     # (2, 4, 5)
    """

    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """2-D power-average pooling, as ``torch.nn.LPPool2d``.

    Example::

        nn.LPPool2d(2, 3, stride=2)(lucid.randn(2, 4, 9, 9)).shape   # (2, 4, 4, 4)
    """

    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """3-D power-average pooling, as ``torch.nn.LPPool3d``.

    Example::

        nn.LPPool3d(2, 2)(lucid.randn(1, 2, 4, 4, 4)).shape          # (1, 2, 2, 2, 2)
    """

    _fn = staticmethod(F.lp_pool3d)
