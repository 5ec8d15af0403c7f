"""Distributions over matrices: ``Wishart`` (positive-definite matrices, sampled by the
Bartlett decomposition) and ``LKJCholesky`` (Cholesky factors of correlation matrices,
sampled by the onion method), as in torch."""

from __future__ import annotations

import math
import warnings
from numbers import Number
from typing import Any

from .. import ops as _ops
from .._tensor import Size, Tensor
from ..ops import special as _special
from ..ops._util import broadcast_shapes
from ..ops.linalg_decomp import cholesky, slogdet
from ..ops.matmul import matmul as _matmul
from ..ops.triangular import solve_triangular
from ..special import multigammaln
from . import constraints
from .distribution import Distribution, ExponentialFamily
from .gamma_family import Beta, Chi2
from .multivariate_normal import _precision_to_scale_tril, _ScaleTrilMatrices
from .utils import _size, broadcast_all, finfo

__all__ = ["LKJCholesky", "Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The multivariate digamma function of dimension ``p``."""
    if not bool((x > (p - 1) / 2).all()):
        raise ValueError("Wrong domain for multivariate digamma function.")
    half = _ops.arange(p, dtype=x.dtype, device=x.device) / 2
    return _special.digamma(x.unsqueeze(-1) - half).sum(-1)


def _trace_solve(L: Tensor, V: Tensor) -> Tensor:
    """``trace((L L^T)^-1 V)`` with batch dims broadcast."""
    n = L.shape[-1]
    batch = tuple(broadcast_shapes(tuple(L.shape[:-2]), tuple(V.shape[:-2])))
    L = L.expand(batch + (n, n))
    A = solve_triangular(L, V.expand(batch + (n, n)), upper=False)
    B = solve_triangular(L.mT, A, upper=True)
    return _ops.diagonal(B, 0, -2, -1).sum(-1)


class Wishart(_ScaleTrilMatrices, ExponentialFamily):
    """The Wishart distribution over positive-definite matrices with ``df`` degrees of
    freedom and exactly one of ``covariance_matrix``, ``precision_matrix`` or
    ``scale_tril``.

    Example::

        m = Wishart(lucid.tensor([2.0]), covariance_matrix=lucid.eye(2))
        m.sample()
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:  # type: ignore[override]
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df: Tensor | float, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = _ops.tensor(float(df), dtype=param.dtype, device=param.device)
        else:
            batch_shape = tuple(broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = tuple(param.shape[-2:])
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        full = batch_shape + event_shape
        if scale_tril is not None:
            self.scale_tril = param.expand(full)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(full)
        else:
            self.precision_matrix = param.expand(full)
        if bool((self.df < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = param
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(param)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(param)
        self._dist_chi2 = self._chi2(self.df, batch_shape)

    def _chi2(self, df: Tensor, batch_shape: tuple[int, ...]) -> Chi2:
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        offsets = _ops.arange(p, dtype=L.dtype, device=L.device).expand(batch_shape + (p,))
        return Chi2(df=df.unsqueeze(-1) - offsets)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Wishart:
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = tuple(_size(batch_shape))
        cov_shape = batch_shape + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(new.df, batch_shape)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple[int, ...]:
        return tuple(self._batch_shape) + tuple(self._event_shape)

    def _df_matrix(self) -> Tensor:
        return self.df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self) -> Tensor:
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = _ops.where(factor <= 0, math.nan, factor)
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        V = self.covariance_matrix
        diag_V = _ops.diagonal(V, 0, -2, -1)
        return self._df_matrix() * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape: Any = Size()) -> Tensor:
        p = self._event_shape[-1]
        eps = float(finfo(self.df.dtype).eps)
        diag = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=eps)
        shape = tuple(_size(sample_shape)) + tuple(self._batch_shape) + (p, p)
        below = _ops.randn(*shape, dtype=diag.dtype, device=diag.device).tril(-1)
        chol = _matmul(self._unbroadcasted_scale_tril, _ops.diag_embed(diag) + below)
        return _matmul(chol, chol.mT)

    def _singular(self, sample: Tensor) -> Tensor:
        bad = ~self.support.check(sample)
        nb = len(self._batch_shape)
        if nb:
            bad = bad.reshape(tuple(bad.shape[:bad.dim() - nb]) + (-1,)).any(-1)
        return bad

    def rsample(self, sample_shape: Any = Size(), max_try_correction: int | None = None
                ) -> Tensor:
        """A reparameterised sample. Samples that come out singular (possible for small
        ``df``) are redrawn up to ``max_try_correction`` times (default 10), with a warning;
        any that stay singular are returned as drawn."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = _size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        bad = self._singular(sample)
        if bool(bad.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            mask_shape = tuple(bad.shape) + (1,) * (len(self._batch_shape) + 2)
            for _ in range(max_try_correction):
                fresh = self._bartlett_sampling(sample_shape)
                sample = _ops.where(bad.reshape(mask_shape), fresh, sample)
                bad = bad & self._singular(sample)
                if not bool(bad.any()):
                    break
        return sample

    def _half_log_det(self) -> Tensor:
        return _ops.diagonal(self._unbroadcasted_scale_tril, 0, -2, -1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        return (-nu * (p * _LOG_2 / 2 + self._half_log_det())
                - multigammaln(nu / 2, p)
                + (nu - p - 1) / 2 * slogdet(value).logabsdet
                - _trace_solve(self._unbroadcasted_scale_tril, value) / 2)

    def entropy(self) -> Tensor:
        nu = self.df
        p = self._event_shape[-1]
        return ((p + 1) * (p * _LOG_2 / 2 + self._half_log_det())
                + multigammaln(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
                + nu * p / 2)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:  # type: ignore[override]
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + multigammaln(y + (p + 1) / 2, p))


class LKJCholesky(Distribution):
    """The LKJ distribution over lower Cholesky factors ``L`` of ``dim x dim`` correlation
    matrices: ``L L^T`` has density proportional to ``det(L L^T) ** (concentration - 1)``
    (uniform at ``concentration = 1``).

    Example::

        m = LKJCholesky(3, 0.5)
        L = m.sample()
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Tensor | float = 1.0,
                 validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        c = self.concentration
        marginal_conc = c + 0.5 * (self.dim - 2)
        offset = _ops.arange(self.dim - 1, dtype=c.dtype, device=c.device)
        offset = _ops.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(tuple(c.shape), (dim, dim), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = tuple(_size(batch_shape))
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = _ops.randn(*self._extended_shape(sample_shape), dtype=y.dtype,
                              device=y.device).tril(-1)
        norm = u_normal.pow(2).sum(-1, keepdim=True).sqrt()
        first_row = (_ops.arange(self.dim, device=y.device) == 0).unsqueeze(-1)
        u_hypersphere = _ops.where(first_row, 0.0,
                                   u_normal / _ops.where(first_row, 1.0, norm))
        w = y.sqrt() * u_hypersphere
        tiny = float(finfo(w.dtype).tiny)
        diag_elems = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
        return w + _ops.diag_embed(diag_elems)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = _ops.diagonal(value, 0, -1, -2)[..., 1:]
        c = self.concentration
        order = _ops.arange(2, self.dim + 1, dtype=c.dtype, device=c.device)
        order = 2 * (c - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = c + 0.5 * dm1
        denominator = _special.lgamma(alpha) * dm1
        numerator = multigammaln(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
