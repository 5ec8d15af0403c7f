"""The rest of ``lucid.linalg``: pinv, lstsq, matrix_rank, matrix_power, cross, multi_dot,
vecdot, diagonal; and PyTorch's older top-level spellings (``lucid.svd`` with ``V``,
``lucid.qr(some=...)``, ``lucid.inverse``, ``lucid.pinverse``, ...)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._dims import norm_dim
from .._tensor import Tensor
from ..autograd.function import Op
from ._util import wrap
from .creation import eye, zeros
from .linalg import diagonal as _diagonal
from .linalg_base import (
    check_float,
    check_matrix,
    dev,
    host,
    linalg_lstsq,
    mT,
    qr_result,
    slogdet_result,
    svd_result,
)
from .linalg_decomp import Inv, cholesky, inv, qr, slogdet, svd, svdvals
from .matmul import matmul
from .movement import cat
from .reduce import sum as _sum
from .shape import broadcast_tensors

__all__ = [
    "pinv", "lstsq", "matrix_rank", "matrix_power", "cross", "multi_dot", "vecdot",
    "linalg_diagonal", "svd_legacy", "qr_legacy", "slogdet_legacy", "cholesky_legacy", "inverse",
    "pinverse",
]


def _tol(x: Any, be: Any) -> Any:
    if x is None:
        return None
    return np.asarray(host(be, x._data) if isinstance(x, Tensor) else x, dtype=np.float64)


def _cutoff(s: np.ndarray, shape: tuple[int, ...], dt: np.dtype, atol: Any, rtol: Any
            ) -> np.ndarray:
    """PyTorch's threshold ``max(atol, rtol * s_max)`` for pinv and matrix_rank."""
    if rtol is None:
        rtol = 0.0 if atol is not None and np.any(atol > 0) else \
            np.finfo(dt).eps * max(shape[-2], shape[-1])
    atol = 0.0 if atol is None else atol
    smax = s.max(-1) if s.shape[-1] else np.zeros(s.shape[:-1])
    return np.maximum(atol, rtol * smax)


class Pinv(Op):
    def forward(self, x, atol, rtol, hermitian):
        a = host(self.be, x)
        if hermitian:
            w, v = np.linalg.eigh(a)
            keep = np.abs(w) > _cutoff(np.abs(w), a.shape, a.dtype, atol, rtol)[..., None]
            winv = np.where(keep, 1 / np.where(keep, w, 1), 0)
            p = (v * winv[..., None, :]) @ mT(v)
        else:
            u, s, vh = np.linalg.svd(a, full_matrices=False)
            keep = s > _cutoff(s, a.shape, a.dtype, atol, rtol)[..., None]
            sinv = np.where(keep, 1 / np.where(keep, s, 1), 0)
            p = (mT(vh) * sinv[..., None, :]) @ mT(u)
        self.a, self.p = np.array(a), p
        return dev(self.be, p, a.dtype)

    def backward(self, g):
        a, p = self.a, self.p
        G = host(self.be, g)
        m, n = a.shape[-2], a.shape[-1]
        pt, gt = mT(p), mT(G)
        ga = -pt @ G @ pt
        ga = ga + (np.eye(m) - a @ p) @ gt @ (p @ pt)
        ga = ga + (pt @ p) @ gt @ (np.eye(n) - p @ a)
        return dev(self.be, ga, a.dtype)


def pinv(input: Tensor, rcond: Any = None, hermitian: bool = False, *, atol: Any = None,
         rtol: Any = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse; singular values below ``max(atol, rtol * s_max)``
    count as zero (default ``rtol``: eps * max(m, n)). ``hermitian=True`` assumes a symmetric
    ``input`` and uses its eigendecomposition. ``rcond`` (a float or Tensor, PyTorch's older
    spelling) is ``rtol`` with ``atol=0`` and cannot be combined with ``atol`` / ``rtol``.

    Example::

        lucid.linalg.pinv(lucid.tensor([[1.0, 2.0], [2.0, 4.0]]))
    """
    if rcond is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_pinv() received an invalid combination of arguments: "
                            "rcond cannot be combined with atol or rtol")
        atol, rtol = 0.0, rcond
    if not isinstance(input, Tensor) or input.ndim < 2 or not input.dtype.is_floating_point:
        shown = f"{_dtype.torch_name(input.dtype)}{list(input.shape)}" \
            if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(f"linalg.pinv({shown.replace('[', '{[').replace(']', ']}')}): "
                           "expected a tensor with 2 or more dimensions of float, double, "
                           "cfloat or cdouble types")
    check_float(input, "linalg.pinv")
    return Pinv.apply(input, _tol(atol, input._be), _tol(rtol, input._be), hermitian)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(input: Tensor, b: Tensor, rcond: float | None = None, *, driver: str | None = None
          ) -> Any:
    """The least-squares solution of ``input X = b``: a named tuple ``(solution, residuals,
    rank, singular_values)`` as ``torch.linalg.lstsq`` on CPU (default driver ``"gelsy"``).
    ``residuals`` (squared residual norms) is filled for tall full-rank ``input`` with a
    driver other than ``"gelsy"``; ``singular_values`` for ``"gelsd"`` and ``"gelss"``.
    Differentiable through ``solution``.

    Example::

        X = lucid.linalg.lstsq(A, B).solution
    """
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    check_matrix(input, "torch.linalg.lstsq")
    check_float(b, "torch.linalg.lstsq")
    if input.dtype is not b.dtype:
        raise RuntimeError("torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {_dtype.torch_name(input.dtype)} and "
                           f"other's dtype {_dtype.torch_name(b.dtype)}")
    vector = b.ndim == input.ndim - 1
    if vector and b.shape[-1] != input.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-1)")
    Bm = b.unsqueeze(-1) if vector else b  # type: ignore[attr-defined]
    if not vector and Bm.shape[-2] != input.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = input.shape[-2], input.shape[-1]
    eps = np.finfo(input.dtype.np).eps
    rt = rcond if rcond is not None and rcond > 0 else eps * max(m, n)
    X = matmul(pinv(input, rtol=rt), Bm)
    a = host(input._be, input._data)
    s = np.linalg.svd(a, compute_uv=False)
    cut = _cutoff(s, a.shape, a.dtype, None, rt)
    ranks = (s > cut[..., None]).sum(-1).astype(np.int64)
    empty = zeros(0, dtype=input.dtype, device=input.device)
    rank = wrap(input._be.from_numpy(np.array(ranks)), input._be) if driver != "gels" else \
        zeros(0, dtype=_dtype.int64, device=input.device)
    sv = wrap(input._be.from_numpy(np.array(s)), input._be) if driver in ("gelsd", "gelss") \
        else empty
    residuals = empty
    if m > n and driver != "gelsy" and bool(np.all(ranks == n)):
        r = matmul(input, X) - Bm
        residuals = _sum(r * r, -2)
        if vector:
            residuals = residuals.squeeze(-1)  # type: ignore[attr-defined]
    return linalg_lstsq(X.squeeze(-1) if vector else X, residuals,  # type: ignore
                        rank, sv)


def matrix_rank(input: Tensor, tol: Any = None, hermitian: bool = False, *, atol: Any = None,
                rtol: Any = None) -> Tensor:
    """The number of singular values above ``max(atol, rtol * s_max)`` (default ``rtol``:
    eps * max(m, n)), as int64, one per matrix. ``tol`` (a float or Tensor, PyTorch's older
    spelling) is ``atol`` with ``rtol=0`` and cannot be combined with ``atol`` / ``rtol``.

    Example::

        lucid.linalg.matrix_rank(lucid.ones(3, 3))      # tensor(1)
    """
    if tol is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_matrix_rank() received an invalid combination of "
                            "arguments: tol cannot be combined with atol or rtol")
        atol, rtol = tol, 0.0
    check_matrix(input, "linalg.matrix_rank")
    a = host(input._be, input._data)
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    cut = _cutoff(s, a.shape, a.dtype, _tol(atol, input._be), _tol(rtol, input._be))
    ranks = (s > cut[..., None]).sum(-1).astype(np.int64)
    return wrap(input._be.from_numpy(np.array(ranks)), input._be)


def matrix_power(input: Tensor, n: int) -> Tensor:
    """``input`` multiplied by itself ``n`` times (the identity for 0; powers of the inverse
    for negative ``n``), batched.

    Example::

        lucid.linalg.matrix_power(A, 3)      # A @ A @ A
    """
    if input.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {input.shape[-2]} by {input.shape[-1]} matrices")
    if n == 0:
        k = input.shape[-1]
        ident = eye(k, dtype=input.dtype, device=input.device)
        return ident.expand(tuple(input.shape)).clone()  # type: ignore[attr-defined]
    if n < 0:
        check_float(input, "linalg.inv")
        input, n = inv(input), -n
    result = None
    base = input
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result  # type: ignore[return-value]


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim``, broadcast over the other dims.

    Example::

        lucid.linalg.cross(lucid.tensor([1.0, 0, 0]), lucid.tensor([0.0, 1, 0]))   # [0, 0, 1]
    """
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions. "
                           f"Got {input.ndim} and {other.ndim}")
    d = norm_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    a, b = broadcast_tensors(input, other)
    a0, a1, a2 = (a.narrow(d, i, 1) for i in range(3))  # type: ignore[attr-defined]
    b0, b1, b2 = (b.narrow(d, i, 1) for i in range(3))  # type: ignore[attr-defined]
    return cat([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


def multi_dot(tensors: Any) -> Tensor:
    """The product of a chain of matrices; the first may be a row vector (1-D) and the last a
    column vector (1-D).

    Example::

        lucid.linalg.multi_dot([A, B, C])      # A @ B @ C
    """
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    if ts[0].ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                           f"{ts[0].ndim}D")
    if ts[-1].ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got "
                           f"{ts[-1].ndim}D")
    for i, t in enumerate(ts[1:-1], 1):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    for i in range(len(ts) - 1):
        a, b = ts[i], ts[i + 1]
        if a.shape[-1] != b.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(a.shape)} and {list(b.shape)} cannot be multiplied")
    out = ts[0]
    for t in ts[1:]:
        out = matmul(out, t)
    return out


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of vectors along ``dim``, broadcast over the other dims (the first
    argument conjugated when complex).

    Example::

        lucid.linalg.vecdot(lucid.ones(2, 3), lucid.ones(3))      # tensor([3., 3.])
    """
    if x.dtype.is_complex:
        x = x.conj()  # type: ignore[attr-defined]
    return _sum(x * y, dim)


def linalg_diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``lucid.linalg.diagonal``: the diagonals of the matrices over the last two dims (by
    default), as the last dim.

    Example::

        lucid.linalg.diagonal(lucid.eye(3))      # tensor([1., 1., 1.])
    """
    return _diagonal(A, offset, dim1, dim2)


# ---- PyTorch's older top-level spellings -------------------------------------------------------
def svd_legacy(input: Tensor, some: bool = True, compute_uv: bool = True) -> Any:
    """``lucid.svd``: ``(U, S, V)`` with ``input = U diag(S) V^T`` (note V, not Vh);
    ``some=False`` gives square U and V; ``compute_uv=False`` gives zero U and V.

    Example::

        U, S, V = lucid.svd(A)
    """
    check_matrix(input, "linalg.svd")
    if not compute_uv:
        S = svdvals(input)
        m, n = input.shape[-2], input.shape[-1]
        kw = {"dtype": input.dtype, "device": input.device}
        return svd_result(zeros(tuple(input.shape[:-2]) + (m, m), **kw), S,
                          zeros(tuple(input.shape[:-2]) + (n, n), **kw))
    U, S, Vh = svd(input, full_matrices=not some)
    return svd_result(U, S, Vh.mT)  # type: ignore[attr-defined]


def qr_legacy(input: Tensor, some: bool = True) -> Any:
    """``lucid.qr``: ``(Q, R)``, reduced with ``some=True``, complete otherwise.

    Example::

        Q, R = lucid.qr(A)
    """
    Q, R = qr(input, "reduced" if some else "complete")
    return qr_result(Q, R)


def slogdet_legacy(input: Tensor) -> Any:
    """``lucid.slogdet``: ``(sign, logabsdet)`` of a square matrix.

    Example::

        sign, logabsdet = lucid.slogdet(A)
    """
    sign, logabs = slogdet(input)
    return slogdet_result(sign, logabs)


def cholesky_legacy(input: Tensor, upper: bool = False) -> Tensor:
    """``lucid.cholesky``: the Cholesky factor, lower (or upper with ``upper=True``).

    Example::

        L = lucid.cholesky(A @ A.mT + lucid.eye(3))
    """
    return cholesky(input, upper=upper)


def inverse(input: Tensor) -> Tensor:
    """``lucid.inverse``: the inverse of a square matrix (``lucid.linalg.inv``).

    Example::

        lucid.inverse(A) @ A      # the identity
    """
    check_matrix(input, "linalg.inv", square=True)
    return Inv.apply(input)


def pinverse(input: Tensor, rcond: float = 1e-15, hermitian: bool = False) -> Tensor:
    """``lucid.pinverse``: the pseudo-inverse, singular values below ``rcond * s_max``
    counting as zero.

    Example::

        lucid.pinverse(A)
    """
    return pinv(input, rtol=rcond, hermitian=hermitian)
