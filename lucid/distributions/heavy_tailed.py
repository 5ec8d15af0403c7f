"""Heavy-tailed distributions: ``Cauchy``, ``StudentT``, ``FisherSnedecor`` and ``Pareto``,
as in torch (all with ``rsample``)."""

from __future__ import annotations

import math
from typing import Any

from .. import ops as _ops
from .._tensor import Size, Tensor
from ..ops import special as _special
from . import constraints
from .continuous import Exponential
from .distribution import Distribution, _expand_params
from .gamma_family import Chi2, Gamma
from .transformed import TransformedDistribution
from .transforms_elementwise import AffineTransform, ExpTransform
from .utils import _batch_shape_of, _standard_normal, broadcast_all, finfo

__all__ = ["Cauchy", "FisherSnedecor", "Pareto", "StudentT"]


def _full(d: Distribution, value: float, like: Tensor) -> Tensor:
    return _ops.full(tuple(d._extended_shape()), value, dtype=like.dtype, device=like.device)


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution with median ``loc`` and half width at half maximum
    ``scale``; it has no mean and an infinite variance.

    Example::

        m = Cauchy(lucid.tensor([0.0]), lucid.tensor([1.0]))
        m.sample()
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_batch_shape_of(self.loc, loc, scale), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Cauchy:
        return _expand_params(self, Cauchy, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self) -> Tensor:
        return _full(self, math.nan, self.loc)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return _full(self, math.inf, self.loc)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = _ops.rand(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _ops.tan(math.pi * (u - 0.5)) * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - ((value - self.loc) / self.scale).pow(2).log1p())

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return _ops.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return _ops.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()


class StudentT(Distribution):
    """Student's t-distribution with ``df`` degrees of freedom, location ``loc`` and scale
    ``scale``; samples are ``loc + scale * X / sqrt(Z / df)`` with ``X`` standard normal and
    ``Z ~ Chi2(df)``.

    Example::

        m = StudentT(lucid.tensor([2.0]))
        m.sample()
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df: Tensor | float, loc: Tensor | float = 0.0,
                 scale: Tensor | float = 1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(tuple(self.df.shape), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> StudentT:
        new = _expand_params(self, StudentT, batch_shape, _instance, ("df", "loc", "scale"))
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        return _ops.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df = self.df
        safe = _ops.where(df > 2, df, 3.0)
        var = self.scale.pow(2) * safe / (safe - 2)
        var = _ops.where(df > 2, var, math.inf)
        return _ops.where(df <= 1, math.nan, var)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(tuple(shape), self.df.dtype, self.df.device)
        Z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (X * (Z / self.df).rsqrt())

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + _special.lgamma(0.5 * self.df) - _special.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y.pow(2) / self.df).log1p() - Z

    def entropy(self) -> Tensor:
        lbeta = (_special.lgamma(0.5 * self.df) + math.lgamma(0.5)
                 - _special.lgamma(0.5 * (self.df + 1)))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (_special.digamma(0.5 * (self.df + 1))
                                         - _special.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)


class FisherSnedecor(Distribution):
    """The Fisher-Snedecor (F) distribution with degrees of freedom ``df1`` and ``df2``:
    the ratio of two scaled chi-squared draws.

    Example::

        m = FisherSnedecor(lucid.tensor([1.0]), lucid.tensor([2.0]))
        m.sample()
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Tensor | float, df2: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(_batch_shape_of(self.df1, df1, df2), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> FisherSnedecor:
        new = _expand_params(self, FisherSnedecor, batch_shape, _instance, ("df1", "df2"))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        df2 = _ops.where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return _ops.where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self) -> Tensor:
        df2 = _ops.where(self.df2 <= 4, math.nan, self.df2)
        return (2 * df2.pow(2) * (self.df1 + df2 - 2)
                / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        X1 = self._gamma1.rsample(sample_shape).reshape(shape)
        X2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = float(finfo(X2.dtype).tiny)
        return (X1 / X2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        lg = _special.lgamma
        t1 = lg(ct1 + ct2) - lg(ct1) - lg(ct2)
        t2 = ct1 * ct3.log() + (ct1 - 1) * _ops.log(value)
        t3 = (ct1 + ct2) * _ops.log1p(ct3 * value)
        return t1 + t2 - t3


class Pareto(TransformedDistribution):
    """The Pareto type-1 distribution with minimum ``scale`` and tail index ``alpha``:
    ``scale * exp(E)`` for ``E ~ Exponential(alpha)``.

    Example::

        m = Pareto(lucid.tensor([1.0]), lucid.tensor([1.0]))
        m.sample()
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale: Tensor | float, alpha: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Pareto:
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(tuple(batch_shape))
        new.alpha = self.alpha.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Tensor:
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.greater_than_eq(self.scale)

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
