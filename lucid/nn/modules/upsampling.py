"""``Upsample`` over ``F.interpolate``, and its fixed-mode forms ``UpsamplingNearest2d`` and
``UpsamplingBilinear2d``."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ...ops.interpolate import interpolate
from ..module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resize (N, C, *spatial) inputs to ``size`` or by ``scale_factor`` with ``mode``
    ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area").

    Example::

        up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        up(lucid.randn(1, 3, 4, 4)).shape          # lucid.Size([1, 3, 8, 8])
    """

    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name",
                     "recompute_scale_factor"]
    name: str
    size: Any
    scale_factor: Any
    mode: str
    align_corners: bool | None
    recompute_scale_factor: bool | None

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        """Resize ``input``.

        Example::

            nn.Upsample(size=(3, 5))(lucid.randn(1, 1, 2, 2)).shape    # lucid.Size([1, 1, 3, 5])
        """
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        """The text inside this module's repr.

        Example::

            nn.Upsample(scale_factor=2).extra_repr()   # "scale_factor=2.0, mode='nearest'"
        """
        info = (f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None
                else f"size={self.size!r}")
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of (N, C, H, W) inputs (``Upsample(mode="nearest")``).

    Example::

        nn.UpsamplingNearest2d(scale_factor=2)(lucid.randn(1, 1, 2, 2)).shape   # [1, 1, 4, 4]
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of (N, C, H, W) inputs with ``align_corners=True``.

    Example::

        nn.UpsamplingBilinear2d(size=5)(lucid.randn(1, 1, 2, 2)).shape    # [1, 1, 5, 5]
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
