"""Discrete distributions: ``Bernoulli``, ``Categorical``, ``OneHotCategorical`` (with its
straight-through variant) and ``Poisson``, parameterised (where torch allows) by ``probs``
or ``logits``; the other of the two is derived on first use."""

from __future__ import annotations

import math
from typing import Any

from .. import _dtype
from .. import ops as _ops
from .._tensor import Size, Tensor
from ..autograd import no_grad
from ..ops import activation as _act
from ..ops import special as _special
from ..ops.random_gamma import poisson as _poisson
from . import constraints
from .distribution import (
    Distribution,
    ExponentialFamily,
    _BinaryProbsLogits,
    _expand_params,
    _expand_probs_logits,
    _one_of,
)
from .gamma_family import _xlogy
from .utils import (
    _batch_shape_of,
    _size,
    broadcast_all,
    finfo,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = [
    "Bernoulli", "Categorical", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Poisson",
]


def _bce_with_logits(logits: Tensor, target: Tensor) -> Tensor:
    """Elementwise ``-(t log sigmoid(l) + (1 - t) log(1 - sigmoid(l)))``, stable for any l
    and smooth at ``l = 0`` (its gradient is ``sigmoid(l) - t`` everywhere)."""
    return (1 - target) * logits - _act.logsigmoid(logits)


class Bernoulli(_BinaryProbsLogits, ExponentialFamily):
    """The Bernoulli distribution: 1 with probability ``probs`` (or ``sigmoid(logits)``),
    else 0.

    Example::

        m = Bernoulli(lucid.tensor([0.3]))
        m.sample()          # 30% chance 1; 70% chance 0
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None,
                 validate_args: bool | None = None) -> None:
        batch_shape = self._set_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Bernoulli:
        return _expand_probs_logits(self, Bernoulli, batch_shape, _instance)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return _ops.where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _ops.bernoulli(self.probs.expand(shape).contiguous())

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value)

    def entropy(self) -> Tensor:
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _ops.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (_ops.log(self.probs) - _ops.log1p(-self.probs),)

    def _log_normalizer(self, x: Tensor) -> Tensor:  # type: ignore[override]
        return _ops.log1p(_ops.exp(x))


class Categorical(Distribution):
    """A categorical distribution over ``0 .. K-1``, from ``probs`` (normalised along the last
    dim) or ``logits`` (unnormalised log-probabilities).

    Example::

        m = Categorical(lucid.tensor([0.25, 0.25, 0.25, 0.25]))
        m.sample()          # equal probability of 0, 1, 2, 3
    """

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:  # type: ignore[union-attr]
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)  # type: ignore
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = tuple(self._param.shape[:-1]) if self._param.dim() > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        new = _expand_probs_logits(self, Categorical, batch_shape, _instance, 1)
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        """Normalised log-probabilities."""
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        """Normalised probabilities."""
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        """The shape of the parameter tensor."""
        return Size(tuple(self._param.shape))

    @property
    def mean(self) -> Tensor:
        return _ops.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype,
                         device=self.probs.device)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return _ops.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype,
                         device=self.probs.device)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        """Class indices (int64) of shape ``sample_shape + batch_shape``, drawn by inverting
        the cumulative probabilities at uniforms from lucid's generator."""
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            probs = self.probs.detach()
            cdf = probs.cumsum(-1)
            cdf = cdf / cdf[..., -1:]
            u = _ops.rand(*(shape + (1,)), dtype=probs.dtype, device=probs.device)
            idx = (cdf <= u).sum(-1)  # a zero-probability class is never drawn
            return idx.clamp(max=self._num_events - 1).to(_dtype.int64)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = _ops.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=float(finfo(self.logits.dtype).min))
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _ops.arange(self._num_events, dtype=_dtype.int64, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class _OverCategorical:
    """A distribution over the ``K`` events of a wrapped ``Categorical`` (``_categorical``):
    its ``probs``, ``logits``, ``param_shape`` and batch shape are the categorical's, its
    event shape ``(K,)``."""

    _categorical: Categorical

    def _set_categorical(self, probs: Tensor | None, logits: Tensor | None
                         ) -> tuple[Size, tuple[int, ...]]:
        """Wrap ``Categorical(probs, logits)``; return the batch and event shapes."""
        self._categorical = Categorical(probs, logits)
        return self._categorical.batch_shape, tuple(self._categorical.param_shape[-1:])

    def _expand_categorical(self, cls: type, batch_shape: Any, _instance: Any) -> Any:
        """``expand``'s checked new instance holding the expanded categorical."""
        new = self._get_checked_instance(cls, _instance)  # type: ignore[attr-defined]
        batch_shape = _size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape,  # type: ignore[attr-defined]
                              validate_args=False)
        new._validate_args = self._validate_args  # type: ignore[attr-defined]
        return new

    @property
    def logits(self) -> Tensor:
        """Normalised log-probabilities."""
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        """Normalised probabilities."""
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        """The shape of the parameter tensor."""
        return self._categorical.param_shape


class OneHotCategorical(_OverCategorical, Distribution):
    """A categorical distribution whose samples are one-hot vectors of length ``K``.

    Example::

        m = OneHotCategorical(lucid.tensor([0.25, 0.25, 0.25, 0.25]))
        m.sample()          # e.g. tensor([0., 0., 1., 0.])
    """

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        batch_shape, event_shape = self._set_categorical(probs, logits)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> OneHotCategorical:
        return self._expand_categorical(OneHotCategorical, batch_shape, _instance)

    @property
    def _param(self) -> Tensor:
        return self._categorical._param

    @property
    def mean(self) -> Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        probs = self._categorical.probs
        return self._one_hot(probs.argmax(-1), probs.dtype)

    @property
    def variance(self) -> Tensor:
        p = self._categorical.probs
        return p * (1 - p)

    def _one_hot(self, idx: Tensor, dtype: Any) -> Tensor:
        k = self._categorical._num_events
        return (idx.unsqueeze(-1) == _ops.arange(k, device=idx.device)).to(dtype)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        idx = self._categorical.sample(sample_shape)
        return self._one_hot(idx, self._categorical.probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.event_shape[0]
        values = _ops.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A ``OneHotCategorical`` whose ``rsample`` passes gradients straight through: the
    sample is one-hot, its gradient that of ``probs``.

    Example::

        m = OneHotCategoricalStraightThrough(logits=lucid.zeros(3, requires_grad=True))
        (m.rsample() * lucid.tensor([1.0, 2.0, 3.0])).sum().backward()
    """

    has_rsample = True

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


class Poisson(ExponentialFamily):
    """The Poisson distribution with rate ``rate``; samples are counts (in ``rate``'s dtype).

    Example::

        m = Poisson(lucid.tensor([4.0]))
        m.sample()
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Tensor | float, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(_batch_shape_of(self.rate, rate), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Poisson:
        return _expand_params(self, Poisson, batch_shape, _instance, ("rate",))

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _poisson(self.rate.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return _xlogy(value, rate) - rate - _special.lgamma(value + 1)

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (_ops.log(self.rate),)

    def _log_normalizer(self, x: Tensor) -> Tensor:  # type: ignore[override]
        return _ops.exp(x)
