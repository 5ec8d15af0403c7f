"""3-D pooling as torch.nn.functional: max_pool3d, avg_pool3d, adaptive_avg_pool3d and
adaptive_max_pool3d, composed from the 2-D ops, so they run (and differentiate) on every
backend.

Every pooling window here is a box whose extent along each axis depends on that axis alone,
so a 3-D pool is a 2-D pool over (H, W) on the (N, C * D, H, W) view followed by a 2-D pool
with a (kD, 1) window over (D, oH * oW): for the max, the first maximum in (d, h, w) scan
order wins, as in torch; for the average, the divisor (padding counted or not, ceil-mode
windows clipped) is the product of the per-axis ones. Arguments, output sizes, indices
(``(d * H + h) * W + w`` within each volume) and error messages follow PyTorch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..kernels._geometry import pool_output_size
from .creation import zeros
from .index import gather
from .pool import (
    adaptive_avg_pool2d,
    adaptive_max_pool2d,
    avg_pool2d,
    float_only,
    global_output,
    max_pool2d,
)
from .reduce import mean

__all__ = ["max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d"]


def _lst(shape: Any) -> str:
    return str([int(s) for s in shape])


def _isint(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _three(v: Any, msg: str, default: Any = None) -> tuple[int, int, int]:
    if default is not None and (v is None or (isinstance(v, (tuple, list)) and not v)):
        return default
    if _isint(v):
        return int(v), int(v), int(v)
    if isinstance(v, (tuple, list)) and len(v) in (1, 3) and all(_isint(i) for i in v):
        return (int(v[0]), int(v[len(v) // 2]), int(v[-1]))
    raise RuntimeError(msg)


def _geometry(input: Tensor, k: tuple, s: tuple, p: tuple, d: tuple,
              ceil_mode: bool, avg: bool) -> tuple[int, int, int]:
    """torch's pooling_output_shape per axis, then pool3d_shape_check; the output (D, H, W)."""
    if input.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    xs = tuple(int(v) for v in input.shape)
    it, ih, iw = xs[-3:]
    out = tuple(pool_output_size(xs[-3 + i], k[i], p[i], s[i], d[i], ceil_mode)
                for i in range(3))
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {k[0]} kH: "
                           f"{k[1]} kW: {k[2]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dT: {s[0]} dH: {s[1]} "
                           f"dW: {s[2]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {d[0]} "
                           f"dilationH: {d[1]} dilationW: {d[2]}")
    fn = "avg_pool3d()" if avg else "max_pool3d_with_indices_out_cpu_template()"
    if 0 in xs[-4:]:
        raise RuntimeError(
            f"{fn}: Expected input's non-batch dimensions to have positive length, but input "
            f"has a shape of {_lst(xs)} and non-batch dimension 0 has length zero!")
    if avg and (it < k[0] or ih < k[1] or iw < k[2]):
        raise RuntimeError(f"input image (T: {it} H: {ih} W: {iw}) smaller than kernel size "
                           f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    if any(k[i] // 2 < p[i] for i in range(3)):
        raise RuntimeError(
            f"pad should be smaller than or equal to half of kernel size, but got kT: {k[0]} "
            f"kW: {k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} padH: {p[1]}")
    if min(out) < 1:
        c = xs[-4]
        raise RuntimeError(f"Given input size: ({c}x{it}x{ih}x{iw}). Calculated output size: "
                           f"({c}x{out[0]}x{out[1]}x{out[2]}). Output size is too small")
    return out  # type: ignore[return-value]


def _empty(x: Tensor, shape: tuple) -> Tensor:
    """A zero-element result of ``shape`` that stays in ``x``'s graph."""
    return x.reshape(-1)[:0].reshape(shape)


def _indices(idx_hw: Tensor, idx_d: Tensor, n: int, c: int, dims: tuple, ohw: int
             ) -> Tensor:
    """Flat (d * H + h) * W + w indices from the stage-1 plane indices and the stage-2 ones."""
    depth = idx_d // ohw  # stage 2 pooled over (D, oH * oW) with width-1 windows
    hw = gather(idx_hw.reshape(n, c, dims[0], ohw), 2, depth)
    return depth * (dims[1] * dims[2]) + hw


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W), as torch's.

    ``stride`` defaults to ``kernel_size``; padding counts as -inf. With ``return_indices``
    also returns the int64 index ``(d * H + h) * W + w`` of every maximum within its volume.
    A window whose dilated taps all fall in the padding raises ValueError, as in
    ``max_pool2d`` (torch's backward writes outside the input there).

    Example::

        F.max_pool3d(lucid.randn(2, 4, 8, 8, 8), 2).shape             # (2, 4, 4, 4, 4)
        y, idx = F.max_pool3d(x, 3, stride=2, padding=1, return_indices=True)
    """
    k = _three(kernel_size, "max_pool3d: kernel_size must either be a single int, or a tuple "
                            "of three ints")
    s = _three(stride, "max_pool3d: stride must either be omitted, a single int, or a tuple of "
                       "three ints", default=k)
    p = _three(padding, "max_pool3d: padding must either be a single int, or a tuple of three "
                        "ints")
    d = _three(dilation, "max_pool3d: dilation must be either a single int, or a tuple of three "
                         "ints")
    od, oh, ow = _geometry(input, k, s, p, d, ceil_mode, avg=False)
    x = input.unsqueeze(0) if input.dim() == 4 else input
    n, c, dd, h, w = (int(v) for v in x.shape)
    if n == 0:
        out = _empty(x, (0, c, od, oh, ow))
        idx = zeros((0, c, od, oh, ow), dtype=_dtype.int64, device=input.device)
    else:
        y1, i1 = max_pool2d(x.reshape(n, c * dd, h, w), k[1:], s[1:], p[1:], d[1:], ceil_mode,
                            True)
        y2, i2 = max_pool2d(y1.reshape(n, c, dd, oh * ow), (k[0], 1), (s[0], 1), (p[0], 0),
                            (d[0], 1), ceil_mode, True)
        out = y2.reshape(n, c, od, oh, ow)
        idx = _indices(i1, i2, n, c, (dd, h, w), oh * ow).reshape(n, c, od, oh, ow) \
            if return_indices else None
    return _max_result(input, out, idx, return_indices)


def _max_result(input: Tensor, out: Tensor, idx: Tensor | None, return_indices: bool) -> Any:
    """A max pool's output (and indices, with ``return_indices``), without the batch dim an
    unbatched ``input`` was given."""
    if input.dim() == 4:
        out = out.squeeze(0)
        idx = idx.squeeze(0) if idx is not None else None
    return (out, idx) if return_indices else out


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W), as torch's.

    Zero padding counts in the divisor when ``count_include_pad``; ``divisor_override``
    replaces the divisor.

    Example::

        F.avg_pool3d(lucid.randn(1, 2, 4, 4, 4), 2).shape              # (1, 2, 2, 2, 2)
    """
    k = _three(kernel_size, "avg_pool3d: kernel_size must be a single int, or a tuple of three "
                            "ints")
    s = _three(stride, "avg_pool3d: stride must be omitted, a single int, or a tuple of three "
                       "ints", default=k)
    p = _three(padding, "avg_pool3d: padding must be a single int, or a tuple of three ints")
    if input.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    od, oh, ow = _geometry(input, k, s, p, (1, 1, 1), ceil_mode, avg=True)
    x = input.unsqueeze(0) if input.dim() == 4 else input
    n, c, dd, h, w = (int(v) for v in x.shape)
    if n == 0:
        out = _empty(x, (0, c, od, oh, ow))
    else:
        div = None if divisor_override is None else 1  # sums, divided once below
        y1 = avg_pool2d(x.reshape(n, c * dd, h, w), k[1:], s[1:], p[1:], ceil_mode,
                        count_include_pad, div)
        out = avg_pool2d(y1.reshape(n, c, dd, oh * ow), (k[0], 1), (s[0], 1), (p[0], 0),
                         ceil_mode, count_include_pad, div).reshape(n, c, od, oh, ow)
        if divisor_override is not None:
            out = out / divisor_override
    return out.squeeze(0) if input.dim() == 4 else out


def _adaptive_size(output_size: Any, input: Tensor, name: str) -> tuple[int, int, int]:
    if _isint(output_size) or output_size is None:
        sz = [output_size] * 3
    else:
        sz = list(output_size)
        if len(sz) != 3:
            if input.dim() <= len(sz):
                raise ValueError(f"Input dimension should be at least {len(sz) + 1}")
            if name == "adaptive_max_pool3d":
                raise RuntimeError("adaptive_max_pool3d(): internal error: output_size.size() "
                                   "must be 3")
            raise RuntimeError(f"{name}: output_size must be 3")
    dhw = input.shape[-3:]
    return tuple(int(dhw[i]) if v is None else int(v) for i, v in enumerate(sz))  # type: ignore


def _adaptive(input: Tensor, output_size: Any, name: str, colon: str) -> tuple[int, int, int]:
    xs = tuple(int(v) for v in input.shape)
    if input.dim() not in (4, 5):
        raise RuntimeError(f"{name}(): Expected 4D or 5D tensor, but got{colon} {_lst(xs)}")
    for i in range(1, input.dim()):
        if xs[i] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {_lst(xs)} with dimension {i} being empty")
    out = _adaptive_size(output_size, input, name)
    if min(out) < 0:
        if name == "adaptive_max_pool3d":
            neg = next(v for v in out if v < 0)
            raise RuntimeError(f"Trying to create tensor with negative dimension {neg}: "
                               f"{_lst((*xs[:-3], *out))}")
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{out[0]}, {out[1]},{out[2]}}}")
    return out


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed (D, H, W) output size (windows as torch computes them).

    ``output_size`` is an int or a triple; None keeps that input dimension. An output of
    1 x 1 x 1 is the mean over the last three dims, as in torch (an empty one averages to NaN).

    Example::

        F.adaptive_avg_pool3d(lucid.randn(2, 8, 5, 7, 9), 1).shape        # (2, 8, 1, 1, 1)
        F.adaptive_avg_pool3d(lucid.randn(2, 8, 5, 7, 9), (2, None, 3)).shape  # (2, 8, 2, 7, 3)
    """
    if global_output(output_size, input, 3):
        return mean(input, (-3, -2, -1), keepdim=True)
    od, oh, ow = _adaptive(input, output_size, "adaptive_avg_pool3d", "")
    float_only(input, "adaptive_avg_pool3d_cpu")
    x = input.unsqueeze(0) if input.dim() == 4 else input
    n, c, dd, h, w = (int(v) for v in x.shape)
    if 0 in (n, c, od, oh, ow):
        out = _empty(x, (n, c, od, oh, ow))
    else:
        y1 = adaptive_avg_pool2d(x.reshape(n, c * dd, h, w), (oh, ow))
        out = adaptive_avg_pool2d(y1.reshape(n, c, dd, oh * ow), (od, oh * ow)).reshape(
            n, c, od, oh, ow)
    return out.squeeze(0) if input.dim() == 4 else out


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a fixed (D, H, W) output size; optionally with the int64 indices
    ``(d * H + h) * W + w`` of the maxima.

    Example::

        y, idx = F.adaptive_max_pool3d(lucid.randn(1, 2, 6, 6, 6), 3, return_indices=True)
    """
    od, oh, ow = _adaptive(input, output_size, "adaptive_max_pool3d", ":")
    x = input.unsqueeze(0) if input.dim() == 4 else input
    n, c, dd, h, w = (int(v) for v in x.shape)
    if 0 in (n, c, od, oh, ow):
        out = _empty(x, (n, c, od, oh, ow))
        idx = zeros((n, c, od, oh, ow), dtype=_dtype.int64, device=input.device)
    else:
        y1, i1 = adaptive_max_pool2d(x.reshape(n, c * dd, h, w), (oh, ow), True)
        y2, i2 = adaptive_max_pool2d(y1.reshape(n, c, dd, oh * ow), (od, oh * ow), True)
        out = y2.reshape(n, c, od, oh, ow)
        idx = _indices(i1, i2, n, c, (dd, h, w), oh * ow).reshape(n, c, od, oh, ow) \
            if return_indices else None
    return _max_result(input, out, idx, return_indices)
