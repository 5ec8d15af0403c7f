"""Fused elementwise kernels: one pass over memory instead of numpy's chain of temporaries.

Measured, float32, contiguous, microseconds (numpy written with the fewest temporaries;
"naive" is the textbook expression; serial/parallel numba builds; torch for reference):

    op                  n      numpy  naive  serial  parallel  torch
    sigmoid_backward    1k       1.2    1.4     0.8       2.8    2.3
    (g*y*(1-y))         64k     21.4   30.7    13.2       9.0   10.1
                        1M     929   1085     461       249     263
    relu_backward       1k       2.8    1.5     0.6       2.3    2.2
    (g*(x>0))           64k    253     27.0     8.6       6.7    8.6
                        1M    4147    590     442       244     267
    relu                1k       0.9     -      0.6       2.3    1.0
                        1M     295      -     283       167     173
    sigmoid             1k       2.5     -      3.6       4.4    1.5
    (1/(1+exp(-x)))     1M    1311      -    3040      1583     274

The fused backward kernels and relu win at every size, so they are always used for float32
and float64 inputs of one shape and dtype, both C-contiguous; any other input (broadcasting,
mixed dtypes, strided views, integers) takes the numpy expression with numpy's result.
The sigmoid row is a plain loop calling a scalar ``expf`` (no SVML); the forward sigmoid now
runs on ``_vmath``'s vectorised exp in kernels/pointwise.py (0.17 ms at 512k elements).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import prange
from numba.core import types as nbt

from ._jit import FASTMATH, dual, kernel
from ._threads import use_parallel

__all__ = ["add", "add_row", "binary", "copy_into", "div", "mul", "power", "relu",
           "relu_backward", "scale_", "sigmoid_backward", "sub", "tanh_backward"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _sig2(T):
    return (T[::1], T[::1], T[::1])


def _sig1(T):
    return (T[::1], T[::1])


def _sigmoid_backward(y, g, out):
    """out = g * y * (1 - y)

    for i in prange(n):
        out[i] = g[i] * y[i] * (1 - y[i])
    """
    one = y.dtype.type(1)
    for i in prange(y.shape[0]):
        v = y[i]
        out[i] = g[i] * v * (one - v)


def _tanh_backward(y, g, out):
    """out = g * (1 - y * y)

    for i in prange(n):
        out[i] = g[i] * (1 - y[i] * y[i])
    """
    one = y.dtype.type(1)
    for i in prange(y.shape[0]):
        v = y[i]
        out[i] = g[i] * (one - v * v)


def _relu_backward(x, g, out):
    """out = 0 where x <= 0 else g   (a NaN x passes g, like torch's threshold_backward)

    for i in prange(n):
        out[i] = 0 if x[i] <= 0 else g[i]
    """
    zero = g.dtype.type(0)
    for i in prange(x.shape[0]):
        out[i] = zero if x[i] <= 0 else g[i]


def _relu(x, out):
    """out = max(x, 0), NaN kept (torch.relu)

    for i in prange(n):
        out[i] = x[i] if (x[i] > 0) | (x[i] != x[i]) else 0
    """
    zero = x.dtype.type(0)
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = v if (v > 0) | (v != v) else zero


def _add(a, b, out):
    """out = a + b   (out may be a: in place)"""
    for i in prange(a.shape[0]):
        out[i] = a[i] + b[i]


def _sub(a, b, out):
    """out = a - b"""
    for i in prange(a.shape[0]):
        out[i] = a[i] - b[i]


def _mul(a, b, out):
    """out = a * b"""
    for i in prange(a.shape[0]):
        out[i] = a[i] * b[i]


def _add_row(out, row):
    """out[i, :] += row   (a linear layer's bias onto its product)"""
    for i in prange(out.shape[0]):
        o = out[i]
        for j in range(o.shape[0]):
            o[j] += row[j]


def _axpc(a, m, c, out):
    """out = a * m + c, m and c rounded to a's dtype first (numpy's and torch's way with a
    Python scalar): a * m with c = -0.0, a + c with m = 1, c - a with m = -1; each rounds
    once, as the single operation does

    for i in prange(n):
        out[i] = a[i] * m + c
    """
    mm, cc = a.dtype.type(m), a.dtype.type(c)
    for i in prange(a.shape[0]):
        out[i] = a[i] * mm + cc


def _powi(x, n, out):
    """out = x ** n for n in (2, 3, -1, -2), as torch computes these powers: x * x,
    x * x * x, 1 / x, 1 / (x * x)

    for i in prange(n):
        out[i] = x[i] ** n
    """
    one = x.dtype.type(1)
    for i in prange(x.shape[0]):
        v = x[i]
        s = v * v
        if n == 2:
            out[i] = s
        elif n == 3:
            out[i] = s * v
        elif n == -1:
            out[i] = one / v
        else:
            out[i] = one / s


def _div(a, b, out):
    """out = a / b

    for i in prange(n):
        out[i] = a[i] / b[i]
    """
    for i in prange(a.shape[0]):
        out[i] = a[i] / b[i]


def _div_scalar(a, c, over, out):
    """out = a / c, or c / a when ``over``, c rounded to a's dtype first

    for i in prange(n):
        out[i] = c / a[i] if over else a[i] / c
    """
    cc = a.dtype.type(c)
    if over:
        for i in prange(a.shape[0]):
            out[i] = cc / a[i]
    else:
        for i in prange(a.shape[0]):
            out[i] = a[i] / cc


def _sig_div_scalar(T):
    return (T[::1], nbt.float64, nbt.boolean, T[::1])


def _sig_axpc(T):
    return (T[::1], nbt.float64, nbt.float64, T[::1])


def _sig_powi(T):
    return (T[::1], nbt.int64, T[::1])


def _scale(a, c):
    """a *= c in place, c rounded to a's dtype first (as numpy takes a Python float)"""
    cc = a.dtype.type(c)
    for i in prange(a.shape[0]):
        a[i] *= cc


def _sig_scale(T):
    return (T[::1], nbt.float64)


def _copy_rows(dst, src):
    """dst[i, :] = src[i, :]   (dst rows strided: a slice of a wider buffer)"""
    for i in prange(src.shape[0]):
        d, r = dst[i], src[i]
        for j in range(r.shape[0]):
            d[j] = r[j]


def _sig_copy(T):
    return (T[:, :], T[:, ::1])


def _sig_copy_whole(T):  # a destination of whole rows (``x[i] = v``, a plane of x)
    return (T[:, ::1], T[:, ::1])


def _sig_row(T):
    return (T[:, ::1], T[::1])


_SIGB = dual(_sigmoid_backward, signatures=[_sig2])
_TANHB = dual(_tanh_backward, signatures=[_sig2])
_RELUB = dual(_relu_backward, signatures=[_sig2])
_RELU = dual(_relu, signatures=[_sig1])
_ADD = dual(_add, signatures=[_sig2])
_SUB = dual(_sub, signatures=[_sig2])
_MUL = dual(_mul, signatures=[_sig2])

# Same-shape arithmetic goes to the parallel kernels from this many elements. In a training
# step the operands come from memory, not cache: nanoGPT's residual adds (1024 x 128 float32)
# took ~100 us in numpy's one thread there, against 13 us on hot operands; a 2 MB add, cold,
# numpy 239 us / parallel kernel 107 us. Below it numpy's own loop is as fast.
BINARY_MIN = 1 << 16
_ROW = dual(_add_row, signatures=[_sig_row])
_SCALE = dual(_scale, signatures=[_sig_scale])
_AXPC = dual(_axpc, signatures=[_sig_axpc])
# divisions without ``arcp``: with it LLVM turns a / c into a * (1 / c), one more rounding
_EXACT = FASTMATH - {"arcp"}
_DIV = (kernel(_div, name="elementwise._div", signatures=[_sig2], fastmath=_EXACT),
        kernel(_div, name="elementwise._div[par]", parallel=True, signatures=[_sig2],
               fastmath=_EXACT))
_DIV_SCALAR = kernel(_div_scalar, name="elementwise._div_scalar[par]", parallel=True,
                     signatures=[_sig_div_scalar], fastmath=_EXACT)
_BINARY = {"add": _ADD, "sub": _SUB, "mul": _MUL, "div": _DIV}
_POWI = dual(_powi, signatures=[_sig_powi])
_COPY = dual(_copy_rows, signatures=[_sig_copy, _sig_copy_whole])


def _fused(pair: tuple, a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None,
           par_from: int | None = None) -> np.ndarray | None:
    """Run a same-shape, same-dtype, C-contiguous float pair through its kernel (into
    ``out``, which may be ``a``), else None. With ``par_from``: smaller pairs are left to the
    caller (None) and the rest run the parallel build; without it the parallel build runs
    from the elementwise threshold."""
    if (
        (par_from is not None and a.size < par_from)  # first: the small operands' fast exit
        or a.dtype not in _FLOATS
        or a.dtype != b.dtype
        or a.shape != b.shape
        or not (a.flags.c_contiguous and b.flags.c_contiguous)
        or not (a.flags.writeable and b.flags.writeable)  # read-only: an unwarmed signature
    ):
        return None
    if out is None:
        out = np.empty_like(a)
    ser, par = pair
    big = use_parallel(a.size, "elementwise") if par_from is None else True
    (par if big else ser)(a.reshape(-1), b.reshape(-1), out.reshape(-1))
    return out


def _arr(x: np.ndarray) -> np.ndarray:
    return x if type(x) is np.ndarray else np.asarray(x)


def sigmoid_backward(y: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Gradient of sigmoid from its output ``y`` and the incoming gradient ``g``: g*y*(1-y)."""
    y, g = _arr(y), _arr(g)
    out = _fused(_SIGB, y, g)
    if out is None:
        out = (1 - y) * y * g
    return out


def tanh_backward(y: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Gradient of tanh from its output ``y`` and the incoming gradient ``g``: g*(1-y*y)."""
    y, g = _arr(y), _arr(g)
    out = _fused(_TANHB, y, g)
    if out is None:
        out = g * (1 - y * y)
    return out


def relu_backward(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Gradient of relu: ``g`` where ``x`` > 0 or NaN, else 0 (x = relu's input or output)."""
    x, g = _arr(x), _arr(g)
    out = _fused(_RELUB, x, g)
    if out is None:
        out = g * ~(x <= 0)
    return out


def relu(x: np.ndarray) -> np.ndarray:
    """max(x, 0) with NaN kept, in x's dtype."""
    x = _arr(x)
    if x.dtype in _FLOATS and x.flags.c_contiguous:
        out = np.empty_like(x)
        ser, par = _RELU
        (par if use_parallel(x.size, "elementwise") else ser)(x.ravel(), out.ravel())
        return out
    return np.maximum(x, 0)


def binary(op: str, a: Any, b: Any, out: np.ndarray | None = None) -> np.ndarray | None:
    """``a <op> b`` ("add", "sub", "mul", "div") on both cores for same-shape, same-dtype,
    C-contiguous float arrays of at least ``BINARY_MIN`` elements (into ``out``, which may be
    ``a``); None for anything else (the caller's numpy takes it)."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray:
        return None
    return _fused(_BINARY[op], a, b, out, BINARY_MIN)


def _scalar(x: Any) -> bool:
    """A Python float or int that a float array's dtype takes as numpy does (an int exactly
    representable in float64)."""
    t = type(x)
    return t is float or (t is int and -(1 << 53) <= x <= 1 << 53)


def _with_scalar_ok(x: Any) -> bool:
    """A C-contiguous, writable float array of at least ``BINARY_MIN`` elements: what the
    array-and-scalar kernels (``_axpc``, ``_div_scalar``) take."""
    return type(x) is np.ndarray and x.size >= BINARY_MIN and x.dtype in _FLOATS and \
        x.flags.c_contiguous and x.flags.writeable


def _affine(x: Any, m: float, c: float) -> np.ndarray | None:
    """``x * m + c`` on both cores (``_axpc``) for an array ``_with_scalar_ok`` takes, else
    None. minGPT's tanh GELU is five such scalar ops on a (16, 64, 512) float32 activation:
    numpy's one thread took ~180 us each in a step."""
    if not _with_scalar_ok(x):
        return None
    out = np.empty_like(x)
    _AXPC[1](x.reshape(-1), float(m), float(c), out.reshape(-1))
    return out


def _with_scalar(op: str, a: Any, b: Any) -> np.ndarray | None:
    """``a <op> b`` ("add", "sub", "mul") through ``_affine`` when one side is a Python
    scalar, else None."""
    if _scalar(b):
        x, c, left = a, b, False
    elif _scalar(a):
        x, c, left = b, a, True
    else:
        return None
    if op == "mul":
        return _affine(x, c, -0.0)
    if op == "add":
        return _affine(x, 1.0, c)
    return _affine(x, -1.0, c) if left else _affine(x, 1.0, -c)  # c - x, x - c


def add(a: Any, b: Any) -> Any:
    """numpy's ``a + b``, on both cores where ``binary`` or ``_affine`` takes the operands."""
    out = binary("add", a, b)
    if out is None:
        out = _with_scalar("add", a, b)
    return np.add(a, b) if out is None else out


def sub(a: Any, b: Any) -> Any:
    """numpy's ``a - b``, on both cores where ``binary`` or ``_affine`` takes the operands."""
    out = binary("sub", a, b)
    if out is None:
        out = _with_scalar("sub", a, b)
    return np.subtract(a, b) if out is None else out


def mul(a: Any, b: Any) -> Any:
    """numpy's ``a * b``, on both cores where ``binary`` or ``_affine`` takes the operands."""
    out = binary("mul", a, b)
    if out is None:
        out = _with_scalar("mul", a, b)
    return np.multiply(a, b) if out is None else out


def div(a: Any, b: Any) -> Any:
    """numpy's ``a / b``, on both cores for same-shape C-contiguous float arrays (``binary``)
    and for such an array over or under a Python scalar (``_div_scalar``), from
    ``BINARY_MIN`` elements: each quotient rounded once, as numpy's."""
    out = binary("div", a, b)
    if out is None:
        x, c, over = (a, b, False) if _scalar(b) else (b, a, True)
        if _scalar(c) and _with_scalar_ok(x):
            out = np.empty_like(x)
            _DIV_SCALAR(x.reshape(-1), float(c), over, out.reshape(-1))
    return np.true_divide(a, b) if out is None else out


def power(x: Any, e: Any) -> np.ndarray | None:
    """``x ** e`` for a float32/float64 array and a Python scalar exponent 2, 3, -1 or -2,
    as torch computes these powers: products and a reciprocal (``_powi``, on both cores from
    the elementwise threshold); None for anything else (numpy's ``power`` then, whose 0.5 is
    already sqrt). numpy's float32 ``power`` by 3.0 runs libm's ``powf`` per element: 16 ms
    on (16, 64, 512) in a step, where x * x * x takes ~0.1 ms."""
    if type(x) is not np.ndarray or x.dtype not in _FLOATS or not _scalar(e) or \
            e not in (2, 3, -1, -2):
        return None
    # a read-only array would compile an unwarmed signature: a copy instead
    src = x if x.flags.c_contiguous and x.flags.writeable else np.array(x, order="C")
    out = np.empty_like(src)
    ser, par = _POWI
    (par if use_parallel(src.size, "elementwise") else ser)(src.reshape(-1), int(e),
                                                            out.reshape(-1))
    return out


def add_row(out: np.ndarray, row: np.ndarray) -> bool:
    """``out += row`` in place for a C-contiguous float matrix ``out`` (m, n) and a row of n
    of its dtype (1-D, or (1, n)); False, with nothing done, for any other pair.

    A linear layer's bias goes onto its fresh product this way, while the product is still in
    cache: nanoGPT's four layer products with their bias, per step, 8.1 -> 6.6 ms against
    copying the bias into the output first and letting BLAS add the product onto it."""
    if (type(row) is not np.ndarray or out.ndim != 2 or row.dtype != out.dtype
            or out.dtype not in _FLOATS or row.size != out.shape[1]
            or row.ndim not in (1, 2) or (row.ndim == 2 and row.shape[0] != 1)
            or not out.flags.c_contiguous):
        return False
    if row.ndim == 2 or not row.flags.c_contiguous:
        row = np.ascontiguousarray(row).reshape(-1)
    _ROW[1 if out.size >= BINARY_MIN else 0](out, row)
    return True


def scale_(a: Any, c: Any) -> bool:
    """``a *= c`` in place on both cores for a C-contiguous float array of at least
    ``BINARY_MIN`` elements and a Python float ``c`` (gradient clipping's scale: the word
    LM's 4.7M gradients 1.3 ms in numpy's one thread); False, with nothing done, otherwise."""
    if (type(a) is not np.ndarray or type(c) is not float or a.size < BINARY_MIN
            or a.dtype not in _FLOATS or not a.flags.c_contiguous or not a.flags.writeable):
        return False
    _SCALE[1](a.reshape(-1), c)
    return True


def _rows(a: np.ndarray) -> np.ndarray | None:
    """``a`` as a 2-D (rows, last axis) view when its last axis has unit stride and its other
    axes merge into one, else None."""
    if a.ndim < 2 or a.strides[-1] != a.itemsize:
        return None
    for i in range(a.ndim - 2):
        if a.strides[i] != a.shape[i + 1] * a.strides[i + 1]:
            return None
    return np.lib.stride_tricks.as_strided(a, (a.size // a.shape[-1], a.shape[-1]),
                                           (a.strides[-2], a.itemsize))


def copy_into(x: Any, idx: Any, v: Any) -> bool:
    """``x[idx] = v`` on both cores when ``x[idx]`` is a view of rows (a slice of a wider
    buffer: the q, k, v split's gradients written into the projection's) and ``v`` a
    C-contiguous float array of its shape, dtype and at least ``BINARY_MIN`` elements; False,
    with nothing done, otherwise. Writing into fresh, uncached memory, one thread's bandwidth
    is the limit: nanoGPT's 1024 x 128 slices of a 1024 x 384 gradient ~90 us each."""
    if (type(v) is not np.ndarray or type(x) is not np.ndarray or v.size < BINARY_MIN
            or v.dtype not in _FLOATS or not v.flags.c_contiguous or not x.flags.writeable):
        return False
    parts = idx if type(idx) is tuple else (idx,)
    if not all(type(i) in (slice, int) or i is None or i is Ellipsis for i in parts):
        return False  # an advanced index would gather a copy first
    try:
        dst = x[idx]
    except (IndexError, TypeError, ValueError):
        return False
    if type(dst) is not np.ndarray or dst.shape != v.shape or dst.dtype != v.dtype or \
            not np.may_share_memory(dst, x):
        return False
    d2 = _rows(dst)
    if d2 is None:
        return False
    _COPY[1](d2, v.reshape(d2.shape))
    return True
