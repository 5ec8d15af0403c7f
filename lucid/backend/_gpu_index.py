"""Indexing for the "gpu" backend: numpy's indexing rules over MLX arrays.

MLX indexes with ints, slices, None, Ellipsis and integer arrays as numpy does, but it
does not check bounds and has no boolean-mask indexing. Here ints are checked on the host
(they are Python values), integer arrays are checked on the device (one boolean comes back),
and a boolean mask becomes integer indices through ``nonzero`` on the host: the result's
shape depends on the mask's values, so they must be read. ``x[mask] = scalar`` with a mask of
``x``'s shape stays on the device (``where``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._gpu_common import mx, to_host

_Arr = mx.array


def _items(idx: Any) -> tuple:
    return idx if isinstance(idx, tuple) else (idx,)


def _is_mask(it: Any) -> bool:
    return isinstance(it, _Arr) and it.dtype == mx.bool_


def _axes(items: tuple, ndim: int) -> list[int | None]:
    """The axis of ``x`` each index item consumes (None for None/Ellipsis/bool scalars)."""
    used = sum(it.ndim if _is_mask(it) else 1 for it in items
               if it is not None and it is not Ellipsis and not isinstance(it, bool))
    out: list[int | None] = []
    ax = 0
    for it in items:
        if it is None or isinstance(it, bool):
            out.append(None)
        elif it is Ellipsis:
            out.append(None)
            ax += max(ndim - used, 0)
        else:
            out.append(ax)
            ax += it.ndim if _is_mask(it) else 1
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{used} were indexed")
    return out


def convert(x: Any, idx: Any) -> tuple[tuple, bool]:
    """``idx`` checked against ``x``'s shape, masks turned into integer arrays.

    Returns the index and whether it needs the numpy fallback (bool scalars as indices).
    """
    items = _items(idx)
    shape = x.shape
    axes = _axes(items, x.ndim)
    out: list[Any] = []
    checks = []
    for it, ax in zip(items, axes):
        if isinstance(it, bool):
            return items, True
        if isinstance(it, int):
            n = shape[ax]
            if it < -n or it >= n:
                raise IndexError(f"index {it} is out of bounds for axis {ax} with size {n}")
            out.append(it)
        elif _is_mask(it):
            m = it
            if m.ndim == 0:
                return items, True
            if tuple(m.shape) != tuple(shape[ax:ax + m.ndim]):
                raise IndexError(f"boolean index did not match indexed array along axis {ax}; "
                                 f"size of axis is {shape[ax]} but size of corresponding "
                                 f"boolean axis is {m.shape[0]}")
            # NOTE: the mask's True positions decide the shape: read them on the host
            out.extend(mx.array(a.astype(np.int32)) for a in np.nonzero(np.array(m)))
        elif isinstance(it, _Arr):
            if it.dtype in (mx.float16, mx.float32, mx.float64):
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
            if it.size:
                checks.append((it, shape[ax], ax))
            out.append(it)
        else:
            out.append(it)
    if checks:
        _check_bounds(checks)
    return tuple(out), False


def _check_bounds(checks: list) -> None:
    bad = None
    for a, n, _ in checks:
        b = mx.any((a < -n) | (a >= n))
        bad = b if bad is None else (bad | b)
    if bad.item():  # one boolean read back (MLX does not check gather bounds)
        for a, n, ax in checks:
            v = np.array(a)
            wrong = v[(v < -n) | (v >= n)]
            if wrong.size:
                raise IndexError(f"index {int(wrong.flat[0])} is out of bounds for axis {ax} "
                                 f"with size {n}")


def getitem(x: Any, idx: Any) -> Any:
    items, host = convert(x, idx)
    if host:
        return _host_getitem(x, idx)
    return x[items if len(items) != 1 else items[0]]


def _host_getitem(x: Any, idx: Any) -> Any:
    hidx = tuple(np.array(i) if isinstance(i, _Arr) else i for i in _items(idx))
    r = to_host(x)[hidx]
    return mx.array(np.ascontiguousarray(r), dtype=x.dtype)


def _value(x: Any, v: Any) -> Any:
    if isinstance(v, _Arr):
        return v if v.dtype == x.dtype else v.astype(x.dtype)
    return mx.array(v, dtype=x.dtype)


def setitem(x: Any, idx: Any, v: Any) -> Any:
    """``x[idx] = v`` (MLX updates the array object; the same object is returned)."""
    items = _items(idx)
    v = _value(x, v)
    if len(items) == 1 and _is_mask(items[0]) and tuple(items[0].shape) == tuple(x.shape) \
            and v.size == 1:
        x[...] = mx.where(items[0], mx.reshape(v, ()), x)  # no host trip for x[mask] = c
        return x
    conv, host = convert(x, idx)
    if x.size == 0:  # nothing to write (MLX's scatter into an empty array dies with SIGFPE)
        return x
    if host:
        hx = to_host(x)
        hidx = tuple(np.array(i) if isinstance(i, _Arr) else i for i in items)
        hx[hidx] = to_host(v)
        x[...] = mx.array(hx, dtype=x.dtype)
        return x
    x[conv if len(conv) != 1 else conv[0]] = v
    return x


def index_add(shape: tuple[int, ...], idx: Any, g: Any) -> Any:
    """zeros(shape) with ``g`` scatter-added at ``idx`` (repeated indices accumulate)."""
    out = mx.zeros(tuple(shape), g.dtype)
    if g.size == 0:
        return out
    conv, host = convert(out, idx)
    if host:
        hg = to_host(g)
        hout = np.zeros(tuple(shape), hg.dtype)
        hidx = tuple(np.array(i) if isinstance(i, _Arr) else i for i in _items(idx))
        np.add.at(hout, hidx, hg)
        return mx.array(hout, dtype=g.dtype)
    return out.at[conv if len(conv) != 1 else conv[0]].add(g)
