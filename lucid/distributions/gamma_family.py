"""Distributions built on gamma draws: ``Gamma`` with ``Chi2`` and ``InverseGamma``,
``Dirichlet`` (normalised gammas) and ``Beta`` (a two-class Dirichlet), as in torch.

Samples come from ``lucid.ops.random_gamma.standard_gamma`` (host draws from lucid's generator).
``rsample`` is differentiable with respect to the concentrations through the implicit
reparameterisation gradient of the gamma draw; a Dirichlet sample is ``g / g.sum()`` of gamma
draws ``g``, so its pathwise gradient is unbiased but not sample-for-sample the one torch's
``_dirichlet_grad`` gives.
"""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from .. import ops as _ops
from .._tensor import Size, Tensor
from ..ops import special as _special
from ..ops.random_gamma import standard_gamma
from . import constraints
from .distribution import ExponentialFamily, _expand_params
from .transformed import TransformedDistribution
from .transforms_elementwise import PowerTransform
from .utils import _batch_shape_of, _size, broadcast_all, finfo

__all__ = ["Beta", "Chi2", "Dirichlet", "Gamma", "InverseGamma"]


def _xlogy(x: Tensor, y: Tensor) -> Tensor:
    """``x * log(y)``, zero where ``x == 0`` (as ``torch.xlogy``)."""
    if not isinstance(y, Tensor):
        y = _ops.tensor(y, dtype=x.dtype, device=x.device)
    zero = x == 0
    return _ops.where(zero, 0.0, x * _ops.log(_ops.where(zero, 1.0, y)))


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and ``rate`` (inverse scale).

    Example::

        m = Gamma(lucid.tensor([1.0]), lucid.tensor([1.0]))
        m.sample()
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration: Tensor | float, rate: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(_batch_shape_of(self.concentration, concentration, rate),
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        return _expand_params(self, Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        tiny = float(finfo(value.dtype).tiny)
        return value + (value.detach().clamp(min=tiny) - value.detach())

    def log_prob(self, value: Tensor) -> Tensor:
        if not isinstance(value, Tensor):
            value = _ops.tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (_xlogy(self.concentration, self.rate) + _xlogy(self.concentration - 1, value)
                - self.rate * value - _special.lgamma(self.concentration))

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return _special.igamma(self.concentration, self.rate * value)

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - _ops.log(self.rate) + _special.lgamma(c) + (1.0 - c) * _special.digamma(c)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:  # type: ignore[override]
        return _special.lgamma(x + 1) + (x + 1) * _ops.log(-y.reciprocal())


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom: exactly
    ``Gamma(0.5 * df, 0.5)``.

    Example::

        m = Chi2(lucid.tensor([1.0]))
        m.sample()
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Tensor | float, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Chi2:
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)  # type: ignore[return-value]

    @property
    def df(self) -> Tensor:
        """The degrees of freedom."""
        return self.concentration * 2


class InverseGamma(TransformedDistribution):
    """The inverse gamma distribution: ``1 / X`` for ``X ~ Gamma(concentration, rate)``.

    Example::

        m = InverseGamma(lucid.tensor([2.0]), lucid.tensor([3.0]))
        m.sample()
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(self, concentration: Tensor | float, rate: Tensor | float,
                 validate_args: bool | None = None) -> None:
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -_ops.ones((), dtype=base_dist.rate.dtype, device=base_dist.rate.device)
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> InverseGamma:
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def concentration(self) -> Tensor:
        """The shape of the underlying gamma."""
        return self.base_dist.concentration

    @property
    def rate(self) -> Tensor:
        """The rate of the underlying gamma."""
        return self.base_dist.rate

    @property
    def mean(self) -> Tensor:
        c = self.concentration
        return _ops.where(c > 1, self.rate / (c - 1), math.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        result = self.rate.square() / ((c - 1).square() * (c - 2))
        return _ops.where(c > 2, result, math.inf)

    def entropy(self) -> Tensor:
        c = self.concentration
        return (c + self.rate.log() + _special.lgamma(c)
                - (1 + c) * _special.digamma(c))


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the simplex, with ``concentration`` of shape
    ``batch_shape + (K,)``.

    Example::

        m = Dirichlet(lucid.tensor([0.5, 0.5]))
        m.sample()          # a point on the 1-simplex
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        return _expand_params(self, Dirichlet, batch_shape, _instance, ("concentration",), 1)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        g = standard_gamma(self.concentration.expand(shape))
        x = g / g.sum(-1, keepdim=True)
        eps = finfo(x.dtype)
        return x + (x.detach().clamp(min=float(eps.tiny), max=1 - float(eps.eps)) - x.detach())

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (_xlogy(c - 1.0, value).sum(-1) + _special.lgamma(c.sum(-1))
                - _special.lgamma(c).sum(-1))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        cm1 = (self.concentration - 1).clamp(min=0.0)
        total = cm1.sum(-1, keepdim=True)
        mode = cm1 / _ops.where(total == 0, 1.0, total)  # those rows are replaced below
        k = cm1.shape[-1]
        mask = (self.concentration < 1).all(-1).unsqueeze(-1)
        hot = _ops.arange(k, device=mode.device) == mode.argmax(-1).unsqueeze(-1)
        return _ops.where(mask, hot.to(mode.dtype), mode)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        c0 = c.sum(-1, keepdim=True)
        return c * (c0 - c) / (c0.pow(2) * (c0 + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return (_special.lgamma(c).sum(-1) - _special.lgamma(a0)
                - (k - a0) * _special.digamma(a0)
                - ((c - 1.0) * _special.digamma(c)).sum(-1))

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:  # type: ignore[override]
        return _special.lgamma(x).sum(-1) - _special.lgamma(x.sum(-1))


class Beta(ExponentialFamily):
    """The beta distribution on [0, 1] with ``concentration1`` (alpha) and
    ``concentration0`` (beta).

    Example::

        m = Beta(lucid.tensor([0.5]), lucid.tensor([0.5]))
        m.sample()
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Tensor | float, concentration0: Tensor | float,
                 validate_args: bool | None = None) -> None:
        if isinstance(concentration1, Number) and isinstance(concentration0, Number):
            both = _ops.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            both = _ops.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Beta:
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = _size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        ExponentialFamily.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(_ops.stack([value, 1.0 - value], -1))

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()

    @property
    def concentration1(self) -> Tensor:
        """The first concentration (alpha)."""
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        """The second concentration (beta)."""
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return self.concentration1, self.concentration0

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:  # type: ignore[override]
        return _special.lgamma(x) + _special.lgamma(y) - _special.lgamma(x + y)
