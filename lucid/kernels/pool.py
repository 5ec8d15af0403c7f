"""2-D pooling kernels over (N, C, H, W): max (with argmax indices), average and adaptive.

Windows are index arrays per output row and column (see ``_pool_kernels``), built by
``_geometry`` with torch's rules, so one max kernel and one average kernel serve every option:
padding, dilation, ceil_mode, count_include_pad, divisor_override and adaptive windows. Max pooling
returns torch's indices (flat ``ih * W + iw`` within each plane) and its backward scatters
through them; average pooling's backward spreads each gradient over its window. 2x2 windows
with stride 2 (the usual CNN downsampling) have their own unrolled kernel.

Measured, float32, (64, 32, 28, 28), k=2, forward + backward, ms, 2 cores (minimum over
benchmark runs; benchmarks/test_conv_pool.py):

                        lucid   torch 2.13   numpy (reshape + argmax / mean)
    max_pool2d           1.46      5.0          19.7
    avg_pool2d           2.66      2.9          12.8

The unrolled 2x2 kernel took max_pool2d forward + backward from 3.4 to 1.4 ms (one thread:
5.4 to 2.3) against the general window kernel. Planes go to the parallel build from 2**18
input elements (``_threads.use_parallel``), like the other memory-bound kernels.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import _pool_kernels as K
from ._geometry import adaptive_bounds, avg_windows, check_max_indices, max_windows
from ._threads import PARALLEL_LOCK, use_parallel

__all__ = [
    "max_pool2d",
    "max_pool2d_backward",
    "avg_pool2d",
    "avg_pool2d_backward",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool2d_backward",
    "adaptive_max_pool2d",
    "supports",
]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
Pair = tuple[int, int]


def supports(x: np.ndarray) -> bool:
    """True when these kernels handle ``x``'s dtype (float32/float64)."""
    return x.dtype in _FLOATS


def _call(pair: tuple, x: np.ndarray, *args: object) -> None:
    """Run the parallel build over planes from 2**18 elements, else the serial one."""
    ser, par = pair
    if x.shape[0] > 1 and use_parallel(x.size, "elementwise"):
        with PARALLEL_LOCK:  # see _threads.PARALLEL_LOCK
            par(x, *args)
    else:
        ser(x, *args)


def _planes(x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    return np.ascontiguousarray(x).reshape(n * c, h, w)


def _max(x: np.ndarray, rows: tuple, cols: tuple, dh: int, dw: int,
         out_hw: Pair, two: bool = False) -> tuple[np.ndarray, np.ndarray]:
    n, c = x.shape[:2]
    oh, ow = out_hw
    out = np.empty((n * c, oh, ow), x.dtype)
    idx = np.empty((n * c, oh, ow), np.int64)
    if out.size:
        x3 = _planes(x)
        if two:
            _call(K.MAX_POOL_2X2, x3, out, idx)
        else:
            _call(K.MAX_POOL, x3, rows[0], rows[1], cols[0], cols[1], dh, dw, out, idx)
    return out.reshape(n, c, oh, ow), idx.reshape(n, c, oh, ow)


def max_pool2d(x: np.ndarray, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair,
               out_hw: Pair) -> tuple[np.ndarray, np.ndarray]:
    """Max pooling of (N, C, H, W) to ``out_hw``; returns (values, int64 flat indices)."""
    h, w = x.shape[2:]
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    two = (kh, kw, sh, sw, ph, pw, dh, dw) == (2, 2, 2, 2, 0, 0, 1, 1) and (
        2 * out_hw[0] <= h and 2 * out_hw[1] <= w)
    if two or 0 in out_hw:
        return _max(x, (), (), 1, 1, out_hw, two=two)
    rows = max_windows(h, out_hw[0], kh, sh, ph, dh)
    cols = max_windows(w, out_hw[1], kw, sw, pw, dw)
    return _max(x, rows, cols, dh, dw, out_hw)


def adaptive_max_pool2d(x: np.ndarray, out_hw: Pair) -> tuple[np.ndarray, np.ndarray]:
    """Adaptive max pooling of (N, C, H, W) to ``out_hw``; returns (values, indices)."""
    h, w = x.shape[2:]
    return _max(x, adaptive_bounds(h, out_hw[0]), adaptive_bounds(w, out_hw[1]), 1, 1, out_hw)


def max_pool2d_backward(gy: np.ndarray, idx: np.ndarray, input_shape: Sequence[int]
                        ) -> np.ndarray:
    """Gradient of a max pool: ``gy`` scattered (summed) to the positions in ``idx``."""
    n, c, h, w = input_shape
    dx = np.empty((n * c, h * w), gy.dtype)
    if dx.size == 0:
        return dx.reshape(n, c, h, w)
    if gy.size == 0:
        return np.zeros((n, c, h, w), gy.dtype)
    g2 = np.ascontiguousarray(gy).reshape(n * c, -1)
    i2 = np.ascontiguousarray(idx, dtype=np.int64).reshape(n * c, -1)
    bad = np.zeros(n * c, np.bool_)
    _call(K.MAX_POOL_BACKWARD, g2, i2, dx, bad)
    if bad.any():
        check_max_indices(i2, h, w)
    return dx.reshape(n, c, h, w)



def _avg_params(x_hw: Sequence[int], out_hw: Pair, kernel_size: Pair, stride: Pair,
                padding: Pair, count_include_pad: bool, divisor_override: int | None,
                dtype: np.dtype) -> tuple:
    rh = avg_windows(x_hw[0], out_hw[0], kernel_size[0], stride[0], padding[0],
                     count_include_pad)
    rw = avg_windows(x_hw[1], out_hw[1], kernel_size[1], stride[1], padding[1],
                     count_include_pad)
    divh, divw = rh[2].astype(dtype), rw[2].astype(dtype)
    if divisor_override:
        divh = np.ones(out_hw[0], dtype)
        divw = np.full(out_hw[1], divisor_override, dtype)
    return rh[0], rh[1], rw[0], rw[1], divh, divw


def _avg(x: np.ndarray, params: tuple, out_hw: Pair) -> np.ndarray:
    n, c = x.shape[:2]
    out = np.empty((n * c, *out_hw), x.dtype)
    if out.size:
        x3 = _planes(x)
        _call(K.AVG_POOL, x3, *params, out)
    return out.reshape(n, c, *out_hw)


def _avg_back(gy: np.ndarray, params: tuple, input_shape: Sequence[int]) -> np.ndarray:
    n, c, h, w = input_shape
    dx = np.empty((n * c, h, w), gy.dtype)
    if dx.size == 0:
        return dx.reshape(n, c, h, w)
    if gy.size == 0:
        return np.zeros((n, c, h, w), gy.dtype)
    g3 = _planes(gy)
    _call(K.AVG_POOL_BACKWARD, g3, *params, dx)
    return dx.reshape(n, c, h, w)


def avg_pool2d(x: np.ndarray, kernel_size: Pair, stride: Pair, padding: Pair, out_hw: Pair,
               count_include_pad: bool = True, divisor_override: int | None = None
               ) -> np.ndarray:
    """Average pooling of (N, C, H, W) to ``out_hw`` with torch's divisor rules."""
    params = _avg_params(x.shape[2:], out_hw, kernel_size, stride, padding, count_include_pad,
                         divisor_override, x.dtype)
    return _avg(x, params, out_hw)


def avg_pool2d_backward(gy: np.ndarray, input_shape: Sequence[int], kernel_size: Pair,
                        stride: Pair, padding: Pair, count_include_pad: bool = True,
                        divisor_override: int | None = None) -> np.ndarray:
    """Gradient of ``avg_pool2d`` w.r.t. its input."""
    params = _avg_params(input_shape[2:], gy.shape[2:], kernel_size, stride, padding,
                         count_include_pad, divisor_override, gy.dtype)
    return _avg_back(gy, params, input_shape)


def _adaptive_params(x_hw: Sequence[int], out_hw: Sequence[int], dtype: np.dtype) -> tuple:
    hs, he = adaptive_bounds(x_hw[0], out_hw[0])
    ws, we = adaptive_bounds(x_hw[1], out_hw[1])
    return hs, he, ws, we, (he - hs).astype(dtype), (we - ws).astype(dtype)


def adaptive_avg_pool2d(x: np.ndarray, out_hw: Pair) -> np.ndarray:
    """Adaptive average pooling of (N, C, H, W) to ``out_hw``."""
    return _avg(x, _adaptive_params(x.shape[2:], out_hw, x.dtype), out_hw)


def adaptive_avg_pool2d_backward(gy: np.ndarray, input_shape: Sequence[int]) -> np.ndarray:
    """Gradient of ``adaptive_avg_pool2d`` w.r.t. its input."""
    return _avg_back(gy, _adaptive_params(input_shape[2:], gy.shape[2:], gy.dtype), input_shape)
