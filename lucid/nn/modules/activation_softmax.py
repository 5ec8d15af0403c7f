"""The softmax family of activation layers: ``Softmax``, ``LogSoftmax``, ``Softmin``,
``Softmax2d``."""

from __future__ import annotations

from collections.abc import Callable

from ..._tensor import Tensor
from .. import functional as F
from ..module import Module

__all__ = ["Softmax", "LogSoftmax", "Softmin", "Softmax2d"]


class Softmax(Module):
    """Softmax over ``dim``, as ``torch.nn.Softmax``.

    Example::

        nn.Softmax(dim=1)(logits)
    """

    _fn: Callable[..., Tensor] = staticmethod(F.softmax)

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        """Apply the normalisation.

        Example::

            m(logits)
        """
        # NOTE: _stacklevel points the implicit-dim warning at the caller of the module
        return self._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        """PyTorch's text.

        Example::

            nn.Softmax(dim=1).extra_repr()     # "dim=1"
        """
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """Log-softmax over ``dim``, computed stably.

    Example::

        nn.LogSoftmax(dim=1)(logits)
    """

    _fn = staticmethod(F.log_softmax)


class Softmin(Softmax):
    """Softmax of ``-x`` over ``dim``.

    Example::

        nn.Softmin(dim=1)(x)
    """

    _fn = staticmethod(F.softmin)


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W) inputs, at every location.

    Example::

        nn.Softmax2d()(lucid.randn(2, 3, 4, 4)).sum(1)     # all ones
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply softmax over dim -3.

        Example::

            nn.Softmax2d()(x)
        """
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             f"instead")
        return F.softmax(input, -3)
