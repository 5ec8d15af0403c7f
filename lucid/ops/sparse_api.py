"""Building sparse COO tensors and the ``lucid.sparse`` functions over them:
``sparse_coo_tensor``, ``Tensor.to_sparse``, ``sparse.mm`` / ``spmm`` / ``sparse.addmm`` (a
sparse operand on either side; sparse @ sparse gives a sparse result),
``sparse.sum`` and ``sparse.softmax``. The tensor class and its kernels: sparse_coo.py."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._dims import norm_dim
from .._tensor import Tensor
from ..backend import get_backend
from . import device as _dev
from .creation import tensor
from .index import index_select
from .index_update import index_add
from .matmul import mm as dense_mm
from .shape import expand
from .sparse_coo import SparseCooTensor, coalesce, make_sparse, sparse_sum
from .sparse_ops import host, index_tensor, sparse_coo, strided
from .sparse_products import dense_sparse_mm

__all__ = ["sparse_coo_tensor", "to_sparse", "to_sparse_coo", "dense_layout", "mm", "spmm",
           "addmm", "sum", "softmax", "log_softmax", "FloatTensor", "DoubleTensor", "LongTensor"]


def _as_values(values: Any, dtype: Any, device: Any) -> Tensor:
    if isinstance(values, SparseCooTensor):
        raise TypeError("sparse_coo_tensor(): values must be a dense tensor")
    if isinstance(values, Tensor):
        out = values
        if device is not None:
            out = _dev.to_device(out, get_backend(device))
        if dtype is not None:
            out = out.to(dtype)  # type: ignore[attr-defined]
        return out
    return tensor(values, dtype=dtype, device=device)


def _check_bounds(idx: np.ndarray, size: tuple[int, ...] | None) -> None:
    if not idx.shape[1]:
        return
    lo, hi = idx.min(1), idx.max(1)
    for d in range(idx.shape[0]):
        if lo[d] < 0:
            raise RuntimeError(f"found negative index {lo[d]} for dim {d}")
        if size is not None and hi[d] >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{size[d]} but found index {hi[d]}")


def sparse_coo_tensor(indices: Any, values: Any, size: Any = None, *, dtype: Any = None,
                      device: Any = None, requires_grad: bool = False,
                      check_invariants: bool | None = None,
                      is_coalesced: bool | None = None) -> SparseCooTensor:
    """A sparse COO tensor with ``values[j]`` at ``indices[:, j]`` (repeated indices add up).

    ``indices`` is ``(sparse_dim, nnz)`` (converted to int64); ``values`` is
    ``(nnz, *dense_shape)``; ``size`` defaults to the smallest that holds every index. The
    indices are always checked against ``size`` (PyTorch checks them only with
    ``check_invariants=True``; lucid's kernels never read out of bounds). Gradients reach
    ``values`` when it requires them; ``requires_grad=True`` makes the values a leaf.

    Example::

        i = lucid.tensor([[0, 1, 1], [2, 0, 2]])
        a = lucid.sparse_coo_tensor(i, [3., 4., 5.], (2, 3))
        a.to_dense()       # [[0, 0, 3], [4, 0, 5]]
    """
    vals = _as_values(values, dtype, device)
    idx = indices if isinstance(indices, Tensor) else tensor(indices, device=device)
    if isinstance(idx, SparseCooTensor):
        raise TypeError("sparse_coo_tensor(): indices must be a dense tensor")
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    if idx.dtype.is_floating_point or idx.dtype.is_complex or idx.dtype is _dtype.bool_:
        if idx.dtype.is_complex or idx.dtype is _dtype.bool_:
            raise RuntimeError(f"indices must be an int64 tensor, got {idx.dtype}")
    if idx._be is not vals._be:
        idx = _dev.to_device(idx, vals._be)
    hidx = host(idx).astype(np.int64)
    if idx.dtype is not _dtype.int64:
        idx = index_tensor(hidx, vals._be)
    if vals.ndim == 0:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{idx.shape[1]}, nnz from values: 1")
    sd, nnz = idx.shape
    if vals.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {vals.shape[0]}")
    dense = tuple(vals.shape[1:])
    if size is None:
        _check_bounds(hidx, None)
        shape = tuple(int(m) + 1 for m in hidx.max(1)) if nnz else (0,) * sd
        shape += dense
    else:
        shape = tuple(int(n) for n in size)
        if len(shape) != sd + len(dense):
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                               f"len(size) = {len(shape)}, sparse_dim = {sd}, dense_dim = "
                               f"{len(dense)}")
        if shape[sd:] != dense:
            raise RuntimeError(f"values has incorrect size, expected {[nnz, *shape[sd:]]}, got "
                               f"{list(vals.shape)}")
        _check_bounds(hidx, shape)
    if requires_grad:
        if not (vals.dtype.is_floating_point or vals.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        if not vals.requires_grad:
            vals = vals.detach().requires_grad_(True)  # type: ignore[attr-defined]
    return make_sparse(idx, vals, shape, bool(is_coalesced) or nnz <= 1)


def to_sparse(self: Tensor, sparse_dim: int | None = None, *, layout: Any = None,
              blocksize: Any = None, dense_dim: Any = None) -> SparseCooTensor:
    """This dense tensor as a coalesced sparse COO tensor: its nonzero entries (or, with
    ``sparse_dim``, its nonzero slices over the first ``sparse_dim`` dims).

    Example::

        lucid.tensor([[0., 1.], [2., 0.]]).to_sparse()    # nnz=2
    """
    if isinstance(self, SparseCooTensor):
        return self
    if layout is not None and layout is not sparse_coo:
        raise RuntimeError(f"to_sparse: layout {layout} is not supported (only "
                           f"lucid.sparse_coo)")
    nd = self.ndim
    sd = nd if sparse_dim is None else int(sparse_dim)
    if not 0 <= sd <= nd:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{nd}] range, "
                           f"but {sd} is given")
    be = self._be
    a = host(self)
    flat = a.reshape(a.shape[:sd] + (-1,)) if sd < nd else a[..., None]
    mask = np.any(flat != 0, axis=-1) if sd else np.ones((), bool)
    idx = np.stack(np.nonzero(mask)) if sd else np.zeros((0, 1), np.int64)
    it = index_tensor(idx.reshape(sd, -1), be)
    if sd == 0:
        vals = self.unsqueeze(0)  # type: ignore[attr-defined]
    else:
        lin = np.ravel_multi_index(tuple(idx), a.shape[:sd]).astype(np.int64)
        vals = index_select(self.reshape((-1,) + tuple(self.shape[sd:])),  # type: ignore
                            0, index_tensor(lin, be))
    return make_sparse(it, vals, tuple(self.shape), True)


def to_sparse_coo(self: Tensor) -> SparseCooTensor:
    """This dense tensor as a sparse COO tensor (``to_sparse()``)."""
    return to_sparse(self)


def dense_layout(self: Tensor) -> Any:
    """The layout of a dense tensor: ``lucid.strided``."""
    return strided


def _check_sparse(x: Any, name: str) -> SparseCooTensor:
    if not isinstance(x, SparseCooTensor):
        raise TypeError(f"{name}: expected a sparse COO tensor, got {type(x).__name__}")
    return x


def mm(mat1: Tensor, mat2: Tensor, reduce: str = "sum") -> Tensor:
    """Matrix product with a sparse operand, without densifying it: sparse (n, m) @ dense
    (m, k) and dense (n, m) @ sparse (m, k) give a dense (n, k) (a gather and a scatter-add
    over the nonzeros, O(nnz * k)); sparse @ sparse gives a coalesced sparse matrix. Gradients
    reach the dense operands and the sparse operands' values (a sparse leaf's on its pattern).

    Example::

        out = lucid.sparse.mm(adj, features)     # adj: (N, N) sparse, features: (N, F)
        a2 = lucid.sparse.mm(adj, adj)           # sparse (N, N): two-hop weights
    """
    if reduce != "sum":
        raise NotImplementedError(f"sparse.mm: reduce='{reduce}' is not supported (only 'sum')")
    if isinstance(mat1, SparseCooTensor):
        return mat1.mm(mat2)
    if isinstance(mat2, SparseCooTensor):
        if isinstance(mat1, Tensor) and mat1.ndim != 2:
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but "
                             "got -2)")
        return dense_sparse_mm(mat1, mat2)
    return dense_mm(mat1, mat2)


def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """``lucid.sparse.mm(input, mat2)``."""
    return mm(input, mat2)


def _layout_name(x: Any) -> str:
    return "Sparse" if isinstance(x, SparseCooTensor) else "Strided"


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1.0,
          alpha: Any = 1.0) -> Tensor:
    """``beta * mat + alpha * (mat1 @ mat2)`` for a sparse ``mat1`` and dense ``mat``, ``mat2``
    (``mat`` broadcasts to the product's shape; with ``beta=0`` it is ignored, NaNs included).
    Dense ``mat1`` and ``mat2`` give a plain dense ``addmm``.

    Example::

        lucid.sparse.addmm(bias, adj, x, beta=0.5, alpha=2.0)
    """
    if isinstance(mat, SparseCooTensor):
        raise RuntimeError("addmm_sparse_dense: expected strided result tensor, got tensor "
                           "with layout Sparse")
    if isinstance(mat2, SparseCooTensor):
        raise RuntimeError(f"addmm_sparse_dense: expected either 'mat1' to have sparse layout "
                           f"and 'mat2' to have strided layout, got 'mat1' with layout "
                           f"{_layout_name(mat1)} and 'mat2' with layout Sparse")
    prod = mm(mat1, mat2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    mat = expand(mat, *prod.shape)
    return prod + (mat if beta == 1 else mat * beta)


def sum(input: SparseCooTensor, dim: Any = None, dtype: Any = None) -> Tensor:  # noqa: A001
    """Sum of a sparse tensor: every entry (a dense 0-d tensor), or over ``dim``: a sparse
    tensor while some sparse dims remain, else a dense one. Differentiable w.r.t. the values.

    Example::

        lucid.sparse.sum(adj)             # total weight
        lucid.sparse.sum(adj, dim=1)      # sparse (N,) out-degrees
    """
    return sparse_sum(_check_sparse(input, "sparse.sum"), dim, dtype)


def _softmax_parts(input: Any, dim: int, dtype: Any, name: str) -> tuple:
    """(coalesced s, shifted values, exp of them, per-entry group sum of the exps)."""
    s = coalesce(_check_sparse(input, name))
    if dtype is not None:
        s = s.to(dtype)
    nd, sd = s.ndim, s.sparse_dim()
    d = norm_dim(dim, nd)
    if s.dense_dim() != 0 or d >= sd:
        raise NotImplementedError(f"{name}: only sparse dims of a tensor without dense dims "
                                  f"are supported")
    be, vals = s._be, s._vals
    nnz = vals.shape[0]
    if nnz == 0:
        return s, vals, vals, vals
    idx = host(s._idx)
    others = [k for k in range(sd) if k != d]
    group = (np.ravel_multi_index(tuple(idx[others]), tuple(s._size[k] for k in others))
             if others else np.zeros(nnz, np.int64))
    _, group = np.unique(group, return_inverse=True)
    group = group.reshape(-1)
    n_groups = int(group.max()) + 1
    shift = np.full(n_groups, -np.inf)
    np.maximum.at(shift, group, host(vals).astype(np.float64))  # constant per group: no grad
    shift[~np.isfinite(shift)] = 0.0
    g = index_tensor(group, be)
    z = vals - tensor(shift[group], dtype=vals.dtype, device=be.name)
    e = z.exp()  # type: ignore[attr-defined]
    zeros = tensor(np.zeros(n_groups), dtype=vals.dtype, device=be.name)
    return s, z, e, index_select(index_add(zeros, 0, g, e), 0, g)


def softmax(input: SparseCooTensor, dim: int, dtype: Any = None) -> SparseCooTensor:
    """Softmax over the stored entries along sparse dim ``dim`` (unstored entries count as
    minus infinity, as in ``torch.sparse.softmax``); same pattern, coalesced.

    Example::

        att = lucid.sparse.softmax(scores, dim=1)     # row-normalised attention on edges
    """
    s, _, e, den = _softmax_parts(input, dim, dtype, "sparse.softmax")
    return s if not s._nnz() else make_sparse(s._idx, e / den, s._size, True)


def log_softmax(input: SparseCooTensor, dim: int, dtype: Any = None) -> SparseCooTensor:
    """Log of ``softmax(input, dim)`` over the stored entries, computed stably.

    Example::

        logp = lucid.sparse.log_softmax(scores, dim=1)
    """
    s, z, _, den = _softmax_parts(input, dim, dtype, "sparse.log_softmax")
    return s if not s._nnz() else make_sparse(s._idx, z - den.log(), s._size, True)


def _legacy(d: Any) -> Any:
    def ctor(indices: Any, values: Any, size: Any = None) -> SparseCooTensor:
        return sparse_coo_tensor(indices, values, size, dtype=d)
    return ctor


FloatTensor = _legacy(_dtype.float32)
FloatTensor.__doc__ = """Legacy ``FloatTensor(indices, values, size)``: a float32 sparse tensor."""
DoubleTensor = _legacy(_dtype.float64)
DoubleTensor.__doc__ = """Legacy ``DoubleTensor(indices, values, size)``: float64 sparse."""
LongTensor = _legacy(_dtype.int64)
LongTensor.__doc__ = """Legacy ``LongTensor(indices, values, size)``: int64 sparse."""
