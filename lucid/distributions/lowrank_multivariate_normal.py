"""``LowRankMultivariateNormal``: a Gaussian whose covariance is ``W W^T + D`` (a low-rank
factor plus a diagonal), as ``torch.distributions.LowRankMultivariateNormal``. Scoring uses
the Woodbury identity and the matrix determinant lemma, so only the small ``rank x rank``
capacitance matrix ``I + W^T D^-1 W`` is factorised."""

from __future__ import annotations

import math
from typing import Any

from .. import ops as _ops
from .._tensor import Size, Tensor
from ..ops.linalg_decomp import cholesky
from ..ops.matmul import matmul as _matmul
from ..ops.triangular import solve_triangular
from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import _size, _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _batch_capacitance_tril(W: Tensor, D: Tensor) -> Tensor:
    """The Cholesky factor of ``I + W^T D^-1 W``."""
    m = W.shape[-1]
    K = _matmul(W.mT / D.unsqueeze(-2), W)
    return cholesky(K + _ops.eye(m, dtype=W.dtype, device=W.device))


def _batch_lowrank_logdet(W: Tensor, D: Tensor, capacitance_tril: Tensor) -> Tensor:
    """``log |W W^T + D| = log |C| + log |D|`` (matrix determinant lemma)."""
    return (2 * _ops.diagonal(capacitance_tril, 0, -2, -1).log().sum(-1)
            + D.log().sum(-1))


def _batch_lowrank_mahalanobis(W: Tensor, D: Tensor, x: Tensor,
                               capacitance_tril: Tensor) -> Tensor:
    """``x^T (W W^T + D)^-1 x`` by the Woodbury identity."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)


def _batch_trace_XXT(bmat: Tensor) -> Tensor:
    """``trace(X X^T)`` over the last two dims."""
    return bmat.pow(2).sum((-2, -1))


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal with mean ``loc`` and covariance
    ``cov_factor @ cov_factor.T + diag(cov_diag)``; ``cov_factor`` has shape
    ``batch_shape + event_shape + (rank,)``.

    Example::

        m = LowRankMultivariateNormal(lucid.zeros(2), lucid.tensor([[1.0], [0.0]]),
                                      lucid.ones(2))
        m.sample()          # covariance [[2, 0], [0, 1]]
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = _ops.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except (RuntimeError, ValueError) as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = tuple(self.loc.shape[:-1])
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = tuple(_size(batch_shape))
        loc_shape = batch_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + (self.cov_factor.shape[-1],))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    def _matrix_shape(self) -> tuple[int, ...]:
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def variance(self) -> Tensor:  # type: ignore[override]
        """The diagonal of the covariance."""
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self) -> Tensor:
        """The lower Cholesky factor of the covariance, computed as
        ``D^1/2 chol(I + D^-1/2 W W^T D^-1/2)`` (well conditioned)."""
        n = self._event_shape[0]
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / d_sqrt
        K = _matmul(Dinvsqrt_W, Dinvsqrt_W.mT)
        K = K + _ops.eye(n, dtype=K.dtype, device=K.device)
        return (d_sqrt * cholesky(K)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        """``W W^T + diag(D)``."""
        W = self._unbroadcasted_cov_factor
        cov = _matmul(W, W.mT) + _ops.diag_embed(self._unbroadcasted_cov_diag)
        return cov.expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        """The inverse covariance, by the Woodbury identity."""
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        precision = _ops.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - _matmul(A.mT, A)
        return precision.expand(self._matrix_shape())

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        W_shape = shape[:-1] + (self.cov_factor.shape[-1],)
        eps_W = _standard_normal(W_shape, self.loc.dtype, self.loc.device)
        eps_D = _standard_normal(shape, self.loc.dtype, self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def _log_det(self) -> Tensor:
        return _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                     self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                       self._unbroadcasted_cov_diag, diff,
                                       self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + M)

    def entropy(self) -> Tensor:
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return H if len(self._batch_shape) == 0 else H.expand(tuple(self._batch_shape))
