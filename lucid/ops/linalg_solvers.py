"""Solvers and condition numbers built on ``solve``/``inv``/``svdvals``/``matrix_norm``:
``lucid.linalg.solve_ex``, ``tensorsolve``, ``tensorinv`` and ``cond``, with PyTorch's
arguments, results and errors. Composed of differentiable ops, so their gradients are those
ops' gradients.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

import numpy as np

from .._tensor import Tensor
from ._util import wrap
from .creation import eye, zeros
from .linalg_base import LinAlgError, batch_prefix, check_float
from .linalg_decomp import inv, inv_ex, solve, svdvals
from .linalg_lu import _getrf
from .linalg_norm import matrix_norm
from .select import where

__all__ = ["solve_ex", "tensorsolve", "tensorinv", "cond"]

linalg_solve_ex = namedtuple("linalg_solve_ex", ["result", "info"])


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> Any:
    """``(result, info)``: the solution of ``solve(A, B, left=left)`` and ``info`` (int32, one
    per matrix of A): 0, or the 1-based index of the first zero pivot of A's LU
    factorization where A is singular. No error unless ``check_errors``.

    Difference from PyTorch: the results of singular matrices are NaN (PyTorch leaves what
    LAPACK's triangular solves produce there, infs and NaNs).

    Example::

        X, info = lucid.linalg.solve_ex(A, B)
    """
    check_float(A, "linalg.solve_ex")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        return linalg_solve_ex(solve(A, B, left=left), None)  # raises solve's error
    be = A._be
    _, _, infos = _getrf(np.asarray(be.to_numpy(A._data)))
    info = wrap(be.from_numpy(infos), be)
    if not infos.any():
        return linalg_solve_ex(solve(A, B, left=left), info)
    if check_errors:
        i = int(np.flatnonzero(infos.reshape(-1))[0])
        raise LinAlgError(f"torch.linalg.solve_ex: {batch_prefix(tuple(A.shape), i)}The solver "
                          "failed because the input matrix is singular.")
    bad = wrap(be.from_numpy(np.require((infos != 0)[..., None, None], requirements="C")), be)
    n = A.shape[-1]
    safe = where(bad, eye(n, dtype=A.dtype, device=A.device), A)
    out = solve(safe, B, left=left)
    vector = out.ndim == A.ndim - 1
    mask = bad[..., 0] if vector else bad  # type: ignore[index]
    return linalg_solve_ex(where(mask, math.nan, out), info)


def tensorinv(input: Tensor, ind: int = 2) -> Tensor:
    """The inverse of ``input`` for ``tensordot(input, ., ind)``: with ``input`` of shape
    ``s[:ind] + s[ind:]`` (both parts of equal size), the result has shape ``s[ind:] + s[:ind]``.

    Example::

        A = lucid.eye(4).reshape(4, 2, 2)
        lucid.linalg.tensorinv(A, ind=1).shape     # (2, 2, 4)
    """
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(input.shape)
    head, tail = shape[:ind], shape[ind:]
    p_head, p_tail = math.prod(head), math.prod(tail)
    if p_head != p_tail:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {p_tail} != {p_head}")
    M = input.reshape(p_tail, p_tail)  # type: ignore[attr-defined]
    try:
        out = inv(M)
    except LinAlgError as e:
        raise LinAlgError(str(e).replace("linalg.inv: ", "inv: ", 1)) from None
    return out.reshape(*tail, *head)  # type: ignore[attr-defined]


def tensorsolve(input: Tensor, other: Tensor, dims: Any = None) -> Tensor:
    """The ``X`` with ``tensordot(input, X, X.ndim) == other``; ``dims`` first moves those dims of
    ``input`` to its end. ``X`` has shape ``input.shape[other.ndim:]``.

    Example::

        A = lucid.eye(6).reshape(6, 2, 3)
        X = lucid.linalg.tensorsolve(A, lucid.ones(6))     # X.shape == (2, 3)
    """
    A_ = input
    if dims is not None:
        dims = tuple(dims)
        dest = tuple(range(input.ndim - len(dims), input.ndim))
        A_ = input.movedim(dims, dest)  # type: ignore[attr-defined]
    result_shape = tuple(A_.shape[other.ndim:])
    rp, bp = math.prod(result_shape), math.prod(tuple(other.shape))
    if rp != bp:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {rp} != {bp}")
    X = solve(A_.reshape(rp, rp), other.reshape(-1))  # type: ignore[attr-defined]
    return X.reshape(result_shape)  # type: ignore[attr-defined]


def _ord_text(p: Any) -> str:
    return f"{p:f}" if isinstance(p, float) else str(p)


def _square(A: Tensor, p: Any) -> None:
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={_ord_text(p)}): A must be batches of square "
                           f"matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices")


def cond(input: Tensor, p: Any = None) -> Tensor:
    """The condition number of a matrix (or batch) in the norm ``p``: ``None`` / ``2`` (the
    ratio of the largest to the smallest singular value), ``-2`` (its inverse), ``1``,
    ``-1``, ``inf``, ``-inf``, ``"fro"`` or ``"nuc"`` (``norm(input, p) * norm(inv(input), p)``,
    square matrices only; ``inf`` for a singular one, except ``"nuc"``, which raises).
    Empty matrices give 0.

    Example::

        lucid.linalg.cond(lucid.tensor([[1.0, 0.0], [0.0, 4.0]]))   # tensor(4.)
    """
    check_float(input, "linalg.cond")
    if input.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if isinstance(p, str):
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
        _square(input, p)
    elif p is not None:
        if isinstance(p, bool) or not isinstance(p, (int, float)) \
                or abs(p) not in (1.0, 2.0, math.inf):
            raise RuntimeError(f"linalg.cond got an invalid norm type: {float(p)}")
    real = input.dtype.to_real() if input.dtype.is_complex else input.dtype
    if input.numel() == 0:
        return zeros(*input.shape[:-2], dtype=real, device=input.device)
    if p is None or p in (2, -2):
        s = svdvals(input)
        big, small = s[..., 0], s[..., -1]  # type: ignore[index]
        return small / big if p == -2 else big / small
    _square(input, p)
    if p == "nuc":
        return matrix_norm(input, p) * matrix_norm(inv(input), p)
    inverse, info = inv_ex(input)
    bad = (info > 0).unsqueeze(-1).unsqueeze(-1)  # type: ignore[attr-defined]
    inverse = inverse.masked_fill(bad, math.inf)  # type: ignore[attr-defined]
    result = matrix_norm(input, p) * matrix_norm(inverse, p)
    return result.nan_to_num(math.inf, math.inf, -math.inf)  # type: ignore[attr-defined]
