"""Reductions over any axis or tuple of axes: sum, mean, var, max, min, argmax, argmin.

Supported dtypes: float32 and float64 (native byte order); anything else raises TypeError, so
the caller can fall back to numpy (``supports(x)`` tells in advance). Results keep the input
dtype (argmax/argmin: int64) and numpy's shapes, including ``keepdims``; a full reduction gives
a 0-d array, never a numpy scalar.

Semantics (PyTorch where numpy differs):
  * max/min propagate NaN; argmax/argmin return the first index of the extreme, a NaN counting
    as the extreme (both agree with numpy and torch).
  * var's ``correction`` defaults to 1 as in torch (numpy's ``ddof``); the divisor is
    ``max(n - correction, 0)`` so too few elements give nan/inf like numpy.
  * reducing an empty axis: sum -> 0, mean/var -> nan (no warning); max/min/argmax/argmin
    raise ValueError when the result would be non-empty.
  * float32 sums accumulate 4096-element chunks in float32 lanes and combine them in float64,
    so they are more accurate than numpy's float32 pairwise sum.

Layout: the input is viewed in memory order (a transposed or Fortran array needs no copy);
when the reduced axes then form one contiguous block the kernel reads it in place as
``(outer, n)`` or ``(outer, n, inner)``; otherwise one copy moves the reduced axes last.
Arrays below ``_threads.parallel_threshold()`` elements use the serial kernel build.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from . import _reduce_kernels as K
from ._threads import use_parallel

__all__ = ["sum", "mean", "var", "max", "min", "argmax", "argmin", "supports"]

Axis = int | Sequence[int] | None

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
ROWS_PARALLEL_MIN = 1 << 18  # elements from which column sums (``sum_rows``) go parallel


def supports(x: np.ndarray) -> bool:
    """True when these kernels handle ``x``'s dtype (float32/float64, native order)."""
    return x.dtype in _FLOATS


def _check(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype not in _FLOATS:
        raise TypeError(f"lucid.kernels.reduce supports float32/float64, got {x.dtype}")
    return x


def _axes(ndim: int, axis: Axis) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int) and -ndim <= axis < ndim:
        return (axis % ndim,)
    items = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in items:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        a %= ndim
        if a in out:
            raise ValueError("duplicate value in 'axis'")
        out.append(a)
    return tuple(sorted(out))


class _Plan:
    """x as a C-contiguous (outer, n, inner) array plus how to put the result back."""

    __slots__ = ("x3", "kept", "shape", "axes", "out_shape")

    def __init__(self, x: np.ndarray, axes: tuple[int, ...]) -> None:
        shape = self.shape = x.shape
        self.axes = axes
        nd = len(shape)
        if x.flags.c_contiguous and (not axes or axes[-1] - axes[0] == len(axes) - 1):
            # fast path: reduced axes already one contiguous block of a C array
            a = axes[0] if axes else nd
            b = axes[-1] + 1 if axes else nd
            self.x3 = x.reshape(math.prod(shape[:a]), math.prod(shape[a:b]), math.prod(shape[b:]))
            self.kept = None
            self.out_shape = shape[:a] + shape[b:]
            return
        red = set(axes)
        if x.flags.c_contiguous:
            order = list(range(nd))
            xp = x
        else:
            order = sorted(range(nd), key=lambda d: -abs(x.strides[d]))
            xp = x.transpose(order)
            if not xp.flags.c_contiguous:
                order = list(range(nd))
                xp = np.ascontiguousarray(x)
        dims = [d for d in order if shape[d] != 1]
        flags = [d in red for d in dims]
        first = flags.index(True) if True in flags else len(flags)
        last = len(flags) - flags[::-1].index(True) if True in flags else first
        if all(flags[first:last]):
            outer = math.prod(shape[d] for d in dims[:first])
            n = math.prod(shape[d] for d in dims[first:last])
            inner = math.prod(shape[d] for d in dims[last:])
            self.x3 = xp.reshape(outer, n, inner)
            kept = dims[:first] + dims[last:]
        else:
            kept_all = [d for d in range(nd) if d not in red]
            xt = np.ascontiguousarray(x.transpose(kept_all + sorted(red)))
            kept = [d for d in kept_all if shape[d] != 1]
            self.x3 = xt.reshape(
                math.prod(shape[d] for d in kept), math.prod(shape[d] for d in red), 1
            )
        self.kept = None if kept == sorted(kept) else kept
        self.out_shape = tuple(n for d, n in enumerate(shape) if d not in red)

    @property
    def n(self) -> int:
        return self.x3.shape[1]

    def alloc(self, dtype: np.dtype) -> np.ndarray:
        outer, _, inner = self.x3.shape
        return np.empty((outer, inner), dtype)

    def finish(self, res: np.ndarray, keepdims: bool) -> np.ndarray:
        shape, axes = self.shape, self.axes
        if self.kept is not None:  # kernel wrote kept dims in memory order: restore axis order
            kept = self.kept
            res = res.reshape([shape[d] for d in kept]).transpose(np.argsort(kept))
            res = np.ascontiguousarray(res)
        if keepdims:
            return res.reshape(tuple(1 if d in axes else n for d, n in enumerate(shape)))
        return res.reshape(self.out_shape)


def _launch(last: tuple, mid: tuple, plan: _Plan, out: np.ndarray, arg: object) -> None:
    x3 = plan.x3
    outer, n, inner = x3.shape
    work = x3.size
    if inner == 1:
        ser, par = last
        args = (x3.reshape(outer, n), out[:, 0], arg)
    elif mid is K.sum_mid and outer == 1 and inner <= K.KC and n >= 2 * K.ROWS_MIN:
        ser, par = K.sum_rows
        args = (x3[0], out[0], arg)
        # its parallel build wins from 2^18 elements, whatever the pool policy (a launch
        # costs ~9 us): float32, serial / parallel, us: 128 x 256 2.6-6.0 / 8.7-12.2,
        # 1024 x 128 8.5 / 12-20, 1024 x 384 30-52 / 23-37, 4096 x 512 300 / 156-198
        # (AVX-512 Xeon)
        work = 2 * x3.size if x3.size >= ROWS_PARALLEL_MIN else 0
    else:
        ser, par = mid
        args = (x3, out, arg)
    (par if use_parallel(work) else ser)(*args)


def _sum_like(x: np.ndarray, axis: Axis, keepdims: bool, mean: bool) -> np.ndarray:
    x = _check(x)
    plan = _Plan(x, _axes(x.ndim, axis))
    n = plan.n
    scale = (1.0 / n if n else math.nan) if mean else 1.0
    out = plan.alloc(x.dtype)
    _launch(K.sum_last, K.sum_mid, plan, out, scale)
    return plan.finish(out, keepdims)


def sum(x: np.ndarray, axis: Axis = None, keepdims: bool = False) -> np.ndarray:  # noqa: A001
    """Sum over ``axis`` (int, tuple or None for all); numpy's ``x.sum(axis, keepdims=...)``."""
    return _sum_like(x, axis, keepdims, mean=False)


def mean(x: np.ndarray, axis: Axis = None, keepdims: bool = False) -> np.ndarray:
    """Mean over ``axis``; an empty reduction gives nan (no warning)."""
    return _sum_like(x, axis, keepdims, mean=True)


def var(
    x: np.ndarray, axis: Axis = None, correction: int | float = 1, keepdims: bool = False
) -> np.ndarray:
    """Variance over ``axis`` with divisor ``max(n - correction, 0)`` (torch's ``correction``)."""
    x = _check(x)
    plan = _Plan(x, _axes(x.ndim, axis))
    n = plan.n
    dof = n - correction
    inv_dof = 1.0 / dof if dof > 0 else math.inf
    out = plan.alloc(x.dtype)
    if n == 0:
        out.fill(np.nan)
    else:
        _launch(K.var_last, K.var_mid, plan, out, inv_dof)
    return plan.finish(out, keepdims)


def _ext(x: np.ndarray, axis: Axis, keepdims: bool, is_min: bool) -> np.ndarray:
    x = _check(x)
    plan = _Plan(x, _axes(x.ndim, axis))
    out = plan.alloc(x.dtype)
    if plan.n == 0:
        if out.size:
            op = "minimum" if is_min else "maximum"
            raise ValueError(f"zero-size array to reduction operation {op} which has no identity")
    else:
        _launch(K.ext_last, K.ext_mid, plan, out, is_min)
    return plan.finish(out, keepdims)


def max(x: np.ndarray, axis: Axis = None, keepdims: bool = False) -> np.ndarray:  # noqa: A001
    """Maximum over ``axis``; NaN propagates (torch.amax / numpy.max)."""
    return _ext(x, axis, keepdims, False)


def min(x: np.ndarray, axis: Axis = None, keepdims: bool = False) -> np.ndarray:  # noqa: A001
    """Minimum over ``axis``; NaN propagates (torch.amin / numpy.min)."""
    return _ext(x, axis, keepdims, True)


def _arg(x: np.ndarray, axis: int | None, keepdims: bool, is_min: bool) -> np.ndarray:
    x = _check(x)
    if axis is None:
        flat = np.ascontiguousarray(x).reshape(1, x.size, 1)
        plan = _Plan(flat, (1,))
    else:
        plan = _Plan(x, _axes(x.ndim, operator.index(axis)))
    out = plan.alloc(np.dtype(np.int64))
    if plan.n == 0:
        if out.size:
            op = "argmin" if is_min else "argmax"
            raise ValueError(f"attempt to get {op} of an empty sequence")
    else:
        _launch(K.arg_last, K.arg_mid, plan, out, is_min)
    if axis is None:
        return out.reshape((1,) * x.ndim if keepdims else ())
    return plan.finish(out, keepdims)


def argmax(x: np.ndarray, axis: int | None = None, keepdims: bool = False) -> np.ndarray:
    """Index of the first maximum along ``axis`` (flat C-order index when None); int64."""
    return _arg(x, axis, keepdims, False)


def argmin(x: np.ndarray, axis: int | None = None, keepdims: bool = False) -> np.ndarray:
    """Index of the first minimum along ``axis`` (flat C-order index when None); int64."""
    return _arg(x, axis, keepdims, True)
