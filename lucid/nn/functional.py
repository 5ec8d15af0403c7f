"""Functional forms of the layers, as ``torch.nn.functional`` (over ``lucid.ops``).

Example::

    import lucid.nn.functional as F
    y = F.relu(F.linear(x, w, b))
"""

from __future__ import annotations

from .. import ops
from .._tensor import Tensor
from ..ops.matmul import linear as _linear

__all__ = ["linear", "relu", "relu_", "sigmoid", "tanh"]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``.

    Example::

        F.linear(lucid.randn(8, 4), lucid.randn(3, 4))   # shape (8, 3)
    """
    return _linear(input, weight, bias)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)``; ``inplace=True`` overwrites ``input``.

    Example::

        F.relu(lucid.tensor([-1.0, 1.0]))               # tensor([0., 1.])
    """
    if inplace:
        return input.relu_()  # type: ignore[attr-defined]
    return ops.relu(input)


def relu_(input: Tensor) -> Tensor:
    """In-place ``relu``.

    Example::

        F.relu_(x)
    """
    return input.relu_()  # type: ignore[attr-defined]


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-input))``.

    Example::

        F.sigmoid(lucid.zeros(1))                        # tensor([0.5000])
    """
    return ops.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """``tanh(input)``.

    Example::

        F.tanh(lucid.zeros(1))                           # tensor([0.])
    """
    return ops.tanh(input)
