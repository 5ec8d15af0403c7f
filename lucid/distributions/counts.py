"""Distributions over counts of Bernoulli trials: ``Binomial``, ``NegativeBinomial``,
``Geometric`` and ``Multinomial``, as in torch (no ``rsample``).

``Binomial`` samples are exact draws built from lucid's gamma sampler: the ``a``-th smallest
of ``n`` uniforms is ``Beta(a, n + 1 - a)``; comparing it with ``p`` fixes ``a`` (or
``n + 1 - a``) trials at once and leaves a binomial on the rest, so the loop runs about
``log2(n)`` times.
"""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from .. import _dtype
from .. import ops as _ops
from .._tensor import Size, Tensor
from ..autograd import no_grad
from ..ops import activation as _act
from ..ops import special as _special
from ..ops.random_gamma import poisson as _poisson
from ..ops.random_gamma import standard_gamma
from . import constraints
from .discrete import _bce_with_logits, _OverCategorical
from .distribution import (
    Distribution,
    _BinaryOdds,
    _BinaryProbsLogits,
    _expand_params,
    _expand_probs_logits,
    _one_of,
)
from .gamma_family import Gamma
from .utils import (
    _size,
    broadcast_all,
    finfo,
    lazy_property,
)

__all__ = ["Binomial", "Geometric", "Multinomial", "NegativeBinomial", "binomial"]


def _binomial_draw(total_count: Tensor, probs: Tensor) -> Tensor:
    """Binomial(n, p) draws, one per element of the (equally shaped) inputs, without
    gradient."""
    whole = total_count.detach().floor().clamp(min=0.0)  # torch floors counts; <0 is 0
    finite = whole.isfinite()
    n = _ops.where(finite, whole, 0.0).contiguous()  # (inf and NaN counts give themselves)
    p = probs.detach().clamp(min=0.0, max=1.0).contiguous()
    out = _ops.zeros_like(n)
    while True:
        active = n > 0
        if not bool(active.any()):
            return _ops.where(finite, out, whole)
        a = ((n + 1) / 2).floor()
        g1 = standard_gamma(_ops.where(active, a, 1.0))
        g2 = standard_gamma(_ops.where(active, n + 1 - a, 1.0))
        y = g1 / (g1 + g2)
        below = y <= p
        out = out + _ops.where(active & below, a, 0.0)
        rest = 1 - y
        p_above = _ops.where(rest > 0, (p - y) / _ops.where(rest > 0, rest, 1.0), 1.0)
        p_below = p / _ops.where(y > 0, y, 1.0)
        n = _ops.where(active, _ops.where(below, n - a, a - 1), 0.0)
        p = _ops.where(below, p_above, p_below).clamp(min=0.0, max=1.0)


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """Binomial draws with ``count`` trials and success probability ``prob`` (same shape),
    in ``count``'s float dtype (``torch.binomial``); no gradient.

    Example::

        lucid.binomial(lucid.full((3,), 10.0), lucid.full((3,), 0.5))
    """
    if not count.dtype.is_floating_point:
        raise RuntimeError(f"binomial only supports floating-point dtypes for count, got: "
                           f"{_dtype.torch_name(count.dtype)}")
    count, prob = _ops.broadcast_tensors(count, prob.to(count.dtype))
    return _binomial_draw(count, prob)


class _TotalCountProbsLogits(_BinaryProbsLogits, Distribution):
    """``total_count`` broadcast with one of ``probs`` / ``logits``; the other is derived on
    first use."""

    _param: Tensor

    def _set_params(self, total_count: Any, probs: Any, logits: Any) -> None:
        _one_of(probs, logits)
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        count, self._param = broadcast_all(total_count, value)
        self.total_count = count.type_as(self._param)
        setattr(self, name, self._param)

    def _expand_counts(self, cls: type, batch_shape: Any, _instance: Any) -> Any:
        new = _expand_probs_logits(self, cls, batch_shape, _instance)
        new.total_count = self.total_count.expand(tuple(_size(batch_shape)))
        return new


def _clamp_by_zero(x: Tensor) -> Tensor:
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_TotalCountProbsLogits):
    """The binomial distribution: successes in ``total_count`` Bernoulli trials with success
    probability ``probs`` (or ``sigmoid(logits)``).

    Example::

        m = Binomial(100, lucid.tensor([0.0, 0.2, 0.8, 1.0]))
        m.sample()
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count: Tensor | int = 1, probs: Tensor | None = None,
                 logits: Tensor | None = None, validate_args: bool | None = None) -> None:
        self._set_params(total_count, probs, logits)
        super().__init__(tuple(self._param.shape), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Binomial:
        return self._expand_counts(Binomial, batch_shape, _instance)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        mode = ((self.total_count + 1) * self.probs).floor()
        return _ops.minimum(mode, self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return _binomial_draw(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lg = _special.lgamma
        n, logits = self.total_count, self.logits
        normalize_term = (n * _clamp_by_zero(logits) + n * _ops.log1p(_ops.exp(-logits.abs()))
                          - lg(n + 1))
        return value * logits - lg(value + 1) - lg(n - value + 1) - normalize_term

    def _homogeneous_count(self, what: str) -> int:
        total_count = int(self.total_count.max().item())
        if not int(self.total_count.min().item()) == total_count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total_count

    def entropy(self) -> Tensor:
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(_ops.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        total_count = self._homogeneous_count("enumerate_support")
        values = _ops.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class NegativeBinomial(_TotalCountProbsLogits):
    """The negative binomial distribution: successes before ``total_count`` failures, with
    success probability ``probs`` (or ``sigmoid(logits)``); ``total_count`` may be real.

    Example::

        m = NegativeBinomial(5.0, lucid.tensor([0.3]))
        m.sample()
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Tensor | float, probs: Tensor | None = None,
                 logits: Tensor | None = None, validate_args: bool | None = None) -> None:
        self._set_params(total_count, probs, logits)
        super().__init__(tuple(self._param.shape), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        return self._expand_counts(NegativeBinomial, batch_shape, _instance)

    @property
    def mean(self) -> Tensor:
        return self.total_count * _ops.exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / _ops.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(concentration=self.total_count, rate=_ops.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        with no_grad():
            rate = self._gamma.sample(sample_shape)
            return _poisson(rate)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lg = _special.lgamma
        n = self.total_count
        log_unnormalized_prob = (n * _act.logsigmoid(-self.logits)
                                 + value * _act.logsigmoid(self.logits))
        log_normalization = -lg(n + value) + lg(1.0 + value) + lg(n)
        log_normalization = _ops.where(n + value == 0.0, 0.0, log_normalization)
        return log_unnormalized_prob - log_normalization


class Geometric(_BinaryOdds, Distribution):
    """The geometric distribution: failures before the first success in Bernoulli trials
    with success probability ``probs`` (in (0, 1]) or ``sigmoid(logits)``.

    Example::

        m = Geometric(lucid.tensor([0.3]))
        m.sample()
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None,
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        batch_shape = Size() if isinstance(given, Number) else tuple(given.shape)  # type: ignore
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError(
                f"Expected parameter probs ({type(self.probs).__name__} of shape "
                f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but "
                f"found invalid values:\n{self.probs}")

    def expand(self, batch_shape: Any, _instance: Any = None) -> Geometric:
        return _expand_params(self, Geometric, batch_shape, _instance, ("probs", "logits"))

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return _ops.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        tiny = float(finfo(self.probs.dtype).tiny)
        with no_grad():
            u = _ops.rand(*shape, dtype=self.probs.dtype, device=self.probs.device)
            u = u * (1 - tiny) + tiny  # uniform on [tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = _ops.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return _bce_with_logits(self.logits, self.probs) / self.probs


class Multinomial(_OverCategorical, Distribution):
    """The multinomial distribution: counts per category in ``total_count`` draws from
    ``probs`` (normalised along the last dim) or ``logits``. ``log_prob`` accepts any
    total; ``sample`` uses the shared ``total_count``.

    Example::

        m = Multinomial(100, lucid.tensor([1.0, 1.0, 1.0, 1.0]))
        m.sample()          # e.g. tensor([21., 24., 30., 25.])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    total_count: int

    def __init__(self, total_count: int = 1, probs: Tensor | None = None,
                 logits: Tensor | None = None, validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        batch_shape, event_shape = self._set_categorical(probs, logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        new = self._expand_categorical(Multinomial, batch_shape, _instance)
        new.total_count = self.total_count
        new._binomial = Binomial(total_count=self.total_count, probs=new.probs)
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:
        return constraints.multinomial(self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        sample_shape = _size(sample_shape)
        with no_grad():
            samples = self._categorical.sample(Size((self.total_count,) + tuple(sample_shape)))
            order = list(range(1, samples.dim())) + [0]
            samples = samples.permute(*order)
            counts = _ops.zeros(tuple(self._extended_shape(sample_shape)), dtype=_dtype.int64,
                                device=samples.device)
            counts = counts.scatter_add(-1, samples, _ops.ones_like(samples))
            return counts.type_as(self.probs)

    def entropy(self) -> Tensor:
        n = float(self.total_count)
        term1 = n * self._categorical.entropy() - math.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = _ops.exp(self._binomial.log_prob(support))
        weights = _special.lgamma(support + 1)
        term2 = (binomial_probs * weights).sum(-1).sum(0)
        return term1 + term2

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = _special.lgamma(value.sum(-1) + 1)
        log_factorial_xs = _special.lgamma(value + 1).sum(-1)
        logits = _ops.where((value == 0) & (logits == -math.inf), 0.0, logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
