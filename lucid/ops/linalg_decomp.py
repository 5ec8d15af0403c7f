"""Inverses, determinants and factorizations of ``lucid.linalg``: inv, solve, det, slogdet,
cholesky, qr, svd, eigh, batched over leading dims, with PyTorch's backward formulas
(torch/csrc/autograd/FunctionsManual.cpp) written on host arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Op
from ._util import wrap
from .linalg_base import (
    LinAlgError,
    Packed,
    apply_packed,
    batch_infos,
    batch_prefix,
    check_float,
    check_matrix,
    cholesky_info,
    dev,
    first_failure,
    host,
    linalg_cholesky_ex,
    linalg_eigh,
    linalg_inv_ex,
    linalg_qr,
    linalg_slogdet,
    linalg_svd,
    lu_info,
    mT,
    singular_error,
)

__all__ = [
    "inv", "inv_ex", "solve", "det", "slogdet", "logdet", "cholesky", "cholesky_ex", "qr",
    "svd", "svdvals", "eigh", "eigvalsh",
]


def _sum_to(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A broadcast host gradient summed back to ``shape``."""
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


def _eye_where_failed(a: np.ndarray, infos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mask of the failed matrices (``infos != 0``) and ``a`` with identities there."""
    bad = (infos != 0)[..., None, None]
    return bad, np.where(bad, np.eye(a.shape[-1], dtype=a.dtype), a)


# ---- inverse and solve -----------------------------------------------------------------------
class Inv(Op):
    def forward(self, x):
        a = host(self.be, x)
        with np.errstate(all="ignore"):
            try:
                r = np.linalg.inv(a)
            except np.linalg.LinAlgError:
                raise singular_error("linalg.inv", a.shape, _lu_infos(a)) from None
        self.r = r
        return dev(self.be, r, a.dtype)

    def backward(self, g):
        r = self.r
        return dev(self.be, -mT(r) @ host(self.be, g) @ mT(r), r.dtype)


def _lu_infos(a: np.ndarray) -> np.ndarray:
    infos = batch_infos(a, lu_info)
    if not infos.any():  # rounding made the pivots differ from LAPACK's: name the last one
        infos.reshape(-1)[0] = a.shape[-1]
    return infos


def inv(A: Tensor) -> Tensor:
    """The inverse of a square matrix (or of each matrix of a batch).

    Raises ``lucid.linalg.LinAlgError`` for a singular matrix.

    Example::

        lucid.linalg.inv(lucid.tensor([[2.0, 0.0], [0.0, 4.0]]))   # [[0.5, 0], [0, 0.25]]
    """
    check_matrix(A, "linalg.inv", square=True)
    return Inv.apply(A)


def inv_ex(A: Tensor, *, check_errors: bool = False) -> Any:
    """``(inverse, info)``: ``info`` (int32, one per matrix) is 0 where the inverse exists
    and the index of the zero pivot where the matrix is singular; no error unless
    ``check_errors``.

    Example::

        inverse, info = lucid.linalg.inv_ex(A)
    """
    check_matrix(A, "linalg.inv_ex", square=True)
    a = host(A._be, A._data)
    infos = batch_infos(a, lu_info)
    if infos.any():
        if check_errors:
            raise singular_error("linalg.inv_ex", a.shape, infos)
        bad, safe = _eye_where_failed(a, infos)
        with np.errstate(all="ignore"):
            out = Inv.apply(_like(A, safe))
        out = out.masked_fill(_like(A, np.broadcast_to(bad, a.shape)), float("nan"))
    else:
        out = Inv.apply(A)
    return linalg_inv_ex(out, _like(A, infos))


def _like(A: Tensor, a: np.ndarray) -> Tensor:
    return wrap(A._be.from_numpy(np.array(a, order="C")), A._be)


class Solve(Op):
    def forward(self, x, y):
        be = self.be
        a, b = host(be, x), host(be, y)
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        ab = np.broadcast_to(a, batch + a.shape[-2:])
        bb = np.broadcast_to(b, batch + b.shape[-2:])
        with np.errstate(all="ignore"):
            try:
                out = np.linalg.solve(ab, bb)
            except np.linalg.LinAlgError:
                i, _ = first_failure(_lu_infos(ab))
                raise LinAlgError(f"torch.linalg.solve: {batch_prefix(ab.shape, max(i, 0))}The "
                                  "solver failed because the input matrix is singular."
                                  ) from None
        self.a, self.out, self.shapes = ab, out, (a.shape, b.shape)
        return dev(be, out, a.dtype)

    def backward(self, g):
        gb = np.linalg.solve(mT(self.a), host(self.be, g))
        ga = None
        if self.parents[0] is not None:
            ga = dev(self.be, _sum_to(-gb @ mT(self.out), self.shapes[0]), gb.dtype)
        gbr = dev(self.be, _sum_to(gb, self.shapes[1]), gb.dtype) \
            if self.parents[1] is not None else None
        return ga, gbr


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """The solution ``X`` of ``A X = B`` (``X A = B`` with ``left=False``), batched and
    broadcast over leading dims. ``B`` of shape ``(*, n)`` is a batch of vectors.

    Example::

        x = lucid.linalg.solve(A, b)       # A @ x == b
    """
    check_matrix(A, "linalg.solve", square=True)
    check_float(B, "linalg.solve")
    if A.dtype is not B.dtype:
        raise RuntimeError(
            "linalg.solve: Expected A and B to have the same dtype, but found A of type "
            f"{_dtype.torch_name(A.dtype)} and B of type {_dtype.torch_name(B.dtype)} instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if not left:
        if not vector and B.shape[-1] != A.shape[-2]:
            raise RuntimeError(
                "linalg.solve: Incompatible shapes of A and B for the equation XA = B "
                f"({B.shape[-2]}x{B.shape[-1]} and {A.shape[-2]}x{A.shape[-1]})")
        At = A.mT  # type: ignore[attr-defined]
        return solve(At, B) if vector else solve(At, B.mT).mT  # type: ignore[attr-defined]
    Bm = B.unsqueeze(-1) if vector else B  # type: ignore[attr-defined]
    if Bm.shape[-2] != A.shape[-1]:
        raise RuntimeError(
            "linalg.solve: Incompatible shapes of A and B for the equation AX = B "
            f"({A.shape[-2]}x{A.shape[-1]} and {Bm.shape[-2]}x{Bm.shape[-1]})")
    out = Solve.apply(A, Bm)
    return out.squeeze(-1) if vector else out  # type: ignore[attr-defined]


# ---- determinants ------------------------------------------------------------------------------
def _cofactor(a: np.ndarray) -> np.ndarray:
    """``det(A) * A^{-T}``, computed through the SVD so it stays finite for singular A."""
    u, s, vh = np.linalg.svd(a)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    n = s.shape[-1]
    left = np.concatenate([np.ones_like(s[..., :1]), np.cumprod(s, -1)[..., :-1]], -1)
    right = np.concatenate([np.cumprod(s[..., ::-1], -1)[..., ::-1][..., 1:],
                            np.ones_like(s[..., :1])], -1) if n else s
    others = left * right  # the product of every singular value but the i-th
    return sign[..., None, None] * (u * others[..., None, :]) @ vh


class Det(Op):
    def forward(self, x):
        a = host(self.be, x)
        self.a = np.array(a)
        return dev(self.be, np.linalg.det(a), a.dtype)

    def backward(self, g):
        gd = host(self.be, g)
        return dev(self.be, gd[..., None, None] * _cofactor(self.a), self.a.dtype)


def det(A: Tensor) -> Tensor:
    """The determinant of a square matrix (or of each matrix of a batch).

    Example::

        lucid.linalg.det(lucid.eye(3) * 2)     # tensor(8.)
    """
    check_matrix(A, "linalg.det", square=True)
    return Det.apply(A)


class SLogDet(Packed):
    def compute(self, a):
        sign, logabs = np.linalg.slogdet(a)
        self.a = np.array(a)
        return [sign, logabs]

    def grads(self, gs):
        a = self.a
        with np.errstate(all="ignore"):
            try:
                ainv = np.linalg.inv(a)
            except np.linalg.LinAlgError:
                ainv = np.linalg.pinv(a)
        return gs[1][..., None, None] * mT(ainv)


def slogdet(A: Tensor) -> Any:
    """``(sign, logabsdet)``: the sign of the determinant and the log of its absolute value
    (``-inf`` for a singular matrix); differentiable through ``logabsdet``.

    Example::

        sign, logabsdet = lucid.linalg.slogdet(A)
    """
    check_matrix(A, "linalg.slogdet", square=True)
    sign, logabs = apply_packed(SLogDet, A)
    return linalg_slogdet(sign.detach(), logabs)  # type: ignore[attr-defined]


def logdet(input: Tensor) -> Tensor:
    """``log(det(input))``: nan for a negative determinant, ``-inf`` for zero.

    Example::

        lucid.logdet(lucid.eye(3) * 2)     # tensor(2.0794)
    """
    check_matrix(input, "linalg.slogdet", square=True)
    sign, logabs = apply_packed(SLogDet, input)
    return logabs.masked_fill(sign < 0, float("nan"))  # type: ignore[attr-defined]


# ---- Cholesky ----------------------------------------------------------------------------------
class Cholesky(Op):
    def forward(self, x, upper):
        a = host(self.be, x)
        try:
            L = np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            i, info = first_failure(batch_infos(a, cholesky_info))
            raise LinAlgError(
                f"linalg.cholesky: {batch_prefix(a.shape, max(i, 0))}The factorization could "
                "not be completed because the input is not positive-definite (the leading "
                f"minor of order {info} is not positive-definite).") from None
        self.L, self.upper = L, upper
        return dev(self.be, mT(L) if upper else L, a.dtype)

    def backward(self, g):
        L = self.L
        gL = host(self.be, g)
        if self.upper:
            gL = mT(gL)
        P = np.tril(mT(L) @ gL)
        d = np.einsum("...ii->...i", P)
        d *= 0.5
        Linv = np.linalg.inv(L)
        gA = mT(Linv) @ P @ Linv
        return dev(self.be, 0.5 * (gA + mT(gA)), L.dtype)


def cholesky(input: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor ``L`` (lower triangular, ``input = L L^T``) of a symmetric
    positive-definite matrix; ``upper=True`` gives ``L^T``. Reads the lower triangle of ``input``.

    Raises ``lucid.linalg.LinAlgError`` when ``input`` is not positive-definite.

    Example::

        L = lucid.linalg.cholesky(A @ A.mT + lucid.eye(3))
    """
    check_matrix(input, "linalg.cholesky", square=True)
    return Cholesky.apply(input, upper)


def cholesky_ex(input: Tensor, *, upper: bool = False, check_errors: bool = False) -> Any:
    """``(L, info)``: ``info`` (int32, one per matrix) is 0 where the factorization succeeded
    and the order of the failing leading minor elsewhere (those ``L`` are not meaningful);
    no error unless ``check_errors``.

    Example::

        L, info = lucid.linalg.cholesky_ex(A)
    """
    check_matrix(input, "linalg.cholesky", square=True)
    a = host(input._be, input._data)
    infos = batch_infos(a, cholesky_info)
    if infos.any():
        if check_errors:
            return linalg_cholesky_ex(cholesky(input, upper=upper), None)
        _, safe = _eye_where_failed(a, infos)
        L = Cholesky.apply(_like(input, safe), upper)
    else:
        L = Cholesky.apply(input, upper)
    return linalg_cholesky_ex(L, _like(input, infos))


# ---- QR ----------------------------------------------------------------------------------------
def _tri_solve_right(x: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``x R^{-T}`` for an upper triangular R."""
    return mT(np.linalg.solve(r, mT(x)))


def _qr_grad_tall(q: np.ndarray, r: np.ndarray, dq: np.ndarray, dr: np.ndarray) -> np.ndarray:
    qdq = mT(q) @ dq
    rdr = r @ mT(dr)
    low = np.tril(qdq - mT(qdq) + rdr - mT(rdr))
    return q @ (dr + _tri_solve_right(low, r)) + _tri_solve_right(dq - q @ qdq, r)


class QR(Packed):
    def compute(self, a, mode):
        self.mode = mode
        if mode == "r":
            r = np.linalg.qr(a, mode="r")
            return [np.zeros(0, a.dtype), r]
        q, r = np.linalg.qr(a, mode=mode)
        self.q, self.r = q, r
        return [q, r]

    def grads(self, gs):
        if self.mode == "r":
            raise RuntimeError(
                "The derivative of linalg.qr depends on Q, which is not computed when "
                "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                "differentiate through linalg.qr.")
        q, r = self.q, self.r
        m, n = q.shape[-2], r.shape[-1]
        if self.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols.")
        dq, dr = gs
        if m >= n:
            return _qr_grad_tall(q, r, dq, dr)
        u, dv = r[..., :m], dr[..., m:]
        y_a = _qr_grad_tall(q, u, dq + self._y() @ mT(dv), dr[..., :m])
        return np.concatenate([y_a, q @ dv], -1)

    def _y(self) -> np.ndarray:
        return self.q @ self.r[..., self.q.shape[-1]:]


def qr(A: Tensor, mode: str = "reduced") -> Any:
    """``(Q, R)`` with ``A = Q R``, Q with orthonormal columns and R upper triangular.
    ``mode``: ``"reduced"`` (Q is m x k, k = min(m, n)), ``"complete"`` (Q is m x m) or
    ``"r"`` (only R; Q is empty).

    Example::

        Q, R = lucid.linalg.qr(A)
    """
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    check_matrix(A, "linalg.qr")
    Q, R = apply_packed(QR, A, mode)
    return linalg_qr(Q, R)


# ---- SVD and eigh ------------------------------------------------------------------------------
class SVD(Packed):
    def compute(self, a, full_matrices, outputs):
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
        self.u, self.s, self.vh, self.outputs = u, s, vh, outputs
        return [u, s, vh] if outputs == "usv" else [s]

    def grads(self, gs):
        s = self.s
        k = s.shape[-1]
        u, vh = self.u[..., :k], self.vh[..., :k, :]
        if self.outputs == "usv":
            gu, gsv, gvh = gs[0][..., :k], gs[1], gs[2][..., :k, :]
        else:
            gu = gvh = None
            gsv = gs[0]
        ret = np.zeros(s.shape + (k,), s.dtype)
        if gu is not None:
            UhgU = mT(u) @ gu
            UhgU = UhgU - mT(UhgU)
            VhgV = vh @ mT(gvh)
            VhgV = VhgV - mT(VhgV)
            s2 = s * s
            E = s2[..., None, :] - s2[..., :, None]
            idx = np.arange(k)
            E[..., idx, idx] = 1
            ret = (UhgU * s[..., None, :] + s[..., :, None] * VhgV) / E
        ret[..., np.arange(k), np.arange(k)] += gsv
        gA = u @ ret @ vh
        m, n = u.shape[-2], vh.shape[-1]
        if gu is not None and m > k:
            gus = gu / s[..., None, :]
            gA = gA + (gus - u @ (mT(u) @ gus)) @ vh
        if gu is not None and n > k:
            sgv = gvh / s[..., :, None]
            gA = gA + u @ (sgv - (sgv @ mT(vh)) @ vh)
        return gA


def _check_driver(driver: str | None) -> None:
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")


def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None) -> Any:
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, singular values S in descending order.
    ``full_matrices=False`` gives the reduced factors (U m x k, Vh k x n). Gradients are
    defined for distinct singular values. ``driver`` picks a cuSOLVER routine in PyTorch and,
    as there on CPU, must be None here.

    Example::

        U, S, Vh = lucid.linalg.svd(A, full_matrices=False)
    """
    _check_driver(driver)
    check_matrix(A, "linalg.svd")
    U, S, Vh = apply_packed(SVD, A, full_matrices, "usv")
    return linalg_svd(U, S, Vh)


def svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:
    """The singular values of A, in descending order. ``driver`` must be None, as in
    PyTorch on CPU.

    Example::

        lucid.linalg.svdvals(lucid.eye(3) * 2)     # tensor([2., 2., 2.])
    """
    _check_driver(driver)
    check_matrix(A, "linalg.svdvals")
    (S,) = apply_packed(SVD, A, False, "s")
    return S


class Eigh(Packed):
    def compute(self, a, uplo):
        w, v = np.linalg.eigh(a, UPLO=uplo)
        self.w, self.v = w, v
        return [w, v]

    def grads(self, gs):
        w, v = self.w, self.v
        gw, gv = gs
        ret = mT(v) @ gv
        E = w[..., None, :] - w[..., :, None]
        idx = np.arange(w.shape[-1])
        E[..., idx, idx] = 1
        with np.errstate(all="ignore"):
            ret = ret / E
        ret[..., idx, idx] = gw
        gA = v @ ret @ mT(v)
        return 0.5 * (gA + mT(gA))  # as PyTorch: the gradient of a symmetric input


def _uplo(UPLO: str) -> str:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO


def eigh(input: Tensor, UPLO: str = "L") -> Any:
    """``(eigenvalues, eigenvectors)`` of a symmetric matrix, eigenvalues ascending; reads
    the ``UPLO`` triangle ("L" or "U"). Gradients are defined for distinct eigenvalues.

    Example::

        L, V = lucid.linalg.eigh(A + A.mT)
    """
    _uplo(UPLO)
    check_matrix(input, "linalg.eigh", square=True)
    w, v = apply_packed(Eigh, input, UPLO)
    return linalg_eigh(w, v)


def eigvalsh(input: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of a symmetric matrix, ascending.

    Example::

        lucid.linalg.eigvalsh(lucid.eye(2))     # tensor([1., 1.])
    """
    _uplo(UPLO)
    check_matrix(input, "linalg.eigvalsh", square=True)
    return apply_packed(Eigh, input, UPLO)[0]
