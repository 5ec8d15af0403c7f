"""Fractional max pooling layers, as ``torch.nn``: ``FractionalMaxPool2d`` and
``FractionalMaxPool3d`` (windows at pseudo-random positions, drawn on every call unless
``_random_samples`` fixes them; that buffer is registered as torch registers it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._tensor import Tensor
from .. import functional as F
from ..module import Module

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d"]


def _ntuple(v: Any, n: int) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _FractionalMaxPoolNd(Module):
    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]
    _n = 2
    _fn: Callable[..., Any]

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        super().__init__()
        n = self._n
        self.kernel_size = _ntuple(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, "
                             "or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        """Pool ``input`` (with the indices of the maxima when ``return_indices``).

        Example::

            nn.FractionalMaxPool2d(3, output_ratio=0.5)(lucid.randn(1, 3, 12, 12))
        """
        return self._fn(input, self.kernel_size, self.output_size, self.output_ratio,
                        self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling, as ``torch.nn.FractionalMaxPool2d``.

    Example::

        nn.FractionalMaxPool2d(3, output_size=(13, 12))(lucid.randn(2, 4, 50, 32)).shape
    """

    _n = 2
    _fn = staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling, as ``torch.nn.FractionalMaxPool3d``.

    Example::

        nn.FractionalMaxPool3d(2, output_ratio=0.5)(lucid.randn(1, 2, 8, 8, 8)).shape
    """

    _n = 3
    _fn = staticmethod(F.fractional_max_pool3d)

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        if (isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size)):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        super().__init__(kernel_size, output_size, output_ratio, return_indices,
                         _random_samples)
