"""Matrices assembled from vectors: ``lucid.linalg.householder_product`` (the product of
Householder reflectors, as LAPACK ``orgqr``) and ``lucid.linalg.vander`` (the Vandermonde
matrix with increasing powers), batched over leading dims with PyTorch's checks.

Both are composed of differentiable ops (``matmul``, ``tril``, ``cumprod``, ``cat``), so they
are differentiable to any order and run on every device.
"""

from __future__ import annotations

from typing import Any

from .. import _dtype
from .._tensor import Tensor
from .creation import eye
from .linalg import tril
from .linalg_base import check_float
from .matmul import matmul
from .movement import cat
from .scan import cumprod

__all__ = ["householder_product", "vander"]

_HP = "torch.linalg.householder_product"


def _householder_checks(A: Tensor, tau: Tensor) -> None:
    if not isinstance(A, Tensor) or not isinstance(tau, Tensor):
        bad, name = (A, "input") if not isinstance(A, Tensor) else (tau, "tau")
        raise TypeError(f"linalg_householder_product(): argument '{name}' must be Tensor, not "
                        f"{type(bad).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{_HP}: input must have at least 2 dimensions.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{_HP}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.ndim >= 1 and A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{_HP}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tau.ndim != A.ndim - 1:
        raise RuntimeError(f"{_HP}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.ndim} and input.ndim is equal to {A.ndim}")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{_HP}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype is not A.dtype:
        raise RuntimeError(f"{_HP}: tau dtype {_dtype.torch_name(tau.dtype)} does not match "
                           f"input dtype {_dtype.torch_name(A.dtype)}")
    check_float(A, _HP)


def householder_product(input: Tensor, tau: Tensor) -> Tensor:
    """The first ``n`` columns of ``H_1 H_2 ... H_k`` with ``H_i = I - tau_i v_i v_i^T``,
    where ``v_i`` is column ``i`` of ``input`` (m x n, m >= n) below the diagonal, with a 1 on it
    and zeros above; ``tau`` has ``k <= n`` entries per matrix. With ``(input, tau)`` from
    ``geqrf`` this is the ``Q`` of the QR factorization.

    Example::

        Q = lucid.linalg.householder_product(A, tau)     # A: (*, m, n), tau: (*, k)
    """
    _householder_checks(input, tau)
    m, n = input.shape[-2], input.shape[-1]
    ident = eye(m, n, dtype=input.dtype, device=input.device)
    V = tril(input, -1) + ident
    Q = ident.expand(*input.shape[:-2], m, n)  # type: ignore[attr-defined]
    for i in range(tau.shape[-1] - 1, -1, -1):
        v = V[..., :, i:i + 1]  # type: ignore[index]
        t = tau[..., i:i + 1].unsqueeze(-1)  # type: ignore[index]
        Q = Q - matmul(v * t, matmul(v.mT, Q))
    return Q


def vander(x: Tensor, *, N: Any = None) -> Tensor:
    """The Vandermonde matrix of the last dim of ``x``: ``out[..., i, j] = x[..., i] ** j``
    for ``j < N`` (default ``x.shape[-1]``, at least 2). Integer inputs give int64.

    Example::

        lucid.linalg.vander(lucid.tensor([1.0, 2.0, 3.0]))   # [[1, 1, 1], [1, 2, 4], [1, 3, 9]]
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"linalg_vander(): argument 'x' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    d = x.dtype
    ok = d in (_dtype.float32, _dtype.float64) or d.is_complex or \
        (d._cat == _dtype.int64._cat and d is not _dtype.bool_)
    if not ok:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {_dtype.torch_name(d)}")
    if not d.is_floating_point and not d.is_complex:
        x = x.to(_dtype.int64)  # type: ignore[attr-defined]
    if x.ndim == 0:
        x = x.unsqueeze(-1)  # type: ignore[attr-defined]
    n = x.shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = cumprod(x.unsqueeze(-1).expand(*x.shape, n - 1), -1)  # type: ignore[attr-defined]
    ones = powers.new_ones(*x.shape, 1)  # type: ignore[attr-defined]
    return cat([ones, powers], -1)
