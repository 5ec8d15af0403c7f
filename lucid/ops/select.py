"""Selection and comparison: ``clamp``, ``where``, ``masked_fill``, comparisons, logic and
bit ops, ``isnan``/``isinf``/``isfinite`` (comparisons carry no gradient)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _make
from ..autograd.function import Op, _device_mismatch
from ._util import broadcast_error, cast, coerce, shape_of, sum_to, wrap
from .creation import tensor
from .index import nonzero
from .shape import contiguous

# ---- clamp, where, cast -----------------------------------------------------------------------


class Clamp(Op):
    def forward(self, x, lo, hi):
        be = self.be
        self.saved = (x, lo, hi)
        y = x
        if lo is not None:
            y = be.maximum(y, lo)
        if hi is not None:
            y = be.minimum(y, hi)
        return y

    def backward(self, g):
        be = self.be
        x, lo, hi = self.saved
        zero = be.zeros_like(g)
        mask = None
        if lo is not None:
            mask = be.ge(x, lo)
        if hi is not None:
            m2 = be.le(x, hi)
            mask = m2 if mask is None else be.logical_and(mask, m2)
        gx = be.where(mask, g, zero)
        # where min > max the output is max, so max gets the gradient (PyTorch)
        glo = ghi = None
        if self.parents[1] is not None:
            below = be.lt(x, lo)
            if hi is not None:
                below = be.logical_and(below, be.lt(lo, hi))
            glo = sum_to(be, be.where(below, g, zero), shape_of(lo))
        if self.parents[2] is not None:
            above = be.gt(x, hi)
            if lo is not None:
                above = be.logical_or(above, be.lt(hi, lo))
            ghi = sum_to(be, be.where(above, g, zero), shape_of(hi))
        return gx, glo, ghi


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Limit values to ``[min, max]``; the gradient flows where the input was inside."""
    if min is None and max is None:
        raise RuntimeError("lucid.clamp: At least one of 'min' or 'max' must not be None")
    x = input
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = None if min is None else (min if isinstance(min, Tensor) else min)
        hi = None if max is None else (max if isinstance(max, Tensor) else max)
        if isinstance(lo, Tensor):
            x, lo = coerce(x, lo)
        if isinstance(hi, Tensor):
            x, hi = coerce(x, hi)
        try:
            return Clamp.apply(x, lo, hi)
        except ValueError:
            err = broadcast_error(x, lo) or broadcast_error(x, hi) or broadcast_error(lo, hi)
            if err is not None:
                raise err from None
            raise
    if not x.dtype.is_floating_point and (isinstance(min, float) or isinstance(max, float)):
        x = cast(x, _dtype.get_default_dtype())
    return Clamp.apply(x, min, max)


clip = clamp


class Where(Op):
    def forward(self, cond, a, b):
        self.saved = (cond,)
        self.sa, self.sb = shape_of(a), shape_of(b)
        return self.be.where(cond, a, b)

    def backward(self, g):
        be = self.be
        (cond,) = self.saved
        zero = be.zeros_like(g)
        ga = sum_to(be, be.where(cond, g, zero), self.sa) if self.parents[1] is not None else None
        gb = sum_to(be, be.where(cond, zero, g), self.sb) if self.parents[2] is not None else None
        return None, ga, gb


_HALF = (_dtype.float16, _dtype.bfloat16)


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """Pick ``input`` where ``condition`` holds, else ``other``; one-argument form is
    ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if condition.dtype is not _dtype.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                           f"tensor with dtype {_dtype.torch_name(condition.dtype)}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = tensor(input, dtype=_dtype.result_type(input, other), device=condition.device)
    a, b = coerce(input, other)
    if not isinstance(a, Tensor) and b.dtype in _HALF:
        a = b._be.full((), a, b.dtype)  # numpy would widen a half dtype beside a Python float
    elif not isinstance(b, Tensor) and a.dtype in _HALF:
        b = a._be.full((), b, a.dtype)
    try:
        return Where.apply(condition, a, b)
    except ValueError:
        err = broadcast_error(condition, a) or broadcast_error(a, b) or \
            broadcast_error(condition, b)
        if err is not None:
            raise err from None
        raise


def tensor_where(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    """``x.where(condition, other)``: ``x`` where ``condition`` holds, else ``other``
    (torch's method form of ``where(condition, x, other)``)."""
    return where(condition, self, other)


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """``input`` with ``value`` where ``mask`` is True (mask broadcasts)."""
    if mask.dtype is not _dtype.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_dtype.c10_name(mask.dtype)}")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(
                f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)."
            )
        value = cast(value, input.dtype)
    elif input.dtype is _dtype.bool_:
        value = bool(value)
    elif not input.dtype.is_floating_point:
        # PyTorch converts the value to the tensor's integer type (2.7 -> 2)
        info = np.iinfo(input.dtype.np)
        try:
            v = int(value)
        except (ValueError, OverflowError):
            v = None
        if v is None or v < info.min or v > info.max:
            raise RuntimeError(f"value cannot be converted to type {input.dtype.name} without "
                               "overflow")
        value = v
    out = where(mask, value, input)
    # torch fills a row-major copy; where keeps a transposed input's layout
    return contiguous(out)



def clamp_min(input: Tensor, min: Any) -> Tensor:  # noqa: A002
    return clamp(input, min, None)


def clamp_max(input: Tensor, max: Any) -> Tensor:  # noqa: A002
    return clamp(input, None, max)


# ---- comparisons and logic (no gradient) ------------------------------------------------------


def _compare(fn: str) -> Any:
    def f(input: Any, other: Any) -> Tensor:
        a, b = coerce(input, other)
        t = a if isinstance(a, Tensor) else b
        be = t._be
        ad = a._data if isinstance(a, Tensor) else a
        bd = b._data if isinstance(b, Tensor) else b
        if isinstance(a, Tensor) and isinstance(b, Tensor) and a._be is not b._be:
            _device_mismatch(a._be, b._be)
        try:
            return wrap(getattr(be, fn)(ad, bd), be)
        except ValueError:
            err = broadcast_error(a, b)
            if err is not None:
                raise err from None
            raise

    f.__name__ = fn
    return f


eq = _compare("eq")
ne = not_equal = _compare("ne")
lt = less = _compare("lt")
le = less_equal = _compare("le")
gt = greater = _compare("gt")
ge = greater_equal = _compare("ge")
logical_and = _compare("logical_and")
logical_or = _compare("logical_or")
logical_xor = _compare("logical_xor")


def _bitwise(fn: str, logical: str) -> Any:
    cmp = _compare(fn)

    def f(input: Any, other: Any) -> Tensor:
        t = input if isinstance(input, Tensor) else other
        if t.dtype.is_floating_point:
            raise TypeError(f"{fn} is only supported for integer and bool tensors, got {t.dtype}")
        return cmp(input, other)

    f.__name__ = fn
    return f


bitwise_and = _bitwise("bitwise_and", "logical_and")
bitwise_or = _bitwise("bitwise_or", "logical_or")
bitwise_xor = _bitwise("bitwise_xor", "logical_xor")


def logical_not(input: Tensor) -> Tensor:
    return wrap(input._be.logical_not(input._data), input._be)


def bitwise_not(input: Tensor) -> Tensor:
    if input.dtype.is_floating_point:
        raise TypeError(f"bitwise_not is only supported for integer and bool tensors, got "
                        f"{input.dtype}")
    return wrap(input._be.bitwise_not(input._data), input._be)


def isnan(input: Tensor) -> Tensor:
    return wrap(input._be.isnan(input._data), input._be)


def isinf(input: Tensor) -> Tensor:
    return wrap(input._be.isinf(input._data), input._be)


def isfinite(input: Tensor) -> Tensor:
    return wrap(input._be.isfinite(input._data), input._be)


# ---- closeness and equality of whole tensors (``lucid.allclose`` & co.) ----------------------


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether all elements satisfy ``|input - other| <= atol + rtol * |other|``."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (equal infinities are close)."""
    a, b = coerce(input, other)
    t = a if isinstance(a, Tensor) else b
    be = t._be  # type: ignore[union-attr]
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a._be is not b._be:
        _device_mismatch(a._be, b._be)
    ad = a._data if isinstance(a, Tensor) else a
    bd = b._data if isinstance(b, Tensor) else b
    if not t.dtype.is_floating_point:  # type: ignore[union-attr]
        f64 = _dtype.float64
        ad, bd = be.astype(be.asarray(ad), f64), be.astype(be.asarray(bd), f64)
    finite = be.logical_and(be.isfinite(ad), be.isfinite(bd))
    af, bf = be.where(finite, ad, 0), be.where(finite, bd, 0)  # no inf - inf
    near = be.le(be.abs(be.sub(af, bf)), be.add(be.mul(be.abs(bf), rtol), atol))
    out = be.where(finite, near, be.eq(ad, bd))
    if equal_nan:
        out = be.logical_or(out, be.logical_and(be.isnan(ad), be.isnan(bd)))
    shape = np.broadcast_shapes(tuple(getattr(input, "shape", ())),
                                tuple(getattr(other, "shape", ())))
    return _make(be.broadcast_to(out, tuple(shape)), be, False, None)


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both tensors have the same shape and elements."""
    return tuple(input.shape) == tuple(other.shape) and bool((input == other).all())


def _shift(name: str, left: bool) -> Any:
    def f(input: Any, other: Any) -> Tensor:
        t = input if isinstance(input, Tensor) else other
        d = _dtype.result_type(input, other)
        if d.is_floating_point or d.is_complex or d is _dtype.bool_:
            raise RuntimeError(f"\"{'lshift' if left else 'rshift'}_cpu\" not implemented for "
                               f"'{_dtype.torch_name(d)}'")
        err = broadcast_error(input, other) if isinstance(input, Tensor) and \
            isinstance(other, Tensor) else None
        if err is not None:
            raise err
        be = t._be
        a = np.asarray(be.to_numpy(input._data) if isinstance(input, Tensor) else input, d.np)
        b = np.asarray(be.to_numpy(other._data) if isinstance(other, Tensor) else other, d.np)
        bits = a.dtype.itemsize * 8
        out_of_range = (b < 0) | (b >= bits)
        safe = np.where(out_of_range, 0, b)
        if left:
            out = np.where(out_of_range, 0, np.left_shift(a, safe))
        else:  # an arithmetic shift: past the width, the sign fills every bit
            out = np.where(out_of_range, np.right_shift(a, bits - 1) if a.dtype.kind == "i"
                           else 0, np.right_shift(a, safe))
        return wrap(be.from_numpy(np.ascontiguousarray(out, d.np)), be)

    f.__name__ = name
    f.__doc__ = (f"``input {'<<' if left else '>>'} other`` elementwise on integers, with "
                 "broadcasting; a shift by a negative amount or by the width or more gives "
                 f"{'0' if left else '0 (-1 for a negative signed value)'}, as torch.")
    return f


bitwise_left_shift = _shift("bitwise_left_shift", True)
bitwise_right_shift = _shift("bitwise_right_shift", False)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``nonzero(input)`` with exactly ``size`` rows: cut to the first ``size`` or padded with
    rows of ``fill_value`` (int64, shape ``(size, input.ndim)``).

    Example::

        lucid.nonzero_static(lucid.tensor([0, 3, 0, 5]), size=3)   # [[1], [3], [-1]]
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size}")
    idx = np.asarray(input._be.to_numpy(nonzero(input)._data))[:size]
    pad = np.full((size - idx.shape[0], max(input.ndim, 0)), fill_value, np.int64)
    out = np.concatenate([idx.reshape(-1, input.ndim), pad], 0) if input.ndim else \
        np.zeros((size, 0), np.int64)
    return wrap(input._be.from_numpy(np.ascontiguousarray(out, np.int64)), input._be)


__all__ = [
    "bitwise_left_shift", "bitwise_right_shift", "nonzero_static",
    "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "clamp", "clamp_max", "clamp_min",
    "clip", "eq", "ge", "greater", "greater_equal", "gt", "isfinite", "isinf", "isnan", "le",
    "less", "less_equal", "logical_and", "logical_not", "logical_or", "logical_xor", "lt",
    "masked_fill", "ne", "not_equal", "where"
]
