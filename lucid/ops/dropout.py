"""Dropout, as ``torch.nn.functional``: element-wise and channel-wise (1-D, 2-D, 3-D).
Masks come from the global generator (``lucid.manual_seed``); the gradients are the
multiplication's."""

from __future__ import annotations

import warnings
from typing import Any

from .._tensor import Tensor, _make
from . import elementwise as _e
from .inplace import inplace as _inplace
from .random import default_generator

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d"]


# ---- dropout ------------------------------------------------------------------------------------


def _keep_mask(input: Tensor, shape: tuple[int, ...], p: float) -> Tensor:
    be = input._be
    return _make(be.dropout_scale(default_generator.rng, shape, p, input.dtype), be, False, None)


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _apply_mask(input: Tensor, shape: tuple[int, ...], p: float, inplace: bool) -> Tensor:
    mask: Any = 0.0 if p == 1.0 else _keep_mask(input, shape, p)
    if inplace:
        return _inplace(input, lambda t: _e.mul(t, mask))
    return _e.mul(input, mask)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
            ) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    Example::

        lucid.manual_seed(0)
        y = dropout(lucid.ones(4, 4), p=0.5)       # entries 0 or 2
    """
    _check_p(p)
    if not training or p == 0.0:
        return input
    return _apply_mask(input, tuple(input.shape), p, inplace)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool, name: str,
                     batched: int) -> Tensor:
    _check_p(p)
    if input.ndim not in (batched - 1, batched):
        raise RuntimeError(f"{name}: Expected {batched - 1}D or {batched}D input, but received "
                           f"a {input.ndim}D input.")
    if not training or p == 0.0:
        return input
    lead = 2 if input.ndim == batched else 1
    shape = tuple(input.shape[:lead]) + (1,) * (input.ndim - lead)
    return _apply_mask(input, shape, p, inplace)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) input with probability ``p``.

    Example::

        y = dropout1d(lucid.ones(2, 3, 5), 0.5)
    """
    return _feature_dropout(input, p, training, inplace, "dropout1d", 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of (N, C, H, W) input with probability ``p``; a 3-D input is taken
    as (N, C, L), as torch does (with its warning).

    Example::

        y = dropout2d(lucid.ones(2, 3, 4, 4), 0.5)
    """
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release.",
                      stacklevel=2)
    elif input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-"
                      "wise 1D dropout behavior is desired - input is interpreted as shape "
                      "(N, C, L), where C is the channel dim.", stacklevel=2)
    if not training or p == 0.0:
        return input
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if input.ndim >= 2 else \
        tuple(input.shape)
    return _apply_mask(input, shape, p, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability ``p``.

    Example::

        y = dropout3d(lucid.ones(2, 3, 2, 2, 2), 0.5)
    """
    return _feature_dropout(input, p, training, inplace, "dropout3d", 5)
