"""Relaxed (Concrete / Gumbel-softmax) categorical distributions on the simplex:
``ExpRelaxedCategorical`` (the log of a relaxed one-hot sample) and
``RelaxedOneHotCategorical`` (its exponential), as in torch (both with ``rsample``)."""

from __future__ import annotations

from typing import Any

from .. import ops as _ops
from .._tensor import Size, Tensor
from ..ops import special as _special
from . import constraints
from .discrete import _OverCategorical
from .distribution import Distribution
from .transformed import _Relaxed
from .transforms_elementwise import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(_OverCategorical, Distribution):
    """The log of a point on the simplex drawn from a relaxed one-hot categorical with
    ``temperature`` and ``probs`` or ``logits``: ``log_softmax((logits + G) / temperature)``
    with ``G`` standard Gumbel noise.

    Example::

        m = ExpRelaxedCategorical(lucid.tensor(0.5), probs=lucid.tensor([0.2, 0.8]))
        m.rsample()
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature: Tensor, probs: Tensor | None = None,
                 logits: Tensor | None = None, validate_args: bool | None = None) -> None:
        batch_shape, event_shape = self._set_categorical(probs, logits)
        self.temperature = temperature
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ExpRelaxedCategorical:
        new = self._expand_categorical(ExpRelaxedCategorical, batch_shape, _instance)
        new.temperature = self.temperature
        return new

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(_ops.rand(*shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(u.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        K = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        temperature = self.temperature
        if not isinstance(temperature, Tensor):
            temperature = _ops.tensor(temperature, dtype=logits.dtype, device=logits.device)
        log_scale = (_special.lgamma(_ops.full_like(temperature, float(K)))
                     + temperature.log() * (K - 1))
        score = logits - value * temperature
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(_Relaxed):
    """The relaxed one-hot categorical (Concrete / Gumbel-softmax) distribution on the
    simplex, with ``temperature`` and ``probs`` or ``logits``; reparameterisable.

    Example::

        m = RelaxedOneHotCategorical(lucid.tensor([2.2]),
                                     lucid.tensor([0.1, 0.2, 0.3, 0.4]))
        m.rsample()
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(self, temperature: Tensor, probs: Tensor | None = None,
                 logits: Tensor | None = None, validate_args: bool | None = None) -> None:
        base_dist = ExpRelaxedCategorical(temperature, probs, logits,
                                          validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedOneHotCategorical:
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]
