"""Dimension arguments: wrapping negative dims with PyTorch's errors. A leaf module (no lucid
imports), shared by ``Tensor`` and the ops."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["norm_dim", "norm_dims"]


def norm_dim(dim: int, ndim: int) -> int:
    """Wrap a possibly negative dim, with PyTorch's error when it is out of range."""
    n = ndim if ndim else 1
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, got {type(dim).__name__}")
    if dim < -n or dim >= n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return int(dim) % n if ndim else 0


def norm_dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """``dim`` as a sorted tuple of non-negative axes (None -> None = all axes)."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        axes = tuple(norm_dim(d, ndim) for d in dim)
        if len(set(axes)) != len(axes):
            raise RuntimeError(f"dim {axes[0]} appears multiple times in the list of dims")
        return tuple(sorted(axes)) if ndim else ()
    axis = norm_dim(dim, ndim)  # validates the dim for 0-d tensors too
    return (axis,) if ndim else ()
