"""Memory formats, as torch's: ``lucid.contiguous_format`` (row-major), ``lucid.channels_last``
(a 4-D tensor stored N, H, W, C), ``lucid.channels_last_3d`` (5-D: N, D, H, W, C) and
``lucid.preserve_format`` (keep the input's layout).

A format changes only how values lie in memory (``stride()``, ``is_contiguous(memory_format=)``),
never a shape or a value. On the "gpu" device (MLX), whose arrays are always row-major, every
tensor is in ``contiguous_format``.
"""

from __future__ import annotations

from typing import Any

from ._named import NamedConstant

__all__ = ["channels_last", "channels_last_3d", "contiguous_format", "legacy_contiguous_format",
           "memory_format", "preserve_format"]


class memory_format(NamedConstant):  # noqa: N801 - torch's name
    """A memory format (``lucid.channels_last`` & co.; see this module's docstring)."""

    __slots__ = ()


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
legacy_contiguous_format = contiguous_format  # torch keeps this older name for it


def channel_order(fmt: Any, ndim: int) -> tuple[int, ...] | None:
    """The dim order, outermost first, that ``fmt`` lays out an ``ndim``-D tensor in (None
    for row-major); an error for a channels-last format of the wrong rank, as torch's."""
    if fmt is None or fmt is contiguous_format or fmt is preserve_format:
        return None
    if fmt is channels_last:
        if ndim != 4:
            raise RuntimeError("required rank 4 tensor to use channels_last format")
        return (0, 2, 3, 1)
    if fmt is channels_last_3d:
        if ndim != 5:
            raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
        return (0, 2, 3, 4, 1)
    raise TypeError(f"memory_format must be a lucid.memory_format, not {type(fmt).__name__}")


def dense_strides(shape: tuple[int, ...], order: tuple[int, ...]) -> tuple[int, ...]:
    """The element strides of a dense tensor of ``shape`` stored in dim ``order``."""
    out, acc = [0] * len(shape), 1
    for d in reversed(order):
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def laid_out(shape: tuple[int, ...], strides: tuple[int, ...], order: tuple[int, ...]) -> bool:
    """Whether element ``strides`` are those of a dense tensor stored in dim ``order``
    (size-1 dims may have any stride, as in torch)."""
    want = dense_strides(shape, order)
    return all(n == 1 or s == w for n, s, w in zip(shape, strides, want))
