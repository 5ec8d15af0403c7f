"""The LDL factorization of symmetric matrices (Bunch-Kaufman pivoting, LAPACK ``sytrf`` /
``sytrs``): ``lucid.linalg.ldl_factor``, ``ldl_factor_ex`` and ``ldl_solve``, batched over
leading dims, with PyTorch's compact ``LD`` (the lower triangle; ``D``'s 1x1 and 2x2 blocks
on and next to the diagonal), LAPACK's 1-based int32 pivots (negative for 2x2 blocks) and
errors.

LAPACK runs on host copies of the matrices. As in PyTorch, neither op has a derivative: a
backward that reaches one raises.
"""

from __future__ import annotations

import threading
from collections import namedtuple
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Op
from ._util import wrap
from .linalg_base import LinAlgError, batch_prefix, check_square, dev, host
from .triangular import _scipy_linalg

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve"]

linalg_ldl_factor = namedtuple("linalg_ldl_factor", ["LD", "pivots"])
linalg_ldl_factor_ex = namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
_last = threading.local()


class LDLFactor(Op):
    """``LD``; the pivots and infos are left in ``_last.piv`` / ``_last.info``."""

    def forward(self, x):
        a = host(self.be, x)
        n = a.shape[-1]
        batch = a.shape[:-2]
        ld = np.zeros(a.shape, a.dtype)
        piv = _last.piv = np.zeros(batch + (n,), np.int32)
        infos = _last.info = np.zeros(batch, np.int32)
        if n:
            sytrf = _scipy_linalg().lapack.get_lapack_funcs("sytrf", (a,))
            for i in np.ndindex(*batch):
                f, p, info = sytrf(a[i], lower=1)
                ld[i], piv[i], infos[i] = np.tril(f), p, info
        return dev(self.be, ld, a.dtype)

    def backward(self, g):
        raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented")


class LDLSolve(Op):
    def forward(self, ld, b, piv):
        be = self.be
        hl, hb = host(be, ld), host(be, b)
        batch = np.broadcast_shapes(hl.shape[:-2], hb.shape[:-2], piv.shape[:-1])
        hl = np.broadcast_to(hl, batch + hl.shape[-2:])
        hb = np.broadcast_to(hb, batch + hb.shape[-2:])
        hp = np.broadcast_to(piv, batch + piv.shape[-1:])
        out = np.zeros(hb.shape, hb.dtype)
        if hb.size:
            sytrs = _scipy_linalg().lapack.get_lapack_funcs("sytrs", (hl, hb))
            for i in np.ndindex(*batch):
                out[i] = sytrs(hl[i], hp[i], hb[i], lower=1)[0]
        return dev(be, out, hb.dtype)

    def backward(self, g):
        raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented")


def ldl_factor_ex(input: Tensor, *, hermitian: bool = False, check_errors: bool = False) -> Any:
    """``(LD, pivots, info)`` of the LDL factorization ``input = P L D L^T P^T`` of a symmetric
    matrix (read from its lower triangle): ``info`` (int32, one per matrix) is 0, or the
    1-based index of a zero diagonal element of ``D`` (the factorization is then complete
    but ``D`` is singular). ``hermitian`` is accepted for real inputs, where it changes
    nothing.

    Example::

        LD, pivots, info = lucid.linalg.ldl_factor_ex(A @ A.mT)
    """
    check_square(input, "torch.linalg.ldl_factor_ex")
    LD = LDLFactor.apply(input)
    piv, info = _last.piv, _last.info  # set by this thread's forward just now
    if check_errors:
        _raise_singular(info, input, "torch.linalg.ldl_factor_ex")
    be = input._be
    return linalg_ldl_factor_ex(LD, wrap(be.from_numpy(piv), be), wrap(be.from_numpy(info), be))


def _raise_singular(info: np.ndarray, A: Tensor, name: str) -> None:
    flat = info.reshape(-1)
    bad = np.flatnonzero(flat)
    if bad.size:
        i, d = int(bad[0]), int(flat[bad[0]])
        raise LinAlgError(f"{name}: {batch_prefix(tuple(A.shape), i)}The factorization could "
                          f"not be completed because the block diagonal matrix D is singular: "
                          f"D[{d},{d}] is zero.")


def ldl_factor(input: Tensor, *, hermitian: bool = False) -> Any:
    """``(LD, pivots)`` of the LDL factorization of ``ldl_factor_ex``; raises
    ``lucid.linalg.LinAlgError`` where ``D`` is singular.

    Example::

        LD, pivots = lucid.linalg.ldl_factor(A @ A.mT)
        X = lucid.linalg.ldl_solve(LD, pivots, B)
    """
    LD, piv, info = ldl_factor_ex(input, hermitian=hermitian)
    _raise_singular(np.asarray(info._be.to_numpy(info._data)), input, "torch.linalg.ldl_factor")
    return linalg_ldl_factor(LD, piv)


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    """The solution ``X`` of ``A X = B`` given ``ldl_factor(A)``, batched with broadcasting.

    Example::

        LD, pivots = lucid.linalg.ldl_factor(A)
        X = lucid.linalg.ldl_solve(LD, pivots, B)     # A @ X == B
    """
    name = "torch.linalg.ldl_solve"
    check_square(LD, name)
    if not isinstance(B, Tensor) or B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    if not isinstance(pivots, Tensor) or pivots.dtype.is_floating_point \
            or pivots.dtype.is_complex or pivots.dtype is _dtype.bool_:
        got = _dtype.torch_name(pivots.dtype) if isinstance(pivots, Tensor) \
            else type(pivots).__name__
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {got}")
    if LD.dtype is not B.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type "
            f"{_dtype.torch_name(B.dtype)} and A of type {_dtype.torch_name(LD.dtype)} instead.")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape {list(pivots.shape)} instead")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} "
                           f"but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    piv = np.asarray(pivots._be.to_numpy(pivots._data)).astype(np.int32)
    return LDLSolve.apply(LD, B, piv)
