"""The matrix maps behind ``parametrizations.orthogonal``, composed from lucid ops (so they
are differentiable and run on every device): the matrix exponential, the product of
Householder reflectors and a Householder QR in LAPACK's ``geqrf`` layout."""

from __future__ import annotations

import math

from ... import _dtype, ops
from ..._tensor import Tensor
from ...autograd import no_grad
from ...ops.linalg_decomp import qr
from ...ops.linalg_norm import vector_norm
from ...ops.matmul import matmul

__all__ = ["matrix_exp", "householder_product", "geqrf", "make_orthogonal", "is_orthogonal"]

_TAYLOR_DEGREE = 18  # with ||A|| <= 1/2 the remainder is below 1e-22


def _eye_like(A: Tensor, n: int, k: int | None = None) -> Tensor:
    return ops.eye(n, n if k is None else k, dtype=A.dtype, device=A.device)


def matrix_exp(A: Tensor) -> Tensor:
    """``exp(A)`` of a square matrix (or batch) by scaling and squaring a Taylor series.

    Example::

        matrix_exp(lucid.zeros(3, 3))          # the identity
    """
    n = A.shape[-1]
    if A.ndim < 2 or A.shape[-2] != n:
        raise RuntimeError("linalg.matrix_exp: A must be batches of square matrices, "
                           f"but they are {A.shape[-2] if A.ndim >= 2 else 1} by "
                           f"{n} matrices")
    if A.numel() == 0:
        return A.clone()
    with no_grad():
        norm = float(A.abs().sum(-1).amax().item())
    s = 0 if not math.isfinite(norm) or norm <= 0.5 else int(math.ceil(math.log2(norm / 0.5)))
    X = A / (2.0 ** s) if s else A
    eye = _eye_like(A, n)
    E = eye
    for k in range(_TAYLOR_DEGREE, 0, -1):
        E = eye + matmul(X, E) / float(k)
    for _ in range(s):
        E = matmul(E, E)
    return E


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first ``k`` columns of ``H_1 ... H_k`` with ``H_i = I - tau_i v_i v_i^T``, ``v_i``
    the ``i``-th column of ``A`` below the diagonal with a 1 on it (``A``: ``(*, n, k)``), as
    ``torch.linalg.householder_product``.

    Example::

        Q = householder_product(*geqrf(lucid.randn(4, 3)))   # 4x3, orthonormal columns
    """
    n, k = A.shape[-2], A.shape[-1]
    if n < k:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater "
                           "than or equal to input.shape[-1]")
    if tau.shape[-1] > k:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater "
                           "than or equal to tau.shape[-1]")
    V = A.tril(-1) + _eye_like(A, n, k)
    Q = _eye_like(A, n, k).expand(*A.shape[:-2], n, k)
    # Q = H_1 (H_2 (... (H_m E))): apply the reflectors to the first k columns of I
    for i in range(tau.shape[-1] - 1, -1, -1):
        v = V[..., :, i:i + 1]
        t = tau[..., i:i + 1].unsqueeze(-1)
        Q = Q - matmul(v * t, matmul(v.mT, Q))
    return Q


def geqrf(A: Tensor) -> tuple[Tensor, Tensor]:
    """Householder QR in LAPACK's layout (not differentiable): ``(a, tau)`` with ``R`` on and
    above the diagonal of ``a`` and the reflector vectors below it, as ``torch.geqrf``.

    Example::

        a, tau = geqrf(lucid.randn(4, 3))
    """
    with no_grad():
        a = A.clone()
        n, k = a.shape[-2], a.shape[-1]
        m = min(n, k)
        taus = []
        for j in range(m):
            x = a[..., j:, j]
            alpha = x[..., 0]
            xnorm = vector_norm(x[..., 1:], dim=-1) if n - j > 1 \
                else ops.zeros_like(alpha)
            h = ops.sqrt(alpha * alpha + xnorm * xnorm)
            beta = ops.where(alpha >= 0, -h, h)
            trivial = xnorm == 0
            safe_beta = ops.where(trivial, ops.ones_like(beta), beta)
            tau = ops.where(trivial, ops.zeros_like(beta), (beta - alpha) / safe_beta)
            denom = ops.where(trivial, ops.ones_like(beta), alpha - beta)
            v = x[..., 1:] / denom.unsqueeze(-1)
            beta = ops.where(trivial, alpha, beta)
            w = ops.cat([ops.ones_like(alpha).unsqueeze(-1), v], dim=-1).unsqueeze(-1)
            if j + 1 < k:
                sub = a[..., j:, j + 1:]
                a[..., j:, j + 1:] = sub - (w * tau.unsqueeze(-1).unsqueeze(-1)) @ (w.mT @ sub)
            a[..., j, j] = beta
            if n - j > 1:
                a[..., j + 1:, j] = v
            taus.append(tau)
        tau = ops.stack(taus, dim=-1) if taus else a.new_zeros(*a.shape[:-2], 0)
    return a, tau


def make_orthogonal(A: Tensor) -> Tensor:
    """The ``Q`` of the QR decomposition of ``A`` whose ``R`` has a non-negative diagonal.

    Example::

        Q = make_orthogonal(lucid.randn(4, 4))
    """
    Q, R = qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def is_orthogonal(Q: Tensor) -> bool:
    """Whether ``Q^T Q`` is the identity up to ``10 * n * eps``.

    Example::

        is_orthogonal(lucid.eye(3))     # True
    """
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * _dtype.finfo(Q.dtype).eps
    eye = _eye_like(Q, k)
    return bool(((matmul(Q.mT, Q) - eye).abs() <= eps + 1e-5 * eye).all().item())
