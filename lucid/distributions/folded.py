"""Distributions folded at zero: ``HalfNormal`` (``|X|`` for a centred normal) and
``HalfCauchy`` (``|X|`` for a centred Cauchy), as in torch."""

from __future__ import annotations

import math
from typing import Any

from .. import ops as _ops
from .._tensor import Tensor
from . import constraints
from .continuous import Normal
from .heavy_tailed import Cauchy
from .transformed import TransformedDistribution
from .transforms_elementwise import AbsTransform

__all__ = ["HalfCauchy", "HalfNormal"]


class _Folded(TransformedDistribution):
    """``|X|`` for ``X`` symmetric about zero: the density doubles on ``[0, inf)``."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    @property
    def scale(self) -> Tensor:
        """The scale of the unfolded distribution."""
        return self.base_dist.scale

    @property
    def mode(self) -> Tensor:
        return _ops.zeros_like(self.scale)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        if not isinstance(value, Tensor):
            value = _ops.tensor(value, dtype=self.scale.dtype, device=self.scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return _ops.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    """The half-normal distribution: ``|X|`` for ``X ~ Normal(0, scale)``.

    Example::

        m = HalfNormal(lucid.tensor([1.0]))
        m.sample()
    """

    def __init__(self, scale: Tensor | float, validate_args: bool | None = None) -> None:
        base_dist = Normal(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfNormal:
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    """The half-Cauchy distribution: ``|X|`` for ``X ~ Cauchy(0, scale)``.

    Example::

        m = HalfCauchy(lucid.tensor([1.0]))
        m.sample()
    """

    def __init__(self, scale: Tensor | float, validate_args: bool | None = None) -> None:
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfCauchy:
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Tensor:
        return _ops.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype,
                         device=self.scale.device)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance
