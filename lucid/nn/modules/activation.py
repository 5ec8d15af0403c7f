"""Activation modules over ops that exist: ``ReLU``, ``Sigmoid``, ``Tanh``."""

from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from ..module import Module

__all__ = ["ReLU", "Sigmoid", "Tanh"]


class ReLU(Module):
    """``max(x, 0)`` elementwise; ``inplace=True`` overwrites the input.

    Example::

        nn.ReLU()(lucid.tensor([-1.0, 2.0]))      # tensor([0., 2.])
    """

    __constants__ = ["inplace"]
    inplace: bool

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply ReLU.

        Example::

            nn.ReLU()(lucid.tensor([-1.0, 2.0]))
        """
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        """The text inside this module's repr.

        Example::

            nn.ReLU(inplace=True).extra_repr()      # "inplace=True"
        """
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` elementwise.

    Example::

        nn.Sigmoid()(lucid.zeros(2))               # tensor([0.5000, 0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply the logistic sigmoid.

        Example::

            nn.Sigmoid()(lucid.zeros(2))
        """
        return F.sigmoid(input)


class Tanh(Module):
    """``tanh(x)`` elementwise.

    Example::

        nn.Tanh()(lucid.zeros(2))                  # tensor([0., 0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply tanh.

        Example::

            nn.Tanh()(lucid.zeros(2))
        """
        return F.tanh(input)
