"""Alpha dropout, as ``torch.nn.functional``: ``alpha_dropout`` and
``feature_alpha_dropout`` (whole channels) for SELU networks. A dropped value is set to
SELU's negative saturation and every value is then scaled and shifted so that inputs of
zero mean and unit variance keep them (torch's ``_dropout_impl``: keep with probability
``1 - p``, ``a = 1 / sqrt((alpha**2 * p + 1) * (1 - p))``, ``y = a * x * keep + b`` with
``b = alpha * a * (keep - 1 + p)``). Masks come from the global generator; the gradient is
``a * keep``."""

from __future__ import annotations

import math

from .._tensor import Tensor
from . import elementwise as _e
from .inplace import inplace as _inplace
from .random import rand

__all__ = ["alpha_dropout", "feature_alpha_dropout"]

_ALPHA = 1.7580993408473766  # SELU's scale * alpha: its negative saturation value, negated


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _alpha(input: Tensor, p: float, training: bool, inplace: bool, feature: bool) -> Tensor:
    _check_p(p)
    if p == 0.0 or not training or input.numel() == 0:
        return input
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1.0:
        return _inplace(input, lambda t: _e.mul(t, 0.0)) if inplace else _e.mul(input, 0.0)
    shape = tuple(input.shape)
    if feature:
        shape = shape[:2] + (1,) * (len(shape) - 2)
    keep = (rand(shape, dtype=input.dtype, device=input.device) < 1.0 - p).to(input.dtype)
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    b = _e.add(_e.mul(keep, _ALPHA * a), _ALPHA * a * (p - 1))
    scale = _e.mul(keep, a)

    def apply(t: Tensor) -> Tensor:
        return _e.add(_e.mul(t, scale), b)

    return _inplace(input, apply) if inplace else apply(input)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Alpha dropout of each element with probability ``p`` (identity unless ``training``,
    whose default here is False, as torch's).

    Example::

        y = F.alpha_dropout(F.selu(lucid.randn(64, 32)), 0.2, training=True)
    """
    return _alpha(input, p, training, inplace, False)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels (dim 1 of an input with at least 2 dims).

    Example::

        y = F.feature_alpha_dropout(lucid.randn(8, 4, 5, 5), 0.2, training=True)
    """
    return _alpha(input, p, training, inplace, True)
