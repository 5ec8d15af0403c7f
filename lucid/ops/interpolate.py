"""``interpolate``: nearest, nearest-exact, linear, bilinear and trilinear resizing composed
from index_select, bicubic and antialiased resizing as one constant (n_out, n_in) matrix per
spatial dim applied with matmul, and area resizing as torch's adaptive average pool; the
gradients are those ops'. The deprecated ``upsample``, ``upsample_nearest`` and
``upsample_bilinear`` call it with torch's warning."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _make
from . import elementwise as _e
from . import index as _i
from . import shape as _s
from .matmul import matmul
from .pool import adaptive_avg_pool1d, adaptive_avg_pool2d
from .pool3d import adaptive_avg_pool3d

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]


# ---- interpolate --------------------------------------------------------------------------------

_LINEAR = {"linear": 3, "bilinear": 4, "trilinear": 5}
_AREA = {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d, 3: adaptive_avg_pool3d}


def _out_sizes(input: Tensor, size: Any, scale_factor: Any, k: int
               ) -> tuple[list[int], list[float | None]]:
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None
                         else "either size or scale_factor should be defined")
    spatial = list(input.shape[2:])
    if size is not None:
        sizes = [int(s) for s in size] if isinstance(size, (list, tuple)) else [int(size)] * k
        if len(sizes) != k:
            raise ValueError(f"Input and output must have the same number of spatial dimensions,"
                             f" but got input with spatial dimensions of {spatial} and output "
                             f"size of {sizes}. Please provide input tensor in (N, C, d1, d2, "
                             "...,dK) format and output size in (o1, o2, ...,oK) format.")
        return _check_out_sizes(spatial, sizes), [None] * k
    sf = ([float(s) for s in scale_factor] if isinstance(scale_factor, (list, tuple))
          else [float(scale_factor)] * k)
    if len(sf) != k:
        raise ValueError(f"Input and scale_factor must have the same number of spatial "
                         f"dimensions, but got input with spatial dimensions of {spatial} and "
                         f"scale_factor of shape {sf}.")
    if not all(math.isfinite(n * s) and abs(n * s) < 2**63 for n, s in zip(spatial, sf)):
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return _check_out_sizes(spatial, [int(math.floor(n * s)) for n, s in zip(spatial, sf)]), \
        list(sf)


def _check_out_sizes(spatial: list[int], sizes: list[int]) -> list[int]:
    """torch's check: every input and output spatial size is positive."""
    if min(spatial + sizes) <= 0:
        names = "DHW"[-len(sizes):] if len(sizes) <= 3 else "".join(map(str, range(len(sizes))))
        ins = ", ".join(f"{a}: {b}" for a, b in zip(names, spatial))
        outs = ", ".join(f"{a}: {b}" for a, b in zip(names, sizes))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({ins}) output ({outs})")
    return sizes


def _src(n_in: int, n_out: int, sf: float | None, align: bool, mode: str) -> np.ndarray:
    dst = np.arange(n_out, dtype=np.float64)
    if align:
        return dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    scale = 1.0 / sf if sf else n_in / n_out
    if mode == "nearest":
        return np.floor(dst * scale)
    if mode == "nearest-exact":
        return np.floor((dst + 0.5) * scale)
    return np.maximum(scale * (dst + 0.5) - 0.5, 0.0)


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize the spatial dims of (N, C, *spatial) ``input`` to ``size`` or by ``scale_factor``.

    Modes: "nearest", "nearest-exact", "linear" (3-D), "bilinear" (4-D), "bicubic" (4-D),
    "trilinear" (5-D), "area" (adaptive average pooling). ``antialias=True`` (bilinear and
    bicubic) widens the filter when downsampling, as torch. Linear modes are separable 1-D
    interpolations, so gradients come from index_select; bicubic and antialiased resizing
    multiply by one constant matrix per dim, so a NaN or inf there reaches every output
    along that dim (torch's only the outputs whose taps read it); area resizing is the
    adaptive average pool, as in torch.

    Example::

        x = lucid.arange(4.0).reshape(1, 1, 2, 2)
        interpolate(x, scale_factor=2, mode="bilinear", align_corners=False).shape   # 4x4
    """
    k = input.ndim - 2
    msg = (f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
           f"the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
           f"nearest-exact (got {mode})")
    if k < 1:
        raise ValueError(msg)
    linear = mode in _LINEAR
    if mode not in ("nearest", "nearest-exact", "area", "bicubic") and not linear \
            or mode == "bicubic" and input.ndim != 4:
        raise NotImplementedError(msg)
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if linear and input.ndim != _LINEAR[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_LINEAR[mode]}D input")
    if not linear and mode != "bicubic" and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    sizes, sfs = _out_sizes(input, size, scale_factor, k)
    if recompute_scale_factor:
        sfs = [None] * k
    align = bool(align_corners)
    be = input._be
    if antialias:
        return _separable(input, sizes, sfs, align, "aa-" + mode)
    if mode == "area":
        return _AREA[k](input, sizes if k > 1 else sizes[0])
    if mode == "bicubic":
        return _separable(input, sizes, sfs, align, mode)
    out = input
    for j, (n_out, sf) in enumerate(zip(sizes, sfs)):
        d = 2 + j
        n_in = input.shape[d]
        src = _src(n_in, n_out, sf, align, mode)
        if not linear:
            idx = np.minimum(src.astype(np.int64), n_in - 1)
            out = _i.index_select(out, d, _make(be.from_numpy(idx), be, False, None))
            continue
        i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
        # torch: a dim of unchanged size reads each pixel as both taps
        i1 = i0 if n_out == n_in else np.minimum(i0 + 1, n_in - 1)
        lam = (src - i0).reshape((-1,) + (1,) * (input.ndim - d - 1))
        w0, w1 = (_make(be.from_numpy(w.astype(input.dtype.np)), be, False, None)
                  for w in (1 - lam, lam))
        a = _i.index_select(out, d, _make(be.from_numpy(i0), be, False, None))
        b = _i.index_select(out, d, _make(be.from_numpy(i1), be, False, None))
        # w0 a + w1 b, as torch: an infinite a stays infinite where w1 is 0 (a lerp would not)
        out = _e.add(_e.mul(a, w0), _e.mul(b, w1))
    return out


# ---- bicubic and antialiased: one (n_out, n_in) matrix per spatial dim -------------------------

_CUBIC_A = -0.75


def _cubic_weights(t: np.ndarray) -> np.ndarray:
    """The 4 Keys-cubic weights (A = -0.75, as torch) for fractional offsets ``t``."""
    a = _CUBIC_A

    def near(x: np.ndarray) -> np.ndarray:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], axis=1)


def _resize_matrix(n_in: int, n_out: int, sf: float | None, align: bool, mode: str
                   ) -> np.ndarray:
    m = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    if mode.startswith("aa-"):
        return _antialias_matrix(n_in, n_out, sf, align, mode[3:])
    if align:
        real = rows * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    else:
        real = (1.0 / sf if sf else n_in / n_out) * (rows + 0.5) - 0.5
    base = np.floor(real)
    w = _cubic_weights(real - base)
    for j in range(4):
        np.add.at(m, (rows, np.clip(base.astype(np.int64) - 1 + j, 0, n_in - 1)), w[:, j])
    return m


def _antialias_matrix(n_in: int, n_out: int, sf: float | None, align: bool, mode: str
                      ) -> np.ndarray:
    """torch's antialiased weights: the filter (triangle, or Keys cubic with A = -0.5) is
    stretched by the scale when downsampling, and each row is normalised."""
    if align:
        scale = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        scale = 1.0 / sf if sf else n_in / n_out
    half = 1.0 if mode == "bilinear" else 2.0
    support = half * scale if scale >= 1.0 else half
    inv = 1.0 / scale if scale >= 1.0 else 1.0
    a = -0.5

    def filt(x: np.ndarray) -> np.ndarray:
        x = np.abs(x)
        if mode == "bilinear":
            return np.maximum(0.0, 1.0 - x)
        return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                        np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0.0))

    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n_in)
        w = filt((np.arange(lo, hi) - center + 0.5) * inv)
        total = w.sum()
        m[i, lo:hi] = w / total if total else w
    return m


def _separable(input: Tensor, sizes: list[int], sfs: list[float | None], align: bool,
               mode: str) -> Tensor:
    if not input.dtype.is_floating_point:
        kernel = "compute_indices_weights_cubic" if mode == "bicubic" else \
            "upsample_" + mode[3:] + "2d_aa"
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_dtype.torch_name(input.dtype)}'")
    # NOTE: a matmul, not gathered taps: 8x3x64x64 -> 128x128 bicubic forward+backward
    # 1.1 ms, 18 ms as four weighted index_selects per dim (which would confine a NaN as torch)
    be = input._be
    out = input
    for j, (n_out, sf) in enumerate(zip(sizes, sfs)):
        d = 2 + j
        if mode[:3] == "aa-" and n_out == input.shape[d]:
            continue  # torch's antialiased resize leaves a dim of unchanged size alone
        m = _resize_matrix(input.shape[d], n_out, sf, align, mode).T.astype(input.dtype.np)
        mt = _make(be.from_numpy(np.ascontiguousarray(m)), be, False, None)
        out = _s.movedim(matmul(_s.movedim(out, d, -1), mt), -1, d)
    if out is input:
        return out.clone()  # type: ignore[attr-defined]
    return _s.contiguous(out)  # row-major, as torch's, when the last dim was not resized


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated alias of ``interpolate`` (warns, as torch's).

    Example::

        F.upsample(lucid.randn(1, 3, 4, 4), scale_factor=2).shape      # (1, 3, 8, 8)
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(..., mode="nearest")`` (warns, as torch's).

    Example::

        F.upsample_nearest(lucid.randn(1, 3, 4, 4), size=8).shape      # (1, 3, 8, 8)
    """
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(..., mode="bilinear", align_corners=True)`` (warns, as
    torch's).

    Example::

        F.upsample_bilinear(lucid.randn(1, 3, 4, 4), scale_factor=2).shape   # (1, 3, 8, 8)
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
