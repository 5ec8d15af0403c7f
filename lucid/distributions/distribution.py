"""``Distribution``: the base of every probability distribution, as
``torch.distributions.Distribution``, and ``ExponentialFamily`` beside it."""

from __future__ import annotations

import warnings
from typing import Any

from .. import ops as _ops
from .._tensor import Size, Tensor
from ..autograd import no_grad
from . import constraints
from .utils import (
    _batch_shape_of,
    _size,
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["Distribution", "ExponentialFamily"]


class Distribution:
    """The abstract base class of probability distributions.

    ``batch_shape`` is the shape over which parameters are batched, ``event_shape`` the shape
    of one sample. With ``validate_args`` (the default unless Python runs with ``-O``, or
    after ``Distribution.set_default_validate_args(False)``) the parameters are checked
    against ``arg_constraints`` at construction and values against ``support`` in
    ``log_prob`` / ``cdf`` / ``icdf``; a violation raises ``ValueError``.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions created from now on.

        Example::

            Distribution.set_default_validate_args(False)
        """
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = Size(), event_shape: Any = Size(),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. Please set "
                    "`arg_constraints = {}` or initialize the distribution with "
                    "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                             lazy_property):
                    continue  # computed lazily from another parameter
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")
        super().__init__()

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        """A new distribution with batch dims expanded to ``batch_shape`` (parameters are
        expanded views; no argument checks are repeated)."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """The constraint each tensor argument must satisfy."""
        raise NotImplementedError

    @property
    def support(self) -> Any:
        """The constraint describing this distribution's support."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        """The mean of the distribution."""
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        """The variance of the distribution."""
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        """The standard deviation of the distribution."""
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        """A sample of shape ``sample_shape + batch_shape + event_shape`` (no gradient)."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        """A reparameterised sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        """``n`` samples (deprecated in torch: use ``sample((n,))``)."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the probability density / mass at ``value``."""
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete support along dim 0 (expanded over the batch dims when
        ``expand``)."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy, batched over ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """``exp(entropy)``, batched over ``batch_shape``."""
        return _ops.exp(self.entropy())

    def _extended_shape(self, sample_shape: Any = Size()) -> Size:
        return Size(tuple(_size(sample_shape)) + tuple(self._batch_shape)
                    + tuple(self._event_shape))

    def _validate_sample(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.shape} vs {self._event_shape}.")
        actual_shape = value.shape
        expected_shape = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=2)
            return
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in names)
        return f"{self.__class__.__name__}({args})"


class ExponentialFamily(Distribution):
    """Distributions of the exponential family ``p(x; t) = exp(<t(x), theta> - F(theta) +
    k(x))``. Subclasses here give closed-form entropies and KL divergences; the natural
    parameters and log normaliser are kept for parity with torch's interface."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError


def _expand_params(self: Distribution, cls: type, batch_shape: Any, _instance: Any,
                   names: tuple[str, ...], event_dims: int = 0) -> Any:
    """``expand`` for distributions whose state is parameters of shape
    ``batch_shape + (event part)``: a checked new instance holding expanded views of the
    parameters present on ``self``, without re-validating them."""
    new = self._get_checked_instance(cls, _instance)
    batch_shape = _size(batch_shape)
    for name in names:
        if name in self.__dict__:
            value = self.__dict__[name]
            tail = tuple(value.shape[value.dim() - event_dims:]) if event_dims else ()
            setattr(new, name, value.expand(tuple(batch_shape) + tail))
    Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new


def _one_of(probs: Any, logits: Any) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def _expand_probs_logits(self: Distribution, cls: type, batch_shape: Any, _instance: Any,
                         event_dims: int = 0) -> Any:
    """``_expand_params`` for a distribution given by ``probs`` or ``logits`` (whichever is
    held as ``_param``)."""
    new = _expand_params(self, cls, batch_shape, _instance, ("probs", "logits"), event_dims)
    new._param = new.__dict__.get("logits", new.__dict__.get("probs"))
    return new


class _BinaryOdds:
    """The ``probs`` / ``logits`` pair of a two-outcome distribution, each derived from the
    other on first use."""

    @lazy_property
    def logits(self) -> Tensor:
        """Log-odds of a 1."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        """Probability of a 1."""
        return logits_to_probs(self.logits, is_binary=True)


class _BinaryProbsLogits(_BinaryOdds):
    """The ``probs`` / ``logits`` pair of a two-outcome distribution: one is given (held as
    ``_param``), the other is derived on first use."""

    _param: Tensor

    def _set_probs_or_logits(self, probs: Any, logits: Any) -> Size:
        """Store the given one of ``probs`` / ``logits`` as a tensor; return the batch shape."""
        _one_of(probs, logits)
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        (self._param,) = broadcast_all(value)
        setattr(self, name, self._param)
        return _batch_shape_of(self._param, value)

    @property
    def param_shape(self) -> Size:
        """The shape of the parameter tensor."""
        return Size(tuple(self._param.shape))
