"""Channel / space rearrangements: ``pixel_shuffle``, ``pixel_unshuffle``,
``channel_shuffle`` and ``native_channel_shuffle``, each a reshape - permute - reshape, so
the gradients are theirs."""

from __future__ import annotations

from .._tensor import Tensor
from . import shape as _s

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"]


def _check(input: Tensor, name: str, factor: int, what: str) -> int:
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    factor = int(factor)
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")
    return factor


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearrange ``(*, C * r**2, H, W)`` into ``(*, C, H * r, W * r)`` (sub-pixel convolution).

    Example::

        F.pixel_shuffle(lucid.randn(1, 8, 3, 3), 2).shape     # lucid.Size([1, 2, 6, 6])
    """
    r = _check(input, "pixel_shuffle", upscale_factor, "upscale_factor")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    k = len(lead)
    x = _s.reshape(input, *lead, c // (r * r), r, r, h, w)
    x = _s.permute(x, *range(k), k, k + 3, k + 1, k + 4, k + 2)
    return _s.reshape(x, *lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Rearrange ``(*, C, H * r, W * r)`` into ``(*, C * r**2, H, W)``, the inverse of
    ``pixel_shuffle``.

    Example::

        F.pixel_unshuffle(lucid.randn(1, 2, 6, 6), 2).shape   # lucid.Size([1, 8, 3, 3])
    """
    r = _check(input, "pixel_unshuffle", downscale_factor, "downscale_factor")
    *lead, c, h, w = input.shape
    for name, n, d in (("height", h, -2), ("width", w, -1)):
        if n % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({d})={n} is not divisible by "
                               f"{r}")
    k = len(lead)
    x = _s.reshape(input, *lead, c, h // r, r, w // r, r)
    x = _s.permute(x, *range(k), k, k + 2, k + 4, k + 1, k + 3)
    # a row-major result, as torch's kernel writes it (the reshape may be a strided view)
    return _s.contiguous(_s.reshape(x, *lead, c * r * r, h // r, w // r))


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Split the channels of ``(N, C, *)`` into ``groups`` and interleave them (ShuffleNet).

    Example::

        F.channel_shuffle(lucid.arange(4.0).reshape(1, 4, 1), 2).flatten()   # [0, 2, 1, 3]
    """
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    x = _s.reshape(input, n, groups, c // groups, *rest)
    # torch's result is always a fresh contiguous tensor, even where the shuffle moves nothing
    return _s.contiguous(_s.reshape(_s.transpose(x, 1, 2), n, c, *rest))


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``channel_shuffle`` under torch's name for its native kernel (same result).

    Example::

        F.native_channel_shuffle(lucid.arange(4.0).reshape(1, 4, 1), 2).flatten()  # [0, 2, 1, 3]
    """
    return channel_shuffle(input, groups)
