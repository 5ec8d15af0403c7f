"""Convolution and pooling geometry: output sizes and window index tables, as PyTorch defines them.

Pure functions of shapes (ints in, ints or small numpy index arrays out), shared by the ops'
argument checks, the reference and gpu backends, and the cpu kernels' wrappers. One axis at a
time; a window of kernel ``k`` with dilation ``d`` spans ``(k - 1) * d + 1`` input positions.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "effective_kernel",
    "covered_size",
    "conv_output_size",
    "conv_transpose_output_size",
    "same_padding",
    "pool_output_size",
    "window_index",
    "adaptive_bounds",
    "adaptive_index",
    "max_windows",
    "avg_windows",
    "window_table",
    "im2col_table",
]


def effective_kernel(k: int, d: int) -> int:
    """Input positions one dilated window spans: ``(k - 1) * d + 1``."""
    return (k - 1) * d + 1


def covered_size(n_out: int, k: int, s: int, d: int) -> int:
    """Input positions (padding included) that ``n_out`` windows reach: last start + span."""
    return (n_out - 1) * s + effective_kernel(k, d)


def conv_output_size(n: int, k: int, s: int, p0: int, p1: int, d: int) -> int:
    """Windows along one axis of a convolution (or unfold): ``(n + p0 + p1 - span) // s + 1``;
    ``p0`` / ``p1`` pad the low / high end. May be < 1 (the callers' checks report it)."""
    return (n + p0 + p1 - effective_kernel(k, d)) // s + 1


def conv_transpose_output_size(n: int, k: int, s: int, p: int, d: int, output_padding: int
                               ) -> int:
    """Output length of a transposed convolution along one axis (torch's formula)."""
    return (n - 1) * s - 2 * p + effective_kernel(k, d) + output_padding


def same_padding(k: int, d: int) -> tuple[int, int]:
    """(low, high) padding of a stride-1 ``padding="same"`` convolution (odd extra goes high)."""
    total = effective_kernel(k, d) - 1
    return total // 2, total - total // 2


def pool_output_size(n: int, k: int, pad: int, s: int, d: int, ceil: bool) -> int:
    """torch's pooling_output_shape, with its checks and messages: windows along one axis with
    symmetric padding ``pad``; with ``ceil`` a last partial window counts unless it starts in
    the right padding."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > int(effective_kernel(k, d) / 2):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={pad}, kernel_size={k} and dilation={d}")
    out = (n + 2 * pad - effective_kernel(k, d) + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= n + pad:
        out -= 1
    return out


def window_index(n_out: int, k: int, s: int, p: int, d: int) -> np.ndarray:
    """(n_out, k) int64 input positions of each window's taps (negative or >= n: padding)."""
    return (np.arange(n_out)[:, None] * s - p + np.arange(k)[None, :] * d).astype(np.int64)


def adaptive_bounds(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """torch's adaptive windows: ``[floor(o * n_in / n_out), ceil((o + 1) * n_in / n_out))``."""
    o = np.arange(n_out, dtype=np.int64)
    return (o * n_in) // n_out, -((-(o + 1) * n_in) // n_out)


def adaptive_index(n_in: int, n_out: int) -> np.ndarray:
    """(n_out, widest window) int64 positions of the adaptive windows; -1 pads the shorter."""
    start, end = adaptive_bounds(n_in, n_out)
    k = int((end - start).max()) if n_out else 0
    idx = start[:, None] + np.arange(k)[None, :]
    return np.where(idx < end[:, None], idx, -1).astype(np.int64)


def max_windows(n_in: int, n_out: int, k: int, s: int, p: int, d: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """First in-bounds tap and clipped end of each dilated max-pool window along one axis."""
    start = np.arange(n_out, dtype=np.int64) * s - p
    end = np.minimum(start + effective_kernel(k, d), n_in)
    neg = start < 0
    start[neg] += (-start[neg] + d - 1) // d * d
    if np.any(start >= end):
        raise ValueError("a pooling window lies entirely in the padding")
    return start, end


def avg_windows(n_in: int, n_out: int, k: int, s: int, p: int, count_include_pad: bool
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Clipped average-pool window bounds and the per-axis divisor, as torch's avg_pool2d (a
    window may reach into the padding but not past it; the divisor counts that padding when
    ``count_include_pad``)."""
    start = np.arange(n_out, dtype=np.int64) * s - p
    end = np.minimum(start + k, n_in + p)
    size = end - start
    start = np.maximum(start, 0)
    end = np.minimum(end, n_in)
    div = size if count_include_pad else end - start
    return start, end, div


def window_table(h: int, w: int, rows: np.ndarray, cols: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Flat positions ``ih * w + iw`` (OH, OW, KH*KW) of 2-D windows given per-axis tap tables
    ``rows`` (OH, KH) and ``cols`` (OW, KW), and their validity (out-of-plane taps clipped)."""
    rv = (rows >= 0) & (rows < h)
    cv = (cols >= 0) & (cols < w)
    r = np.clip(rows, 0, max(h - 1, 0))[:, None, :, None]
    c = np.clip(cols, 0, max(w - 1, 0))[None, :, None, :]
    valid = rv[:, None, :, None] & cv[None, :, None, :]
    oh, ow, kh, kw = valid.shape
    flat = np.broadcast_to(r * w + c, valid.shape).reshape(oh, ow, kh * kw)
    return flat, valid.reshape(oh, ow, kh * kw)


def im2col_table(h: int, w: int, kernel_size: tuple[int, int], dilation: tuple[int, int],
                 padding: tuple[int, int], stride: tuple[int, int], out_hw: tuple[int, int]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Flat positions (KH, KW, OH, OW) into an (h, w) plane of unfold's columns, and their
    validity (taps in the padding are clipped and marked invalid)."""
    (kh, kw), (oh, ow) = kernel_size, out_hw
    r = window_index(oh, kh, stride[0], padding[0], dilation[0]).T  # (KH, OH)
    c = window_index(ow, kw, stride[1], padding[1], dilation[1]).T  # (KW, OW)
    rv, cv = (r >= 0) & (r < h), (c >= 0) & (c < w)
    valid = rv[:, None, :, None] & cv[None, :, None, :]
    flat = (np.clip(r, 0, max(h - 1, 0))[:, None, :, None] * w
            + np.clip(c, 0, max(w - 1, 0))[None, :, None, :])
    return np.broadcast_to(flat, valid.shape), valid


def check_max_indices(idx: np.ndarray, h: int, w: int) -> None:
    """Raise IndexError naming the first max-pool index outside an (h, w) input plane."""
    wrong = idx[(idx < 0) | (idx >= h * w)]
    if wrong.size:
        raise IndexError(f"found an invalid max index: {int(wrong.flat[0])} (input planes are "
                         f"of size {h}x{w})")
