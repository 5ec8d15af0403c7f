"""``interpolate``: nearest, nearest-exact, linear, bilinear and trilinear resizing, composed
from index_select so the gradients are its."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor, _make
from . import elementwise as _e
from . import index as _i

__all__ = ["interpolate"]


# ---- interpolate --------------------------------------------------------------------------------

_LINEAR = {"linear": 3, "bilinear": 4, "trilinear": 5}


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

    Modes: "nearest", "nearest-exact", "linear" (3-D), "bilinear" (4-D), "trilinear" (5-D).
    Linear modes are separable 1-D interpolations, so gradients come from index_select.

    Example::

        x = lucid.arange(4.0).reshape(1, 1, 2, 2)
        interpolate(x, scale_factor=2, mode="bilinear", align_corners=False).shape   # 4x4
    """
    k = input.ndim - 2
    if k < 1:
        raise ValueError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                         f"{input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | "
                         f"trilinear | area | nearest-exact (got {mode})")
    linear = mode in _LINEAR
    if mode not in ("nearest", "nearest-exact") and not linear:
        raise NotImplementedError(f"interpolate mode {mode!r} is not supported")
    if linear and input.ndim != _LINEAR[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_LINEAR[mode]}D input")
    if not linear and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if antialias:
        raise NotImplementedError("antialias=True is not supported")
    sizes, sfs = _out_sizes(input, size, scale_factor, k)
    if recompute_scale_factor:
        sfs = [None] * k
    align = bool(align_corners)
    be = input._be
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
        i1 = np.minimum(i0 + 1, n_in - 1)
        lam = (src - i0).astype(input.dtype.np).reshape((-1,) + (1,) * (input.ndim - d - 1))
        lam_t = _make(be.from_numpy(lam), be, False, None)
        a = _i.index_select(out, d, _make(be.from_numpy(i0), be, False, None))
        b = _i.index_select(out, d, _make(be.from_numpy(i1), be, False, None))
        out = _e.add(a, _e.mul(_e.sub(b, a), lam_t))
    return out
