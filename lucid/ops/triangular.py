"""Triangular solves (``torch.linalg.solve_triangular``), batched over leading dims with
broadcasting, and differentiable in both operands.

LAPACK does the work on a host copy of the arrays (``be.to_numpy`` / ``be.from_numpy``), so one
implementation serves every device; the backward formulas are PyTorch's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Op
from .linalg_base import mT
from .linalg_decomp import _sum_to

__all__ = ["solve_triangular"]


def _scipy_linalg() -> Any:
    # NOTE: scipy.linalg costs ~0.1 s to import; loaded when a triangular solve first runs
    import scipy.linalg

    return scipy.linalg


def _solve(a: np.ndarray, b: np.ndarray, lower: bool, unit: bool = False) -> np.ndarray:
    """``a^-1 @ b`` for triangular ``a`` (..., n, n) and ``b`` (..., n, k), batch broadcast."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    out = np.empty(batch + b.shape[-2:], np.result_type(a, b))
    st = _scipy_linalg().solve_triangular
    for i in np.ndindex(*batch):
        out[i] = st(a[i], b[i], lower=lower, unit_diagonal=unit, check_finite=False)
    return out


class SolveTriangular(Op):
    def forward(self, a, b, upper, left, unitriangular):
        be = self.be
        ha, hb = be.to_numpy(a), be.to_numpy(b)
        self.sa, self.sb = ha.shape, hb.shape
        self.upper, self.left, self.unit = upper, left, unitriangular
        if left:
            x = _solve(ha, hb, not upper, unitriangular)
        else:  # X A = B  <=>  A^T X^T = B^T
            x = mT(_solve(mT(ha), mT(hb), upper, unitriangular))
        out = be.from_numpy(np.ascontiguousarray(x))
        self.saved = (a, out)
        return out

    def backward(self, g):
        be = self.be
        a, x = (be.to_numpy(s) for s in self.saved)
        gx = be.to_numpy(g)
        p = self.parents
        lower = not self.upper
        if self.left:   # gB = A^-T gX, gA = -gB X^T
            gb = _solve(mT(a), gx, not lower, self.unit)
            ga = -(gb @ mT(x)) if p[0] is not None else None
        else:           # gB = gX A^-T, gA = -X^T gB
            gb = mT(_solve(a, mT(gx), lower, self.unit))
            ga = -(mT(x) @ gb) if p[0] is not None else None
        out_a = out_b = None
        if ga is not None:
            ga = np.tril(ga, -1 if self.unit else 0) if lower else \
                np.triu(ga, 1 if self.unit else 0)
            out_a = be.from_numpy(np.ascontiguousarray(_sum_to(ga, self.sa)))
        if p[1] is not None:
            out_b = be.from_numpy(np.ascontiguousarray(_sum_to(gb, self.sb)))
        return out_a, out_b


def _check_float(t: Any, fn: str, name: str, min_dim: int = 2) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if t.ndim < min_dim:
        raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions.")
    if not t.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: Expected a floating point tensor as input. Got {t.dtype}")


def solve_triangular(input: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """The solution ``X`` of ``A X = B`` (``X A = B`` when not ``left``) for a triangular ``A``
    (``input``), batched with broadcasting, as ``torch.linalg.solve_triangular``. Only the
    triangle ``upper`` names is read; ``unitriangular`` takes the diagonal as ones.

    Example::

        X = solve_triangular(L, B, upper=False)
    """
    _check_float(input, "linalg.solve_triangular", "A")
    _check_float(B, "linalg.solve_triangular", "B")
    if input.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, "
                           f"but found A of type {input.dtype} and B of type {B.dtype} instead")
    n = input.shape[-1]
    if input.shape[-2] != n:
        raise RuntimeError(f"linalg.solve_triangular: A must be batches of square matrices, but "
                           f"they are {input.shape[-2]} by {n} matrices")
    k = B.shape[-2] if left else B.shape[-1]
    if k != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({input.shape[-2]}x{n} "
                           f"and {B.shape[-2]}x{B.shape[-1]})")
    return SolveTriangular.apply(input, B, upper=bool(upper), left=bool(left),
                                 unitriangular=bool(unitriangular))
