"""Distributions defined by pushing a base distribution through transforms:
``TransformedDistribution`` and the ones built on it, ``LogNormal`` (exp of a normal) and
``RelaxedBernoulli`` (sigmoid of a ``LogitRelaxedBernoulli``) and ``LogisticNormal``
(stick breaking of a normal onto the simplex)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from .. import ops as _ops
from .._tensor import Size, Tensor
from ..autograd import no_grad
from . import constraints
from .continuous import Normal
from .distribution import Distribution, _BinaryProbsLogits, _expand_probs_logits
from .independent import Independent
from .transform_base import ComposeTransform, Transform
from .transforms_elementwise import ExpTransform, SigmoidTransform
from .transforms_matrix import StickBreakingTransform
from .utils import (
    _size,
    _sum_rightmost,
    broadcast_all,
    clamp_probs,
)

__all__ = [
    "LogNormal", "LogisticNormal", "LogitRelaxedBernoulli", "RelaxedBernoulli",
    "TransformedDistribution",
]


class TransformedDistribution(Distribution):
    """``base_distribution`` pushed through ``transforms`` (one ``Transform`` or a list,
    applied in order). ``log_prob`` inverts the transforms and adds their log Jacobians.

    Example::

        base = Normal(lucid.zeros(2), lucid.ones(2))
        logn = TransformedDistribution(base, [ExpTransform()])
    """

    arg_constraints: dict[str, constraints.Constraint] = {}

    def __init__(self, base_distribution: Distribution, transforms: Any,
                 validate_args: bool | None = None) -> None:
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least "
                             f"{transform.domain.event_dim}, but got {Size(base_shape)}.")
        forward_shape = tuple(transform.forward_shape(base_shape))
        expanded_base_shape = tuple(transform.inverse_shape(forward_shape))
        if base_shape != expanded_base_shape:
            base_batch_shape = expanded_base_shape[:len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch_shape)
        reinterpreted = transform.domain.event_dim - base_event_dim
        if reinterpreted > 0:
            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        change = transform.codomain.event_dim - transform.domain.event_dim
        event_dim = max(transform.codomain.event_dim, base_event_dim + change)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> TransformedDistribution:
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = _size(batch_shape)
        shape: Any = tuple(batch_shape) + tuple(self.event_shape)
        for t in reversed(self.transforms):
            shape = tuple(t.inverse_shape(shape))
        base_batch_shape = shape[:len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch_shape)
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self) -> constraints.Constraint:
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for transform in self.transforms:
                x = transform(x)
            return x

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob: Any = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(transform.log_abs_det_jacobian(x, y),
                                                 event_dim - transform.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y),
                                         event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value: Tensor) -> Tensor:
        sign: Any = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value: Tensor) -> Tensor:
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for transform in self.transforms:
            value = transform(value)
        return value


class _Relaxed(TransformedDistribution):
    """A relaxed discrete distribution: a transform of a base distribution that holds the
    ``temperature`` and the ``probs`` / ``logits`` of the discrete one."""

    @property
    def temperature(self) -> Tensor:
        """The relaxation temperature."""
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        """The logits of the underlying discrete distribution."""
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        """The probabilities of the underlying discrete distribution."""
        return self.base_dist.probs


class LogNormal(TransformedDistribution):
    """The log-normal distribution: ``exp(X)`` for ``X ~ Normal(loc, scale)``.

    Example::

        m = LogNormal(lucid.tensor([0.0]), lucid.tensor([1.0]))
        m.sample()
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(self, loc: Tensor | float, scale: Tensor | float,
                 validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogNormal:
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def loc(self) -> Tensor:
        """The mean of the underlying normal."""
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        """The standard deviation of the underlying normal."""
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self) -> Tensor:
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc


class LogitRelaxedBernoulli(_BinaryProbsLogits, Distribution):
    """The logit of a relaxed Bernoulli sample (a logistic distribution whose location is
    the logits divided by ``temperature``).

    Example::

        m = LogitRelaxedBernoulli(lucid.tensor([0.5]), probs=lucid.tensor([0.3]))
        m.rsample()
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature: Tensor, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None,
                 validate_args: bool | None = None) -> None:
        self.temperature = temperature
        batch_shape = self._set_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogitRelaxedBernoulli:
        new = _expand_probs_logits(self, LogitRelaxedBernoulli, batch_shape, _instance)
        new.temperature = self.temperature
        return new

    def _log_temperature(self) -> Any:
        t = self.temperature
        return math.log(t) if isinstance(t, Number) else _ops.log(t)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(_ops.rand(*shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return self._log_temperature() + diff - 2 * _ops.log1p(diff.exp())


class RelaxedBernoulli(_Relaxed):
    """The relaxed (Concrete / Gumbel-sigmoid) Bernoulli on (0, 1), with ``temperature`` and
    either ``probs`` or ``logits``; reparameterisable.

    Example::

        m = RelaxedBernoulli(lucid.tensor([2.2]), probs=lucid.tensor([0.1, 0.2, 0.3, 0.99]))
        m.rsample()
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(self, temperature: Tensor, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None,
                 validate_args: bool | None = None) -> None:
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedBernoulli:
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]


class LogisticNormal(TransformedDistribution):
    """The logistic-normal distribution on the simplex: ``StickBreakingTransform`` of
    ``X ~ Normal(loc, scale)`` (so a sample has one more entry than ``loc``).

    Example::

        m = LogisticNormal(lucid.tensor([0.0, 0.0, 0.0]), lucid.tensor([1.0, 1.0, 1.0]))
        m.sample()          # a point on the 3-simplex (4 entries)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(self, loc: Tensor | float, scale: Tensor | float,
                 validate_args: bool | None = None) -> None:
        base_dist: Distribution = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogisticNormal:
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def loc(self) -> Tensor:
        """The mean of the underlying normal."""
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        """The standard deviation of the underlying normal."""
        return self.base_dist.base_dist.scale
