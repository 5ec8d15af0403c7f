"""Matrix helpers PyTorch scripts lean on: tril/triu, diag/diagonal/trace, addmm, lerp,
einsum. Composed from existing ops (principle 2), so every backend gets them for free."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dims import norm_dim
from .._tensor import Tensor
from ..autograd.function import Op
from . import _autocast as _ac
from .creation import arange, zeros
from .elementwise import add, mul, sub
from .matmul import matmul, out_dtype_operands
from .reduce import sum as _sum
from .select import where
from .views import ViewOp

__all__ = ["tril", "triu", "diag", "diagonal", "trace", "addmm", "lerp", "einsum", "diag_embed"]


def _tri_mask(input: Tensor, diagonal: int, upper: bool) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError(f"{'triu' if upper else 'tril'}: input tensor must have at least 2 "
                           "dimensions")
    r, c = input.shape[-2], input.shape[-1]
    i = arange(r, device=input.device).unsqueeze(1)
    j = arange(c, device=input.device).unsqueeze(0)
    return (j - i >= diagonal) if upper else (j - i <= diagonal)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle (elements with ``col - row <= diagonal``); the rest zero.

    Example::

        lucid.tril(lucid.ones(3, 3))
    """
    return where(_tri_mask(input, diagonal, False), input, 0)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle (elements with ``col - row >= diagonal``); the rest zero.

    Example::

        lucid.triu(lucid.ones(3, 3), diagonal=1)
    """
    return where(_tri_mask(input, diagonal, True), input, 0)


class Diagonal(ViewOp):
    """The ``offset`` diagonals of the (d1, d2) planes as the last dim, a view of the input
    (writes through it reach the input, as in torch)."""

    def forward(self, x, offset, d1, d2):
        self.shape = tuple(x.shape)
        self.args = (offset, d1, d2)
        return self.be.diagonal(x, offset, d1, d2)

    def backward(self, g):
        be = self.be
        offset, d1, d2 = self.args
        shape = self.shape
        rest = [i for i in range(len(shape)) if i not in (d1, d2)]
        k = g.shape[-1]
        out = be.zeros(tuple(shape[i] for i in rest) + (shape[d1], shape[d2]), be.dtype_of(g))
        rows = be.asarray(np.arange(k) + max(-offset, 0))
        cols = be.asarray(np.arange(k) + max(offset, 0))
        out = be.setitem(out, (Ellipsis, rows, cols), g)
        where_ = {d1: len(rest), d2: len(rest) + 1} | {a: i for i, a in enumerate(rest)}
        return be.transpose(out, tuple(where_[i] for i in range(len(shape)))), None, None, None


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of the (dim1, dim2) planes, as the last dim: a view, as in torch
    (``x.diagonal().fill_(1)`` writes into ``x``).

    Example::

        lucid.diagonal(lucid.eye(3))      # tensor([1., 1., 1.])
    """
    nd = max(input.ndim, 1)
    d1, d2 = norm_dim(dim1, nd), norm_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return Diagonal.apply(input, int(offset), d1, d2)


_diagonal_of = diagonal  # ``diag`` has a parameter named ``diagonal``


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-D input becomes a diagonal matrix; a 2-D input gives its diagonal.

    Example::

        lucid.diag(lucid.tensor([1.0, 2.0]))
    """
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    if input.ndim == 2:
        return _diagonal_of(input, diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Square matrices with ``input``'s last dim on their ``offset`` diagonal.

    Example::

        lucid.diag_embed(lucid.ones(2, 3)).shape     # (2, 3, 3)
    """
    k = input.shape[-1]
    n = k + abs(offset)
    rows = arange(k, device=input.device) + max(-offset, 0)
    cols = arange(k, device=input.device) + max(offset, 0)
    out = zeros(tuple(input.shape[:-1]) + (n, n), dtype=input.dtype, device=input.device)
    out[..., rows, cols] = input
    return out if (dim1, dim2) == (-2, -1) else out.movedim((-2, -1), (dim1, dim2))  # type: ignore


def trace(input: Tensor) -> Tensor:
    """Sum of the main diagonal of a 2-D tensor.

    Example::

        lucid.trace(lucid.eye(3))     # tensor(3.)
    """
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if _ac.state.on:
        (input,) = _ac.cast("trace", input)
    return _sum(diagonal(input))


class Ignored(Op):
    """Zeros of the input's shape whose gradient is ``grad * 0``: the ``beta * input`` term
    of the BLAS-style ops at ``beta == 0``, where torch ignores the input's values (NaN and
    inf included) but still scales its gradient by beta."""

    def forward(self, x):
        return self.be.zeros(x.shape, self.be.dtype_of(x))

    def backward(self, g):
        return self.be.mul(g, 0)


def scaled_input(input: Tensor, beta: Any) -> Tensor:
    """The ``beta * input`` term of addmm and its kin, as torch computes it."""
    if beta == 1:
        return input
    return Ignored.apply(input) if beta == 0 else mul(input, beta)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1,
          out_dtype: Any = None) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``; with ``beta=0`` the values of ``input`` are
    ignored (NaN and inf included), as in torch. ``out_dtype`` as ``mm``'s.

    Example::

        lucid.addmm(b, x, w)
    """
    if out_dtype is not None:
        input, mat1, mat2 = out_dtype_operands("addmm", out_dtype, input, mat1, mat2)
    if _ac.state.on:
        input, mat1, mat2 = _ac.cast("addmm", input, mat1, mat2)
    prod = matmul(mat1, mat2)
    if alpha != 1:
        prod = mul(prod, alpha)
    return add(scaled_input(input, beta), prod)


def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``input + weight * (end - input)``.

    Example::

        lucid.lerp(a, b, 0.25)
    """
    return add(input, mul(weight, sub(end, input)))


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation over one or two operands, built from permute, reshape,
    broadcasting multiply, sum and matmul (so it is differentiable on every device).

    Example::

        lucid.einsum("bij,bjk->bik", a, b)
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    if "..." in eq:
        raise NotImplementedError("einsum with '...' is not supported")
    if "->" in eq:
        lhs, out = eq.split("->")
    else:
        lhs = eq
        letters = lhs.replace(",", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    ins = lhs.split(",")
    if len(ins) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation" if len(operands) > len(ins) else
                           "einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(ins) > 2:
        acc, acc_sub = operands[0], ins[0]
        for sub_, op in zip(ins[1:], operands[1:]):
            keep = "".join(dict.fromkeys(c for c in acc_sub + sub_
                                         if c in out or c in "".join(ins[ins.index(sub_) + 1:])))
            acc = einsum(f"{acc_sub},{sub_}->{keep}", acc, op)
            acc_sub = keep
        return einsum(f"{acc_sub}->{out}", acc)
    terms = []
    for sub_, op in zip(ins, operands):
        if len(sub_) != op.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(sub_)}) does not match the number of dimensions "
                               f"({op.ndim}) for operand {len(terms)}")
        if len(set(sub_)) != len(sub_):  # repeated index: take the diagonal
            for c in dict.fromkeys(sub_):
                while sub_.count(c) > 1:
                    i = sub_.index(c)
                    j = sub_.index(c, i + 1)
                    op = diagonal(op, 0, i, j)
                    sub_ = sub_[:i] + sub_[i + 1:j] + sub_[j + 1:] + c
        terms.append((sub_, op))
    if len(terms) == 2 and set(out) <= set(terms[0][0] + terms[1][0]):
        res = _einsum_as_matmul(terms, out)
        if res is not None:
            return res
    letters = "".join(dict.fromkeys("".join(s for s, _ in terms) + out))
    aligned = []
    for sub_, op in terms:
        order = [sub_.index(c) for c in letters if c in sub_]
        x = op.permute(*order) if order != list(range(op.ndim)) else op  # type: ignore
        shape = [x.shape[[c for c in letters if c in sub_].index(c)] if c in sub_ else 1
                 for c in letters]
        aligned.append(x.reshape(*shape))  # type: ignore[attr-defined]
    prod = aligned[0] if len(aligned) == 1 else mul(aligned[0], aligned[1])
    summed = tuple(i for i, c in enumerate(letters) if c not in out)
    res = _sum(prod, summed) if summed else prod
    remaining = [c for c in letters if c in out]
    perm = [remaining.index(c) for c in out]
    return res.permute(*perm) if perm != list(range(len(perm))) else res  # type: ignore



def _permuted(x: Any, sub_: str, order: list[str]) -> Any:
    perm = [sub_.index(c) for c in order]
    return x.permute(*perm) if perm != list(range(x.ndim)) else x


def _einsum_as_matmul(terms: list[tuple[str, Any]], out: str) -> Any:
    """A two-operand contraction as one (batched) matmul, as torch computes einsum, instead of
    a broadcast product the size of every index at once ("bij,bjk->bik" at 32 x 128^3: 2 M
    values against 67 M). Letters of one operand only that the output drops are summed
    first; batch letters (both operands and the output) broadcast as matmul's batch
    dimensions. None where a contracted index broadcasts (size 1 against n): the general
    path takes it."""
    (sa, a), (sb, b) = terms
    for i in (0, 1):
        s_, x = (sa, a) if i == 0 else (sb, b)
        other = sb if i == 0 else sa
        drop = tuple(j for j, c in enumerate(s_) if c not in out and c not in other)
        if drop:
            x = _sum(x, drop)
            s_ = "".join(c for c in s_ if c in out or c in other)
        sa, a = (s_, x) if i == 0 else (sa, a)
        sb, b = (s_, x) if i == 1 else (sb, b)
    batch = [c for c in sa if c in sb and c in out]
    con = [c for c in sa if c in sb and c not in out]
    left = [c for c in sa if c not in sb]
    right = [c for c in sb if c not in sa]
    da = {c: a.shape[sa.index(c)] for c in sa}
    db = {c: b.shape[sb.index(c)] for c in sb}
    if any(da[c] != db[c] for c in con) or \
            any(da[c] != db[c] and 1 not in (da[c], db[c]) for c in batch):
        return None
    nl = nr = nc = 1
    for c in left:
        nl *= da[c]
    for c in right:
        nr *= db[c]
    for c in con:
        nc *= da[c]
    am = _permuted(a, sa, batch + left + con).reshape(*[da[c] for c in batch], nl, nc)
    bm = _permuted(b, sb, batch + con + right).reshape(*[db[c] for c in batch], nc, nr)
    y = matmul(am, bm)
    y = y.reshape(*y.shape[:len(batch)], *[da[c] for c in left], *[db[c] for c in right])
    return _permuted(y, "".join(batch + left + right), list(out))
