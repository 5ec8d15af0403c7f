"""Writes at indices along one dim, and at a mask: ``index_add``, ``index_copy``,
``index_fill``, ``masked_scatter``, each with its in-place ``_`` form (written through the
in-place helper, so views, version counters and the graph behave as for ``add_``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._dims import norm_dim
from .._tensor import Tensor
from ..autograd.function import Op, _device_mismatch
from ._util import wrap
from .index import _bounds
from .views import inplace


def _axis_index(axis: int, idx: Any) -> tuple:
    return (slice(None),) * axis + (idx,)


class IndexAdd(Op):
    def forward(self, x, src, idx, axis, alpha):
        be = self.be
        self.axis, self.alpha = axis, alpha
        self.saved = (idx,)
        if alpha != 1:
            src = be.mul(src, alpha)
        return be.add(x, be.index_add(tuple(x.shape), _axis_index(axis, idx), src))

    def backward(self, g):
        be = self.be
        gs = None
        if self.parents[1] is not None:
            gs = be.take(g, self.saved[0], self.axis)
            if self.alpha != 1:
                gs = be.mul(gs, self.alpha)
        return g, gs, None, None, None


class IndexCopy(Op):
    def forward(self, x, src, idx, axis):
        be = self.be
        self.axis = axis
        self.saved = (idx,)
        return be.setitem(be.copy(x), _axis_index(axis, idx), src)

    def backward(self, g):
        be, (idx,) = self.be, self.saved
        gx = gs = None
        if self.parents[0] is not None:
            gx = be.setitem(be.copy(g), _axis_index(self.axis, idx), 0)
        if self.parents[1] is not None:
            gs = be.take(g, idx, self.axis)
        return gx, gs, None, None


class IndexFill(Op):
    """``x`` with the slices at ``idx`` along ``axis`` set to ``value`` (a 0-d array, whose
    gradient is the sum of the gradient over those slices)."""

    def forward(self, x, value, idx, axis):
        be = self.be
        self.axis = axis
        self.saved = (idx,)
        return be.setitem(be.copy(x), _axis_index(axis, idx), value)

    def backward(self, g):
        be, (idx,) = self.be, self.saved
        gx = gv = None
        if self.parents[0] is not None:
            gx = be.setitem(be.copy(g), _axis_index(self.axis, idx), 0)
        if self.parents[1] is not None:
            mask = be.setitem(be.zeros(tuple(g.shape), _dtype.bool_),
                              _axis_index(self.axis, idx), True)
            gv = be.sum(be.where(mask, g, 0))
        return gx, gv, None, None


def _check_index(index: Any, input: Tensor, name: str, kinds: str = "int32/int64") -> Tensor:
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._be is not input._be:
        _device_mismatch(input._be, index._be)
    if index.dtype not in ((_dtype.int64,) if kinds == "int64" else (_dtype.int64, _dtype.int32)):
        if kinds == "int64":
            raise IndexError(f"{name}(): Expected dtype int64 for index.")
        raise RuntimeError(f"{name}(): Expected dtype {kinds} for index but got: "
                           f"{_dtype.torch_name(index.dtype)}")
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: {index.ndim} "
                         f"with type: {_dtype.torch_name(index.dtype)} and size: "
                         f"{list(index.shape)}")
    return index


def _check_source(input: Tensor, source: Tensor, d: int, n: int, name: str) -> None:
    if not isinstance(source, Tensor):
        raise TypeError(f"{name}(): argument 'source' must be Tensor, not "
                        f"{type(source).__name__}")
    if source._be is not input._be:
        _device_mismatch(input._be, source._be)
    want = list(input.shape)
    got = list(source.shape)
    if input.ndim:
        if source.ndim != input.ndim or got[:d] + got[d + 1:] != want[:d] + want[d + 1:]:
            raise RuntimeError(f"source tensor shape must match self tensor shape, excluding "
                               f"the specified dimension. Got self.shape = {want} "
                               f"source.shape = {got}")
        k = got[d]
    else:
        if source.ndim:
            raise RuntimeError(f"source tensor shape must match self tensor shape, excluding "
                               f"the specified dimension. Got self.shape = {want} "
                               f"source.shape = {got}")
        k = 1
    if k != n:
        raise RuntimeError(f"{name}(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({k}), for dim: {d}")


def _flat_index(index: Tensor) -> Any:
    be = index._be
    return be.astype(be.reshape(index._data, (-1,)), _dtype.int64)


def _dim_size(input: Tensor, d: int) -> int:
    return input.shape[d] if input.ndim else 1


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1
              ) -> Tensor:
    """``input`` with ``alpha * source`` added at ``index`` along ``dim`` (repeated indices
    accumulate).

    Example::

        lucid.zeros(3).index_add(0, lucid.tensor([0, 2, 0]), lucid.ones(3))  # [2., 0., 1.]
    """
    index = _check_index(index, input, "index_add_")
    d = norm_dim(dim, max(input.ndim, 1))
    n = index.numel()
    _check_source(input, source, d, n, "index_add_")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_add_(): self ({_dtype.torch_name(input.dtype)}) and source "
                           f"({_dtype.torch_name(source.dtype)}) must have the same scalar type")
    lo, hi = _bounds(index)
    size = _dim_size(input, d)
    if lo < 0 or hi >= size:
        raise RuntimeError(f"index {lo if lo < 0 else hi} is out of bounds for dimension {d} "
                           f"with size {size}")
    if not input.ndim:
        return IndexAdd.apply(input.reshape(1), source.reshape(1), _flat_index(index), 0,
                              alpha).reshape(())  # type: ignore[attr-defined]
    return IndexAdd.apply(input, source, _flat_index(index), d, alpha)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``input`` with the slices at ``index`` along ``dim`` replaced by those of ``source``.

    Example::

        lucid.zeros(3, 2).index_copy(0, lucid.tensor([2, 0]), lucid.ones(2, 2))
    """
    index = _check_index(index, input, "index_copy_", "int64")
    d = norm_dim(dim, max(input.ndim, 1))
    n = index.numel()
    if not isinstance(source, Tensor):
        raise TypeError(f"index_copy_(): argument 'source' must be Tensor, not "
                        f"{type(source).__name__}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {_dtype.torch_name(input.dtype)} and (source) "
                           f"{_dtype.torch_name(source.dtype)}")
    k = source.shape[d] if source.ndim else 1
    if input.ndim and source.ndim and k != n:
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to "
                         f"source.size(dim) ({k})")
    _check_source(input, source, d, n, "index_copy_")
    lo, hi = _bounds(index)
    size = _dim_size(input, d)
    if lo < 0 or hi >= size:
        raise IndexError(f"index_copy_(): index {lo if lo < 0 else hi} is out of bounds for "
                         f"dimension {d} with size {size}")
    if not input.ndim:
        return IndexCopy.apply(input.reshape(1), source.reshape(1), _flat_index(index),
                               0).reshape(())  # type: ignore[attr-defined]
    return IndexCopy.apply(input, source, _flat_index(index), d)


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """``input`` with the slices at ``index`` along ``dim`` set to ``value`` (a number or a
    0-d tensor; negative indices count from the end).

    Example::

        lucid.zeros(2, 3).index_fill(1, lucid.tensor([0, 2]), -1.0)
    """
    index = _check_index(index, input, "index_fill_", "int64")
    d = norm_dim(dim, max(input.ndim, 1))
    size = _dim_size(input, d)
    lo, hi = _bounds(index)
    if lo < -size or hi >= size:
        raise IndexError(f"index {lo if lo < -size else hi} is out of bounds for dimension {d} "
                         f"with size {size}")
    be = input._be
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        if value._be is not be:
            _device_mismatch(be, value._be)
        if value.dtype is not input.dtype:
            value = value.to(input.dtype)  # type: ignore[attr-defined]
    else:
        value = wrap(be.asarray(value, input.dtype), be)
    flat = _flat_index(index)
    if lo < 0:
        flat = be.where(be.lt(flat, 0), be.add(flat, size), flat)
    if not input.ndim:
        return IndexFill.apply(input.reshape(1), value, flat, 0).reshape(())  # type: ignore
    return IndexFill.apply(input, value, flat, d)


class MaskedScatter(Op):
    def forward(self, x, mask, src):
        be = self.be
        self.src_shape = tuple(src.shape)
        self.saved = (mask,)
        k = int(be.item(be.sum(be.astype(mask, _dtype.int64))))
        self.k = k
        vals = be.getitem(be.reshape(src, (-1,)), slice(0, k))
        return be.setitem(be.copy(x), mask, vals)

    def backward(self, g):
        be, (mask,) = self.be, self.saved
        gx = gs = None
        if self.parents[0] is not None:
            gx = be.where(mask, 0, g)
        if self.parents[2] is not None:
            n = 1
            for s in self.src_shape:
                n *= s
            picked = be.getitem(g, mask)
            rest = be.zeros((n - self.k,), be.dtype_of(g))
            gs = be.reshape(be.concatenate([picked, rest], 0), self.src_shape)
        return gx, None, gs


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``input`` with the positions where ``mask`` (broadcast to ``input``'s shape) is True
    filled, in row-major order, with consecutive elements of ``source``.

    Example::

        lucid.zeros(4).masked_scatter(lucid.tensor([True, False, True, False]),
                                      lucid.tensor([1.0, 2.0]))   # [1., 0., 2., 0.]
    """
    if mask.dtype is not _dtype.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_dtype.torch_name(mask.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{_dtype.torch_name(input.dtype)} and "
                           f"{_dtype.torch_name(source.dtype)}")
    for t in (mask, source):
        if t._be is not input._be:
            _device_mismatch(input._be, t._be)
    be = input._be
    try:
        shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(mask.shape)))
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({list(mask.shape)}) must match the size of "
                           f"tensor b ({list(input.shape)})") from None
    if shape != tuple(input.shape):
        raise RuntimeError(f"masked_scatter_: mask of shape {list(mask.shape)} does not "
                           f"broadcast to self of shape {list(input.shape)}")
    m = be.broadcast_to(mask._data, shape)
    if int(be.item(be.sum(be.astype(m, _dtype.int64)))) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return MaskedScatter.apply(input, wrap(m, be), source)


def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1
               ) -> Tensor:
    """In-place ``index_add``."""
    return inplace(self, lambda s: index_add(s, dim, index, source, alpha=alpha), (source,))


def index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """In-place ``index_copy``."""
    return inplace(self, lambda s: index_copy(s, dim, index, source), (source,))


def index_fill_(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """In-place ``index_fill``."""
    return inplace(self, lambda s: index_fill(s, dim, index, value), (value,))


def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """In-place ``masked_scatter``."""
    return inplace(self, lambda s: masked_scatter(s, mask, source), (source,))


__all__ = ["index_add", "index_copy", "index_fill", "masked_scatter"]
