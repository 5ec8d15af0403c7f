"""Extreme-value distributions: ``Gumbel`` (maxima), ``Weibull`` (minima) and
``GeneralizedPareto`` (exceedances over a threshold), as in torch (all with ``rsample``)."""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

from .. import ops as _ops
from .._tensor import Size, Tensor
from ..ops import special as _special
from . import constraints
from .continuous import Exponential, Uniform
from .distribution import Distribution, _expand_params
from .transformed import TransformedDistribution
from .transforms_elementwise import AffineTransform, ExpTransform, PowerTransform
from .utils import _batch_shape_of, broadcast_all, euler_constant, finfo

__all__ = ["GeneralizedPareto", "Gumbel", "Weibull"]


class Gumbel(TransformedDistribution):
    """The Gumbel distribution with location ``loc`` and scale ``scale``:
    ``loc - scale * log(-log(U))`` for ``U`` uniform.

    Example::

        m = Gumbel(lucid.tensor([1.0]), lucid.tensor([2.0]))
        m.sample()
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real  # type: ignore[assignment]

    def __init__(self, loc: Tensor | float, scale: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        fi = finfo(self.loc.dtype)
        if isinstance(loc, Real) and isinstance(scale, Real):
            base_dist = Uniform(float(fi.tiny), 1 - float(fi.eps), validate_args=validate_args)
        else:
            base_dist = Uniform(_ops.full_like(self.loc, float(fi.tiny)),
                                _ops.full_like(self.loc, 1 - float(fi.eps)),
                                validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-_ops.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gumbel:
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * euler_constant

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + euler_constant)


class Weibull(TransformedDistribution):
    """The two-parameter Weibull distribution with ``scale`` (lambda) and ``concentration``
    (k): ``scale * E ** (1 / k)`` for ``E ~ Exponential(1)``.

    Example::

        m = Weibull(lucid.tensor([1.0]), lucid.tensor([1.0]))
        m.sample()
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive  # type: ignore[assignment]

    def __init__(self, scale: Tensor | float, concentration: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(_ops.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Weibull:
        new = self._get_checked_instance(Weibull, _instance)
        shape = tuple(batch_shape)
        new.scale = self.scale.expand(shape)
        new.concentration = self.concentration.expand(shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * _ops.exp(_special.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self) -> Tensor:
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self) -> Tensor:
        r = self.concentration_reciprocal
        return self.scale.pow(2) * (_ops.exp(_special.lgamma(1 + 2 * r))
                                    - _ops.exp(2 * _special.lgamma(1 + r)))

    def entropy(self) -> Tensor:
        r = self.concentration_reciprocal
        return euler_constant * (1 - r) + _ops.log(self.scale * r) + 1


def _near_zero(c: Tensor) -> Tensor:
    return c.abs() <= 1e-8  # torch.isclose(c, 0.0) with its default atol


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution with ``loc``, ``scale`` and ``concentration``
    (the tail shape: exponential at 0, Pareto-like above, bounded below 0).

    Example::

        m = GeneralizedPareto(lucid.tensor([0.1]), lucid.tensor([2.0]), lucid.tensor([0.4]))
        m.sample()
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float,
                 concentration: Tensor | float, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(_batch_shape_of(self.loc, loc, scale, concentration),
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        return _expand_params(self, GeneralizedPareto, batch_shape, _instance,
                              ("loc", "scale", "concentration"))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = _ops.rand(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _safe_conc(self) -> tuple[Tensor, Tensor]:
        eq_zero = _near_zero(self.concentration)
        return eq_zero, _ops.where(eq_zero, 1.0, self.concentration)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe_conc = self._safe_conc()
        y = 1 / safe_conc + _ops.ones_like(z)
        where_nonzero = _ops.where(y == 0, y, y * _ops.log1p(safe_conc * z))
        return -self.scale.log() - _ops.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        """``log(1 - cdf(value))``."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe_conc = self._safe_conc()
        where_nonzero = -_ops.log1p(safe_conc * z) / safe_conc
        return _ops.where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value: Tensor) -> Tensor:
        """``log(cdf(value))``."""
        return _ops.log1p(-_ops.exp(self.log_survival_function(value)))

    def cdf(self, value: Tensor) -> Tensor:
        return _ops.exp(self.log_cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        eq_zero, safe_conc = self._safe_conc()
        logu = _ops.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * _ops.expm1(-safe_conc * logu)
        where_zero = self.loc - self.scale * logu
        return _ops.where(eq_zero, where_zero, where_nonzero)

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe_conc = _ops.where(valid, self.concentration, 0.5)
        return _ops.where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        c = _ops.where(valid, self.concentration, 0.25)
        return _ops.where(valid, self.scale ** 2 / ((1 - c) ** 2 * (1 - 2 * c)), math.nan)

    def entropy(self) -> Tensor:
        ans = _ops.log(self.scale) + self.concentration + 1
        return ans.expand(tuple(self._batch_shape))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        lower = self.loc
        c = self.concentration
        upper = _ops.where(c < 0, lower - self.scale / _ops.where(c < 0, c, -1.0), math.inf)
        return constraints.interval(lower, upper)
