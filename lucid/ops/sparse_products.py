"""Matrix products with a sparse COO operand, below the tensor class (sparse_coo.py), which
wraps their results: sparse @ dense (any dense rank), dense @ sparse, and the index arithmetic of
sparse @ sparse. Sparse operands are read through their parts (``_idx``, ``_vals``, ``_size``,
``_be``); every value-level step is a differentiable op, so gradients reach the values of both
operands and the dense operand on every device.

sparse @ sparse pairs every stored ``(i, k)`` of the left operand with every stored ``(k, j)`` of
the right one on the host (numpy: the right operand's entries bucketed by row, O(nnz log nnz +
pairs)), then gathers and multiplies the paired values and scatter-adds the products into
the sorted, unique output positions. The output pattern is structural (a sum that cancels to 0
stays stored), as PyTorch's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import torch_name
from .._tensor import Tensor, _make
from ..autograd.function import _device_mismatch
from .index import index_select
from .index_update import index_add
from .shape import movedim, reshape, squeeze, t, unsqueeze
from .sparse_ops import SparseMm, host, index_tensor

__all__ = ["sparse_mm", "dense_sparse_mm", "sparse_matmul_dense", "dense_matmul_sparse",
           "spgemm_parts", "check_matrix", "row_pattern", "compact_mm"]


def _prod(xs: Any) -> int:
    n = 1
    for x in xs:
        n *= int(x)
    return n


def check_matrix(s: Any, name: str = "addmm") -> None:
    """``s`` is a sparse matrix with scalar values (PyTorch's ``addmm`` checks)."""
    if s.sparse_dim() != 2:
        raise RuntimeError(f"{name}: matrices expected, got {s.sparse_dim()}D tensor")
    if s.dense_dim() != 0:
        raise RuntimeError(f"{name}: scalar values expected, got {s.dense_dim()}D values")


def _check_dense(s: Any, dense: Any, dim0: int) -> None:
    if not isinstance(dense, Tensor) or getattr(dense, "is_sparse", False) is True:
        raise TypeError(f"mm(): argument 'mat2' must be a dense Tensor, not "
                        f"{type(dense).__name__}")
    check_matrix(s)
    if dense.ndim != 2:
        raise RuntimeError(f"addmm: matrices expected, got {dense.ndim}D tensor")
    if dense.shape[0] != dim0:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {dim0}, got "
                           f"{dense.shape[0]}")
    if dense.dtype is not s.dtype:
        raise RuntimeError(f"expected scalar type {torch_name(s.dtype)} but found "
                           f"{torch_name(dense.dtype)}")
    if dense._be is not s._be:
        _device_mismatch(s._be, dense._be)


def sparse_mm(s: Any, dense: Tensor) -> Tensor:
    """``s @ dense`` for a 2-D sparse ``s`` with scalar values and a 2-D dense matrix."""
    _check_dense(s, dense, s._size[1])
    be = s._be
    rows = be.getitem(s._idx._data, 0)
    cols = be.getitem(s._idx._data, 1)
    return SparseMm.apply(s._vals, dense, rows, cols, s._size[0])


def dense_sparse_mm(dense: Tensor, s: Any) -> Tensor:
    """``dense @ s`` for a 2-D dense matrix and a 2-D sparse ``s``: ``(s.T @ dense.T).T``, so
    ``s`` is never densified (PyTorch computes it the same way, hence its messages)."""
    if not isinstance(dense, Tensor):
        raise TypeError(f"mm(): argument 'input' must be Tensor, not {type(dense).__name__}")
    dt = t(dense) if dense.ndim == 2 else dense
    _check_dense(s, dt, s._size[0])
    be = s._be
    rows = be.getitem(s._idx._data, 1)
    cols = be.getitem(s._idx._data, 0)
    return t(SparseMm.apply(s._vals, dt, rows, cols, s._size[1]))


def _at_least_1d(x: Any, s_dims: int, left: bool) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"matmul(): argument '{'other' if left else 'input'}' must be Tensor, "
                        f"not {type(x).__name__}")
    if x.ndim == 0:
        a, b = (s_dims, 0) if left else (0, s_dims)
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a}D and {b}D")


def sparse_matmul_dense(s: Any, other: Tensor) -> Tensor:
    """``s @ other`` for a sparse matrix ``s`` and a dense vector, matrix or batch of matrices
    (``(..., m, k)``: the batch is folded into the columns of one product)."""
    _at_least_1d(other, s.ndim, True)
    nd = other.ndim
    if nd == 1:
        check_matrix(s)
        if other.shape[0] != s._size[1]:
            raise RuntimeError("mv: expected self.size(-1) == vec.size(-1)")
        return squeeze(sparse_mm(s, unsqueeze(other, 1)), 1)
    if nd == 2:
        return sparse_mm(s, other)
    lead, (m, k) = tuple(other.shape[:-2]), tuple(other.shape[-2:])
    out = sparse_mm(s, reshape(movedim(other, -2, 0), m, _prod(lead) * k))
    return movedim(reshape(out, s._size[0], *lead, k), 0, -2)


def dense_matmul_sparse(other: Tensor, s: Any) -> Tensor:
    """``other @ s`` for a dense vector, matrix or batch of matrices and a sparse matrix ``s``
    (batch dims are folded into the rows of one product)."""
    _at_least_1d(other, s.ndim, False)
    nd = other.ndim
    if nd == 1:
        return squeeze(dense_sparse_mm(unsqueeze(other, 0), s), 0)
    if nd == 2:
        return dense_sparse_mm(other, s)
    lead, m = tuple(other.shape[:-1]), other.shape[-1]
    out = dense_sparse_mm(reshape(other, _prod(lead), m), s)
    return reshape(out, *lead, s._size[1])


def _pairs(a_cols: np.ndarray, b_rows: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(p, q)`` with ``a_cols[p] == b_rows[q]`` (both in ``[0, m)``), grouped by ``p``:
    ``b``'s entries bucketed by row (a CSR row pointer), then each ``p`` expanded over its
    bucket."""
    order = np.argsort(b_rows, kind="stable")
    counts = np.bincount(b_rows, minlength=m)
    ptr = np.cumsum(counts) - counts
    lo, cnt = ptr[a_cols], counts[a_cols]
    total = int(cnt.sum())
    p = np.repeat(np.arange(a_cols.shape[0], dtype=np.int64), cnt)
    first = np.repeat(lo - (np.cumsum(cnt) - cnt), cnt)
    return p, order[first + np.arange(total, dtype=np.int64)]


def spgemm_parts(a: Any, b: Any) -> tuple[Tensor, Tensor, tuple[int, int]]:
    """(indices, values, size) of the coalesced product of two sparse matrices ``a @ b``; the
    values are differentiable w.r.t. both operands' values."""
    for x, name in ((a, "self"), (b, "mat2")):
        if x.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {x.ndim}-D tensor")
    (n, m), (m2, k) = a._size, b._size
    if m != m2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{m} and {m2}x{k})")
    for x in (a, b):
        if x.dense_dim() != 0:
            raise RuntimeError(f"sparse_sparse_matmul_cpu: scalar values expected, got "
                               f"{x.dense_dim()}D values")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"mat1 dtype {torch_name(a.dtype)} does not match mat2 dtype "
                           f"{torch_name(b.dtype)}")
    if a._be is not b._be:
        _device_mismatch(a._be, b._be)
    be = a._be
    ia, ib = host(a._idx), host(b._idx)
    p, q = _pairs(ia[1], ib[0], m)
    lin = ia[0][p] * k + ib[1][q]
    uniq, inv = np.unique(lin, return_inverse=True)
    idx = index_tensor(np.stack([uniq // max(k, 1), uniq % max(k, 1)]).reshape(2, -1), be)
    prod = index_select(a._vals, 0, index_tensor(p, be)) * index_select(
        b._vals, 0, index_tensor(q, be))
    zeros = _make(be.zeros((uniq.shape[0],), a._vals.dtype), be, False, None)
    vals = index_add(zeros, 0, index_tensor(inv.reshape(-1), be), prod)
    return idx, vals, (n, k)


def row_pattern(c: Any) -> tuple[np.ndarray, Any, Any]:
    """For a coalesced sparse matrix: its distinct rows (sorted), and backend index arrays of
    each entry's position among them and of its column (the parts of a row-compacted product)."""
    be = c._be
    idx = host(c._idx)
    rows, pos = np.unique(idx[0], return_inverse=True)
    return (rows, be.from_numpy(pos.reshape(-1).astype(np.int64)),
            be.from_numpy(np.ascontiguousarray(idx[1], dtype=np.int64)))


def compact_mm(c: Any, dense: Tensor) -> tuple[np.ndarray, Tensor]:
    """``(rows, (c @ dense)[rows])`` for a coalesced sparse matrix ``c``: the product's rows
    that ``c`` stores anything in, without an n-row buffer (hspmm, sspaddmm)."""
    rows, pos, cols = row_pattern(c)
    return rows, SparseMm.apply(c._vals, dense, pos, cols, rows.shape[0])
