"""Transforms onto the simplex and onto matrix spaces, as in
``torch.distributions.transforms``: ``SoftmaxTransform``, ``StickBreakingTransform``,
``LowerCholeskyTransform``, ``PositiveDefiniteTransform`` and ``CorrCholeskyTransform``."""

from __future__ import annotations

import math
from typing import Any

from .. import ops as _ops
from .._tensor import Tensor
from ..ops import activation as _act
from ..ops.linalg_decomp import cholesky
from ..ops.matmul import matmul as _matmul
from . import constraints
from .transform_base import Transform
from .utils import finfo, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = [
    "CorrCholeskyTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
    "SoftmaxTransform", "StickBreakingTransform",
]


def _clipped_sigmoid(x: Tensor) -> Tensor:
    fi = finfo(x.dtype)
    return _ops.sigmoid(x).clamp(min=float(fi.tiny), max=1.0 - float(fi.eps))


def _stick_offset(x: Tensor, k: int) -> Tensor:
    """``log(K - i)`` for ``i = 0 .. k-1`` where ``K = k + 1`` is the simplex size."""
    return _ops.arange(k, 0, -1, dtype=x.dtype, device=x.device).log()


class SoftmaxTransform(Transform):
    """Onto the simplex by ``exp`` and normalisation (not bijective; the inverse is
    ``log``)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        probs = (x - x.amax(-1, keepdim=True)).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape


class StickBreakingTransform(Transform):
    """From ``R^(K-1)`` onto the ``K``-simplex by stick breaking: each coordinate, through a
    sigmoid, takes its share of what is left. Bijective.

    Example::

        StickBreakingTransform()(lucid.zeros(3))   # the uniform point of the 4-simplex
    """

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        z = _clipped_sigmoid(x - _stick_offset(x, x.shape[-1]))
        z_cumprod = (1 - z).cumprod(-1)
        return _ops.pad(z, (0, 1), value=1.0) * _ops.pad(z_cumprod, (1, 0), value=1.0)

    def _inverse(self, y: Tensor) -> Tensor:
        y_crop = y[..., :-1]
        sf = (1 - y_crop.cumsum(-1)).clamp(min=float(finfo(y.dtype).tiny))
        return y_crop.log() - sf.log() + _stick_offset(y, y_crop.shape[-1])

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        x = x - _stick_offset(x, x.shape[-1])
        return (-x + _act.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return type(shape)(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return type(shape)(tuple(shape[:-1]) + (shape[-1] - 1,))


def _lower_cholesky(x: Tensor, log: bool) -> Tensor:
    d = _ops.diagonal(x, 0, -2, -1)
    return x.tril(-1) + _ops.diag_embed(d.log() if log else d.exp())


class LowerCholeskyTransform(Transform):
    """From unconstrained square matrices to lower-triangular ones with a positive diagonal:
    keeps the strict lower part and exponentiates the diagonal."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return _lower_cholesky(x, log=False)

    def _inverse(self, y: Tensor) -> Tensor:
        return _lower_cholesky(y, log=True)


class PositiveDefiniteTransform(Transform):
    """From unconstrained square matrices to positive-definite ones: ``L L^T`` with ``L``
    from ``LowerCholeskyTransform``."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        L = _lower_cholesky(x, log=False)
        return _matmul(L, L.mT)

    def _inverse(self, y: Tensor) -> Tensor:
        return _lower_cholesky(cholesky(y), log=True)


class CorrCholeskyTransform(Transform):
    """From an unconstrained vector of length ``D (D - 1) / 2`` to the Cholesky factor of a
    ``D x D`` correlation matrix (lower triangular, positive diagonal, unit-norm rows): each
    row is a signed stick breaking of ``tanh`` of its entries.

    Example::

        L = CorrCholeskyTransform()(lucid.zeros(3))   # the 3 x 3 identity
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        eps = float(finfo(x.dtype).eps)
        x = x.tanh().clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        z1m_cumprod_sqrt = (1 - r.pow(2)).sqrt().cumprod(-1)
        r = r + _ops.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * _ops.pad(z1m_cumprod_sqrt[..., :-1], (1, 0), value=1.0)

    def _inverse(self, y: Tensor) -> Tensor:
        y_cumsum = 1 - (y * y).cumsum(-1)
        y_cumsum_shifted = _ops.pad(y_cumsum[..., :-1], (1, 0), value=1.0)
        y_vec = tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / y_cumsum_vec.sqrt()
        return (t.log1p() - (-t).log1p()) / 2

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor, intermediates: Any = None) -> Tensor:
        y1m_cumsum = 1 - (y * y).cumsum(-1)
        y1m_cumsum_tril = tril_matrix_to_vec(y1m_cumsum, diag=-2)
        stick_breaking_logdet = 0.5 * y1m_cumsum_tril.log().sum(-1)
        tanh_logdet = -2 * (x + _act.softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        N = shape[-1]
        D = round((0.25 + 2 * N) ** 0.5 + 0.5)
        if D * (D - 1) // 2 != N:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return type(shape)(tuple(shape[:-1]) + (D, D))

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        D = shape[-1]
        return type(shape)(tuple(shape[:-2]) + (D * (D - 1) // 2,))
