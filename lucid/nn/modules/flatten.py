"""``Flatten`` and ``Unflatten``."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ..module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flatten dims ``start_dim..end_dim`` into one (by default all but the batch dim).

    Example::

        nn.Flatten()(lucid.zeros(8, 2, 3)).shape   # lucid.Size([8, 6])
    """

    __constants__ = ["start_dim", "end_dim"]
    start_dim: int
    end_dim: int

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        """Flatten the configured dims.

        Example::

            nn.Flatten()(lucid.zeros(8, 2, 3))
        """
        return input.flatten(self.start_dim, self.end_dim)  # type: ignore[attr-defined]

    def extra_repr(self) -> str:
        """The text inside this module's repr.

        Example::

            nn.Flatten().extra_repr()      # "start_dim=1, end_dim=-1"
        """
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size``.

    Example::

        nn.Unflatten(1, (2, 3))(lucid.zeros(8, 6)).shape   # lucid.Size([8, 2, 3])
    """

    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self._require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def _require_tuple_int(self, input: Any) -> None:
        if isinstance(input, (tuple, list)):
            for idx, elem in enumerate(input):
                if not isinstance(elem, int):
                    raise TypeError(
                        "unflattened_size must be tuple of ints, "
                        f"but found element of type {type(elem).__name__} at pos {idx}"
                    )
            return
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type "
                        f"{type(input).__name__}")

    def forward(self, input: Tensor) -> Tensor:
        """Split the configured dim.

        Example::

            nn.Unflatten(1, (2, 3))(lucid.zeros(8, 6))
        """
        return input.unflatten(self.dim, self.unflattened_size)  # type: ignore[attr-defined]

    def extra_repr(self) -> str:
        """The text inside this module's repr.

        Example::

            nn.Unflatten(1, (2, 3)).extra_repr()
        """
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
