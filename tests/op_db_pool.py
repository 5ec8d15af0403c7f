"""op_db entries for pooling (max, avg, adaptive; 1-D and 2-D): loop references with torch's
window, padding and ceil_mode rules, and torch's error messages. Samples hold distinct values,
so the argmax does not move under a gradcheck probe."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from opinfo import ErrorInput, OpInfo, Sample, T, exact

import lucid.nn.functional as F


def _pp(v: Any) -> tuple:
    return (v, v) if isinstance(v, int) else tuple(v)


def out_size(n: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    num = n + 2 * p - d * (k - 1) - 1
    o = (math.ceil(num / s) if ceil else num // s) + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def np_max_pool2d(x: np.ndarray, k: tuple, s: tuple, p: tuple, d: tuple,
                  ceil: bool) -> tuple[np.ndarray, np.ndarray]:
    """Reference by explicit loops over output positions (torch's NaN / first-max rules)."""
    n, c, h, w = x.shape
    oh, ow = out_size(h, k[0], s[0], p[0], d[0], ceil), out_size(w, k[1], s[1], p[1], d[1], ceil)
    y = np.empty((n, c, oh, ow), x.dtype)
    idx = np.empty((n, c, oh, ow), np.int64)
    for i in range(oh):
        for j in range(ow):
            rows = [i * s[0] - p[0] + a * d[0] for a in range(k[0])]
            cols = [j * s[1] - p[1] + b * d[1] for b in range(k[1])]
            pos = [(r, q) for r in rows for q in cols if 0 <= r < h and 0 <= q < w]
            for nn in range(n):
                for cc in range(c):
                    best, at = -np.inf, pos[0][0] * w + pos[0][1]
                    for r, q in pos:
                        v = x[nn, cc, r, q]
                        if v > best or v != v:
                            best, at = v, r * w + q
                    y[nn, cc, i, j], idx[nn, cc, i, j] = best, at
    return y, idx


def np_avg_pool2d(x: np.ndarray, k: tuple, s: tuple, p: tuple, ceil: bool, cip: bool,
                  div: Any) -> np.ndarray:
    n, c, h, w = x.shape
    oh, ow = out_size(h, k[0], s[0], p[0], 1, ceil), out_size(w, k[1], s[1], p[1], 1, ceil)
    y = np.empty((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s[0] - p[0], j * s[1] - p[1]
            h1, w1 = min(h0 + k[0], h + p[0]), min(w0 + k[1], w + p[1])
            size = (h1 - h0) * (w1 - w0)
            h0, w0, h1, w1 = max(h0, 0), max(w0, 0), min(h1, h), min(w1, w)
            total = x[:, :, h0:h1, w0:w1].sum((2, 3))
            y[:, :, i, j] = total / (div or (size if cip else (h1 - h0) * (w1 - w0)))
    return y


def np_adaptive(x: np.ndarray, out_hw: tuple, arg: bool) -> tuple[np.ndarray, np.ndarray]:
    """Adaptive windows ``[floor(i*H/oh), ceil((i+1)*H/oh))``: their mean, or max and argmax."""
    n, c, h, w = x.shape
    y = np.empty((n, c, *out_hw))
    idx = np.empty((n, c, *out_hw), np.int64)
    for i in range(out_hw[0]):
        for j in range(out_hw[1]):
            h0, h1 = i * h // out_hw[0], -(-(i + 1) * h // out_hw[0])
            w0, w1 = j * w // out_hw[1], -(-(j + 1) * w // out_hw[1])
            win = x[:, :, h0:h1, w0:w1].reshape(n, c, -1)
            if not arg:
                y[:, :, i, j] = win.mean(-1)
                continue
            a = win.argmax(-1)
            y[:, :, i, j] = np.take_along_axis(win, a[..., None], -1)[..., 0]
            idx[:, :, i, j] = (h0 + a // (w1 - w0)) * w + w0 + a % (w1 - w0)
    return y, idx


def _as4d(fn: Any, one_d: bool) -> Any:
    """A 2-D reference applied to (C, H, W), (N, C, L) or (C, L) inputs."""

    def ref(x: np.ndarray, *a: Any, **k: Any) -> Any:
        batched = x.ndim == (3 if one_d else 4)
        x4 = x if batched else x[None]
        if one_d:
            x4 = x4[:, :, None]
        out = fn(x4, *a, **k)
        outs = out if isinstance(out, tuple) else (out,)
        outs = tuple(o[:, :, 0] if one_d else o for o in outs)
        outs = tuple(o if batched else o[0] for o in outs)
        return outs if isinstance(out, tuple) else outs[0]

    return ref


def _max_ref(one_d: bool) -> Any:
    def ref(x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0,
            dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
        s = kernel_size if stride is None else stride
        if one_d:
            k, s, p, d = (1, kernel_size), (1, s), (0, padding), (1, dilation)
        else:
            k, s, p, d = _pp(kernel_size), _pp(s), _pp(padding), _pp(dilation)
        y, idx = np_max_pool2d(x, k, s, p, d, ceil_mode)
        return (y, idx) if return_indices else y

    return _as4d(ref, one_d)


def _avg_ref(one_d: bool) -> Any:
    def ref(x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0,
            ceil_mode: bool = False, count_include_pad: bool = True,
            divisor_override: Any = None) -> np.ndarray:
        s = kernel_size if stride is None else stride
        if one_d:
            k, s, p = (1, kernel_size), (1, s), (0, padding)
        else:
            k, s, p = _pp(kernel_size), _pp(s), _pp(padding)
        return np_avg_pool2d(x, k, s, p, ceil_mode, count_include_pad, divisor_override)

    return _as4d(ref, one_d)


def _adaptive_ref(one_d: bool, arg: bool) -> Any:
    def ref(x: np.ndarray, output_size: Any, return_indices: bool = False) -> Any:
        if one_d:
            hw = (1, output_size)
        else:
            hw = tuple(x.shape[2 + i] if v is None else v for i, v in
                       enumerate(_pp(output_size)))
        y, idx = np_adaptive(x, hw, arg)
        return (y, idx) if return_indices else y

    return _as4d(ref, one_d)


def _distinct(rng: np.random.Generator, *shape: int) -> T:
    return T(rng.permutation(int(np.prod(shape))).reshape(shape) * 0.1)


# (shape, kernel, stride, padding, dilation, ceil_mode)
MAX_CASES = [
    ((2, 3, 6, 6), 2, None, 0, 1, False),
    ((1, 2, 7, 9), (3, 2), (2, 1), 1, (1, 2), True),
    ((2, 2, 5, 5), 2, 3, 1, 1, True),
    ((1, 2, 9, 8), 3, 2, (1, 0), (2, 1), False),
    ((2, 1, 7, 7), 2, 2, 0, 1, True),                # 2x2 windows, a partial last window
    ((1, 1, 4, 6), (4, 6), 1, (2, 3), 1, False),     # padding = half the kernel
]

# (shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
AVG_CASES = [
    ((2, 3, 6, 6), 2, None, 0, False, True, None),
    ((1, 2, 7, 9), (3, 2), (2, 1), 1, True, True, None),
    ((1, 2, 7, 9), (3, 2), (2, 1), 1, True, False, None),
    ((2, 2, 5, 5), 2, 3, 1, True, False, None),
    ((1, 2, 5, 6), 3, 2, 1, False, True, 4),
]


def _max2d_samples(rng: np.random.Generator) -> Iterable[Sample]:
    for shape, k, s, p, d, ceil in MAX_CASES:
        yield Sample(_distinct(rng, *shape), k, s, p, d, ceil)
    yield Sample(_distinct(rng, 1, 2, 7, 9), 3, 2, 1, 2, True, return_indices=True)
    yield Sample(_distinct(rng, 2, 5, 5), 2, name="unbatched")


def _max1d_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(_distinct(rng, 2, 3, 11), 3, 2, 1, 2, True, return_indices=True)
    yield Sample(_distinct(rng, 3, 11), 3, 2, 1, 2, True, name="unbatched")
    yield Sample(_distinct(rng, 2, 2, 8), 2)


def _avg2d_samples(rng: np.random.Generator) -> Iterable[Sample]:
    for shape, k, s, p, ceil, cip, div in AVG_CASES:
        yield Sample(T(rng.standard_normal(shape)), k, s, p, ceil, cip, div)
    yield Sample(T(rng.standard_normal((2, 5, 5))), 3, 2, 1, name="unbatched")


def _avg1d_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(rng.standard_normal((2, 3, 11))), 4, 3, 2, True, False)
    yield Sample(T(rng.standard_normal((3, 11))), 4, 3, 2, True, False, name="unbatched")
    yield Sample(T(rng.standard_normal((2, 2, 9)), "t"), 3)


def _adaptive2d_samples(arg: bool) -> Any:
    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        for out in [1, (3, 2), (5, 7), (7, None)]:
            yield Sample(_distinct(rng, 1, 2, 5, 7), out)
        if arg:
            yield Sample(_distinct(rng, 2, 2, 5, 7), (3, 4), True, name="indices")
        yield Sample(_distinct(rng, 2, 6, 4), 3, name="unbatched")

    return samples


def _adaptive1d_samples(arg: bool) -> Any:
    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        yield Sample(_distinct(rng, 2, 3, 11), 4)
        yield Sample(_distinct(rng, 3, 11), 4, name="unbatched")
        if arg:
            yield Sample(_distinct(rng, 2, 2, 9), 5, True, name="indices")

    return samples


def _err(call: Any, msg: str) -> ErrorInput:
    return ErrorInput(call, RuntimeError, exact(msg))


MAX2D_ERRORS = [_err(c, m) for c, m in [
    (lambda m: m.F.max_pool2d(m.zeros(28, 28), 2),
     "non-empty 3D or 4D (batch mode) tensor expected for input"),
    (lambda m: m.F.max_pool2d(m.zeros(1, 2, 2), 3),
     "Given input size: (1x2x2). Calculated output size: (1x0x0). Output size is too small"),
    (lambda m: m.F.max_pool2d(m.zeros(1, 4, 4), 2, padding=2),
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and "
     "dilation=1"),
    (lambda m: m.F.max_pool2d(m.zeros(1, 4, 4), 0), "stride should not be zero"),
    (lambda m: m.F.max_pool2d(m.zeros(1, 4, 4), -1),
     "kernel size should be greater than zero, but got kH: -1 kW: -1"),
    (lambda m: m.F.max_pool2d(m.zeros(1, 4, 4), 2, stride=-1),
     "stride should be greater than zero, but got dH: -1 dW: -1"),
    (lambda m: m.F.max_pool2d(m.zeros(1, 4, 4), 2, padding=-1),
     "pad must be non-negative, but got pad: -1"),
    (lambda m: m.F.max_pool2d(m.zeros(1, 4, 4), 2, dilation=0),
     "dilation should be greater than zero, but got dilationH: 0 dilationW: 0"),
    (lambda m: m.F.max_pool2d(m.zeros(1, 4, 4), (2, 2, 2)),
     "max_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    (lambda m: m.F.max_pool2d(m.zeros(1, 4, 4), 2, stride=(1, 2, 3)),
     "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints"),
    (lambda m: m.F.max_pool2d(m.zeros(1, 0, 4), 2),
     "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
     "got:[1, 0, 4]"),
]]

MAX1D_ERRORS = [_err(c, m) for c, m in [
    (lambda m: m.F.max_pool1d(m.zeros(1, 4, 4, 4), 2),
     "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
     "input, but got:[1, 4, 4, 4]"),
    (lambda m: m.F.max_pool1d(m.zeros(1, 2), 3), "max_pool1d() Invalid computed output size: 0"),
    (lambda m: m.F.max_pool1d(m.zeros(1, 4), 2, padding=2),
     "max_pool1d() padding should be at most half of kernel size, but got padding=2 and "
     "kernel_size=2"),
    (lambda m: m.F.max_pool1d(m.zeros(1, 4), 0),
     "max_pool1d() kernel_size must be greater than zero, but got 0"),
    (lambda m: m.F.max_pool1d(m.zeros(1, 4), 2, stride=0),
     "max_pool1d() stride must be greater than zero, but got 0"),
    (lambda m: m.F.max_pool1d(m.zeros(1, 4), (2, 2)),
     "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got "
     "size 2"),
]]

AVG2D_ERRORS = [_err(c, m) for c, m in [
    (lambda m: m.F.avg_pool2d(m.zeros(1, 2, 2), 3),
     "Given input size: (1x2x2). Calculated output size: (1x0x0). Output size is too small"),
    (lambda m: m.F.avg_pool2d(m.zeros(1, 4, 4), 2, divisor_override=0),
     "divisor must be not zero"),
    (lambda m: m.F.avg_pool2d(m.zeros(1, 4, 4), (2, 2, 2)),
     "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    (lambda m: m.F.avg_pool2d(m.zeros(2, 2, 1, 4, 4), 2),
     "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
     "got:[2, 2, 1, 4, 4]"),
]]

AVG1D_ERRORS = [_err(c, m) for c, m in [
    (lambda m: m.F.avg_pool1d(m.zeros(1, 4, 4, 4), 2),
     "Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self' (while "
     "checking arguments for avg_pool1d)"),
    (lambda m: m.F.avg_pool1d(m.zeros(1, 2), 3),
     "Given input size: (1x1x2). Calculated output size: (1x1x0). Output size is too small"),
    (lambda m: m.F.avg_pool1d(m.zeros(1, 4), -1),
     "kernel size should be greater than zero, but got kH: 1 kW: -1"),
]]

ADAPTIVE_AVG2D_ERRORS = [_err(c, m) for c, m in [
    (lambda m: m.F.adaptive_avg_pool2d(m.zeros(4, 4), 2),
     "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [4, 4]"),
    (lambda m: m.F.adaptive_avg_pool2d(m.zeros(1, 0, 4), 2),
     "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but "
     "input has sizes [1, 0, 4] with dimension 1 being empty"),
    (lambda m: m.F.adaptive_avg_pool2d(m.zeros(1, 4, 4), (-1, 2)),
     "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
     "received {-1, 2}"),
]]

ADAPTIVE_MAX2D_ERRORS = [_err(c, m) for c, m in [
    (lambda m: m.F.adaptive_max_pool2d(m.zeros(4, 4), 2),
     "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: [4, 4]"),
    (lambda m: m.F.adaptive_max_pool2d(m.zeros(1, 4, 4), -1),
     "Trying to create tensor with negative dimension -1: [1, -1, -1]"),
]]

ADAPTIVE_AVG1D_ERRORS = [_err(c, m) for c, m in [
    (lambda m: m.F.adaptive_avg_pool1d(m.zeros(1, 4, 4, 4), 2),
     "Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self' (while "
     "checking arguments for adaptive_avg_pool1d)"),
    (lambda m: m.F.adaptive_avg_pool1d(m.zeros(1, 4), (2, 2)),
     "adaptive_avg_pool1d() argument 'output_size' should contain one int (got 2)"),
]]


def _pool(name: str, ref: Any, samples: Any, errors: list) -> OpInfo:
    return OpInfo(name, getattr(F, name), ref, samples, torch_op=f"nn.functional.{name}",
                  rtol=1e-9, atol=1e-12, error_inputs=errors)


POOL = [
    _pool("max_pool2d", _max_ref(False), _max2d_samples, MAX2D_ERRORS),
    _pool("max_pool1d", _max_ref(True), _max1d_samples, MAX1D_ERRORS),
    _pool("avg_pool2d", _avg_ref(False), _avg2d_samples, AVG2D_ERRORS),
    _pool("avg_pool1d", _avg_ref(True), _avg1d_samples, AVG1D_ERRORS),
    _pool("adaptive_avg_pool2d", _adaptive_ref(False, False), _adaptive2d_samples(False),
          ADAPTIVE_AVG2D_ERRORS),
    _pool("adaptive_max_pool2d", _adaptive_ref(False, True), _adaptive2d_samples(True),
          ADAPTIVE_MAX2D_ERRORS),
    _pool("adaptive_avg_pool1d", _adaptive_ref(True, False), _adaptive1d_samples(False),
          ADAPTIVE_AVG1D_ERRORS),
    _pool("adaptive_max_pool1d", _adaptive_ref(True, True), _adaptive1d_samples(True), []),
]
