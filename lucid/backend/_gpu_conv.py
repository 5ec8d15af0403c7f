"""Convolution and pooling of the "gpu" backend over NCHW MLX arrays.

Convolutions run ``mx.conv_general`` (MLX works channels-last, so inputs are transposed to
NHWC and back); their gradients are MLX's own vjp of the same call, so a transposed
convolution (``conv2d_grad_input``) is the device kernel too. Pooling, ``unfold`` and ``fold``
gather window values with a flat index table and scatter-add gradients with ``.at[].add``;
the index tables depend only on shapes and come from ``lucid/kernels/_geometry.py``. Signatures
follow the reference ``NumpyBackend`` (``lucid/backend/_conv_ref.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..kernels._geometry import (
    adaptive_index,
    avg_windows,
    conv_output_size,
    covered_size,
    im2col_table,
    max_windows,
    window_index,
    window_table,
)
from ._gpu_common import mx

Array = Any
Pair = tuple[int, int]
Pads = tuple[Pair, Pair]


def _nhwc(x: Array) -> Array:
    return mx.transpose(x, (0, 2, 3, 1))


def _nchw(x: Array) -> Array:
    return mx.transpose(x, (0, 3, 1, 2))


def _empty_out(x_shape: Sequence[int], w_shape: Sequence[int], stride: Pair, padding: Pads,
               dilation: Pair) -> tuple[int, int, int, int] | None:
    """The output shape when any input or weight dim is zero (else None).
    NOTE: mx.conv_general divides by the channel count: C=0 dies with SIGFPE, so
    zero-size convolutions never reach it (nor its vjp)."""
    if 0 not in tuple(x_shape) and 0 not in tuple(w_shape):
        return None
    (pt, pb), (pl, pr) = padding
    oh = conv_output_size(x_shape[2], w_shape[2], stride[0], pt, pb, dilation[0])
    ow = conv_output_size(x_shape[3], w_shape[3], stride[1], pl, pr, dilation[1])
    return (x_shape[0], w_shape[0], max(oh, 0), max(ow, 0))


def _conv(x: Array, w: Array, stride: Pair, padding: Pads, dilation: Pair, groups: int
          ) -> Array:
    empty = _empty_out(x.shape, w.shape, stride, padding, dilation)
    if empty is not None:
        return mx.zeros(empty, x.dtype)
    (pt, pb), (pl, pr) = padding
    y = mx.conv_general(_nhwc(x), _nhwc(w), stride=list(stride),
                        padding=([int(pt), int(pl)], [int(pb), int(pr)]),
                        kernel_dilation=list(dilation), groups=groups)
    return _nchw(y)


def conv2d(x: Array, w: Array, bias: Array | None, stride: Pair, padding: Pads, dilation: Pair,
           groups: int) -> Array:
    """Cross-correlation of x (N, C, H, W) with w (O, C/groups, kH, kW), plus ``bias``."""
    if _exact(x):
        y = _gemm_conv(x, w, stride, padding, dilation, groups)
    else:
        y = _conv(x, w, stride, padding, dilation, groups)
    if bias is not None:
        y = y + mx.reshape(bias, (1, -1, 1, 1))
    return y.astype(x.dtype)


def _reach(x_shape: Sequence[int], gy_shape: Sequence[int], w_shape: Sequence[int],
           stride: Pair, padding: Pads, dilation: Pair) -> tuple[list[int], tuple]:
    """Per spatial axis, the input length the output's windows reach (an input longer than
    that, as a transposed convolution's output with output_padding, has an unread tail), and
    the padding to use over that length (no trailing padding where the tail was cut)."""
    cov, pads = [], []
    for i in range(2):
        reach = covered_size(gy_shape[2 + i], w_shape[2 + i], stride[i], dilation[i]) \
            - padding[i][0]
        if reach < x_shape[2 + i]:
            cov.append(reach)
            pads.append((padding[i][0], 0))
        else:
            cov.append(x_shape[2 + i])
            pads.append(tuple(padding[i]))
    return cov, tuple(pads)


def conv2d_grad_input(gy: Array, w: Array, input_shape: Sequence[int], stride: Pair,
                      padding: Pads, dilation: Pair, groups: int) -> Array:
    """d(conv2d)/dx applied to ``gy`` (also a transposed convolution's forward)."""
    if _exact(gy):
        return _gemm_grad_input(gy, w, input_shape, stride, padding, dilation, groups)
    if _empty_out(input_shape, w.shape, stride, padding, dilation) is not None or gy.size == 0:
        return mx.zeros(tuple(input_shape), gy.dtype)
    # a transposed convolution's output may exceed what the windows reach (output_padding):
    # differentiate over the covered part and give the rest zero gradient
    cov, pads = _reach(input_shape, gy.shape, w.shape, stride, padding, dilation)
    x0 = mx.zeros((*input_shape[:2], *cov), gy.dtype)
    _, (gx,) = mx.vjp(lambda x: _conv(x, w, stride, pads, dilation, groups), [x0], [gy])
    if tuple(cov) != tuple(input_shape[2:]):
        gx = mx.pad(gx, [(0, 0), (0, 0), (0, input_shape[2] - cov[0]),
                         (0, input_shape[3] - cov[1])])
    return gx


def conv2d_grad_weight(x: Array, gy: Array, weight_shape: Sequence[int], stride: Pair,
                       padding: Pads, dilation: Pair, groups: int) -> Array:
    """d(conv2d)/dw applied to ``gy``."""
    if _exact(x):
        return _gemm_grad_weight(x, gy, weight_shape, stride, padding, dilation, groups)
    if _empty_out(x.shape, weight_shape, stride, padding, dilation) is not None or gy.size == 0:
        return mx.zeros(tuple(weight_shape), x.dtype)
    # positions past the windows' reach (a transposed convolution's output_padding) carry no
    # gradient: crop them so the convolution's output matches ``gy``
    cov, pads = _reach(x.shape, gy.shape, weight_shape, stride, padding, dilation)
    x = x[:, :, :cov[0], :cov[1]]
    w0 = mx.zeros(tuple(weight_shape), x.dtype)
    _, (gw,) = mx.vjp(lambda w: _conv(x, w, stride, pads, dilation, groups), [w0], [gy])
    return gw.astype(x.dtype)


# ---- float64 and integer convolutions: im2col + GEMM -----------------------------------------
# NOTE: mx.conv_general computes float64 at float32 precision on MLX's CPU stream and takes
# floats only; these dtypes gather windows and multiply with an exact matmul instead.


def _exact(x: Array) -> bool:
    return x.dtype not in (mx.float32, mx.float16, mx.bfloat16)


def _mm(a: Array, b: Array) -> Array:
    if a.dtype == mx.float64:
        return mx.matmul(a, b)
    return mx.sum(mx.expand_dims(a, -1) * mx.expand_dims(b, -3), axis=-2)  # integers


def _windows(xp: Array, k: Pair, s: Pair, d: Pair, out_hw: Pair) -> Array:
    """(N, C*kH*kW, OH*OW) windows of an already padded input."""
    n, c, h, w = xp.shape
    flat, _ = im2col_table(h, w, k, d, (0, 0), s, out_hw)
    vals = mx.take(mx.reshape(xp, (n, c, h * w)), mx.array(flat.reshape(-1).astype(np.int32)),
                   axis=2)
    return mx.reshape(vals, (n, c * k[0] * k[1], out_hw[0] * out_hw[1]))


def _gemm_conv(x: Array, w: Array, stride: Pair, padding: Pads, dilation: Pair, groups: int
               ) -> Array:
    (pt, pb), (pl, pr) = padding
    n = x.shape[0]
    oc, cg, kh, kw = w.shape
    empty = _empty_out(x.shape, w.shape, stride, padding, dilation)
    if empty is not None:
        return mx.zeros(empty, x.dtype)
    oh = conv_output_size(x.shape[2], kh, stride[0], pt, pb, dilation[0])
    ow = conv_output_size(x.shape[3], kw, stride[1], pl, pr, dilation[1])
    if 0 in (n, oc, oh, ow):
        return mx.zeros((n, oc, max(oh, 0), max(ow, 0)), x.dtype)
    xp = mx.pad(x, [(0, 0), (0, 0), (int(pt), int(pb)), (int(pl), int(pr))])
    cols = mx.reshape(_windows(xp, (kh, kw), stride, dilation, (oh, ow)),
                      (n, groups, cg * kh * kw, oh * ow))
    y = _mm(mx.reshape(w, (1, groups, oc // groups, cg * kh * kw)), cols)
    return mx.reshape(y, (n, oc, oh, ow))


def _gemm_grad_input(gy: Array, w: Array, input_shape: Sequence[int], stride: Pair,
                     padding: Pads, dilation: Pair, groups: int) -> Array:
    n, c, h, wd = input_shape
    oc, cg, kh, kw = w.shape
    oh, ow = gy.shape[2:]
    (pt, _), (pl, _) = padding
    hc = max(h + pt, covered_size(oh, kh, stride[0], dilation[0]))
    wc = max(wd + pl, covered_size(ow, kw, stride[1], dilation[1]))
    if 0 in (n, c, oh, ow) or 0 in tuple(w.shape):
        return mx.zeros((n, c, h, wd), gy.dtype)
    wt = mx.swapaxes(mx.reshape(w, (1, groups, oc // groups, cg * kh * kw)), -1, -2)
    cols = _mm(wt, mx.reshape(gy, (n, groups, oc // groups, oh * ow)))
    flat, _ = im2col_table(hc, wc, (kh, kw), dilation, (0, 0), stride, (oh, ow))
    canvas = mx.zeros((n * c, hc * wc), gy.dtype)
    planes = mx.reshape(mx.arange(n * c), (-1, 1))
    canvas = canvas.at[planes, mx.array(flat.reshape(1, -1).astype(np.int32))].add(
        mx.reshape(cols, (n * c, -1)))
    canvas = mx.reshape(canvas, (n, c, hc, wc))
    return canvas[:, :, pt:pt + h, pl:pl + wd]


def _gemm_grad_weight(x: Array, gy: Array, weight_shape: Sequence[int], stride: Pair,
                      padding: Pads, dilation: Pair, groups: int) -> Array:
    (pt, pb), (pl, pr) = padding
    n = x.shape[0]
    oc, cg, kh, kw = weight_shape
    oh, ow = gy.shape[2:]
    if 0 in (n, oh, ow) or 0 in tuple(weight_shape) or 0 in tuple(x.shape):
        return mx.zeros(tuple(weight_shape), x.dtype)
    need_h = covered_size(oh, kh, stride[0], dilation[0])
    need_w = covered_size(ow, kw, stride[1], dilation[1])
    h, w = x.shape[2:]
    xp = mx.pad(x, [(0, 0), (0, 0), (int(pt), int(max(pb, need_h - h - pt))),
                    (int(pl), int(max(pr, need_w - w - pl)))])
    cols = mx.reshape(_windows(xp, (kh, kw), stride, dilation, (oh, ow)),
                      (n, groups, cg * kh * kw, oh * ow))
    g = mx.reshape(gy, (n, groups, oc // groups, oh * ow))
    dw = mx.sum(_mm(g, mx.swapaxes(cols, -1, -2)), axis=0)
    return mx.reshape(dw, tuple(weight_shape)).astype(x.dtype)


# ---- pooling: windows gathered through the shape-only index tables of kernels/_geometry ----


def _gather(x: Array, flat: np.ndarray, valid: np.ndarray, fill: float) -> Array:
    n, c, h, w = x.shape
    oh, ow, k = flat.shape
    idx = mx.array(flat.reshape(-1).astype(np.int32))
    vals = mx.take(mx.reshape(x, (n, c, h * w)), idx, axis=2)
    vals = mx.reshape(vals, (n, c, oh, ow, k))
    if not valid.all():
        vals = mx.where(mx.array(valid), vals, mx.array(fill, x.dtype))
    return vals


def _scatter(vals: Array, flat: np.ndarray, shape: Sequence[int]) -> Array:
    """Sum (N, C, OH, OW, K) values onto an (N, C, H, W) canvas at the flat positions."""
    n, c, h, w = shape
    dx = mx.zeros((n * c, h * w), vals.dtype)
    if vals.size:
        idx = mx.array(flat.reshape(1, -1).astype(np.int32))
        planes = mx.reshape(mx.arange(n * c), (-1, 1))
        dx = dx.at[planes, idx].add(mx.reshape(vals, (n * c, -1)))
    return mx.reshape(dx, (n, c, h, w))


def _max(x: Array, rows: np.ndarray, cols: np.ndarray) -> tuple[Array, Array]:
    n, c, h, w = x.shape
    shape = (n, c, len(rows), len(cols))
    if 0 in shape or rows.shape[1] == 0 or cols.shape[1] == 0:
        return mx.zeros(shape, x.dtype), mx.zeros(shape, mx.int64)
    flat, valid = window_table(h, w, rows, cols)
    vals = _gather(x, flat, valid, -float("inf"))
    k = vals.shape[-1]
    nan = mx.isnan(vals)
    pos = mx.argmax(vals, axis=-1)
    last_nan = (k - 1) - mx.argmax(nan[..., ::-1], axis=-1)
    pos = mx.where(mx.any(nan, axis=-1), last_nan, pos).astype(mx.int32)
    best = mx.take_along_axis(vals, pos[..., None], -1)[..., 0]
    first_valid = mx.array(np.argmax(valid, axis=-1).astype(np.int32))
    pos = mx.where(best == -float("inf"), first_valid, pos)  # torch: no value beat -inf
    fl = mx.broadcast_to(mx.array(flat.astype(np.int64)), vals.shape)
    idx = mx.take_along_axis(fl, pos[..., None], -1)[..., 0]
    return best.astype(x.dtype), idx


def max_pool2d(x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair,
               out_hw: Pair) -> tuple[Array, Array]:
    """Max pooling: ``(y, int64 flat indices ih*W + iw)``, torch's choice on ties and NaN;
    a window with no input tap is refused (ValueError), as by the "cpu" kernels."""
    for i in (0, 1):
        max_windows(x.shape[2 + i], out_hw[i], kernel_size[i], stride[i], padding[i],
                    dilation[i])
    rows = window_index(out_hw[0], kernel_size[0], stride[0], padding[0], dilation[0])
    cols = window_index(out_hw[1], kernel_size[1], stride[1], padding[1], dilation[1])
    return _max(x, rows, cols)


def adaptive_max_pool2d(x: Array, out_hw: Pair) -> tuple[Array, Array]:
    h, w = x.shape[2:]
    return _max(x, adaptive_index(h, out_hw[0]), adaptive_index(w, out_hw[1]))


def max_pool2d_backward(gy: Array, idx: Array, input_shape: Sequence[int]) -> Array:
    n, c, h, w = input_shape
    dx = mx.zeros((n * c, h * w), gy.dtype)
    if gy.size:
        planes = mx.reshape(mx.arange(n * c), (-1, 1))
        dx = dx.at[planes, mx.reshape(idx, (n * c, -1))].add(mx.reshape(gy, (n * c, -1)))
    return mx.reshape(dx, (n, c, h, w))


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


def _avg(x: Array, rows: np.ndarray, cols: np.ndarray, div: np.ndarray) -> Array:
    n, c, h, w = x.shape
    if 0 in (n, c, len(rows), len(cols)) or rows.shape[1] == 0 or cols.shape[1] == 0:
        return mx.zeros((n, c, len(rows), len(cols)), x.dtype)
    flat, valid = window_table(h, w, rows, cols)
    vals = _gather(x, flat, valid, 0.0)
    return (mx.sum(vals, axis=-1) / mx.array(div, x.dtype)).astype(x.dtype)


def _avg_back(gy: Array, rows: np.ndarray, cols: np.ndarray, div: np.ndarray,
              input_shape: Sequence[int]) -> Array:
    n, c, h, w = input_shape
    if gy.size == 0:
        return mx.zeros((n, c, h, w), gy.dtype)
    flat, valid = window_table(h, w, rows, cols)
    # a tap outside the window adds nothing, not 0 * a NaN gradient
    share = mx.where(mx.array(valid.astype(bool)), (gy / mx.array(div, gy.dtype))[..., None],
                     mx.array(0, gy.dtype))
    return _scatter(share, flat, input_shape)


def avg_pool2d(x: Array, kernel_size: Pair, stride: Pair, padding: Pair, out_hw: Pair,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Array:
    rows, cols, div = _avg_setup(x.shape[2:], out_hw, kernel_size, stride, padding,
                                 count_include_pad, divisor_override)
    return _avg(x, rows, cols, div)


def avg_pool2d_backward(gy: Array, input_shape: Sequence[int], kernel_size: Pair,
                        stride: Pair, padding: Pair, count_include_pad: bool = True,
                        divisor_override: int | None = None) -> Array:
    rows, cols, div = _avg_setup(input_shape[2:], gy.shape[2:], kernel_size, stride, padding,
                                 count_include_pad, divisor_override)
    return _avg_back(gy, rows, cols, div, input_shape)


def adaptive_avg_pool2d(x: Array, out_hw: Pair) -> Array:
    rows, cols, div = _adaptive_setup(x.shape[2:], out_hw)
    return _avg(x, rows, cols, div)


def adaptive_avg_pool2d_backward(gy: Array, input_shape: Sequence[int]) -> Array:
    rows, cols, div = _adaptive_setup(input_shape[2:], gy.shape[2:])
    return _avg_back(gy, rows, cols, div, input_shape)


# ---- unfold / fold (im2col and its adjoint) -------------------------------------------------


def unfold(x: Array, kernel_size: Pair, dilation: Pair, padding: Pair, stride: Pair) -> Array:
    """(N, C, H, W) -> (N, C*kH*kW, L) sliding windows (torch's ``unfold``)."""
    n, c, h, w = x.shape
    oh = conv_output_size(h, kernel_size[0], stride[0], padding[0], padding[0], dilation[0])
    ow = conv_output_size(w, kernel_size[1], stride[1], padding[1], padding[1], dilation[1])
    flat, valid = im2col_table(h, w, kernel_size, dilation, padding, stride, (oh, ow))
    kk = kernel_size[0] * kernel_size[1]
    if 0 in (n, c, oh, ow, h, w):
        return mx.zeros((n, c * kk, max(oh, 0) * max(ow, 0)), x.dtype)
    vals = mx.take(mx.reshape(x, (n, c, h * w)),
                   mx.array(flat.reshape(-1).astype(np.int32)), axis=2)
    if not valid.all():
        vals = mx.where(mx.array(valid.reshape(-1)), vals, mx.array(0, x.dtype))
    return mx.reshape(vals, (n, c * kk, oh * ow))


def fold(cols: Array, output_hw: Pair, kernel_size: Pair, dilation: Pair, padding: Pair,
         stride: Pair) -> Array:
    """Sum sliding windows (N, C*kH*kW, L) back into (N, C, H, W) (torch's ``fold``)."""
    n, ck, _ = cols.shape
    kk = kernel_size[0] * kernel_size[1]
    h, w = output_hw
    c = ck // kk
    oh = conv_output_size(h, kernel_size[0], stride[0], padding[0], padding[0], dilation[0])
    ow = conv_output_size(w, kernel_size[1], stride[1], padding[1], padding[1], dilation[1])
    flat, valid = im2col_table(h, w, kernel_size, dilation, padding, stride, (oh, ow))
    out = mx.zeros((n * c, h * w), cols.dtype)
    if cols.size and h * w:
        v = mx.reshape(cols, (n * c, -1)) * mx.array(valid.reshape(1, -1), cols.dtype)
        planes = mx.reshape(mx.arange(n * c), (-1, 1))
        out = out.at[planes, mx.array(flat.reshape(1, -1).astype(np.int32))].add(v)
    return mx.reshape(out, (n, c, h, w))
