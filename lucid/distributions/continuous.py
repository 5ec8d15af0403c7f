"""Univariate continuous distributions sampled by transforming uniform or normal draws:
``Normal``, ``Uniform``, ``Laplace`` and ``Exponential`` (all with ``rsample``)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from .. import ops as _ops
from .._tensor import Size, Tensor
from ..ops import special as _special
from . import constraints
from .distribution import Distribution, ExponentialFamily, _expand_params
from .utils import _batch_shape_of, _standard_normal, broadcast_all, finfo

__all__ = ["Exponential", "Laplace", "Normal", "Uniform"]

_LOG_SQRT_2PI = math.log(math.sqrt(2 * math.pi))


class _LocScale:
    """Shared by the location-scale distributions: ``loc`` and ``scale`` broadcast together;
    the mean and the mode are ``loc``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_batch_shape_of(self.loc, loc, scale),  # type: ignore[call-arg]
                         validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc


class Normal(_LocScale, ExponentialFamily):
    """The normal (Gaussian) distribution with mean ``loc`` and standard deviation ``scale``.

    Example::

        m = Normal(lucid.tensor([0.0]), lucid.tensor([1.0]))
        m.sample()          # normally distributed with loc=0 and scale=1
    """

    _mean_carrier_measure = 0

    def expand(self, batch_shape: Any, _instance: Any = None) -> Normal:
        return _expand_params(self, Normal, batch_shape, _instance, ("loc", "scale"))

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, self.loc.dtype, self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = math.log(self.scale) if isinstance(self.scale, Number) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - _LOG_SQRT_2PI

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) * self.scale.reciprocal() / math.sqrt(2)
        return 0.5 * (1 + _special.erf(z))

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc + self.scale * _special.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + _ops.log(self.scale)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal()

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:  # type: ignore[override]
        return -0.25 * x.pow(2) / y + 0.5 * _ops.log(-math.pi / y)


class Uniform(Distribution):
    """The uniform distribution on the half-open interval ``[low, high)``.

    Example::

        m = Uniform(lucid.tensor([0.0]), lucid.tensor([5.0]))
        m.sample()          # uniformly distributed in [0.0, 5.0)
    """

    has_rsample = True

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:  # type: ignore[override]
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    def __init__(self, low: Tensor | float, high: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(_batch_shape_of(self.low, low, high), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Uniform:
        return _expand_params(self, Uniform, batch_shape, _instance, ("low", "high"))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return math.nan * self.high

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        rand = _ops.rand(*shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        inside = self.low.le(value) & self.high.gt(value)
        return _ops.where(inside, 0.0, -math.inf) - _ops.log(self.high - self.low)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: Tensor) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return _ops.log(self.high - self.low)


class Laplace(_LocScale, Distribution):
    """The Laplace distribution with location ``loc`` and scale ``scale``.

    Example::

        m = Laplace(lucid.tensor([0.0]), lucid.tensor([1.0]))
        m.sample()
    """

    def expand(self, batch_shape: Any, _instance: Any = None) -> Laplace:
        return _expand_params(self, Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = float(finfo(self.loc.dtype).eps)
        # uniform on [eps - 1, 1), as torch draws it
        u = _ops.rand(*shape, dtype=self.loc.dtype, device=self.loc.device) * (2 - eps) \
            + (eps - 1)
        return self.loc - self.scale * u.sign() * _ops.log1p(-u.abs())

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -_ops.log(2 * self.scale) - _ops.abs(value - self.loc) / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * _ops.expm1(-d.abs() / self.scale)

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * _ops.log1p(-2 * term.abs())

    def entropy(self) -> Tensor:
        return 1 + _ops.log(2 * self.scale)


class Exponential(ExponentialFamily):
    """The exponential distribution with rate ``rate`` (mean ``1 / rate``).

    Example::

        m = Exponential(lucid.tensor([1.0]))
        m.sample()
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate: Tensor | float, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(_batch_shape_of(self.rate, rate), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Exponential:
        return _expand_params(self, Exponential, batch_shape, _instance, ("rate",))

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return _ops.zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = _ops.rand(*shape, dtype=self.rate.dtype, device=self.rate.device)
        return -_ops.log1p(-u) / self.rate

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - _ops.exp(-self.rate * value)

    def icdf(self, value: Tensor) -> Tensor:
        return -_ops.log1p(-value) / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - _ops.log(self.rate)

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (-self.rate,)

    def _log_normalizer(self, x: Tensor) -> Tensor:  # type: ignore[override]
        return -_ops.log(-x)
