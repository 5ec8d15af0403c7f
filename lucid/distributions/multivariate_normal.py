"""``MultivariateNormal``: a Gaussian over vectors, parameterised by exactly one of a
covariance matrix, a precision matrix or a lower-triangular scale factor, as
``torch.distributions.MultivariateNormal``. All three are turned into the Cholesky factor
``L`` (covariance ``L L^T``), through which sampling and scoring run."""

from __future__ import annotations

import math
from typing import Any

from .. import ops as _ops
from .._tensor import Size, Tensor
from ..ops._util import broadcast_shapes
from ..ops.linalg_decomp import cholesky
from ..ops.matmul import matmul as _matmul
from ..ops.triangular import solve_triangular
from . import constraints
from .distribution import Distribution
from .utils import _size, _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat: Tensor, bvec: Tensor) -> Tensor:
    """Batched matrix-vector product with broadcasting batch dims."""
    return _matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL: Tensor, bx: Tensor) -> Tensor:
    """The squared Mahalanobis distance ``x^T (L L^T)^-1 x`` for batches of ``x``.

    The leading (sample) dims of ``x`` that ``L`` lacks become columns of one right-hand side,
    so each distinct matrix is solved once, however many samples are scored."""
    n = bL.shape[-1]
    k = bL.dim() - 2
    if bx.dim() - 1 < k:
        bx = bx.expand(tuple(bL.shape[:-2]) + (n,))
    sample = tuple(bx.shape[:bx.dim() - 1 - k])
    batch = tuple(broadcast_shapes(tuple(bL.shape[:-2]), tuple(bx.shape[len(sample):-1])))
    m = math.prod(sample)
    x = bx.expand(sample + batch + (n,)).reshape((m,) + batch + (n,))
    x = x.permute(*range(1, k + 2), 0)                     # batch + (n, m)
    L = bL.expand(batch + (n, n))
    d2 = solve_triangular(L, x, upper=False).pow(2).sum(-2)  # batch + (m,)
    return d2.permute(k, *range(k)).reshape(sample + batch)


def _eye_like(m: Tensor) -> Tensor:
    return _ops.eye(m.shape[-1], dtype=m.dtype, device=m.device)


def _precision_to_scale_tril(P: Tensor) -> Tensor:
    """The Cholesky factor of ``P^-1`` without inverting ``P``: factor the flipped matrix."""
    Lf = cholesky(_ops.flip(P, (-2, -1)))
    L_inv = _ops.flip(Lf, (-2, -1)).mT
    return solve_triangular(L_inv, _eye_like(P), upper=False)


def _cholesky_inverse(L: Tensor) -> Tensor:
    """``(L L^T)^-1`` from its lower Cholesky factor."""
    L_inv = solve_triangular(L, _eye_like(L), upper=False)
    return _matmul(L_inv.mT, L_inv)


class _ScaleTrilMatrices:
    """The matrix parameter ``L L^T`` of a distribution held by its lower Cholesky factor
    ``L`` (``_unbroadcasted_scale_tril``), in its three forms, each expanded to the
    distribution's ``_matrix_shape()``."""

    _unbroadcasted_scale_tril: Tensor

    def _matrix_shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    @lazy_property
    def scale_tril(self) -> Tensor:
        """The lower-triangular Cholesky factor ``L`` of the matrix parameter."""
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        """The matrix parameter ``L L^T`` (a Wishart's scale matrix)."""
        L = self._unbroadcasted_scale_tril
        return _matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        """The inverse of the matrix parameter ``L L^T``."""
        return _cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())


class MultivariateNormal(_ScaleTrilMatrices, Distribution):
    """A multivariate normal distribution with mean ``loc`` and exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (lower triangular, positive
    diagonal).

    Example::

        m = MultivariateNormal(lucid.zeros(2), lucid.eye(2))
        m.sample()          # normally distributed with mean [0, 0] and covariance I
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        for name, m in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                        ("precision_matrix", precision_matrix)):
            if m is not None:
                if m.dim() < 2:
                    what = "scale_tril matrix" if name == "scale_tril" else name
                    raise ValueError(f"{what} must be at least two-dimensional, with "
                                     "optional leading batch dimensions")
                batch_shape = tuple(broadcast_shapes(tuple(m.shape[:-2]), tuple(loc.shape[:-1])))
                setattr(self, name, m.expand(batch_shape + tuple(m.shape[-2:])))
                matrix = m
        self.loc = loc.expand(batch_shape + (loc.shape[-1],))
        super().__init__(batch_shape, tuple(self.loc.shape[-1:]), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = matrix
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tuple(_size(batch_shape))
        ev = tuple(self.event_shape)
        new.loc = self.loc.expand(batch_shape + ev)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(batch_shape + ev + ev))
        Distribution.__init__(new, batch_shape, ev, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple[int, ...]:
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(tuple(shape), self.loc.dtype, self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self) -> Tensor:
        return _ops.diagonal(self._unbroadcasted_scale_tril, 0, -2, -1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self) -> Tensor:
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return H if len(self._batch_shape) == 0 else H.expand(tuple(self._batch_shape))
