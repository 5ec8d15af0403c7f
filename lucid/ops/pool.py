"""Pooling as torch.nn.functional: max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d,
adaptive_max_pool1d/2d. Arguments, defaults, output sizes (ceil_mode included), indices and
error messages follow PyTorch; 1-D and unbatched inputs are reshaped views of the 2-D ops,
whose array work is the backend's ``max_pool2d`` / ``avg_pool2d`` / ``adaptive_*`` methods.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Op, also_saved
from ..kernels._geometry import effective_kernel, pool_output_size
from ._util import wrap
from .reduce import mean as _mean

__all__ = ["max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d"]


def _lst(shape: Any) -> str:
    return str([int(s) for s in shape])


def _isint(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


class _Geom:
    __slots__ = ("xs", "x4", "y4", "y", "k", "s", "p", "d", "out_hw", "cip", "div", "idx")

    def __init__(self, **kw: Any) -> None:
        self.idx = None
        for k, v in kw.items():
            setattr(self, k, v)


class MaxPool2DWithIndices(Op):
    def forward(self, x, geom):  # type: ignore[override]
        be = self.be
        y, idx = be.max_pool2d(be.reshape(x, geom.x4), geom.k, geom.s, geom.p, geom.d,
                               geom.out_hw)
        self.geom = geom
        self.saved = (idx, x)  # x unread, saved as torch saves it: an in-place change refuses
        geom.idx = be.reshape(idx, geom.y)
        return be.reshape(y, geom.y)

    def backward(self, g):  # type: ignore[override]
        be, p = self.be, self.geom
        gx = be.max_pool2d_backward(be.reshape(g, p.y4), self.saved[0], p.x4)
        return be.reshape(gx, p.xs), None


class AdaptiveMaxPool2D(MaxPool2DWithIndices):
    def forward(self, x, geom):  # type: ignore[override]
        be = self.be
        y, idx = be.adaptive_max_pool2d(be.reshape(x, geom.x4), geom.out_hw)
        self.geom = geom
        self.saved = (idx, x)
        geom.idx = be.reshape(idx, geom.y)
        return be.reshape(y, geom.y)


class AvgPool2D(Op):
    def forward(self, x, geom):  # type: ignore[override]
        be = self.be
        self.geom = geom
        self.saved = (x,)  # unread, saved as torch saves it: an in-place change refuses
        y = be.avg_pool2d(be.reshape(x, geom.x4), geom.k, geom.s, geom.p, geom.out_hw,
                          geom.cip, geom.div)
        return be.reshape(y, geom.y)

    def backward(self, g):  # type: ignore[override]
        be, p = self.be, self.geom
        gx = be.avg_pool2d_backward(be.reshape(g, p.y4), p.x4, p.k, p.s, p.p, p.cip, p.div)
        return be.reshape(gx, p.xs), None


class AdaptiveAvgPool2D(Op):
    def forward(self, x, geom):  # type: ignore[override]
        be = self.be
        self.geom = geom
        if geom.out_hw != (1, 1):  # unread, saved as torch saves it (not for its global mean)
            self.saved = (x,)
        return be.reshape(be.adaptive_avg_pool2d(be.reshape(x, geom.x4), geom.out_hw), geom.y)

    def backward(self, g):  # type: ignore[override]
        be, p = self.be, self.geom
        gs = list(g.shape)
        empty = [i for i in range(1, len(gs)) if gs[i] == 0]
        if empty:  # torch refuses this backward
            raise RuntimeError(
                "adaptive_avg_pool2d_backward(): Expected grad_output to have non-zero size for "
                f"non-batch dimensions, but grad_output has sizes {gs} with dimension "
                f"{empty[0]} being empty")
        gx = be.adaptive_avg_pool2d_backward(be.reshape(g, p.y4), p.x4)
        return be.reshape(gx, p.xs), None


def _two(v: Any, msg: str, default: Any = None) -> tuple[int, int]:
    if default is not None and (v is None or (isinstance(v, (tuple, list)) and not v)):
        return default
    if _isint(v):
        return int(v), int(v)
    if isinstance(v, (tuple, list)) and len(v) in (1, 2) and all(_isint(i) for i in v):
        return (int(v[0]), int(v[-1]))
    raise RuntimeError(msg)


def _pool2d_geom(input: Tensor, name: str, kernel_size: Any, stride: Any, padding: Any,
                 dilation: Any, ceil_mode: bool) -> _Geom:
    """Argument parsing and torch's shape checks shared by max_pool2d and avg_pool2d."""
    k = _two(kernel_size, f"{name}: kernel_size must either be a single int, or a tuple of two "
                          "ints")
    s = _two(stride, f"{name}: stride must either be omitted, a single int, or a tuple of two "
                     "ints", default=k)
    p = _two(padding, f"{name}: padding must either be a single int, or a tuple of two ints")
    d = _two(dilation, f"{name}: dilation must be either a single int, or a tuple of two ints")
    xs = tuple(input.shape)
    h, w = xs[-2], xs[-1]
    oh = pool_output_size(h, k[0], p[0], s[0], d[0], ceil_mode)
    ow = pool_output_size(w, k[1], p[1], s[1], d[1], ceil_mode)
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: "
                           f"{k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} "
                           f"dilationW: {d[1]}")
    if 0 in xs[-3:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{_lst(xs)}")
    c = xs[-3]
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{oh}x{ow}). Output size is too small")
    x4 = xs if len(xs) == 4 else (1, *xs)
    y = (*xs[:-2], oh, ow)
    return _Geom(xs=xs, x4=x4, y4=(x4[0], c, oh, ow), y=y, k=k, s=s, p=p, d=d,
                 out_hw=(oh, ow))


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """2-D max pooling over (N, C, H, W) or (C, H, W), as torch's.

    ``stride`` defaults to ``kernel_size``; padding counts as -inf. With ``return_indices``
    also returns the int64 index (``ih * W + iw`` within each plane) of every maximum.
    Unlike torch, a window whose dilated taps all fall in the padding raises ValueError ("a
    pooling window lies entirely in the padding"): torch returns -inf there, and its backward
    writes the gradient outside the input.

    Example::

        y = F.max_pool2d(lucid.randn(8, 16, 28, 28), 2)                # (8, 16, 14, 14)
        y, idx = F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)
    """
    if input.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    geom = _pool2d_geom(input, "max_pool2d", kernel_size, stride, padding, dilation, ceil_mode)
    out = MaxPool2DWithIndices.apply(input, geom)
    return (out, also_saved(out, wrap(geom.idx, out._be))) if return_indices else out


def _one(v: Any, fname: str, arg: str, default: Any = None) -> int:
    if default is not None and (v is None or (isinstance(v, (tuple, list)) and not v)):
        return default
    if _isint(v):
        return int(v)
    if isinstance(v, (tuple, list)) and len(v) == 1 and _isint(v[0]):
        return int(v[0])
    n = len(v) if isinstance(v, (tuple, list)) else 0
    if fname == "max_pool1d":
        raise RuntimeError(f"max_pool1d() {arg} must be an int, list of ints or tuple of ints "
                           f"of size 1 but got size {n}")
    raise RuntimeError(f"{fname}() argument '{arg}' should contain one int (got {n})")


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """1-D max pooling over (N, C, L) or (C, L), as torch's (a window whose dilated taps
    all fall in the padding raises ValueError, as in ``max_pool2d``).

    Example::

        F.max_pool1d(lucid.randn(4, 3, 10), 2).shape          # (4, 3, 5)
    """
    xs = tuple(input.shape)
    if input.dim() not in (2, 3) or 0 in xs[-2:]:
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{_lst(xs)}")
    k = _one(kernel_size, "max_pool1d", "kernel_size")
    s = _one(stride, "max_pool1d", "stride", default=k)
    p = _one(padding, "max_pool1d", "padding")
    d = _one(dilation, "max_pool1d", "dilation")
    for v, what, bad in ((k, "kernel_size", k <= 0), (s, "stride", s <= 0),
                         (p, "padding", p < 0), (d, "dilation", d <= 0)):
        if bad:
            kind = "be non-negative" if what == "padding" else "be greater than zero"
            raise RuntimeError(f"max_pool1d() {what} must {kind}, but got {v}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but "
                           f"got padding={p} and kernel_size={k}")
    fits = p <= effective_kernel(k, d) // 2
    ol = pool_output_size(xs[-1], k, p, s, d, ceil_mode) if fits else 0
    if ol < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {ol}")
    res = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode, True)
    out, idx = res[0].squeeze(-2), res[1].squeeze(-2)
    return (out, idx) if return_indices else out


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """2-D average pooling over (N, C, H, W) or (C, H, W), as torch's.

    Zero padding counts in the divisor when ``count_include_pad``; ``divisor_override``
    replaces the divisor.

    Example::

        F.avg_pool2d(lucid.randn(1, 3, 8, 8), 2).shape         # (1, 3, 4, 4)
        F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False)
    """
    if input.dim() not in (3, 4):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{_lst(input.shape)}")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    geom = _pool2d_geom(input, "avg_pool2d", kernel_size, stride, padding, 1, ceil_mode)
    geom.cip, geom.div = bool(count_include_pad), divisor_override
    return AvgPool2D.apply(input, geom)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """1-D average pooling over (N, C, L) or (C, L), as torch's.

    Example::

        F.avg_pool1d(lucid.tensor([[[1., 2., 3., 4.]]]), 2)    # [[[1.5, 3.5]]]
    """
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "avg_pool1d)")
    k = _one(kernel_size, "avg_pool1d", "kernel_size")
    s = _one(stride, "avg_pool1d", "stride", default=k)
    p = _one(padding, "avg_pool1d", "padding")
    out = avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad)
    return out.squeeze(-2)


def _adaptive_size(output_size: Any, input: Tensor, name: str) -> tuple[int, int]:
    if _isint(output_size) or output_size is None:
        sz = [output_size, output_size]
    else:
        sz = list(output_size)
        if len(sz) != 2:
            if input.dim() <= len(sz):
                raise ValueError(f"Input dimension should be at least {len(sz) + 1}")
            raise RuntimeError(f"{name}: output_size must be 2")
    hw = input.shape[-2:]
    return tuple(int(hw[i]) if v is None else int(v) for i, v in enumerate(sz))  # type: ignore


def _check_nonempty(xs: tuple, first: int, name: str) -> None:
    """torch's refusal of an empty dim from ``first`` on (the batch dim, or channels of an
    unbatched input, may be empty)."""
    for i in range(first, len(xs)):
        if xs[i] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {_lst(xs)} with dimension {i} being empty")


def _adaptive_geom(input: Tensor, output_size: Any, name: str, colon: str,
                   spatial_only: bool) -> _Geom:
    """``spatial_only``: torch's average pool checks only the spatial dims for emptiness (its
    backward refuses empty channels), its max pool every dim after the first."""
    xs = tuple(input.shape)
    if input.dim() not in (3, 4):
        raise RuntimeError(f"{name}(): Expected 3D or 4D tensor, but got{colon} {_lst(xs)}")
    _check_nonempty(xs, len(xs) - 2 if spatial_only else 1, name)
    oh, ow = _adaptive_size(output_size, input, name)
    if oh < 0 or ow < 0:
        if name == "adaptive_max_pool2d":
            neg = oh if oh < 0 else ow
            raise RuntimeError(f"Trying to create tensor with negative dimension {neg}: "
                               f"{_lst((*xs[:-2], oh, ow))}")
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{oh}, {ow}}}")
    x4 = xs if len(xs) == 4 else (1, *xs)
    return _Geom(xs=xs, x4=x4, y4=(x4[0], x4[1], oh, ow), y=(*xs[:-2], oh, ow), out_hw=(oh, ow))


def float_only(input: Tensor, kernel: str) -> None:
    """torch's average pools have no integer or bool kernels."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_dtype.torch_name(input.dtype)}'")


def global_output(output_size: Any, input: Tensor, k: int) -> bool:
    """Whether an adaptive average pool over the last ``k`` dims asks for an output of all
    ones: torch then takes the mean over those dims (keepdim) and checks nothing else, so an
    empty window averages to NaN and any input of at least ``k`` dims (an int size) pools."""
    if _isint(output_size):
        return output_size == 1
    if output_size is None:
        return False
    if input.dim() <= len(output_size):  # torch's _list_with_default, before anything else
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if len(output_size) != k:
        return False  # the pool's own checks raise where torch does
    xs = input._data.shape
    return all((xs[i - k] if v is None else v) == 1 for i, v in enumerate(output_size))


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed output size (windows as torch computes them).

    ``output_size`` is an int or a pair; None keeps that input dimension. An output of 1 x 1
    is the mean over the last two dims, as in torch (an empty one averages to NaN).

    Example::

        F.adaptive_avg_pool2d(lucid.randn(2, 64, 7, 9), 1).shape   # (2, 64, 1, 1)
        F.adaptive_avg_pool2d(lucid.randn(2, 64, 7, 9), (3, None)).shape   # (2, 64, 3, 9)
    """
    if global_output(output_size, input, 2):  # 64x512x7x7 forward+backward 1.17 -> 0.39 ms
        return _mean(input, (-2, -1), keepdim=True)
    geom = _adaptive_geom(input, output_size, "adaptive_avg_pool2d", "", True)
    float_only(input, "adaptive_avg_pool2d")
    return AdaptiveAvgPool2D.apply(input, geom)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a fixed output size; optionally with the indices of the maxima.

    Example::

        y, idx = F.adaptive_max_pool2d(lucid.randn(1, 3, 10, 10), 4, return_indices=True)
    """
    geom = _adaptive_geom(input, output_size, "adaptive_max_pool2d", ":", False)
    out = AdaptiveMaxPool2D.apply(input, geom)
    return (out, also_saved(out, wrap(geom.idx, out._be))) if return_indices else out


def _adaptive_1d(input: Tensor, output_size: Any, name: str) -> int:
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for {name})")
    return _one(output_size, name, "output_size")


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Adaptive average pooling over (N, C, L) or (C, L).

    Example::

        F.adaptive_avg_pool1d(lucid.randn(2, 4, 10), 3).shape     # (2, 4, 3)
    """
    n = _adaptive_1d(input, output_size, "adaptive_avg_pool1d")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, n)).squeeze(-2)


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Adaptive max pooling over (N, C, L) or (C, L); optionally with indices.

    Example::

        F.adaptive_max_pool1d(lucid.randn(2, 4, 10), 3).shape     # (2, 4, 3)
    """
    n = _adaptive_1d(input, output_size, "adaptive_max_pool1d")
    _check_nonempty(tuple(input.shape), 1, "adaptive_max_pool1d")
    out, idx = adaptive_max_pool2d(input.unsqueeze(-2), (1, n), True)
    out, idx = out.squeeze(-2), idx.squeeze(-2)
    return (out, idx) if return_indices else out
