"""Continuous distributions on ``[0, 1]`` beside ``Beta``: ``ContinuousBernoulli`` and
``Kumaraswamy``, as in torch (both with ``rsample``)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from .. import ops as _ops
from .._tensor import Size, Tensor
from ..ops import special as _special
from . import constraints
from .continuous import Uniform
from .discrete import _bce_with_logits
from .distribution import ExponentialFamily, _expand_probs_logits, _one_of
from .transformed import TransformedDistribution
from .transforms_elementwise import AffineTransform, PowerTransform
from .utils import (
    broadcast_all,
    clamp_probs,
    euler_constant,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["ContinuousBernoulli", "Kumaraswamy"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution on ``[0, 1]``, with density proportional to
    ``p**x (1 - p)**(1 - x)``, given by ``probs`` (in (0, 1)) or ``logits``. Near
    ``probs = 0.5`` (inside ``lims``) the normaliser and moments use Taylor expansions.

    Example::

        m = ContinuousBernoulli(lucid.tensor([0.3]))
        m.sample()
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None,
                 lims: tuple[float, float] = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and \
                    not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(Size() if is_scalar else tuple(self._param.shape),
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        new = _expand_probs_logits(self, ContinuousBernoulli, batch_shape, _instance)
        new._lims = self._lims
        return new

    def _outside_unstable_region(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        return _ops.where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self) -> Tensor:
        """The log normalising constant as a function of ``probs``."""
        cut = self._cut_probs()
        below_half = _ops.where(cut <= 0.5, cut, 0.0)
        above_half = _ops.where(cut >= 0.5, cut, 1.0)
        log_norm = (_ops.log(_ops.abs(_ops.log1p(-cut) - _ops.log(cut)))
                    - _ops.where(cut <= 0.5, _ops.log1p(-2.0 * below_half),
                                 _ops.log(2.0 * above_half - 1.0)))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return _ops.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (_ops.log1p(-cut) - _ops.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return _ops.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        variances = (cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2)
                     + 1.0 / (_ops.log1p(-cut) - _ops.log(cut)).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return _ops.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self) -> Tensor:
        """The real-valued parameter whose sigmoid is ``probs``."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        """The (0, 1)-valued parameter."""
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        """The shape of the parameter tensor."""
        return Size(tuple(self._param.shape))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = _ops.rand(*shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value) + self._cont_bern_log_norm()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = _ops.where(self._outside_unstable_region(), cdfs, value)
        return _ops.where(value <= 0.0, 0.0, _ops.where(value >= 1.0, 1.0, unbounded))

    def icdf(self, value: Tensor) -> Tensor:
        cut = self._cut_probs()
        inv = ((_ops.log1p(-cut + value * (2.0 * cut - 1.0)) - _ops.log1p(-cut))
               / (_ops.log(cut) - _ops.log1p(-cut)))
        return _ops.where(self._outside_unstable_region(), inv, value)

    def entropy(self) -> Tensor:
        log_probs0 = _ops.log1p(-self.probs)
        log_probs1 = _ops.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)

    def _log_normalizer(self, x: Tensor) -> Tensor:  # type: ignore[override]
        out = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = _ops.where(out, x, self._lims[0] - 0.5)
        log_norm = _ops.log(_ops.abs(_ops.expm1(cut))) - _ops.log(_ops.abs(cut))
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return _ops.where(out, log_norm, taylor)


def _moments(a: Tensor, b: Tensor, n: int) -> Tensor:
    """The ``n``-th raw moment of a Kumaraswamy(a, b)."""
    arg1 = 1 + n / a
    log_value = _special.lgamma(arg1) + _special.lgamma(b) - _special.lgamma(arg1 + b)
    return b * _ops.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on ``(0, 1)`` with ``concentration1`` (a) and
    ``concentration0`` (b): ``(1 - U ** (1 / b)) ** (1 / a)`` for ``U`` uniform.

    Example::

        m = Kumaraswamy(lucid.tensor([1.0]), lucid.tensor([1.0]))
        m.sample()
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(self, concentration1: Tensor | float, concentration0: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        base_dist = Uniform(_ops.full_like(self.concentration0, 0),
                            _ops.full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Kumaraswamy:
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        return _ops.where((b < 1) | (a < 1), math.nan, log_mode).exp()

    @property
    def variance(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self) -> Tensor:
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        H0 = _special.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * H0 - _ops.log(self.concentration1) - _ops.log(self.concentration0)
