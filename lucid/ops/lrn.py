"""``local_response_norm``: each value divided by ``(k + alpha * mean of squares over a
window of neighbouring channels) ** beta``, composed from pad, narrow and elementwise ops;
``cross_map_lrn2d``, the same normalisation with the windows of torch's legacy
``CrossMapLRN2d``, as one (C, C) matmul over the squares."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from . import elementwise as _e
from . import movement as _m
from .creation import tensor
from .matmul import matmul

__all__ = ["local_response_norm", "cross_map_lrn2d"]


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Local response normalisation over channels (dim 1) of an (N, C, *) input: the window
    covers channels ``c - size // 2 .. c + (size - 1) // 2``, zero beyond the edges.

    Example::

        y = F.local_response_norm(lucid.randn(2, 8, 5, 5), size=3)
    """
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} "
                         f"dimensions)")
    if input.numel() == 0:  # type: ignore[attr-defined]
        return input
    c = input.shape[1]
    sq = _e.mul(input, input)
    widths = [0, 0] * (input.ndim - 2) + [size // 2, (size - 1) // 2]
    padded = _m.pad(sq, widths)
    acc = _m.narrow(padded, 1, 0, c)
    for j in range(1, size):
        acc = _e.add(acc, _m.narrow(padded, 1, j, c))
    div = _e.pow(_e.add(_e.mul(acc, alpha / size), k), beta)
    return _e.div(input, div)


def _cross_map_windows(c: int, size: int) -> np.ndarray:
    """The (C, C) 0/1 matrix of torch's ``CrossMapLRN2d`` running sum: channel ``j`` counts
    for channel ``i`` when ``i - pre + 1 <= j <= i + pre - 1`` (``pre = (size - 1) // 2 + 1``),
    and channel 0 counts for every channel (torch's running sum never removes it)."""
    pre = int((size - 1) / 2 + 1)
    m = np.zeros((c, c))
    for i in range(c):
        lo = 0 if i <= pre else i - pre + 1
        m[i, lo:min(i + pre - 1, c - 1) + 1] = 1.0
        m[i, 0] = 1.0
    return m


def cross_map_lrn2d(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                    k: float = 1.0) -> Tensor:
    """``input * (k + alpha / size * window sum of squares) ** -beta`` over the channels of
    an (N, C, H, W) input, with the windows of torch's ``CrossMapLRN2d`` (see
    ``_cross_map_windows``); the gradient is this function's exact one.

    Example::

        y = cross_map_lrn2d(lucid.randn(2, 8, 5, 5), 3)
    """
    if input.ndim != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
    n, c, h, w = (int(s) for s in input.shape)
    win = tensor(_cross_map_windows(c, int(size)), dtype=input.dtype, device=input.device)
    sums = matmul(win, _e.mul(input, input).reshape(n, c, h * w)).reshape(n, c, h, w)
    scale = _e.add(_e.mul(sums, alpha / size), k)
    return _e.mul(_e.pow(scale, -beta), input)
