"""Plain-numpy reference implementations of convolution and pooling for ``NumpyBackend``.

Written for clarity, not speed: strided window views, einsum, and ``np.add.at`` scatters,
looping only over kernel offsets. The "cpu" backend replaces them with lucid.kernels; tests
compare both. The backend interface these functions define (every backend has them):

    conv2d(x, w, bias|None, stride, ((top, bottom), (left, right)), dilation, groups) -> y
    conv2d_grad_input(gy, w, input_shape, stride, padding, dilation, groups) -> dx
        (also a transposed convolution's forward; input_shape may exceed what windows cover)
    conv2d_grad_weight(x, gy, weight_shape, stride, padding, dilation, groups) -> dw
    unfold(x, kernel, dilation, (ph, pw), stride) -> (N, C*kH*kW, L); fold(cols, (H, W), ...)
    max_pool2d(x, kernel, stride, (ph, pw), dilation, (OH, OW)) -> (y, int64 flat indices)
    adaptive_max_pool2d(x, (OH, OW)) -> (y, indices); max_pool2d_backward(gy, indices, shape)
    avg_pool2d(x, kernel, stride, (ph, pw), (OH, OW), count_include_pad, divisor_override)
    avg_pool2d_backward(gy, input_shape, kernel, stride, (ph, pw), count_include_pad, div.)
    adaptive_avg_pool2d(x, (OH, OW)); adaptive_avg_pool2d_backward(gy, input_shape)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..kernels._geometry import (
    adaptive_index,
    avg_windows,
    check_max_indices,
    conv_output_size,
    covered_size,
    effective_kernel,
    max_windows,
    window_index,
    window_table,
)

Pair = tuple[int, int]
Pads = tuple[Pair, Pair]


def _windows(x: np.ndarray, k: Pair, s: Pair, pads: Pads, d: Pair, out_hw: Pair) -> np.ndarray:
    """(N, C, OH, OW, KH, KW) view of the zero-padded input's windows."""
    (pt, pb), (pl, pr) = pads
    need_h = covered_size(out_hw[0], k[0], s[0], d[0])
    need_w = covered_size(out_hw[1], k[1], s[1], d[1])
    h, w = x.shape[2:]
    pb = max(pb, need_h - h - pt)
    pr = max(pr, need_w - w - pl)
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    eff = (effective_kernel(k[0], d[0]), effective_kernel(k[1], d[1]))
    v = sliding_window_view(xp, eff, axis=(2, 3))
    return v[:, :, ::s[0], ::s[1], ::d[0], ::d[1]][:, :, :out_hw[0], :out_hw[1]]


def conv2d(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, stride: Pair, padding: Pads,
           dilation: Pair, groups: int) -> np.ndarray:
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    g = groups
    oh = conv_output_size(h, kh, stride[0], *padding[0], dilation[0])
    ow = conv_output_size(wd, kw, stride[1], *padding[1], dilation[1])
    win = _windows(x, (kh, kw), stride, padding, dilation, (oh, ow))
    win = win.reshape(n, g, cg, oh, ow, kh, kw)
    y = np.einsum("ngchwij,gocij->ngohw", win, w.reshape(g, oc // g, cg, kh, kw), optimize=True)
    y = y.reshape(n, oc, oh, ow)
    if bias is not None:
        y = y + bias.reshape(1, oc, 1, 1)
    return np.ascontiguousarray(y, dtype=x.dtype)


def _scatter_windows(cols: np.ndarray, shape: Sequence[int], k: Pair, s: Pair, pads: Pads,
                     d: Pair) -> np.ndarray:
    """Sum (N, C, KH, KW, OH, OW) window values back onto an (N, C, H, W) canvas."""
    n, c, h, w = shape
    (pt, _), (pl, _) = pads
    oh, ow = cols.shape[4:]
    hp = max(h + pt, covered_size(oh, k[0], s[0], d[0]))
    wp = max(w + pl, covered_size(ow, k[1], s[1], d[1]))
    canvas = np.zeros((n, c, hp, wp), cols.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            r0, c0 = i * d[0], j * d[1]
            canvas[:, :, r0:r0 + (oh - 1) * s[0] + 1:s[0], c0:c0 + (ow - 1) * s[1] + 1:s[1]] += (
                cols[:, :, i, j])
    return np.ascontiguousarray(canvas[:, :, pt:pt + h, pl:pl + w])


def conv2d_grad_input(gy: np.ndarray, w: np.ndarray, input_shape: Sequence[int], stride: Pair,
                      padding: Pads, dilation: Pair, groups: int) -> np.ndarray:
    n, c, h, wd = input_shape
    oc, cg, kh, kw = w.shape
    g = groups
    oh, ow = gy.shape[2:]
    cols = np.einsum("ngohw,gocij->ngcijhw", gy.reshape(n, g, oc // g, oh, ow),
                     w.reshape(g, oc // g, cg, kh, kw), optimize=True)
    cols = cols.reshape(n, c, kh, kw, oh, ow)
    return _scatter_windows(cols, input_shape, (kh, kw), stride, padding, dilation)


def conv2d_grad_weight(x: np.ndarray, gy: np.ndarray, weight_shape: Sequence[int],
                       stride: Pair, padding: Pads, dilation: Pair, groups: int) -> np.ndarray:
    n, c = x.shape[:2]
    oc, cg, kh, kw = weight_shape
    g = groups
    oh, ow = gy.shape[2:]
    win = _windows(x, (kh, kw), stride, padding, dilation, (oh, ow))
    win = win.reshape(n, g, cg, oh, ow, kh, kw)
    dw = np.einsum("ngohw,ngchwij->gocij", gy.reshape(n, g, oc // g, oh, ow), win,
                   optimize=True)
    return np.ascontiguousarray(dw.reshape(tuple(weight_shape)), dtype=x.dtype)


def unfold(x: np.ndarray, kernel_size: Pair, dilation: Pair, padding: Pair, stride: Pair
           ) -> np.ndarray:
    n, c, h, w = x.shape
    pads = ((padding[0], padding[0]), (padding[1], padding[1]))
    oh = conv_output_size(h, kernel_size[0], stride[0], *pads[0], dilation[0])
    ow = conv_output_size(w, kernel_size[1], stride[1], *pads[1], dilation[1])
    win = _windows(x, kernel_size, stride, pads, dilation, (oh, ow))
    return np.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(
        n, c * kernel_size[0] * kernel_size[1], oh * ow)


def fold(cols: np.ndarray, output_hw: Pair, kernel_size: Pair, dilation: Pair, padding: Pair,
         stride: Pair) -> np.ndarray:
    n, ck, _ = cols.shape
    kh, kw = kernel_size
    h, w = output_hw
    pads = ((padding[0], padding[0]), (padding[1], padding[1]))
    oh = conv_output_size(h, kh, stride[0], *pads[0], dilation[0])
    ow = conv_output_size(w, kw, stride[1], *pads[1], dilation[1])
    c6 = cols.reshape(n, ck // (kh * kw), kh, kw, oh, ow)
    return _scatter_windows(c6, (n, ck // (kh * kw), h, w), kernel_size, stride, pads, dilation)


# ---- pooling: windows as index arrays (rows x cols), invalid positions masked -------------


def _gather(x: np.ndarray, rows: np.ndarray, cols: np.ndarray, fill: float
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Window values (N, C, OH, OW, KH*KW), their validity and their flat indices ih*W + iw."""
    n, c, h, w = x.shape
    flat, valid = window_table(h, w, rows, cols)
    vals = np.where(valid, x.reshape(n, c, h * w)[:, :, flat], fill)
    return vals, valid, flat


def _max(x: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if 0 in (*x.shape[:2], len(rows), len(cols)):
        shape = (*x.shape[:2], len(rows), len(cols))
        return np.empty(shape, x.dtype), np.empty(shape, np.int64)
    vals, valid, flat = _gather(x, rows, cols, -np.inf)
    nan = np.isnan(vals)
    k = vals.shape[-1]
    pos = np.argmax(vals, axis=-1)
    last_nan = k - 1 - np.argmax(nan[..., ::-1], axis=-1)
    pos = np.where(nan.any(-1), last_nan, pos)
    best = np.take_along_axis(vals, pos[..., None], -1)[..., 0]
    first_valid = np.argmax(valid, axis=-1)
    pos = np.where(best == -np.inf, first_valid, pos)  # torch: no value beat -inf
    idx = np.take_along_axis(np.broadcast_to(flat, vals.shape), pos[..., None], -1)[..., 0]
    return np.ascontiguousarray(best, dtype=x.dtype), np.ascontiguousarray(idx)


def max_pool2d(x: np.ndarray, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair,
               out_hw: Pair) -> tuple[np.ndarray, np.ndarray]:
    for i in (0, 1):  # refuses a window with no input tap (ValueError), as the "cpu" kernels
        max_windows(x.shape[2 + i], out_hw[i], kernel_size[i], stride[i], padding[i],
                    dilation[i])
    rows = window_index(out_hw[0], kernel_size[0], stride[0], padding[0], dilation[0])
    cols = window_index(out_hw[1], kernel_size[1], stride[1], padding[1], dilation[1])
    return _max(x, rows, cols)


def adaptive_max_pool2d(x: np.ndarray, out_hw: Pair) -> tuple[np.ndarray, np.ndarray]:
    h, w = x.shape[2:]
    return _max(x, adaptive_index(h, out_hw[0]), adaptive_index(w, out_hw[1]))


def max_pool2d_backward(gy: np.ndarray, idx: np.ndarray, input_shape: Sequence[int]
                        ) -> np.ndarray:
    n, c, h, w = input_shape
    dx = np.zeros((n * c, h * w), gy.dtype)
    if gy.size:
        if idx.size and (idx.min() < 0 or idx.max() >= h * w):
            check_max_indices(idx, h, w)
        planes = np.arange(n * c)[:, None]
        np.add.at(dx, (planes, idx.reshape(n * c, -1)), gy.reshape(n * c, -1))
    return dx.reshape(n, c, h, w)


def _avg_setup(x_hw: Sequence[int], out_hw: Sequence[int], kernel_size: Pair, stride: Pair,
               padding: Pair, count_include_pad: bool, divisor_override: int | None) -> tuple:
    rows = window_index(out_hw[0], kernel_size[0], stride[0], padding[0], 1)
    cols = window_index(out_hw[1], kernel_size[1], stride[1], padding[1], 1)
    if divisor_override:
        div = np.full((out_hw[0], out_hw[1]), float(divisor_override))
    else:
        dh = avg_windows(x_hw[0], out_hw[0], kernel_size[0], stride[0], padding[0],
                         count_include_pad)[2]
        dw = avg_windows(x_hw[1], out_hw[1], kernel_size[1], stride[1], padding[1],
                         count_include_pad)[2]
        div = np.outer(dh, dw).astype(np.float64)
    return rows, cols, div


def _adaptive_setup(x_hw: Sequence[int], out_hw: Sequence[int]) -> tuple:
    rows, cols = adaptive_index(x_hw[0], out_hw[0]), adaptive_index(x_hw[1], out_hw[1])
    div = np.outer((rows >= 0).sum(1), (cols >= 0).sum(1)).astype(np.float64)
    return rows, cols, div


def _avg(x: np.ndarray, rows: np.ndarray, cols: np.ndarray, div: np.ndarray) -> np.ndarray:
    vals, _, _ = _gather(x, rows, cols, 0.0)
    return np.ascontiguousarray(vals.sum(-1) / div, dtype=x.dtype)


def _avg_back(gy: np.ndarray, rows: np.ndarray, cols: np.ndarray, div: np.ndarray,
              input_shape: Sequence[int]) -> np.ndarray:
    n, c, h, w = input_shape
    if gy.size == 0:
        return np.zeros((n, c, h, w), gy.dtype)
    zero = np.zeros((1, 1, h, w), gy.dtype)
    _, valid, flat = _gather(zero, rows, cols, 0.0)
    # (N, C, OH, OW, K); a tap outside the window adds nothing, not 0 * a NaN gradient
    share = np.where(valid, (gy / div)[..., None], gy.dtype.type(0))
    dx = np.zeros((n * c, h * w), gy.dtype)
    planes = np.arange(n * c)[:, None, None, None]
    np.add.at(dx, (planes, flat[None]), share.reshape(n * c, *share.shape[2:]))
    return dx.reshape(n, c, h, w)


def avg_pool2d(x: np.ndarray, kernel_size: Pair, stride: Pair, padding: Pair, out_hw: Pair,
               count_include_pad: bool = True, divisor_override: int | None = None
               ) -> np.ndarray:
    rows, cols, div = _avg_setup(x.shape[2:], out_hw, kernel_size, stride, padding,
                                 count_include_pad, divisor_override)
    return _avg(x, rows, cols, div)


def avg_pool2d_backward(gy: np.ndarray, input_shape: Sequence[int], kernel_size: Pair,
                        stride: Pair, padding: Pair, count_include_pad: bool = True,
                        divisor_override: int | None = None) -> np.ndarray:
    rows, cols, div = _avg_setup(input_shape[2:], gy.shape[2:], kernel_size, stride, padding,
                                 count_include_pad, divisor_override)
    return _avg_back(gy, rows, cols, div, input_shape)


def adaptive_avg_pool2d(x: np.ndarray, out_hw: Pair) -> np.ndarray:
    return _avg(x, *_adaptive_setup(x.shape[2:], out_hw))


def adaptive_avg_pool2d_backward(gy: np.ndarray, input_shape: Sequence[int]) -> np.ndarray:
    return _avg_back(gy, *_adaptive_setup(input_shape[2:], gy.shape[2:]), input_shape)
