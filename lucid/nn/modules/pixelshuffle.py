"""``PixelShuffle``, ``PixelUnshuffle`` and ``ChannelShuffle``."""

from __future__ import annotations

from ..._tensor import Tensor
from ...ops.pixel import channel_shuffle, pixel_shuffle, pixel_unshuffle
from ..module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]


class PixelShuffle(Module):
    """Rearrange ``(*, C * r**2, H, W)`` into ``(*, C, H * r, W * r)``.

    Example::

        nn.PixelShuffle(2)(lucid.randn(1, 8, 3, 3)).shape     # lucid.Size([1, 2, 6, 6])
    """

    __constants__ = ["upscale_factor"]
    upscale_factor: int

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        """Shuffle channels into space.

        Example::

            nn.PixelShuffle(2)(lucid.randn(8, 3, 3)).shape     # lucid.Size([2, 6, 6])
        """
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        """The text inside this module's repr.

        Example::

            nn.PixelShuffle(2).extra_repr()      # 'upscale_factor=2'
        """
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearrange ``(*, C, H * r, W * r)`` into ``(*, C * r**2, H, W)``.

    Example::

        nn.PixelUnshuffle(2)(lucid.randn(1, 2, 6, 6)).shape    # lucid.Size([1, 8, 3, 3])
    """

    __constants__ = ["downscale_factor"]
    downscale_factor: int

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        """Shuffle space into channels.

        Example::

            nn.PixelUnshuffle(3)(lucid.randn(1, 1, 6, 6)).shape     # lucid.Size([1, 9, 2, 2])
        """
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        """The text inside this module's repr.

        Example::

            nn.PixelUnshuffle(2).extra_repr()      # 'downscale_factor=2'
        """
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Split the channels of ``(N, C, *)`` into ``groups`` and interleave them.

    Example::

        nn.ChannelShuffle(2)(lucid.arange(4.0).reshape(1, 4, 1)).flatten()   # [0, 2, 1, 3]
    """

    __constants__ = ["groups"]
    groups: int

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        """Shuffle the channels.

        Example::

            nn.ChannelShuffle(3)(lucid.randn(2, 6, 4, 4)).shape    # lucid.Size([2, 6, 4, 4])
        """
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        """The text inside this module's repr.

        Example::

            nn.ChannelShuffle(2).extra_repr()      # 'groups=2'
        """
        return f"groups={self.groups}"
