"""The LU factorization with partial pivoting of ``lucid.linalg``: ``lu``, ``lu_factor``,
``lu_factor_ex`` and ``lu_solve``, batched over leading dims, for square and rectangular
matrices, with PyTorch's results (LAPACK ``getrf``'s 1-based int32 pivots), errors and
gradients.

One op (``LU``) runs ``getrf`` on a host copy of each matrix and carries PyTorch's backward
(``linalg_lu_backward`` in torch/csrc/autograd/FunctionsManual.cpp) for ``P, L, U``. The
compact ``LU`` of ``lu_factor`` is built from ``L`` and ``U`` with differentiable ops, and
``lu_solve`` is two triangular solves and a permutation, so their gradients come from those.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ._util import wrap
from .creation import zeros
from .linalg import tril
from .linalg_base import Packed, apply_packed, batch_prefix, check_matrix, mT
from .matmul import matmul
from .movement import cat
from .triangular import _scipy_linalg, _solve, solve_triangular

__all__ = ["lu", "lu_factor", "lu_factor_ex", "lu_solve", "permutation_matrices"]

linalg_lu = namedtuple("linalg_lu", ["P", "L", "U"])
linalg_lu_factor = namedtuple("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])


def permutation_matrices(piv: np.ndarray, m: int, dtype: Any) -> np.ndarray:
    """The ``P`` (..., m, m) of ``A = P L U`` from LAPACK's 1-based row interchanges
    (..., k): row ``i`` of ``L U`` is row ``perm[i]`` of ``A``."""
    batch = piv.shape[:-1]
    P = np.zeros(batch + (m, m), dtype)
    for b in np.ndindex(*batch):
        perm = np.arange(m)
        for i, j in enumerate(piv[b].astype(np.int64) - 1):
            perm[i], perm[j] = perm[j], perm[i]
        P[b][perm, np.arange(m)] = 1
    return P


def _getrf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(LU, 1-based int32 pivots, int32 infos) of every matrix of a batch."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    lu = np.array(a, order="C")
    piv = np.zeros(batch + (k,), np.int32)
    info = np.zeros(batch, np.int32)
    if k == 0:
        return lu, piv, info
    getrf = _scipy_linalg().lapack.get_lapack_funcs("getrf", (lu,))
    for i in np.ndindex(*batch):
        f, p, inf = getrf(lu[i], overwrite_a=False)
        lu[i], piv[i], info[i] = f, p + 1, inf
    return lu, piv, info


class LU(Packed):
    """``P, L, U`` of each matrix, with the pivots and infos of ``getrf`` as two more outputs
    (as floats, no gradient) for ``lu_factor_ex``."""

    def compute(self, a):
        m, n = a.shape[-2:]
        k = min(m, n)
        lu, piv, info = _getrf(a)
        L = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=a.dtype)
        U = np.triu(lu[..., :k, :])
        P = permutation_matrices(piv, m, a.dtype)
        self.P, self.L, self.U = P, L, U
        return [P, L, U, piv, info]

    def grads(self, gs):
        with np.errstate(all="ignore"):
            return _lu_backward(gs[1], gs[2], self.P, self.L, self.U)


def _right_solve_upper_h(x: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``x U^{-H}`` for an upper triangular U (real: ``x U^{-T}``)."""
    return mT(_solve(u, mT(x), lower=False))


def _lu_backward(gL: np.ndarray, gU: np.ndarray, P: np.ndarray, L: np.ndarray,
                 U: np.ndarray) -> np.ndarray:
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    Lh, Uh = mT(L), mT(U)
    if m == n:
        phi = np.tril(Lh @ gL, -1) + np.triu(gU @ Uh)
        gA = _solve(Lh, _right_solve_upper_h(phi, U), lower=False, unit=True)
    elif m < n:
        phi = np.tril(Lh @ gL - np.triu(gU) @ Uh, -1)
        x = _right_solve_upper_h(phi, U[..., :, :k])
        x = np.concatenate([x + np.triu(gU[..., :, :k]), gU[..., :, k:]], -1)
        gA = _solve(Lh, x, lower=False, unit=True)
    else:
        phi = np.triu(gU @ Uh - Lh @ np.tril(gL, -1))
        x = _solve(mT(L[..., :k, :]), phi, lower=False, unit=True)
        x = np.concatenate([x + np.tril(gL[..., :k, :], -1), gL[..., k:, :]], -2)
        gA = _right_solve_upper_h(x, U)
    return P @ gA


def _check_pivot(pivot: bool, name: str) -> None:
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")


def _factor(A: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    P, L, U, piv, info = apply_packed(LU, A)
    return (P.detach(), L, U, piv.detach().to(_dtype.int32),  # type: ignore[attr-defined]
            info.detach().to(_dtype.int32))  # type: ignore[attr-defined]


def lu(A: Tensor, *, pivot: bool = True) -> Any:
    """``(P, L, U)`` with ``A = P L U``: ``P`` a permutation matrix, ``L`` (m x k) unit lower
    triangular, ``U`` (k x n) upper triangular, ``k = min(m, n)``. Singular matrices are
    factorized too. Differentiable through ``L`` and ``U``.

    Example::

        P, L, U = lucid.linalg.lu(A)     # P @ L @ U == A
    """
    check_matrix(A, "linalg.lu")
    _check_pivot(pivot, "linalg.lu_factor")
    P, L, U, _, _ = _factor(A)
    return linalg_lu(P, L, U)


def _compact(L: Tensor, U: Tensor) -> Tensor:
    """L (strictly below the diagonal) and U (on and above it) in one m x n matrix."""
    m, k, n = L.shape[-2], L.shape[-1], U.shape[-1]
    low = tril(L, -1)
    if n > k:
        low = cat([low, zeros(*low.shape[:-1], n - k, dtype=L.dtype, device=L.device)], -1)
    if m > k:
        U = cat([U, zeros(*U.shape[:-2], m - k, n, dtype=U.dtype, device=U.device)], -2)
    return low + U


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> Any:
    """``(LU, pivots, info)``: the compact LU factorization (``L`` below the diagonal of
    ``LU``, ``U`` on and above it), LAPACK's 1-based int32 row interchanges, and ``info``
    (int32, one per matrix): 0, or the 1-based index of the first zero on U's diagonal. No
    error for singular matrices unless ``check_errors``.

    Example::

        LU, pivots, info = lucid.linalg.lu_factor_ex(A)
    """
    check_matrix(A, "torch.linalg.lu_factor_ex")
    _check_pivot(pivot, "linalg.lu_factor")
    _, L, U, piv, info = _factor(A)
    if check_errors:
        _raise_zero_pivot(info, A, "torch.linalg.lu_factor_ex")
    return linalg_lu_factor_ex(_compact(L, U), piv, info)


def _raise_zero_pivot(info: Tensor, A: Tensor, name: str) -> None:
    infos = np.asarray(info._be.to_numpy(info._data)).reshape(-1)
    bad = np.flatnonzero(infos)
    if bad.size:
        i, d = int(bad[0]), int(infos[bad[0]])
        raise RuntimeError(f"{name}: {batch_prefix(tuple(A.shape), i)}U[{d},{d}] is zero and "
                           "using it on lu_solve would result in a division by zero. If you "
                           "still want to perform the factorization, consider calling "
                           "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor(A: Tensor, *, pivot: bool = True) -> Any:
    """``(LU, pivots)``: the compact LU factorization of ``lu_factor_ex``; raises for a
    singular matrix (use ``lu`` or ``lu_factor_ex`` to factorize one anyway).

    Example::

        LU, pivots = lucid.linalg.lu_factor(A)
        X = lucid.linalg.lu_solve(LU, pivots, B)
    """
    check_matrix(A, "torch.linalg.lu_factor")
    _check_pivot(pivot, "linalg.lu_factor")
    _, L, U, piv, info = _factor(A)
    _raise_zero_pivot(info, A, "torch.linalg.lu_factor")
    return linalg_lu_factor(_compact(L, U), piv)


def _lu_solve_checks(LU: Tensor, pivots: Tensor, B: Tensor, left: bool) -> None:
    if not isinstance(B, Tensor) or B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 "
                           "dimensions.")
    check_matrix(LU, "torch.linalg.lu_solve", square=True)
    if LU.dtype is not B.dtype:
        raise RuntimeError(
            "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
            f"{_dtype.torch_name(LU.dtype)} and B of type {_dtype.torch_name(B.dtype)} instead")
    if not isinstance(pivots, Tensor) or pivots.dtype is not _dtype.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type "
                           "torch.int32")
    n = LU.shape[-1]
    if pivots.ndim < 1 or pivots.shape[-1] != n:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the "
                           "dimension of the matrix")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError("linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the "
                           f"same, but got pivots with shape {list(pivots.shape)} instead")
    k = B.shape[-2] if left else B.shape[-1]
    if k != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{eq} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
             adjoint: bool = False) -> Tensor:
    """The solution ``X`` of ``A X = B`` given ``lu_factor(A)``; ``left=False`` solves
    ``X A = B`` and ``adjoint=True`` uses ``A^H`` for ``A``. Batched with broadcasting;
    differentiable in ``LU`` and ``B``.

    Example::

        LU, pivots = lucid.linalg.lu_factor(A)
        X = lucid.linalg.lu_solve(LU, pivots, B)     # A @ X == B
    """
    _lu_solve_checks(LU, pivots, B, left)
    piv = np.asarray(pivots._be.to_numpy(pivots._data))
    n = LU.shape[-1]
    if piv.size and piv.min() < 1:
        raise RuntimeError("Pivots given to lu_solve must all be greater or equal to 1. Did you "
                           "properly pass the result of lu_factor?")
    if piv.size and piv.max() > n:
        raise RuntimeError("Pivots given to lu_solve must all be smaller or equal to "
                           "LU.size(-2). Did you properly pass the result of lu_factor?")
    be = LU._be
    P = wrap(be.from_numpy(permutation_matrices(piv, n, LU.dtype.np)), be)
    LUh = LU.mT  # type: ignore[attr-defined]
    if left and not adjoint:     # X = U^-1 L^-1 P^T B
        Y = matmul(P.mT, B)  # type: ignore[attr-defined]
        Y = solve_triangular(LU, Y, upper=False, unitriangular=True)
        return solve_triangular(LU, Y, upper=True)
    if left:                     # X = P L^-H U^-H B
        Y = solve_triangular(LUh, B, upper=False)
        Y = solve_triangular(LUh, Y, upper=True, unitriangular=True)
        return matmul(P, Y)
    if not adjoint:              # X = B U^-1 L^-1 P^T
        Y = solve_triangular(LU, B, upper=True, left=False)
        Y = solve_triangular(LU, Y, upper=False, left=False, unitriangular=True)
        return matmul(Y, P.mT)  # type: ignore[attr-defined]
    Y = matmul(B, P)             # X = B P L^-H U^-H
    Y = solve_triangular(LUh, Y, upper=True, left=False, unitriangular=True)
    return solve_triangular(LUh, Y, upper=False, left=False)
