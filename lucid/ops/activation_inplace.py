"""The in-place functional activations of ``torch.nn.functional``: ``elu_``, ``celu_``,
``selu_``, ``hardtanh_``, ``leaky_relu_`` and ``threshold_``, each its activation with
``inplace=True`` (the in-place machinery of ``lucid.ops.views``)."""

from __future__ import annotations

from .._tensor import Tensor
from .activation import celu, elu, hardtanh, leaky_relu, selu
from .activation import threshold as _threshold

__all__ = ["elu_", "celu_", "selu_", "hardtanh_", "leaky_relu_", "threshold_"]


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``elu``.

    Example::

        F.elu_(x, alpha=0.5)
    """
    return elu(input, alpha, True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``celu``.

    Example::

        F.celu_(x, alpha=2.0)
    """
    return celu(input, alpha, True)


def selu_(input: Tensor) -> Tensor:
    """In-place ``selu``.

    Example::

        F.selu_(x)
    """
    return selu(input, True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place ``hardtanh``.

    Example::

        F.hardtanh_(x, -2.0, 2.0)
    """
    return hardtanh(input, min_val, max_val, True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place ``leaky_relu``.

    Example::

        F.leaky_relu_(x, 0.2)
    """
    return leaky_relu(input, negative_slope, True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place ``threshold``: values not above ``threshold`` become ``value``.

    Example::

        F.threshold_(x, 0.1, 0.0)
    """
    return _threshold(input, threshold, value, True)

