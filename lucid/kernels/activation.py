"""Fused activation kernels without a fast numpy path: GELU (exact and tanh) and leaky ReLU,
forward and backward, one pass over memory (numpy's where/compare/multiply chain makes three
passes and two temporaries).

Measured, float32, 16x64x512 (a small GPT's MLP activation), 2 busy cores, milliseconds:

    exact gelu forward     numpy + scipy erf 14.2-16.8   numba with libm erff 11.3-16.0
                           numba, erf by Abramowitz-Stegun 7.1.26 (below), libm expf 1.6
                           the same with ``_vmath.fast_exp`` 0.35 (backward 0.37)
    tanh gelu forward      numba, libm tanhf 8.0          ``_vmath.sigm`` 0.36 (backward 0.36)

libm's ``erff`` is a scalar call per element, so float32 uses A&S 7.1.26
(``erf(z) = 1 - poly(t) exp(-z^2)``, ``t = 1 / (1 + p z)``, |error| <= 1.5e-7, under
float32's resolution of the result), which vectorises with ``_vmath``'s exp; its
``exp(-x^2/2)`` is the normal density the backward needs too. float64 keeps ``math.erf``
(full precision for gradchecks); the tanh form is computed as ``x * sigmoid(2 y)``
(``_vmath``, ~1 ulp), exact to the last bits where tanh(y) would round to -1.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange
from numba.core import types as nb

from ._jit import dual, helper
from ._threads import use_parallel
from ._vmath import fast_exp, sigm, wide

__all__ = ["gelu", "gelu_backward", "leaky_relu", "leaky_relu_backward"]

_SQRT1_2 = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327
_K0 = 0.7978845608028654  # sqrt(2 / pi)
_K1 = 0.044715


def _sig2(T):
    return (T[::1], T[::1])


def _sig3(T):
    return (T[::1], T[::1], T[::1])


@helper
def _cdf32(v):
    """(Phi(v), exp(-v^2/2)) for float32 v, Phi by A&S 7.1.26:
    z = |v| / sqrt(2); t = 1 / (1 + p z); erf(z) = 1 - poly(t) exp(-z^2), sign of v."""
    one, half = np.float32(1.0), np.float32(0.5)
    z = abs(v) * np.float32(_SQRT1_2)
    t = one / (one + np.float32(0.3275911) * z)
    p = ((((np.float32(1.061405429) * t - np.float32(1.453152027)) * t
           + np.float32(1.421413741)) * t - np.float32(0.284496736)) * t
         + np.float32(0.254829592)) * t
    ex = fast_exp(-z * z)
    e = one - p * ex
    return half * (one + (e if v >= 0 else -e)), ex


def _gelu32(x, out):
    """out = x * Phi(x), Phi by A&S 7.1.26 (float32, ``_cdf32``)

    for i in prange(n):
        out[i] = x[i] * Phi(x[i])
    """
    for i in prange(x.shape[0]):
        wide()
        v = x[i]
        out[i] = v * _cdf32(v)[0]


def _gelu32_backward(x, g, out):
    """out = g * (Phi(x) + x * phi(x)), Phi by A&S 7.1.26, phi = exp(-x^2/2) / sqrt(2 pi)

    for i in prange(n):
        cdf, ex = _cdf32(x[i])
        out[i] = g[i] * (cdf + x[i] * ex / sqrt(2 pi))
    """
    for i in prange(x.shape[0]):
        wide()
        v = x[i]
        cdf, ex = _cdf32(v)
        out[i] = g[i] * (cdf + v * ex * np.float32(_INV_SQRT_2PI))


def _gelu64(x, out):
    """out = 0.5 * x * (1 + erf(x / sqrt(2)))   (math.erf, float64)

    for i in prange(n):
        out[i] = 0.5 * x[i] * (1 + erf(x[i] / sqrt(2)))
    """
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = 0.5 * v * (1.0 + math.erf(v * _SQRT1_2))


def _gelu64_backward(x, g, out):
    """out = g * (0.5 * (1 + erf(x / sqrt(2))) + x * exp(-x*x/2) / sqrt(2 pi))

    for i in prange(n):
        out[i] = g[i] * (cdf(x[i]) + x[i] * pdf(x[i]))
    """
    for i in prange(x.shape[0]):
        v = x[i]
        cdf = 0.5 * (1.0 + math.erf(v * _SQRT1_2))
        out[i] = g[i] * (cdf + v * math.exp(-0.5 * v * v) * _INV_SQRT_2PI)


def _gelu_tanh(x, out):
    """out = 0.5 * x * (1 + tanh(y)) = x * sigmoid(2 y),  y = sqrt(2/pi) (x + 0.044715 x^3)

    for i in prange(n):
        out[i] = x[i] * sigmoid(2 y(x[i]))
    (the sigmoid form keeps full relative precision where tanh(y) rounds to -1)
    """
    two = x.dtype.type(2.0)
    k0, k1 = x.dtype.type(_K0), x.dtype.type(_K1)
    for i in prange(x.shape[0]):
        wide()
        v = x[i]
        out[i] = v * sigm(two * k0 * (v + k1 * v * v * v))


def _gelu_tanh_backward(x, g, out):
    """out = g * (s + 2 x s (1 - s) k0 (1 + 3 k1 x^2)),  s = sigmoid(2 y) = (1 + tanh(y)) / 2

    for i in prange(n):
        e = exp(-2 y) (clamped);  s = 1 / (1 + e);  s (1 - s) = e / (1 + e)^2
        out[i] = g[i] * (s + 2 x s (1 - s) k0 (1 + 3 k1 x^2))
    """
    one, two = x.dtype.type(1.0), x.dtype.type(2.0)
    k0, k1 = x.dtype.type(_K0), x.dtype.type(_K1)
    three, lim = x.dtype.type(3.0), x.dtype.type(80.0)
    for i in prange(x.shape[0]):
        wide()
        v = x[i]
        z = min(max(-two * k0 * (v + k1 * v * v * v), -lim), lim)
        e = fast_exp(z)
        s = one / (one + e)
        ds = e / ((one + e) * (one + e))
        out[i] = g[i] * (s + two * v * ds * k0 * (one + three * k1 * v * v))


def _only(t: object, spec: object) -> object:
    """A signature spec pinned to one dtype (for the float32- and float64-only kernels)."""
    return lambda T: spec(t)  # type: ignore[operator]


_GELU = {np.dtype(np.float32): dual(_gelu32, signatures=[_only(nb.float32, _sig2)]),
         np.dtype(np.float64): dual(_gelu64, signatures=[_only(nb.float64, _sig2)])}
_GELU_B = {np.dtype(np.float32): dual(_gelu32_backward, signatures=[_only(nb.float32, _sig3)]),
           np.dtype(np.float64): dual(_gelu64_backward, signatures=[_only(nb.float64, _sig3)])}
_GELU_T = dual(_gelu_tanh, signatures=[_sig2])
_GELU_TB = dual(_gelu_tanh_backward, signatures=[_sig3])


def _leaky(x, out, slope):
    """out = x if x > 0 else slope * x   (NaN stays NaN)

    for i in prange(n):
        out[i] = x[i] if x[i] > 0 else slope * x[i]
    """
    s = x.dtype.type(slope)
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = v if v > 0 else s * v


def _leaky_backward(x, g, out, slope):
    """out = g if x > 0 else slope * g   (torch's leaky_relu_backward: a NaN x takes slope)

    for i in prange(n):
        out[i] = g[i] if x[i] > 0 else slope * g[i]
    """
    s = x.dtype.type(slope)
    for i in prange(x.shape[0]):
        out[i] = g[i] if x[i] > 0 else s * g[i]


def _sig2s(T):
    return (T[::1], T[::1], nb.float64)


def _sig3s(T):
    return (T[::1], T[::1], T[::1], nb.float64)


_LEAKY = dual(_leaky, signatures=[_sig2s])
_LEAKY_B = dual(_leaky_backward, signatures=[_sig3s])


def _ok(*xs: np.ndarray) -> bool:
    a = xs[0]
    return a.dtype in _GELU and all(
        type(x) is np.ndarray and x.dtype == a.dtype and x.shape == a.shape
        and x.flags.c_contiguous for x in xs)


def gelu(x: np.ndarray, approximate: bool) -> np.ndarray | None:
    """GELU of a C-contiguous float32/float64 array (tanh form when ``approximate``), or None
    for any other input (the caller takes the reference)."""
    if not _ok(x):
        return None
    out = np.empty_like(x)
    ser, par = _GELU_T if approximate else _GELU[x.dtype]
    (par if use_parallel(x.size, "elementwise") else ser)(x.ravel(), out.ravel())
    return out


def gelu_backward(x: np.ndarray, g: np.ndarray, approximate: bool) -> np.ndarray | None:
    """``g * gelu'(x)`` for same-shape C-contiguous float32/float64 arrays, else None."""
    if not _ok(x, g):
        return None
    out = np.empty_like(x)
    ser, par = _GELU_TB if approximate else _GELU_B[x.dtype]
    (par if use_parallel(x.size, "elementwise") else ser)(x.ravel(), g.ravel(), out.ravel())
    return out


def leaky_relu(x: np.ndarray, slope: float) -> np.ndarray | None:
    """Leaky ReLU of a C-contiguous float32/float64 array, or None for any other input."""
    if not _ok(x):
        return None
    out = np.empty_like(x)
    ser, par = _LEAKY
    (par if use_parallel(x.size, "elementwise") else ser)(x.ravel(), out.ravel(), float(slope))
    return out


def leaky_relu_backward(x: np.ndarray, g: np.ndarray, slope: float) -> np.ndarray | None:
    """``g`` where ``x > 0``, else ``slope * g`` (same-shape C-contiguous floats), or None."""
    if not _ok(x, g):
        return None
    out = np.empty_like(x)
    ser, par = _LEAKY_B
    (par if use_parallel(x.size, "elementwise") else ser)(x.ravel(), g.ravel(), out.ravel(),
                                                          float(slope))
    return out
