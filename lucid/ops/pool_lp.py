"""Power-average pooling, as ``torch.nn.functional``: ``lp_pool1d`` / ``lp_pool2d`` /
``lp_pool3d`` compute ``(sum over the window of x ** p) ** (1 / p)`` as torch writes it: an
average pool of ``x ** p`` times the window size, clamped through ``sign * relu(abs)``, so the
gradient of a window whose sum is zero is zero; ``p = +-inf`` is the max (min) of ``|x|``."""

from __future__ import annotations

import math
from typing import Any

from .._tensor import Tensor
from . import elementwise as _e
from .pool import avg_pool1d, avg_pool2d, max_pool1d, max_pool2d
from .pool3d import avg_pool3d, max_pool3d

__all__ = ["lp_pool1d", "lp_pool2d", "lp_pool3d"]


def _ntuple(v: Any, n: int) -> tuple[int, ...]:
    if isinstance(v, (tuple, list)):
        return tuple(v)
    return (v,) * n


def _lp(input: Tensor, norm_type: float, kernel_size: Any, stride: Any, ceil_mode: bool,
        n: int, avg: Any, mx: Any) -> Tensor:
    if isinstance(norm_type, (int, float)):
        if norm_type == math.inf:
            return mx(_e.abs(input), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -math.inf:
            return _e.neg(mx(_e.neg(_e.abs(input)), kernel_size, stride, 0, 1, ceil_mode))
    out = avg(_e.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    size = math.prod(_ntuple(kernel_size, n))
    out = _e.mul(_e.sign(out), _e.relu(_e.abs(out)))
    return _e.pow(_e.mul(out, size), 1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """1-D power-average pooling over (N, C, L) or (C, L).

    Example::

        F.lp_pool1d(lucid.randn(2, 3, 8), 2, 2).shape      # (2, 3, 4)
    """
    return _lp(input, norm_type, kernel_size, stride, ceil_mode, 1, avg_pool1d, max_pool1d)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """2-D power-average pooling over (N, C, H, W) or (C, H, W).

    Example::

        F.lp_pool2d(lucid.randn(1, 3, 8, 8), 2, 2).shape   # (1, 3, 4, 4)
    """
    return _lp(input, norm_type, kernel_size, stride, ceil_mode, 2, avg_pool2d, max_pool2d)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """3-D power-average pooling over (N, C, D, H, W) or (C, D, H, W).

    Example::

        F.lp_pool3d(lucid.randn(1, 2, 4, 4, 4), 2, 2).shape   # (1, 2, 2, 2, 2)
    """
    return _lp(input, norm_type, kernel_size, stride, ceil_mode, 3, avg_pool3d, max_pool3d)
