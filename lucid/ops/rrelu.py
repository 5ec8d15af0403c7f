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
from .random import rand

__all__ = ["rrelu", "rrelu_"]


def _noisy(input: Tensor, lower: float, upper: float) -> Tensor:
    r = rand(tuple(input.shape), dtype=input.dtype, device=input.device)
    slope = _e.add(_e.mul(r, upper - lower), lower)
    return _e.mul(input, _sel.where(_sel.le(input, 0), slope, 1.0))


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``a * x`` elsewhere: ``a ~ U(lower, upper)`` per element in
    training, ``(lower + upper) / 2`` otherwise.

    Example::

        y = F.rrelu(lucid.randn(4, 8), training=True)
    """
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    if inplace:
        return _inplace(input, lambda t: _noisy(t, lower, upper))
    return _noisy(input, lower, upper)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """In-place ``rrelu``.

    Example::

        F.rrelu_(x, training=True)
    """
    return rrelu(input, lower, upper, training, True)
