"""Randomized leaky ReLU, as ``torch.nn.functional``: ``rrelu`` and ``rrelu_``. In training
every non-positive element gets its own slope drawn uniformly from [lower, upper] (from the
global generator) and the gradient there is that slope; in eval the slope is
``(lower + upper) / 2``, which is ``leaky_relu``."""

from __future__ import annotations

from .._tensor import Tensor
from . import elementwise as _e
from . import select as _sel
from .activation import leaky_relu
from .inplace import inplace as _inplace
from .random import Generator, rand

__all__ = ["rrelu", "rrelu_"]


def _noisy(input: Tensor, lower: float, upper: float, generator: Generator | None = None
           ) -> Tensor:
    r = rand(tuple(input.shape), generator=generator, dtype=input.dtype, device=input.device)
    slope = _e.add(_e.mul(r, upper - lower), lower)
    return _e.mul(input, _sel.where(_sel.le(input, 0), slope, 1.0))


def _rrelu(input: Tensor, lower: float, upper: float, training: bool, inplace: bool,
           generator: Generator | None) -> Tensor:
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    if inplace:
        return _inplace(input, lambda t: _noisy(t, lower, upper, generator))
    return _noisy(input, lower, upper, generator)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``a * x`` elsewhere: ``a ~ U(lower, upper)`` per element in
    training, ``(lower + upper) / 2`` otherwise.

    Example::

        y = F.rrelu(lucid.randn(4, 8), training=True)
    """
    return _rrelu(input, lower, upper, training, inplace, None)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False, generator: Generator | None = None) -> Tensor:
    """In-place ``rrelu``; the training slopes are drawn from ``generator`` (default: the
    global one).

    Example::

        F.rrelu_(x, training=True, generator=lucid.Generator().manual_seed(0))
    """
    return _rrelu(input, lower, upper, training, True, generator)
