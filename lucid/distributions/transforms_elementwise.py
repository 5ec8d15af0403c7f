"""Elementwise transforms, as in ``torch.distributions.transforms``: ``ExpTransform``,
``PowerTransform``, ``SigmoidTransform``, ``SoftplusTransform``, ``TanhTransform``,
``AbsTransform``, ``AffineTransform`` and ``CumulativeDistributionTransform``."""

from __future__ import annotations

import math
from numbers import Number, Real
from typing import Any

from .. import ops as _ops
from .._tensor import Tensor
from ..ops import activation as _act
from ..ops._util import broadcast_shapes
from . import constraints
from .transform_base import Transform
from .utils import broadcast_all, finfo, lazy_property

__all__ = [
    "AbsTransform", "AffineTransform", "CumulativeDistributionTransform", "ExpTransform",
    "PowerTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform",
]

class ExpTransform(Transform):
    """``y = exp(x)``."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.exp()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


class PowerTransform(Transform):
    """``y = x ** exponent`` on the positive reals.

    Example::

        t = PowerTransform(lucid.tensor(2.0))
    """

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Tensor | float, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @lazy_property
    def sign(self) -> Any:  # type: ignore[override]
        """The sign of ``exponent``."""
        return self.exponent.sign()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PowerTransform):
            return False
        return bool(self.exponent.eq(other.exponent).all().item())

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.pow(self.exponent)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape: Any) -> Any:
        return broadcast_shapes(tuple(shape), tuple(getattr(self.exponent, "shape", ())))

    def inverse_shape(self, shape: Any) -> Any:
        return broadcast_shapes(tuple(shape), tuple(getattr(self.exponent, "shape", ())))


class SigmoidTransform(Transform):
    """``y = sigmoid(x)``, clamped into ``[tiny, 1 - eps]`` so the inverse stays finite."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        fi = finfo(x.dtype)
        return _ops.sigmoid(x).clamp(min=float(fi.tiny), max=1.0 - float(fi.eps))

    def _inverse(self, y: Tensor) -> Tensor:
        fi = finfo(y.dtype)
        y = y.clamp(min=float(fi.tiny), max=1.0 - float(fi.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -_act.softplus(-x) - _act.softplus(x)


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))`` (linear above ``x = 20``)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return _act.softplus(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return (-(-y).expm1()).log() + y

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -_act.softplus(-x)


class TanhTransform(Transform):
    """``y = tanh(x)``; the Jacobian uses the stable form ``2 (log 2 - x - softplus(-2x))``."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.tanh()

    def _inverse(self, y: Tensor) -> Tensor:
        return 0.5 * (_ops.log1p(y) - _ops.log1p(-y))  # atanh

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return 2.0 * (math.log(2.0) - x - _act.softplus(-2.0 * x))


class AbsTransform(Transform):
    """``y = |x|`` (not bijective: the inverse picks the nonnegative root)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.abs()

    def _inverse(self, y: Tensor) -> Tensor:
        return y


class AffineTransform(Transform):
    """``y = loc + scale * x`` (``loc`` and ``scale`` numbers or tensors); ``event_dim`` makes
    the Jacobian sum over that many rightmost dims.

    Example::

        t = AffineTransform(loc=1.0, scale=2.0)
    """

    bijective = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, event_dim: int = 0,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, Number) and isinstance(b, Number):
                if a != b:
                    return False
            elif not bool((a == b).all()):  # type: ignore[union-attr]
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self) -> Any:
        if isinstance(self.scale, Real):
            s = float(self.scale)
            return 1 if s > 0 else -1 if s < 0 else 0
        return self.scale.sign()

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        shape = tuple(x.shape)
        scale = self.scale
        if isinstance(scale, Real):
            result = _ops.full_like(x, math.log(abs(scale)))
        else:
            result = _ops.abs(scale).log()
        if self.event_dim:
            result = result.reshape(tuple(result.shape[:result.dim() - self.event_dim]) + (-1,))
            result = result.sum(-1)
            shape = shape[:len(shape) - self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape: Any) -> Any:
        return broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                tuple(getattr(self.scale, "shape", ())))

    def inverse_shape(self, shape: Any) -> Any:
        return broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                tuple(getattr(self.scale, "shape", ())))


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``: maps the support of ``distribution`` onto ``[0, 1]``; its
    log Jacobian is ``distribution.log_prob(x)``.

    Example::

        copula = TransformedDistribution(base, [CumulativeDistributionTransform(Normal(0., 1.))])
    """

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self.distribution.support

    def _call(self, x: Tensor) -> Tensor:
        return self.distribution.cdf(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
