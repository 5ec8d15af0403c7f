"""Writes into a copy of a tensor, and writes at flat indices: ``slice_scatter``,
``select_scatter``, ``put`` / ``put_`` and ``index_reduce`` / ``index_reduce_``, as torch's.

Each is composed of ops that already carry their gradients (``clone``, indexed assignment,
``index_put_``, ``scatter_reduce_``), so the in-place forms keep views, version counters and
the graph as ``add_`` does.
"""

from __future__ import annotations

import numpy as np

from .._dims import norm_dim
from .._tensor import Tensor
from . import shape as _s
from .creation import tensor
from .index import setitem


def _clone(input: Tensor) -> Tensor:
    return input.clone()  # type: ignore[attr-defined]


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written into ``input[..., start:end:step, ...]``
    (the slice along ``dim``).

    Example::

        lucid.slice_scatter(lucid.zeros(4, 3), lucid.ones(2, 3), 0, 1, 3)
    """
    d = norm_dim(dim, input.ndim)
    out = _clone(input)
    setitem(out, (slice(None),) * d + (slice(start, end, step),), src)
    return out


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``src`` written into ``input.select(dim, index)``.

    Example::

        lucid.select_scatter(lucid.zeros(2, 3), lucid.ones(3), 0, 1)
    """
    d = norm_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select_scatter(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    out = _clone(input)
    setitem(out, (slice(None),) * d + (index,), src)
    return out


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written into its ``offset`` diagonal of the
    (``dim1``, ``dim2``) planes (``src`` shaped as ``input.diagonal(offset, dim1, dim2)``).

    Example::

        lucid.diagonal_scatter(lucid.zeros(3, 3), lucid.ones(3))   # the identity
    """
    out = _clone(input)
    diag = out.diagonal(offset, dim1, dim2)
    if tuple(src.shape) != tuple(diag.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(diag.shape)}")
    diag.copy_(src)
    return out


def put_(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """Write ``source`` at the flat (row-major) positions ``index`` of ``input``, in place;
    ``accumulate`` adds instead (repeated positions add up).

    Example::

        x = lucid.zeros(2, 3)
        x.put_(lucid.tensor([1, 5]), lucid.tensor([9.0, 8.0]))
    """
    n = input.numel()
    if index.numel() != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source.numel()}, "
                           f"index.numel() = {index.numel()}")
    if index.dtype.is_floating_point or index.dtype.is_complex:
        raise IndexError("put_(): Expected a long tensor for index, but got "
                         f"{index.dtype}")
    flat = [int(i) for i in index.reshape(-1).tolist()]  # type: ignore[attr-defined]
    bad = next((i for i in flat if not -n <= i < n), None)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         "elements.")
    target = input if input.ndim else _s.reshape(input, (1,))  # a view of a 0-d input
    # row-major positions, as torch reads them
    coords = np.unravel_index(np.asarray(flat, np.int64) % max(n, 1), tuple(target.shape))
    idx = tuple(tensor(c, dtype=index.dtype, device=input.device) for c in coords)
    vals = source.reshape(-1).to(input.dtype)  # type: ignore[attr-defined]
    target.index_put_(idx, vals, accumulate)  # type: ignore[attr-defined]
    return input


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """``put_`` on a copy of ``input``."""
    return put_(_clone(input), index, source, accumulate)


def index_reduce_(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    """Reduce the slices ``source.select(dim, i)`` into ``input.select(dim, index[i])`` in
    place with ``reduce`` ("prod", "mean", "amax" or "amin"); ``include_self=False`` leaves
    ``input``'s own values out of the slices that receive any.

    Example::

        x = lucid.tensor([1.0, 2.0, 3.0])
        x.index_reduce_(0, lucid.tensor([0, 0, 2]), lucid.tensor([2.0, 3.0, 4.0]), "prod")
    """
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = norm_dim(dim, max(input.ndim, 1))
    if index.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    src = source if source.ndim else _s.reshape(source, (1,))
    if index.numel() != (src.shape[d] if src.ndim else 1):
        raise RuntimeError("index_reduce_(): Number of indices should be equal to source.size(dim)")
    shape = [1] * src.ndim
    shape[d] = -1
    idx = _s.reshape(index, tuple(shape)).expand(*src.shape)  # type: ignore[attr-defined]
    return input.scatter_reduce_(d, idx, src, reduce,  # type: ignore[attr-defined]
                                 include_self=include_self)


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """``index_reduce_`` on a copy of ``input``."""
    return index_reduce_(_clone(input), dim, index, source, reduce, include_self=include_self)


__all__ = ["diagonal_scatter", "index_reduce", "select_scatter", "slice_scatter"]
