"""``affine_grid`` and ``grid_sample`` (spatial transformer sampling) for 2-D and 3-D inputs,
composed from gather and elementwise ops: the corner indices are constants, the interpolation
weights are differentiable functions of the grid, so gradients reach both input and grid."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _make
from . import elementwise as _e
from . import index as _i
from . import select as _sel
from . import shape as _s
from .matmul import matmul

__all__ = ["affine_grid", "grid_sample"]

_WARN = ("Default grid_sample and affine_grid behavior has changed to align_corners=False "
         "since 1.3.0. Please specify align_corners=True if the old behavior is desired. See "
         "the documentation of grid_sample for details.")


def _const(a: np.ndarray, like: Tensor) -> Tensor:
    be = like._be
    return _make(be.from_numpy(np.ascontiguousarray(a)), be, False, None)


def _linspace(n: int, align: bool) -> np.ndarray:
    if n <= 1:
        return np.zeros(max(n, 1))
    r = np.linspace(-1.0, 1.0, n)
    return r if align else r * (n - 1) / n


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The (N, H, W, 2) (or (N, D, H, W, 3)) sampling grid of the affine maps ``theta``
    (N, 2, 3) (or (N, 3, 4)) for an output of ``size`` (N, C, H, W) (or (N, C, D, H, W)), in
    the [-1, 1] coordinates ``grid_sample`` reads.

    Example::

        theta = lucid.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        F.affine_grid(theta, (1, 3, 4, 4), align_corners=False).shape   # [1, 4, 4, 2]
    """
    if align_corners is None:
        warnings.warn(_WARN, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    if len(size) in (4, 5):
        k = len(size) - 2
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (k, k + 1):
            raise ValueError(f"Expected a batch of {k}D affine matrices of shape Nx{k}x{k + 1} "
                             f"for size {size}. Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{theta.shape[0]}, {k + 1}] but got: [{size[0]}, {k + 1}].")
    axes = [_linspace(n, bool(align_corners)) for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")  # spatial order (D,) H, W
    base = np.stack([*mesh[::-1], np.ones(spatial)], axis=-1).reshape(1, -1, k + 1)
    grid = matmul(_const(base.astype(theta.dtype.np), theta), _s.transpose(theta, 1, 2))
    return _s.reshape(grid, size[0], *spatial, k)


# ---- grid_sample --------------------------------------------------------------------------------


def _check(input: Tensor, grid: Tensor, mode: str, padding_mode: str) -> None:
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    xs, gs = list(input.shape), list(grid.shape)
    if input.ndim == 0 or grid.ndim == 0 or xs[0] != gs[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {xs} and grid with sizes {gs}")
    if gs[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last "
                           f"dimension, but got grid with sizes {gs}")
    for d in range(2, input.ndim):
        if xs[d] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {xs} with dimension {d} being "
                               f"empty")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got input with sizes {xs} and grid with sizes "
                           f"{gs}")
    if mode == "bicubic" and input.ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"grid_sampler_{input.ndim - 2}d_cpu_kernel_impl" not '
                                  f"implemented for '{_dtype.torch_name(input.dtype)}'")
    if grid.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.torch_name(input.dtype)} but found "
                           f"{_dtype.torch_name(grid.dtype)}")


def _reflect(c: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """Fold coordinates into [low, high] by reflection at the borders (torch's rule)."""
    if twice_low == twice_high:
        return _e.mul(c, 0.0)
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    a = _e.abs(_e.sub(c, lo))
    extra = _e.fmod(a, span)
    flips = _e.floor(_e.div(a.detach(), span))  # type: ignore[attr-defined]
    even = _e.fmod(flips, 2.0) == 0
    return _sel.where(even, _e.add(extra, lo), _e.add(_e.sub(span, extra), lo))


def _unnormalize(g: Tensor, n: int, align: bool) -> Tensor:
    """Grid values in [-1, 1] -> pixel coordinates along a dim of size ``n``."""
    return (_e.mul(_e.add(g, 1.0), (n - 1) / 2) if align
            else _e.div(_e.sub(_e.mul(_e.add(g, 1.0), n), 1.0), 2))


def _padded(c: Tensor, n: int, align: bool, padding_mode: str) -> Tensor:
    """Pixel coordinates folded in by ``padding_mode`` (torch's compute_coordinates)."""
    if padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (n - 1)) if align else _reflect(c, -1, 2 * n - 1)
    if padding_mode != "zeros":
        # torch multiplies the coordinate's gradient by 0 outside [0, n - 1] (so a NaN
        # gradient stays NaN there, as 0 * NaN); the value is the clamped coordinate
        cd = c.detach()  # type: ignore[attr-defined]
        inside = _sel.logical_and(cd >= 0, cd <= n - 1).to(c.dtype)  # type: ignore
        moved = _sel.where(_sel.isfinite(cd), _e.sub(c, cd), 0.0)
        c = _e.add(_sel.clamp(cd, 0, n - 1), _e.mul(moved, inside))
    # NOTE: non-finite locations read as far outside (torch's safe_downgrade_to_int_range)
    return _sel.where(_sel.isfinite(c), c, -100.0)


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """The 4 Keys-cubic tap weights (A = -0.75) for fractional offsets ``t``."""
    a = -0.75

    def near(x: Tensor) -> Tensor:
        return _e.add(_e.mul(_e.mul(_e.sub(_e.mul(x, a + 2), a + 3), x), x), 1.0)

    def far(x: Tensor) -> Tensor:
        return _e.sub(_e.mul(_e.add(_e.mul(_e.sub(_e.mul(x, a), 5 * a), x), 8 * a), x), 4 * a)

    return [far(_e.add(t, 1.0)), near(t), near(_e.sub(1.0, t)), far(_e.sub(2.0, t))]


def _taps(raw: Tensor, n: int, align: bool, padding_mode: str, mode: str) -> list:
    """(position, weight or None) of the taps along one dim; positions are constants."""
    if mode == "bicubic":  # padding applies to each tap, as torch's get_value_bounded
        base = _e.floor(raw.detach())  # type: ignore[attr-defined]
        base = _sel.where(_sel.isfinite(base), base, -100.0)
        ws = _cubic_weights(_e.sub(raw, base))
        return [(_e.trunc(_padded(_e.add(base, j - 1.0), n, align, padding_mode)), w)
                for j, w in enumerate(ws)]
    c = _padded(raw, n, align, padding_mode)
    if mode == "nearest":
        return [(_e.round(c.detach()), None)]  # type: ignore[attr-defined]
    lo = _e.floor(c.detach())  # type: ignore[attr-defined]
    w1 = _e.sub(c, lo)
    return [(lo, _e.sub(1.0, w1)), (_e.add(lo, 1.0), w1)]


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) at the [-1, 1] locations of ``grid`` (N, Ho, Wo, 2), with
    ``grid[..., 0]`` the x (width) and ``grid[..., 1]`` the y coordinate; 5-D inputs take
    (N, Do, Ho, Wo, 3) grids. ``mode`` "bilinear", "nearest" or "bicubic" (4-D only);
    ``padding_mode`` "zeros", "border" or "reflection" for locations outside the input;
    non-finite grid values sample as outside the input.

    Example::

        theta = lucid.tensor([[[0.5, 0.0, 0.0], [0.0, 0.5, 0.0]]])     # zoom in 2x
        grid = F.affine_grid(theta, (1, 1, 8, 8), align_corners=False)
        F.grid_sample(img, grid, align_corners=False).shape           # [1, 1, 8, 8]
    """
    _check(input, grid, mode, padding_mode)
    if align_corners is None:
        warnings.warn(_WARN, stacklevel=2)
        align_corners = False
    n, c, *spatial = input.shape
    out_sp = tuple(grid.shape[1:-1])
    k = len(spatial)
    m = int(np.prod(out_sp))
    flat_in = _s.reshape(input, n, c, int(np.prod(spatial)))
    g = _s.reshape(grid, n, m, k)
    # coordinates per input dim in (D,) H, W order; grid's last dim is (x, y, z)
    raws = [_unnormalize(_s.reshape(_i.getitem(g, (slice(None), slice(None), k - 1 - d)), n, m),
                         spatial[d], bool(align_corners)) for d in range(k)]
    strides = [int(np.prod(spatial[d + 1:])) for d in range(k)]
    corners = [_taps(raw, spatial[d], bool(align_corners), padding_mode, mode)
               for d, raw in enumerate(raws)]
    out = None
    for combo in np.ndindex(*([len(corners[0])] * k)):
        flat = None
        weight = None
        valid = None
        for d, j in enumerate(combo):
            pos, w = corners[d][j]
            ok = _sel.logical_and(pos >= 0, pos <= spatial[d] - 1)
            valid = ok if valid is None else _sel.logical_and(valid, ok)
            idx = _e.mul(_sel.clamp(pos, 0, spatial[d] - 1), strides[d])
            flat = idx if flat is None else _e.add(flat, idx)
            if w is not None:
                weight = w if weight is None else _e.mul(weight, w)
        assert flat is not None and valid is not None
        index = _s.expand(_s.unsqueeze(flat.long(), 1), n, c, m)  # type: ignore[attr-defined]
        vals = _i.gather(flat_in, 2, index)
        # a tap outside the input reads nothing (torch skips it: a NaN input there is not
        # multiplied by 0), and sends no gradient to the input or the grid
        vals = _sel.where(_s.unsqueeze(valid, 1), vals, 0.0)
        term = vals if weight is None else _e.mul(vals, _s.unsqueeze(weight, 1))
        out = term if out is None else _e.add(out, term)
    assert out is not None
    return _s.reshape(out, n, c, *out_sp)


