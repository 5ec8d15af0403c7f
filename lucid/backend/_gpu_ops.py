"""Elementwise, reduction, sorting and movement pieces of the "gpu" backend that MLX does not
offer directly, built from MLX ops (signatures follow the reference ``NumpyBackend``)."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ._gpu_common import FLOATS, mx, reducible

Array = Any


def _cast_to(x: Array, d: Any) -> Array:
    return x if x.dtype == d else x.astype(d)


def _ax(axis: Any) -> Any:
    return list(axis) if isinstance(axis, (tuple, list)) else axis


def round(x: Array) -> Array:
    return mx.round(x) if x.dtype in FLOATS else x


def fmod(a: Any, b: Any) -> Array:
    """C's fmod (sign of the dividend) from ``remainder`` (sign of the divisor)."""
    r = mx.remainder(a, b)
    fix = mx.logical_and(mx.not_equal(r, 0), mx.not_equal(mx.less(r, 0), mx.less(a, 0)))
    return mx.where(fix, r - b, r)


def logical_xor(a: Any, b: Any) -> Array:
    return mx.not_equal(mx.array(a).astype(mx.bool_), mx.array(b).astype(mx.bool_))


def bitwise_not(x: Array) -> Array:
    return mx.logical_not(x) if x.dtype == mx.bool_ else mx.bitwise_invert(x)


def clip(x: Array, lo: Any, hi: Any) -> Array:
    if lo is not None:
        x = mx.maximum(x, lo)
    if hi is not None:
        x = mx.minimum(x, hi)
    return x


def var(x: Array, axis: Any = None, correction: float = 1, keepdims: bool = False) -> Array:
    ax = _ax(axis)
    n = _count(x.shape, axis)
    x = reducible(x)
    d = x - mx.mean(x, axis=ax, keepdims=True)
    return mx.divide(mx.sum(d * d, axis=ax, keepdims=keepdims), builtins.max(n - correction, 0))


def sort(x: Array, axis: int = -1, descending: bool = False) -> tuple[Array, Array]:
    # NOTE: descending is the ascending order of the reversed axis, read backwards, as on the
    # reference backend: NaN first (as in torch), ties in order, no negation of unsigned/bool
    if not descending:
        idx = mx.argsort(x, axis=axis).astype(mx.int64)
    else:
        idx = (x.shape[axis] - 1) - flip(mx.argsort(flip(x, axis), axis=axis), axis).astype(
            mx.int64)
    return mx.take_along_axis(x, idx, axis), idx


def matmul(a: Array, b: Array) -> Array:
    if a.dtype in FLOATS:
        return mx.matmul(a, b)
    # MLX multiplies floats only: integers as a broadcast product and a sum
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    out = mx.sum(mx.expand_dims(a2, -1) * mx.expand_dims(b2, -3), axis=-2)
    if a.ndim == 1:
        out = mx.squeeze(out, -2)
    if b.ndim == 1:
        out = mx.squeeze(out, -1)
    # NOTE: mx.sum widens small integers (uint8 -> uint32); torch keeps the dtype and wraps
    return out.astype(a.dtype) if out.dtype != a.dtype else out


def flip(x: Array, axis: Any) -> Array:
    axes = range(x.ndim) if axis is None else (axis if isinstance(axis, (tuple, list))
                                               else (axis,))
    idx = [slice(None)] * x.ndim
    for a in axes:
        idx[a] = slice(None, None, -1)
    return x[tuple(idx)] if x.ndim else x


def repeat(x: Array, repeats: Any, axis: int | None) -> Array:
    if axis is None:
        x, axis = mx.reshape(x, (-1,)), 0
    if isinstance(repeats, (int, np.integer)):
        return mx.repeat(x, int(repeats), axis=axis)
    reps = np.array(repeats).reshape(-1)  # per-element counts: the index is built on host
    if reps.size == 1:
        return mx.repeat(x, int(reps[0]), axis=axis)
    idx = np.repeat(np.arange(x.shape[axis]), reps)
    return mx.take(x, mx.array(idx.astype(np.int32)), axis=axis)


def pad(x: Array, widths: list[tuple[int, int]], value: Any = 0, mode: str = "constant"
        ) -> Array:
    widths = [(int(a), int(b)) for a, b in widths]
    if mode == "constant":
        return mx.pad(x, widths, constant_values=mx.array(value, x.dtype))
    if mode in ("replicate", "edge"):
        return mx.pad(x, widths, mode="edge")
    for ax, (lo, hi) in enumerate(widths):  # reflect / circular: a gather per axis
        if lo or hi:
            x = mx.take(x, mx.array(_pad_index(x.shape[ax], lo, hi, mode)), axis=ax)
    return x


def scatter_add(shape: tuple[int, ...], idx: Array, src: Array, axis: int) -> Array:
    """zeros(shape) with ``src`` added along ``axis`` at ``idx`` (gather's backward)."""
    out = mx.zeros(tuple(shape), src.dtype)
    if src.size == 0:
        return out
    return out.at[_full_index(idx, axis)].add(src)


def scatter(x: Array, idx: Array, src: Any, axis: int) -> Array:
    """``x`` with ``src`` written along ``axis`` at ``idx``, within ``idx``'s extent only."""
    if idx.size == 0:
        return mx.array(x)
    src = mx.broadcast_to(mx.array(src, x.dtype) if not isinstance(src, mx.array)
                          else _cast_to(src, x.dtype), idx.shape)
    if all(n == m for k, (n, m) in enumerate(zip(idx.shape, x.shape)) if k != axis):
        return mx.put_along_axis(x, idx, src, axis=axis)
    out = mx.array(x)  # a new array object: the item assignment below leaves ``x`` as it is
    out[_full_index(idx, axis)] = src
    return out


def nonzero(x: Array) -> tuple[Array, ...]:
    # NOTE: a data-dependent shape: the positions are found on the host
    return tuple(mx.array(i.astype(np.int64)) for i in np.nonzero(np.array(x)))


def argmax(x: Array, axis: int | None = None, keepdims: bool = False) -> Array:
    return _arg_first(x, axis, keepdims, True)


def argmin(x: Array, axis: int | None = None, keepdims: bool = False) -> Array:
    return _arg_first(x, axis, keepdims, False)


def _count(shape: tuple[int, ...], axis: Any) -> int:
    if axis is None:
        axes = range(len(shape))
    else:
        axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def _arg_first(x: Array, axis: int | None, keepdims: bool, largest: bool) -> Array:
    """numpy's argmax/argmin: the first extreme, and the first NaN where there is one."""
    if axis is None:
        x, axis = mx.reshape(x, (-1,)), 0
    if x.size == 0:  # only reachable with keepdims shapes that have no elements
        shape = list(x.shape)
        if keepdims:
            shape[axis] = 1
        else:
            del shape[axis]
        return mx.zeros(tuple(shape), mx.int64)
    if x.dtype in FLOATS:
        nan = mx.isnan(x)
        ext = mx.max(x, axis=axis, keepdims=True) if largest else \
            mx.min(x, axis=axis, keepdims=True)
        hit = mx.where(mx.any(nan, axis=axis, keepdims=True), nan, mx.equal(x, ext))
    else:
        xi = x.astype(mx.int32) if x.dtype == mx.bool_ else x
        ext = mx.max(xi, axis=axis, keepdims=True) if largest else \
            mx.min(xi, axis=axis, keepdims=True)
        hit = mx.equal(xi, ext)
    # the first position where ``hit`` holds (argmax of a bool array)
    return mx.argmax(hit.astype(mx.uint8), axis=axis, keepdims=keepdims).astype(mx.int64)


def _full_index(idx: Array, axis: int) -> tuple:
    """Index tuple addressing ``out[..., idx, ...]`` along ``axis`` for every other position."""
    parts = []
    nd = idx.ndim
    for k in range(nd):
        if k == axis:
            parts.append(idx)
        else:
            shape = [1] * nd
            shape[k] = idx.shape[k]
            parts.append(mx.reshape(mx.arange(idx.shape[k]), shape))
    return tuple(parts)


def _pad_index(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    pos = np.arange(-lo, n + hi)
    if mode == "circular":
        return (pos % n).astype(np.int32)
    period = 2 * (n - 1) if n > 1 else 1  # reflect
    pos = np.abs(pos) % period
    return np.where(pos >= n, period - pos, pos).astype(np.int32)
