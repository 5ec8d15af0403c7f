"""torch's older top-level linear-algebra forms, kept by torch beside ``torch.linalg`` and
still common in code: ``lu`` (compact factorization with pivots), ``lu_unpack``,
``lu_solve(b, LU_data, LU_pivots)``, ``triangular_solve``, ``cholesky_solve``,
``cholesky_inverse``, ``orgqr`` and ``matrix_exp``. Each is written over the ``linalg`` ops,
so values, batching and gradients are theirs.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ._util import wrap
from .linalg import tril, triu
from .linalg_base import Packed, apply_packed, check_matrix
from .linalg_decomp import det as _linalg_det
from .linalg_lu import lu_factor_ex, permutation_matrices
from .linalg_lu import lu_solve as _linalg_lu_solve
from .linalg_matrix_exp import matrix_exp
from .linalg_norm import matrix_norm
from .linalg_structured import householder_product
from .reduce import norm
from .triangular import _scipy_linalg, solve_triangular

__all__ = ["cholesky_inverse", "cholesky_solve", "det", "frobenius_norm", "geqrf", "lu", "lu_solve",
           "lu_unpack", "matrix_exp", "nuclear_norm", "orgqr", "triangular_solve"]

lu_unpack_result = namedtuple("lu_unpack", ["P", "L", "U"])
triangular_solve_result = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])
geqrf_result = namedtuple("geqrf", ["a", "tau"])


class _Geqrf(Packed):
    """LAPACK's ``geqrf`` on each matrix: R on and above the diagonal of ``a``, the
    Householder vectors below it, and their scalars ``tau``; no derivative (as in torch)."""

    def compute(self, a: np.ndarray) -> list[np.ndarray]:
        m, n = a.shape[-2:]
        flat = a.reshape(-1, m, n)
        qr = np.empty_like(flat)
        tau = np.empty((flat.shape[0], min(m, n)), a.dtype)
        if flat.size:
            (fn,) = _scipy_linalg().lapack.get_lapack_funcs(("geqrf",), (flat[0],))
            for i, mat in enumerate(flat):
                qr[i], tau[i] = fn(mat)[:2]
        return [qr.reshape(a.shape), tau.reshape(a.shape[:-2] + (min(m, n),))]

    def grads(self, gs: list[np.ndarray]) -> np.ndarray:
        raise RuntimeError("the derivative for 'geqrf' is not implemented.")


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple[Tensor, ...]:
    """``(LU, pivots)`` (and ``infos`` with ``get_infos``): ``linalg.lu_factor_ex`` in
    torch's older form (``torch.lu`` / ``Tensor.lu``); without ``get_infos`` a singular
    matrix raises as ``lu_factor`` does."""
    LU, piv, info = lu_factor_ex(A, pivot=pivot, check_errors=not get_infos)
    return (LU, piv, info) if get_infos else (LU, piv)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> Any:
    """``(P, L, U)`` from ``lu``'s compact factorization and pivots (empty tensors for the
    parts not asked for), so that ``P @ L @ U`` is the factorized matrix."""
    check_matrix(LU_data, "torch.lu_unpack")
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    if not isinstance(LU_pivots, Tensor) or LU_pivots.dtype is not _dtype.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor "
                           "of torch.int32 dtype.")
    if unpack_data:
        eye = wrap(LU_data._be.from_numpy(np.eye(m, k, dtype=LU_data.dtype.np)), LU_data._be)
        L = tril(LU_data[..., :, :k], -1) + eye
        U = triu(LU_data[..., :k, :])
    else:
        L = U = LU_data.new_empty((0,))
    if unpack_pivots:
        piv = np.asarray(LU_pivots._be.to_numpy(LU_pivots._data))
        if piv.size and (piv.min() < 1 or piv.max() > m):
            raise RuntimeError("torch.lu_unpack: pivots out of range: each must be in "
                               f"[1, {m}]")
        be = LU_data._be
        P = wrap(be.from_numpy(permutation_matrices(piv, m, LU_data.dtype.np)), be)
    else:
        P = LU_data.new_empty((0,))
    return lu_unpack_result(P, L, U)


def lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """The solution ``X`` of ``A X = input`` from ``lu(A)``'s factorization:
    ``linalg.lu_solve`` with torch's older argument order."""
    return _linalg_lu_solve(LU_data, LU_pivots, input)


def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> Any:
    """``(solution, cloned_coefficient)`` for ``op(A) X = input`` with ``A`` triangular and
    ``op`` the transpose when ``transpose``: torch's older ``linalg.solve_triangular``."""
    coef = A.mT if transpose else A  # type: ignore[attr-defined]
    x = solve_triangular(coef, input, upper=bool(upper) != bool(transpose),
                         unitriangular=unitriangular)
    return triangular_solve_result(x, A.clone())


def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
    """The solution ``X`` of ``A X = input`` for ``A = L L^H`` (``U^H U`` when ``upper``),
    given the Cholesky factor ``input2`` (``L`` or ``U``)."""
    L = input2
    Lh = L.mH  # type: ignore[attr-defined]
    if upper:
        y = solve_triangular(Lh, input, upper=False)
        return solve_triangular(L, y, upper=True)
    y = solve_triangular(L, input, upper=False)
    return solve_triangular(Lh, y, upper=True)


def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:
    """The inverse of ``A = L L^H`` (``U^H U`` when ``upper``) from its Cholesky factor
    ``input``."""
    check_matrix(input, "torch.cholesky_inverse", square=True)
    n = input.shape[-1]
    eye = wrap(input._be.from_numpy(np.eye(n, dtype=input.dtype.np)), input._be)
    return cholesky_solve(eye.expand(*input.shape), input, upper)


def orgqr(input: Tensor, input2: Tensor) -> Tensor:
    """The first columns of ``Q`` from the Householder reflectors ``input`` and their scales
    ``input2`` (tau): ``linalg.householder_product`` (``torch.orgqr``)."""
    return householder_product(input, input2)


def det(input: Tensor) -> Tensor:
    """The determinant of a square matrix (or of each matrix of a batch): ``linalg.det``
    under torch's top-level argument name.

    Example::

        lucid.det(lucid.eye(3) * 2)     # tensor(8.)
    """
    return _linalg_det(input)



def frobenius_norm(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """The Frobenius (2-)norm over ``dim`` (torch's older ``frobenius_norm``)."""
    return norm(input, 2, dim if isinstance(dim, (tuple, list)) else (dim,), keepdim)


def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The nuclear norm (sum of singular values) of the matrices over ``dim`` (the last two
    when None): torch's older ``nuclear_norm``, ``linalg.matrix_norm(ord="nuc")``."""
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)


def geqrf(input: Tensor) -> Any:
    """``(a, tau)``: the QR factorization in LAPACK's compact form (``R`` on and above the
    diagonal of ``a``, Householder vectors below it with scalars ``tau``), batched;
    ``orgqr(a, tau)`` gives ``Q``. Not differentiable, as in torch.

    Example::

        a, tau = lucid.geqrf(A)
        Q = lucid.orgqr(a, tau)      # Q @ a.triu() == A
    """
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"\"geqrf_cpu\" not implemented for '{_dtype.torch_name(input.dtype)}'")
    a, tau = apply_packed(_Geqrf, input)
    return geqrf_result(a, tau)
