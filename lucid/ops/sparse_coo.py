"""Sparse COO tensors: ``SparseCooTensor`` (an int64 ``indices`` tensor of shape
``(sparse_dim, nnz)`` plus a ``values`` tensor of shape ``(nnz, *dense_shape)``), coalescing,
``to_dense`` and the matrix products with a sparse operand on either side (sparse_products.py;
their Ops, which never densify: sparse_ops.py).

``SparseCooTensor`` subclasses ``Tensor`` so that ``isinstance(s, lucid.Tensor)`` is True, as
for PyTorch's sparse tensors. It holds no dense array: a dense op that reaches its storage
raises ``NotImplementedError`` naming the sparse backend (PyTorch raises the same type for ops
that have no sparse kernel); call ``to_dense()`` first. Gradients flow through ``values``: the
gradient of a sparse leaf is a sparse tensor on the leaf's own pattern (``torch.sparse.mm``'s
rule for sparse @ dense; lucid follows it for ``lucid.mm``, ``@`` and sparse @ sparse too, where
PyTorch gives a leaf the unmasked product gradient: equal on the leaf's pattern). The gradients
of a ``values`` tensor that requires grad are PyTorch's in every case.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from .. import _dtype
from .._dims import norm_dim
from .._repr import _add_suffixes
from .._tensor import Size, Tensor, _make
from . import device as _dev
from .index import index_select
from .index_update import index_add
from .movement import cat
from .sparse_ops import ToDense, body_str, host, index_tensor, sparse_coo
from .sparse_products import (
    dense_matmul_sparse,
    sparse_matmul_dense,
    sparse_mm,
    spgemm_parts,
)

__all__ = ["SparseCooTensor", "coalesce", "to_dense", "sparse_mm", "sparse_sparse_mm",
           "sparse_sum", "make_sparse"]


def make_sparse(indices: Tensor, values: Tensor, size: tuple[int, ...],
                coalesced: bool) -> SparseCooTensor:
    """A ``SparseCooTensor`` from checked parts (no validation, no copy)."""
    s = SparseCooTensor.__new__(SparseCooTensor)
    s._be = values._be
    s._rg = False
    s._grad = None
    s._vc = values._vc
    s._idx = indices
    s._vals = values
    s._size = Size(size)
    s._coal = coalesced
    return s


def _not_supported(self: Any) -> Any:
    raise NotImplementedError(
        f"Could not run this operation with arguments from the "
        f"'Sparse{self._be.name.upper()}' backend: lucid's sparse COO tensors support "
        f"to_dense(), coalesce(), t(), +, scalar *, sum and matrix products; call "
        f".to_dense() first for other operations")


class SparseCooTensor(Tensor):
    """A sparse tensor in COO layout, made by ``lucid.sparse_coo_tensor`` or
    ``Tensor.to_sparse()``.

    Example::

        i = lucid.tensor([[0, 1, 1], [2, 0, 2]])
        a = lucid.sparse_coo_tensor(i, lucid.tensor([3., 4., 5.]), (2, 3))
        a @ lucid.ones(3, 2)           # dense (2, 3) @ (3, 2) without densifying a
    """

    __slots__ = ()
    _idx: Tensor
    _vals: Tensor
    _size: Size
    _coal: bool

    _data = property(_not_supported)
    is_sparse = True
    layout = sparse_coo

    # ---- structure ---------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return self._size

    @property
    def dtype(self) -> _dtype.dtype:
        return self._vals.dtype

    @property
    def device(self) -> Any:
        return self._vals.device

    @property
    def ndim(self) -> int:
        return len(self._size)

    @property
    def is_cuda(self) -> bool:
        return self._be.name == "gpu"

    def size(self, dim: int | None = None) -> Any:
        """The shape, or its length along ``dim``."""
        return self._size if dim is None else self._size[dim]

    def dim(self) -> int:
        """The number of dimensions (sparse + dense)."""
        return len(self._size)

    def numel(self) -> int:
        """The number of elements of the dense equivalent."""
        return self._size.numel()

    def sparse_dim(self) -> int:
        """How many leading dims the indices address."""
        return self._idx.shape[0]

    def dense_dim(self) -> int:
        """How many trailing dims each value has."""
        return self._vals.ndim - 1

    def _nnz(self) -> int:
        """The number of stored entries (duplicates counted while uncoalesced)."""
        return self._vals.shape[0]

    def is_coalesced(self) -> bool:
        """True when the indices are sorted and unique."""
        return self._coal

    def _indices(self) -> Tensor:
        """The ``(sparse_dim, nnz)`` int64 indices, coalesced or not."""
        return self._idx

    def _values(self) -> Tensor:
        """The ``(nnz, *dense)`` values, coalesced or not."""
        return self._vals

    def indices(self) -> Tensor:
        """The indices of a coalesced tensor."""
        if not self._coal:
            raise RuntimeError(
                "Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._idx

    def values(self) -> Tensor:
        """The values of a coalesced tensor (differentiable)."""
        if not self._coal:
            raise RuntimeError(
                "Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._vals

    def __len__(self) -> int:
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.to_dense().item())

    # ---- autograd (carried by the values) ------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._vals.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._vals.requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> SparseCooTensor:
        """Set ``requires_grad`` in place (on the values, which carry the gradient)."""
        self._vals.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self) -> Any:
        return self._vals.grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._vals.is_leaf

    @property
    def grad(self) -> SparseCooTensor | None:
        """The gradient: a sparse tensor on this tensor's pattern, or None."""
        g = self._vals.grad
        return None if g is None else make_sparse(self._idx, g, self._size, self._coal)

    @grad.setter
    def grad(self, value: Any) -> None:
        self._vals.grad = None if value is None else value._vals

    @grad.deleter
    def grad(self) -> None:
        self._vals.grad = None

    def detach(self) -> SparseCooTensor:
        """The same entries, cut from the graph."""
        return make_sparse(self._idx, self._vals.detach(), self._size, self._coal)

    @property
    def data(self) -> SparseCooTensor:
        return self.detach()

    def clone(self, *, memory_format: Any = None) -> SparseCooTensor:
        """A copy of the entries (differentiable through the values)."""
        return make_sparse(self._idx.clone(), self._vals.clone(), self._size, self._coal)

    # ---- conversions -----------------------------------------------------------------------
    def to(self, *args: Any, **kwargs: Any) -> SparseCooTensor:
        """This tensor on another device and/or dtype (``Tensor.to``'s arguments)."""
        be, dt, _, copy, _ = _dev.parse_to(*args, **kwargs)
        idx, vals = self._idx, self._vals
        if be is not None and be is not self._be:
            idx, vals = _dev.to_device(idx, be), _dev.to_device(vals, be)
        if dt is not None:
            vals = vals.to(dt)
        if idx is self._idx and vals is self._vals:
            return self.clone() if copy else self
        return make_sparse(idx, vals, self._size, self._coal)

    def cpu(self) -> SparseCooTensor:
        """This tensor on the "cpu" device."""
        return self.to("cpu")

    def gpu(self, device: Any = None) -> SparseCooTensor:
        """This tensor on the "gpu" device."""
        return self.to("gpu")

    def cuda(self, device: Any = None) -> SparseCooTensor:
        """This tensor on the "gpu" device."""
        return self.to("gpu")

    def float(self) -> SparseCooTensor:
        """Values cast to float32."""
        return self.to(_dtype.float32)

    def double(self) -> SparseCooTensor:
        """Values cast to float64."""
        return self.to(_dtype.float64)

    def to_dense(self, dtype: Any = None, *, masked_grad: bool | None = None) -> Tensor:
        """The dense tensor (duplicates summed); differentiable w.r.t. the values."""
        out = to_dense(self)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, *args: Any, layout: Any = None, **kwargs: Any) -> SparseCooTensor:
        """Already sparse: returns self."""
        return self

    def to_sparse_coo(self) -> SparseCooTensor:
        """Already sparse: returns self."""
        return self

    def coalesce(self) -> SparseCooTensor:
        """Sorted, unique indices with duplicates summed (self when already coalesced)."""
        return coalesce(self)

    def numpy(self, *, force: bool = False) -> np.ndarray:
        raise TypeError("can't convert sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def tolist(self) -> Any:
        raise RuntimeError("tolist() is not supported for sparse tensors: call .to_dense() "
                           "first")

    # ---- arithmetic ----------------------------------------------------------------------
    def t(self) -> SparseCooTensor:
        """Transpose of a 2-D sparse matrix (a view of the same values)."""
        if self.sparse_dim() != 2 or self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, "
                               f"but got {self.sparse_dim()} sparse and {self.dense_dim()} "
                               f"dense dimensions")
        idx = index_select(self._idx, 0, index_tensor(np.array([1, 0]), self._be))
        return make_sparse(idx, self._vals, (self._size[1], self._size[0]), False)

    @property
    def T(self) -> SparseCooTensor:
        """``t()`` of a 2-D sparse matrix."""
        return self.t()

    def mul(self, other: Any) -> SparseCooTensor:
        """Multiply the values by a number or a one-element dense tensor."""
        if isinstance(other, SparseCooTensor) or (
                isinstance(other, Tensor) and other.numel() != 1):
            raise NotImplementedError("sparse * tensor: only a scalar factor is supported; "
                                      "use to_dense() for an elementwise product")
        if isinstance(other, Tensor):
            other = other.reshape(())  # type: ignore[attr-defined]
        return make_sparse(self._idx, self._vals * other, self._size, self._coal)

    __mul__ = mul
    __rmul__ = mul

    def div(self, other: Any) -> SparseCooTensor:
        """Divide the values by a number."""
        return self.mul(1.0 / other)

    __truediv__ = div

    def __neg__(self) -> SparseCooTensor:
        return make_sparse(self._idx, -self._vals, self._size, self._coal)

    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        """Sum with a sparse tensor of the same shape (sparse result) or a dense one."""
        if not isinstance(other, SparseCooTensor):
            if isinstance(other, Tensor):
                return to_dense(self) + (other if alpha == 1 else other * alpha)
            return NotImplemented
        if other._size != self._size:
            raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but "
                               f"{list(self._size)} != {list(other._size)}")
        if other.sparse_dim() != self.sparse_dim():
            raise RuntimeError("add: expected 'self' and 'other' to have same sparse "
                               "dimensions")
        ov = other._vals if alpha == 1 else other._vals * alpha
        if ov.dtype is not self._vals.dtype:
            ov = ov.to(self._vals.dtype)
        if other._be is not self._be:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {self._be.name} and {other._be.name}!")
        out = make_sparse(cat([self._idx, other._idx], 1), cat([self._vals, ov], 0),
                          self._size, False)
        return coalesce(out)

    __add__ = add

    def __radd__(self, other: Any) -> Any:
        return self.add(other)

    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        """Difference with a sparse tensor of the same shape."""
        return self.add(other, alpha=-alpha)

    __sub__ = sub

    def mm(self, mat2: Tensor) -> Tensor:
        """Sparse (n, m) @ dense (m, k) -> dense (n, k); sparse @ sparse -> sparse."""
        if isinstance(mat2, SparseCooTensor):
            return sparse_sparse_mm(self, mat2)
        if isinstance(mat2, Tensor) and mat2.ndim != 2:
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but "
                             "got 1)")
        return sparse_mm(self, mat2)

    def matmul(self, other: Tensor) -> Tensor:
        """Sparse 2-D @ dense (1-D, 2-D or batched: dense result) or @ sparse 2-D (sparse)."""
        if isinstance(other, SparseCooTensor):
            return sparse_sparse_mm(self, other)
        return sparse_matmul_dense(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        """Dense (1-D, 2-D or batched) @ sparse 2-D: a dense result."""
        if not isinstance(other, Tensor):
            return NotImplemented
        return dense_matmul_sparse(other, self)

    __matmul__ = matmul
    _sparse_matmul = matmul  # what lucid.matmul / lucid.mm hand a sparse left operand to
    _sparse_rmatmul = __rmatmul__  # ... and a sparse right operand (dense left)

    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        """Sum of all entries (dense 0-d), or over ``dim`` (see ``lucid.sparse.sum``)."""
        if keepdim:
            raise NotImplementedError("sum of a sparse tensor: keepdim=True is not supported")
        return sparse_sum(self, dim, dtype)

    # ---- printing ------------------------------------------------------------------------
    def __repr__(self) -> str:
        sfx = []
        if self._be.name != "cpu":
            sfx.append(f"device='{self._be.name}'")
        sfx += [f"size={tuple(self._size)}", f"nnz={self._nnz()}"]
        d = self.dtype
        if d not in (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool_):
            sfx.append(f"dtype=lucid.{d.name}")
        sfx.append("layout=lucid.sparse_coo")
        if self.grad_fn is not None:
            sfx.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self.requires_grad:
            sfx.append("requires_grad=True")
        body = ("tensor(indices=tensor(" + body_str(self._idx, 22) + "),\n       values=tensor("
                + body_str(self._vals, 21) + ")")
        # PyTorch starts a sparse tensor's suffixes on a new line
        return _add_suffixes(body + ",\n       " + sfx[0], sfx[1:], 7)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(repr(self), spec)

    def element_size(self) -> int:
        """Bytes per value."""
        return self._vals.element_size()

    def __deepcopy__(self, memo: dict) -> SparseCooTensor:
        out = make_sparse(copy.deepcopy(self._idx, memo), copy.deepcopy(self._vals, memo),
                          self._size, self._coal)
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol: Any) -> tuple:
        return (make_sparse, (self._idx.detach(), self._vals.detach(), tuple(self._size),
                              self._coal))


def coalesce(s: SparseCooTensor) -> SparseCooTensor:
    """Sort the indices lexicographically and sum the values of repeated ones (the sum is
    differentiable w.r.t. the values)."""
    if s._coal:
        return s
    be, sd = s._be, s.sparse_dim()
    idx = host(s._idx)
    nnz = idx.shape[1]
    if nnz == 0:
        return make_sparse(s._idx, s._vals, s._size, True)
    lin = np.ravel_multi_index(tuple(idx), tuple(s._size[:sd])) if sd else np.zeros(nnz, np.int64)
    uniq, first, inv = np.unique(lin, return_index=True, return_inverse=True)
    new_idx = index_tensor(idx[:, first], be)
    if len(uniq) == nnz:
        order = np.argsort(lin, kind="stable")
        vals = s._vals
        if not np.array_equal(order, np.arange(nnz)):
            vals = index_select(vals, 0, index_tensor(order, be))
    else:
        zeros = _make(be.zeros((len(uniq),) + tuple(s._vals.shape[1:]), s._vals.dtype), be,
                      False, None)
        vals = index_add(zeros, 0, index_tensor(inv.reshape(-1), be), s._vals)
    return make_sparse(new_idx, vals, s._size, True)


def to_dense(s: SparseCooTensor) -> Tensor:
    """The dense equivalent of ``s`` (repeated indices summed)."""
    be = s._be
    rows = tuple(be.getitem(s._idx._data, i) for i in range(s.sparse_dim()))
    return ToDense.apply(s._vals, rows, tuple(s._size))


def sparse_sparse_mm(a: SparseCooTensor, b: SparseCooTensor) -> SparseCooTensor:
    """``a @ b`` for two sparse matrices: a coalesced sparse matrix whose values are
    differentiable w.r.t. both operands' values (see sparse_products.py)."""
    idx, vals, size = spgemm_parts(a, b)
    return make_sparse(idx, vals, size, True)


def sparse_sum(s: SparseCooTensor, dim: Any = None, dtype: Any = None) -> Tensor:
    """``lucid.sparse.sum``: all entries (dense 0-d) or over ``dim`` (sparse while sparse dims
    remain)."""
    if dtype is not None:
        s = s.to(dtype)
    if dim is None:
        return s._vals.sum()  # type: ignore[attr-defined]
    nd, sd = s.ndim, s.sparse_dim()
    dims = sorted({norm_dim(d, nd) for d in (dim if isinstance(dim, (tuple, list)) else [dim])})
    vals = s._vals
    dd = [d - sd + 1 for d in dims if d >= sd]
    if dd:
        vals = vals.sum(dd)  # type: ignore[attr-defined]
    keep = [d for d in range(sd) if d not in dims]
    if len(keep) == sd:
        return make_sparse(s._idx, vals, tuple(n for d, n in enumerate(s._size)
                                               if d not in dims), s._coal)
    if not keep:
        return vals.sum(0)  # type: ignore[attr-defined]
    idx = index_select(s._idx, 0, index_tensor(np.array(keep), s._be))
    size = tuple(s._size[d] for d in keep) + tuple(
        n for d, n in enumerate(s._size) if d >= sd and d not in dims)
    return coalesce(make_sparse(idx, vals, size, False))
