"""The ``*_with_indices`` forms of the max pools, as ``torch.nn.functional``: each returns
``(output, indices)`` whatever ``return_indices`` says (torch's ``boolean_dispatch``
targets), over the pools of ``pool.py`` and ``pool3d.py``."""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from .pool import adaptive_max_pool1d, adaptive_max_pool2d, max_pool1d, max_pool2d
from .pool3d import adaptive_max_pool3d, max_pool3d

__all__ = ["max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices"]


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool1d`` that always returns ``(output, indices)``.

    Example::

        y, idx = F.max_pool1d_with_indices(lucid.randn(2, 3, 8), 2)     # (2, 3, 4) each
    """
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool2d`` that always returns ``(output, indices)``.

    Example::

        y, idx = F.max_pool2d_with_indices(lucid.randn(1, 3, 8, 8), 2)  # (1, 3, 4, 4) each
    """
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool3d`` that always returns ``(output, indices)``.

    Example::

        y, idx = F.max_pool3d_with_indices(lucid.randn(1, 2, 4, 4, 4), 2)
    """
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool1d`` that always returns ``(output, indices)``.

    Example::

        y, idx = F.adaptive_max_pool1d_with_indices(lucid.randn(2, 3, 10), 4)
    """
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool2d`` that always returns ``(output, indices)``.

    Example::

        y, idx = F.adaptive_max_pool2d_with_indices(lucid.randn(1, 3, 10, 10), 4)
    """
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool3d`` that always returns ``(output, indices)``.

    Example::

        y, idx = F.adaptive_max_pool3d_with_indices(lucid.randn(1, 2, 6, 6, 6), 3)
    """
    return adaptive_max_pool3d(input, output_size, True)
