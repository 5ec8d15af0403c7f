"""Embedding lookups (with ``padding_idx``, ``max_norm`` renormalisation and
``scale_grad_by_freq``) and ``one_hot``."""

from __future__ import annotations

import math
from typing import Any

from .. import _dtype
from .._tensor import Tensor, _make
from ..autograd import grad_mode
from ..autograd.function import Op

__all__ = ["embedding", "one_hot"]


# ---- embedding, one_hot -------------------------------------------------------------------------


class Embedding(Op):
    """Rows of ``weight`` at ``idx``; backward scatter-adds (repeated indices accumulate)."""

    def forward(self, idx, w, padding_idx, scale_grad):
        self.saved = (idx,)
        self.wshape = w.shape
        self.padding_idx, self.scale_grad = padding_idx, scale_grad
        return self.be.take(w, idx, 0)

    def backward(self, g):
        be = self.be
        d = self.wshape[-1]
        if d == 0 or 0 in g.shape:
            return None, be.zeros(self.wshape, be.dtype_of(g))
        i1 = be.reshape(self.saved[0], (-1,))
        g2 = be.reshape(g, (math.prod(g.shape[:-1]), d))
        if self.scale_grad:
            counts = be.index_add((self.wshape[0],), i1, be.ones(i1.shape, be.dtype_of(g)))
            g2 = be.div(g2, be.expand_dims(be.take(counts, i1, 0), 1))
        gw = be.index_add(self.wshape, i1, g2)
        if self.padding_idx is not None:
            gw = be.setitem(gw, self.padding_idx, 0)
        return None, gw


def _renorm_(weight: Tensor, idx: Any, max_norm: float, norm_type: float) -> None:
    """Scale the rows of ``weight`` that ``idx`` looks up down to ``max_norm``, in place."""
    be = weight._be
    w = weight._data
    n = w.shape[0]
    used = be.gt(be.index_add((n,), (idx,), be.ones(idx.shape, be.dtype_of(w))), 0)
    a = be.abs(w)
    if norm_type == math.inf:
        norms = be.max(a, 1) if w.shape[1] else be.zeros((n,), be.dtype_of(w))
    elif norm_type == -math.inf:
        norms = be.min(a, 1) if w.shape[1] else be.zeros((n,), be.dtype_of(w))
    elif norm_type == 0:
        norms = be.sum(be.astype(be.ne(w, 0), be.dtype_of(w)), 1)
    else:
        norms = be.pow(be.sum(be.pow(a, norm_type), 1), 1.0 / norm_type)
    big = be.logical_and(used, be.gt(norms, max_norm))
    scale = be.where(big, be.div(max_norm, be.add(norms, 1e-7)), 1)
    weight._data = be.assign(w, be.mul(w, be.astype(be.expand_dims(scale, 1), be.dtype_of(w))))
    weight._vc[0] += 1


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Look up rows of ``weight`` (num_embeddings, dim) at integer ``input``.

    The gradient accumulates over repeated indices; the ``padding_idx`` row gets none.
    ``max_norm`` renormalises the looked-up rows of ``weight`` in place. ``sparse`` is accepted
    and ignored (gradients are dense).

    Example::

        w = lucid.randn(10, 3, requires_grad=True)
        embedding(lucid.tensor([[1, 2], [1, 9]]), w).shape    # lucid.Size([2, 2, 3])
    """
    if input.dtype.is_floating_point or input.dtype is _dtype.bool_:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{_dtype.torch_name(input.dtype)} instead (while checking arguments "
                           f"for embedding)")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    n = weight.shape[0]
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= n
    ibe, idx = input._be, input._data
    if input.numel():  # two numbers read back, not the indices
        lo, hi = int(ibe.item(ibe.min(idx))), int(ibe.item(ibe.max(idx)))
        if lo < 0 or hi >= n:
            bad = hi if hi >= n else lo
            raise IndexError(f"index out of range in self (index {bad}, num_embeddings {n})")
    if max_norm is not None:
        with grad_mode.no_grad():
            _renorm_(weight, ibe.reshape(idx, (-1,)), float(max_norm), float(norm_type))
    return Embedding.apply(input, weight, padding_idx, bool(scale_grad_by_freq))


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding with a new last dim of ``num_classes`` (-1: max + 1).

    Example::

        one_hot(lucid.tensor([0, 2]), 3)     # tensor([[1, 0, 0], [0, 0, 1]])
    """
    if tensor.dtype is not _dtype.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    be = tensor._be
    t = tensor._data
    size = tensor.numel()
    hi = int(be.item(be.max(t))) if size else -1  # the number of classes may depend on it
    if num_classes == -1:
        if size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = hi + 1
    if size and int(be.item(be.min(t))) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if size and hi >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = be.arange(0, num_classes, 1, _dtype.int64)
    out = be.astype(be.eq(be.expand_dims(t, -1), classes), _dtype.int64)
    out = be.contiguous(out)  # a transposed index: row-major, as torch's
    return _make(out, be, False, None)
