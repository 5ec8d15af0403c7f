"""Padding layers over ``F.pad``: zero, constant, reflection, replication and circular
padding of the last 1, 2 or 3 dims."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ...ops.movement import pad
from ..module import Module

__all__ = [
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
]


def _widths(padding: Any, k: int) -> tuple[int, ...]:
    if isinstance(padding, (list, tuple)):
        if len(padding) != 2 * k:
            raise ValueError(f"padding must be an int or a tuple of {2 * k} ints, got "
                             f"{tuple(padding)}")
        return tuple(int(p) for p in padding)
    return (int(padding),) * (2 * k)


class _PadNd(Module):
    """The shared body: ``padding`` (an int for every side, or ``2 * k`` ints ordered
    (left, right, top, bottom, front, back)) and the ``F.pad`` mode."""

    __constants__ = ["padding"]
    _k = 1
    _mode = "constant"
    padding: tuple[int, ...]

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _widths(padding, self._k)

    def forward(self, input: Tensor) -> Tensor:
        """Pad ``input``.

        Example::

            nn.ReflectionPad1d(1)(lucid.arange(3.0).reshape(1, 1, 3))   # [[[1, 0, 1, 2, 1]]]
        """
        return pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        """The text inside this module's repr.

        Example::

            nn.ZeroPad2d(1).extra_repr()     # '(1, 1, 1, 1)'
        """
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]
    value: float

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        """Pad ``input`` with ``value``.

        Example::

            nn.ConstantPad1d(1, 9.0)(lucid.zeros(1, 2))    # [[9, 0, 0, 9]]
        """
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        """The text inside this module's repr.

        Example::

            nn.ConstantPad1d(2, 3.5).extra_repr()     # 'padding=(2, 2), value=3.5'
        """
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with a constant ``value``; ``padding`` is an int or (left, right).

    Example::

        nn.ConstantPad1d((1, 2), 3.5)(lucid.zeros(1, 4)).shape     # lucid.Size([1, 7])
    """

    _k = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with a constant ``value``; ``padding`` is an int or
    (left, right, top, bottom).

    Example::

        nn.ConstantPad2d(1, 0.5)(lucid.zeros(1, 2, 2)).shape     # lucid.Size([1, 4, 4])
    """

    _k = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with a constant ``value``; ``padding`` is an int or
    (left, right, top, bottom, front, back).

    Example::

        nn.ConstantPad3d(1, 0.5)(lucid.zeros(1, 2, 2, 2)).shape    # lucid.Size([1, 4, 4, 4])
    """

    _k = 3


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros; ``padding`` is an int or (left, right).

    Example::

        nn.ZeroPad1d(1)(lucid.ones(1, 2))      # [[0, 1, 1, 0]]
    """

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The text inside this module's repr.

        Example::

            nn.ZeroPad1d(1).extra_repr()     # '(1, 1)'
        """
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last 2 dims with zeros; ``padding`` is an int or (left, right, top, bottom).

    Example::

        nn.ZeroPad2d((1, 0, 0, 1))(lucid.ones(1, 2, 2)).shape    # lucid.Size([1, 3, 3])
    """

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The text inside this module's repr.

        Example::

            nn.ZeroPad2d(1).extra_repr()     # '(1, 1, 1, 1)'
        """
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last 3 dims with zeros; ``padding`` is an int or a 6-tuple.

    Example::

        nn.ZeroPad3d(1)(lucid.ones(1, 1, 1, 1)).shape     # lucid.Size([1, 3, 3, 3])
    """

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The text inside this module's repr.

        Example::

            nn.ZeroPad3d(1).extra_repr()     # '(1, 1, 1, 1, 1, 1)'
        """
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pad the last dim of (C, W) or (N, C, W) by reflecting at the edges (the edge is not
    repeated); each side must be smaller than the dim.

    Example::

        nn.ReflectionPad1d(2)(lucid.arange(4.0).reshape(1, 1, 4))  # [[[2, 1, 0, 1, 2, 3, 2, 1]]]
    """

    _k, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last 2 dims of (C, H, W) or (N, C, H, W) by reflection.

    Example::

        nn.ReflectionPad2d(1)(lucid.randn(1, 1, 3, 3)).shape     # lucid.Size([1, 1, 5, 5])
    """

    _k, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Pad the last 3 dims of (C, D, H, W) or (N, C, D, H, W) by reflection.

    Example::

        nn.ReflectionPad3d(1)(lucid.randn(1, 1, 2, 2, 2)).shape    # lucid.Size([1, 1, 4, 4, 4])
    """

    _k, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dim of (C, W) or (N, C, W) by repeating the edge values.

    Example::

        nn.ReplicationPad1d(1)(lucid.arange(3.0).reshape(1, 1, 3))   # [[[0, 0, 1, 2, 2]]]
    """

    _k, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last 2 dims of (C, H, W) or (N, C, H, W) by repeating the edge values.

    Example::

        nn.ReplicationPad2d((1, 1, 2, 0))(lucid.randn(1, 1, 2, 2)).shape   # [1, 1, 4, 4]
    """

    _k, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Pad the last 3 dims of (C, D, H, W) or (N, C, D, H, W) by repeating the edge values.

    Example::

        nn.ReplicationPad3d(1)(lucid.randn(1, 1, 1, 1, 1)).shape   # lucid.Size([1, 1, 3, 3, 3])
    """

    _k, _mode = 3, "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        """Pad ``input`` circularly (the far edge wraps around).

        Example::

            nn.CircularPad1d(1)(lucid.arange(3.0).reshape(1, 1, 3))   # [[[2, 0, 1, 2, 0]]]
        """
        if input.ndim not in (self._k + 1, self._k + 2):
            raise ValueError(f"expected {self._k + 1}D or {self._k + 2}D input (got "
                             f"{input.ndim}D input)")
        return pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pad the last dim of (C, W) or (N, C, W) circularly.

    Example::

        nn.CircularPad1d(1)(lucid.arange(3.0).reshape(1, 1, 3))   # [[[2, 0, 1, 2, 0]]]
    """

    _k = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last 2 dims of (C, H, W) or (N, C, H, W) circularly.

    Example::

        nn.CircularPad2d(1)(lucid.randn(1, 1, 3, 3)).shape     # lucid.Size([1, 1, 5, 5])
    """

    _k = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last 3 dims of (C, D, H, W) or (N, C, D, H, W) circularly.

    Example::

        nn.CircularPad3d(1)(lucid.randn(1, 1, 2, 2, 2)).shape   # lucid.Size([1, 1, 4, 4, 4])
    """

    _k = 3
