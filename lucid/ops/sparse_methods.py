"""The sparse methods PyTorch has on every tensor, for both layouts: ``indices``, ``values``,
``coalesce``, ``is_coalesced``, ``sparse_dim``, ``dense_dim``, ``sparse_mask``, ``smm`` and
``sspaddmm`` (on a strided tensor they raise or answer as PyTorch does; ``SparseCooTensor``
overrides the first six with its own), ``indices_copy`` / ``values_copy``, and the legacy
products ``hspmm`` (alias ``hsmm``), ``saddmm`` (``sspaddmm``) and ``dsmm`` (``sparse.mm``).

All are compositions of differentiable ops on the values, so they run on every device and
pass gradients, also where PyTorch has no derivative (``smm``, ``sspaddmm``, ``hspmm``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import torch_name
from .._tensor import Tensor, _make
from ..autograd.function import _device_mismatch
from .index import index_select
from .movement import cat
from .shape import clone, reshape
from .sparse_api import mm
from .sparse_coo import SparseCooTensor, make_sparse
from .sparse_coo import coalesce as _coalesce
from .sparse_ops import host, index_tensor
from .sparse_products import check_matrix, compact_mm

__all__ = ["indices", "values", "coalesce", "is_coalesced", "sparse_dim", "dense_dim",
           "sparse_mask", "smm", "sspaddmm", "saddmm", "hspmm", "hsmm", "dsmm",
           "indices_copy", "values_copy"]


def _strided(name: str, kind: str = "sparse coordinate tensor") -> RuntimeError:
    return RuntimeError(f"{name} expected {kind} layout but got Strided")


def indices(self: Tensor) -> Tensor:
    """The ``(sparse_dim, nnz)`` indices of a coalesced sparse tensor; a strided tensor has
    none (RuntimeError, as in PyTorch).

    Example::

        lucid.tensor([[0., 2.], [3., 0.]]).to_sparse().indices()   # [[0, 1], [1, 0]]
    """
    if isinstance(self, SparseCooTensor):
        return self.indices()
    raise _strided("indices")


def values(self: Tensor) -> Tensor:
    """The ``(nnz, *dense)`` values of a coalesced sparse tensor (differentiable); a strided
    tensor has none (RuntimeError, as in PyTorch).

    Example::

        lucid.tensor([[0., 2.], [3., 0.]]).to_sparse().values()    # [2., 3.]
    """
    if isinstance(self, SparseCooTensor):
        return self.values()
    raise _strided("values", "sparse tensor")


def coalesce(self: Tensor) -> Tensor:
    """A sparse tensor with sorted, unique indices (duplicates summed); RuntimeError for a
    strided tensor, as in PyTorch.

    Example::

        s = lucid.sparse_coo_tensor([[1, 0, 1]], [1., 2., 3.])
        s.coalesce().values()      # [2., 4.]
    """
    if isinstance(self, SparseCooTensor):
        return _coalesce(self)
    raise _strided("coalesce")


def is_coalesced(self: Tensor) -> bool:
    """Whether a sparse tensor's indices are known sorted and unique; RuntimeError for a
    strided tensor, as in PyTorch.

    Example::

        lucid.ones(2, 2).to_sparse().is_coalesced()    # True
    """
    if isinstance(self, SparseCooTensor):
        return self.is_coalesced()
    raise _strided("is_coalesced")


def sparse_dim(self: Tensor) -> int:
    """How many leading dims the indices address: 0 for a strided tensor.

    Example::

        lucid.ones(2, 3).sparse_dim()                  # 0
    """
    return self.sparse_dim() if isinstance(self, SparseCooTensor) else 0


def dense_dim(self: Tensor) -> int:
    """How many trailing dims each stored value has: ``ndim`` for a strided tensor.

    Example::

        lucid.ones(2, 3).dense_dim()                   # 2
    """
    return self.dense_dim() if isinstance(self, SparseCooTensor) else self.ndim


def indices_copy(input: Tensor) -> Tensor:
    """A copy of ``input.indices()``. (PyTorch 2.13 raises NotImplementedError for every sparse
    COO input; lucid returns the copy.)

    Example::

        lucid.indices_copy(lucid.eye(2).to_sparse())   # [[0, 1], [0, 1]]
    """
    return clone(indices(input))


def values_copy(input: Tensor) -> Tensor:
    """A copy of ``input.values()``, differentiable. (PyTorch 2.13 raises NotImplementedError
    for every sparse COO input; lucid returns the copy.)

    Example::

        lucid.values_copy(lucid.eye(2).to_sparse())    # [1., 1.]
    """
    return clone(values(input))


def _ravel(idx: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if not shape:
        return np.zeros(idx.shape[1], np.int64)
    return np.ravel_multi_index(tuple(idx), shape).astype(np.int64).reshape(-1)


def _sparse_lookup(self: SparseCooTensor, mask: SparseCooTensor) -> Tensor:
    """``self``'s dense values at ``mask``'s indices (0 where ``self`` stores nothing)."""
    c = _coalesce(self)
    sd, be = c.sparse_dim(), c._be
    size = tuple(c._size[:sd])
    have, want = _ravel(host(c._idx), size), _ravel(host(mask._idx), size)
    n = have.shape[0]
    pos = np.searchsorted(have, want)
    found = pos < n
    found[found] = have[pos[found]] == want[found]
    take = np.where(found, pos, n)
    pad = _make(be.zeros((1,) + tuple(c._vals.shape[1:]), c._vals.dtype), be, False, None)
    return index_select(cat([c._vals, pad], 0), 0, index_tensor(take, be))


def sparse_mask(self: Tensor, mask: Tensor) -> SparseCooTensor:
    """A sparse tensor with ``mask``'s indices (and coalesced flag) holding ``self``'s values
    there (0 where a sparse ``self`` stores nothing); ``mask``'s values are not read.
    Differentiable w.r.t. ``self``.

    Example::

        x = lucid.arange(6.).reshape(2, 3)
        x.sparse_mask(adj)      # adj: sparse (2, 3); x's entries on adj's pattern
    """
    if not isinstance(mask, SparseCooTensor):
        raise NotImplementedError("sparse_mask(): expected 'mask' to be a sparse COO tensor, "
                                  "got a strided tensor")
    shape = tuple(self.shape)
    if shape != tuple(mask.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(shape)} but mask has size {list(mask.shape)}")
    if self._be is not mask._be:
        _device_mismatch(self._be, mask._be)
    sd = mask.sparse_dim()
    if isinstance(self, SparseCooTensor):
        if self.sparse_dim() != sd:
            raise RuntimeError(f"sparse_mask(): the number of sparse dimensions in `self` "
                               f"should match that of the `mask`. Got `self.sparse_dim() == "
                               f"{self.sparse_dim()}` != `mask.sparse_dim() == {sd}`.")
        vals = _sparse_lookup(self, mask)
    else:
        lin = _ravel(host(mask._idx), shape[:sd])
        n = int(np.prod(shape[:sd], dtype=np.int64))
        flat = reshape(self, n, *shape[sd:])
        vals = index_select(flat, 0, index_tensor(lin, self._be))
    return make_sparse(mask._idx, vals, shape, mask._coal)


def _only_sparse() -> RuntimeError:
    return RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")


def _check_strided_mat2(mat2: Any, name: str, k: int, mat1: SparseCooTensor) -> None:
    if isinstance(mat2, SparseCooTensor) or not isinstance(mat2, Tensor):
        raise RuntimeError(f"{name}: expected 'mat2' to have strided layout, got 'mat2' with "
                           f"layout Sparse")
    if mat2.ndim != 2:
        raise RuntimeError(f"{name}: Argument #3: matrices expected, got {mat2.ndim}D tensor")
    if mat2.shape[0] != k:
        raise RuntimeError(f"{name}: Argument #3: Expected dim 0 size {k}, got "
                           f"{mat2.shape[0]}")
    if mat2.dtype is not mat1.dtype:
        raise RuntimeError(f"expected scalar type {torch_name(mat1.dtype)} but found "
                           f"{torch_name(mat2.dtype)}")
    if mat2._be is not mat1._be:
        _device_mismatch(mat1._be, mat2._be)


def _sspaddmm(self: SparseCooTensor | None, mat1: Any, mat2: Any, beta: Any,
              alpha: Any) -> SparseCooTensor:
    if not isinstance(mat1, SparseCooTensor):
        raise RuntimeError("sspaddmm: expected 'mat1' to have sparse layout, got 'mat1' with "
                           "layout Strided")
    check_matrix(mat1, "sspaddmm: Argument #2")
    n, m = mat1._size
    _check_strided_mat2(mat2, "sspaddmm", m, mat1)
    k = mat2.shape[1]
    be = mat1._be
    if self is not None:
        sh = tuple(self._size)
        if sh[0] != n:
            raise RuntimeError(f"sspaddmm: Argument #1: Expected dim 0 size {n}, got {sh[0]}")
        if len(sh) != 2 or sh[1] != k or self.sparse_dim() != 2:
            got = sh[1] if len(sh) > 1 else 1
            raise RuntimeError(f"sspaddmm: Argument #1: Expected dim 1 size {k}, got {got}")
        if self.dtype is not mat1.dtype:
            raise RuntimeError(f"dtype of values ({torch_name(mat1.dtype)}) must match dtype of "
                               f"sparse tensor ({torch_name(self.dtype)})")
        if self._be is not be:
            _device_mismatch(self._be, be)
    rows, prod = compact_mm(_coalesce(mat1), mat2)
    r = rows.shape[0]
    pidx = index_tensor(np.stack([np.repeat(rows, k), np.tile(np.arange(k), r)]).reshape(2, -1),
                        be)
    pvals = reshape(prod, r * k)
    if alpha != 1:
        pvals = pvals * alpha
    if self is None or not self._nnz():
        idx, vals = pidx, pvals
    else:
        idx = cat([self._idx, pidx], 1)
        vals = cat([self._vals if beta == 1 else self._vals * beta, pvals], 0)
    return make_sparse(idx, vals, (n, k), vals.shape[0] <= 1)


def sspaddmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1,
             alpha: Any = 1) -> SparseCooTensor:
    """``beta * input + alpha * (mat1 @ mat2)`` for sparse ``input`` and ``mat1`` and a dense
    ``mat2``, as an uncoalesced sparse tensor: ``input``'s entries (scaled by ``beta``), then one
    entry per column for every row that ``mat1`` stores anything in (PyTorch's layout).
    Differentiable w.r.t. all three (PyTorch has no derivative for it).

    Example::

        out = lucid.sspaddmm(s, adj, x, beta=0.5, alpha=2.0).coalesce()
    """
    if not isinstance(input, SparseCooTensor):
        raise _only_sparse()
    return _sspaddmm(input, mat1, mat2, beta, alpha)


saddmm = sspaddmm


def smm(input: Tensor, mat2: Tensor) -> SparseCooTensor:
    """Sparse (n, m) @ dense (m, k) as an uncoalesced sparse (n, k): one entry per column for
    every row that ``input`` stores anything in (``sspaddmm`` with nothing to add).

    Example::

        lucid.smm(adj, x).to_dense()        # == adj @ x
    """
    if not isinstance(input, SparseCooTensor):
        raise _only_sparse()
    return _sspaddmm(None, input, mat2, 0, 1)


def hspmm(mat1: Tensor, mat2: Tensor) -> SparseCooTensor:
    """Sparse (n, m) @ dense (m, k) as a hybrid sparse tensor (1 sparse + 1 dense dim): the
    product's rows that ``mat1`` stores anything in, indexed by row. Differentiable w.r.t. both
    (PyTorch has no derivative for it).

    Example::

        out = lucid.hspmm(adj, x)       # out.indices(): (1, rows), out._values(): (rows, k)
    """
    if not isinstance(mat1, SparseCooTensor):
        raise NotImplementedError("Could not run 'aten::hspmm' with arguments from the "
                                  "'CPU' backend: 'mat1' must be a sparse COO tensor")
    check_matrix(mat1, "hspmm: Argument #2")
    n, m = mat1._size
    _check_strided_mat2(mat2, "hspmm", m, mat1)
    rows, prod = compact_mm(_coalesce(mat1), mat2)
    idx = index_tensor(rows.reshape(1, -1), mat1._be)
    return make_sparse(idx, prod, (n, mat2.shape[1]), rows.shape[0] <= 1)


hsmm = hspmm


def dsmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Legacy name of ``lucid.sparse.mm``: sparse @ dense (or dense @ sparse) -> dense."""
    return mm(input, mat2)
