"""Pointwise activations without a fast numpy path, forward and backward, one pass each
(and float32 exp, log, log1p and expm1).

numpy builds SiLU, Mish, softplus, ELU, hardswish, ... as a chain of where/compare/exp/log1p
calls with a temporary per step, and its float32 transcendentals are slow here (exp of 512k
elements 1.3 ms, log1p and expm1 10.5 ms). These kernels run the whole function per element
on ``_vmath``'s vectorised exp/log1p, float32 and float64, serial or parallel by size.

Measured, float32, 16x64x512 (524k), ``nn.functional`` forward + backward, 2 cores, ms,
composed of numpy calls -> these kernels (torch 2.13 in its own process, same minutes):

    silu 15.0 -> 0.87 (1.04)       mish 45.4 -> 1.00 (5.5)       softplus 15.2 -> 0.93 (1.86)
    elu 18.3 -> 0.77 (1.61)        selu 14.9 -> 0.76 (1.61)      logsigmoid 20.2 -> 0.81 (1.70)
    hardswish 4.2 -> 0.31 (0.42)   hardsigmoid 2.6 -> 0.30 (0.34)  hardtanh 3.6 -> 0.29 (0.42)
    sigmoid 6.4 -> 0.67 (0.75)     tanh 2.2 -> 0.69 (1.69)
    (sigmoid and tanh: the forward here, the backward from the output as before)

float32 ``exp``, ``log``, ``log1p`` and ``expm1`` (forward; their gradients are products and
quotients) use the whole-range ``_vmath`` bodies: ``lucid.exp`` forward + backward at that
size 1.57 -> 0.58 ms (torch 0.65); log1p and expm1 forward 4.8-5.2 -> 0.5-0.6 ms.

Each function is a forward kernel of its own, (x, out, a, b, c) with up to three parameters,
and those in ``GRADS`` a backward kernel (x, g, out, a, b, c), so a model compiles only what
it uses (about 1 s per parallel build; one kernel switching over ten functions took 7 s).
NaN and infinities give torch's results (tests/kernels/test_pointwise.py): the cut-off tests
are written so NaN takes the pass-through branch, as torch's kernels do.
"""

from __future__ import annotations

import numpy as np
from numba import prange
from numba.core import types as nbt

from ._jit import dual, helper
from ._threads import use_parallel
from ._vmath import exp_full, expm1, expm1_full, fast_exp, log1p_near, sigm, wide
from ._vmath import log as vlog
from ._vmath import log1p as vlog1p
from ._vmath import tanh as vtanh

__all__ = ["KINDS", "GRADS", "forward", "backward"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

# name -> number of parameters: softplus (beta, threshold), elu (alpha, scale, 1 / input
# scale: elu, selu and celu), hardtanh (min, max)
KINDS: dict[str, int] = {
    "sigmoid": 0, "tanh": 0, "silu": 0, "mish": 0, "softplus": 2, "logsigmoid": 0, "elu": 3,
    "hardswish": 0, "hardsigmoid": 0, "hardtanh": 2, "exp": 0, "log": 0, "log1p": 0,
    "expm1": 0,
}


def _sigmoid(x, out, a, b, c):
    for i in prange(x.shape[0]):
        wide()
        out[i] = sigm(x[i])


def _tanh(x, out, a, b, c):
    for i in prange(x.shape[0]):
        wide()
        out[i] = vtanh(x[i])


def _exp(x, out, a, b, c):
    for i in prange(x.shape[0]):
        wide()
        out[i] = exp_full(x[i])


def _log(x, out, a, b, c):
    for i in prange(x.shape[0]):
        wide()
        out[i] = vlog(x[i])


def _log1p(x, out, a, b, c):
    for i in prange(x.shape[0]):
        wide()
        out[i] = vlog1p(x[i])


def _expm1(x, out, a, b, c):
    for i in prange(x.shape[0]):
        wide()
        out[i] = expm1_full(x[i])


def _silu(x, out, a, b, c):
    for i in prange(x.shape[0]):
        wide()
        v = x[i]
        out[i] = v * sigm(v)


@helper
def _tanh_softplus(v, two, cap):
    """tanh(softplus(v)) = e (e + 2) / (e (e + 2) + 2), e = exp(v) clamped at v = cap = 20
    (where it rounds to 1)."""
    e = fast_exp(v if v < cap else cap)
    m = e * (e + two)
    return m / (m + two)


def _mish(x, out, a, b, c):
    two, cap = x.dtype.type(2), x.dtype.type(20)
    for i in prange(x.shape[0]):
        wide()
        v = x[i]
        out[i] = v * _tanh_softplus(v, two, cap)


def _mish_grad(x, g, out, a, b, c):
    """g * (t + v sigmoid(v) (1 - t^2)), t = tanh(softplus(v)); 1 - t^2 is exactly 0 where t
    rounds to 1, so +inf gives inf * 0 = NaN, as torch."""
    one, two, cap = x.dtype.type(1), x.dtype.type(2), x.dtype.type(20)
    for i in prange(x.shape[0]):
        wide()
        v = x[i]
        t = _tanh_softplus(v, two, cap)
        out[i] = g[i] * (t + v * sigm(v) * (one - t * t))


def _silu_grad(x, g, out, a, b, c):
    one = x.dtype.type(1)
    for i in prange(x.shape[0]):
        wide()
        v = x[i]
        s = sigm(v)
        out[i] = g[i] * (s * (one + v * (one - s)))


def _softplus(x, out, a, b, c):
    """x where beta x > threshold, else (max(z, 0) + log1p(exp(-|z|))) / beta, z = beta x."""
    beta, th, zero = x.dtype.type(a), x.dtype.type(b), x.dtype.type(0)
    for i in prange(x.shape[0]):
        wide()
        v = x[i]
        z = v * beta
        sp = (z if z > zero else zero) + log1p_near(fast_exp(-abs(z)))
        out[i] = v if z > th else sp / beta


def _softplus_grad(x, g, out, a, b, c):
    beta, th = x.dtype.type(a), x.dtype.type(b)
    for i in prange(x.shape[0]):
        wide()
        z = x[i] * beta
        out[i] = g[i] if z > th else g[i] * sigm(z)


def _logsigmoid(x, out, a, b, c):
    zero = x.dtype.type(0)
    for i in prange(x.shape[0]):
        wide()
        v = x[i]
        out[i] = (v if v < zero else zero) - log1p_near(fast_exp(-abs(v)))


def _logsigmoid_grad(x, g, out, a, b, c):
    for i in prange(x.shape[0]):
        wide()
        out[i] = g[i] * sigm(-x[i])


def _elu(x, out, a, b, c):
    """scale * (alpha * expm1(x * iscale) where x <= 0, else x); (a, b, c) = (alpha, scale,
    iscale)."""
    alpha, scale, iscale, zero = x.dtype.type(a), x.dtype.type(b), x.dtype.type(c), \
        x.dtype.type(0)
    for i in prange(x.shape[0]):
        wide()
        v = x[i]
        out[i] = (alpha * expm1(v * iscale) if v <= zero else v) * scale


def _elu_grad(x, g, out, a, b, c):
    scale, iscale, zero = x.dtype.type(b), x.dtype.type(c), x.dtype.type(0)
    k = x.dtype.type(a * b * c)
    for i in prange(x.shape[0]):
        wide()
        v = x[i]
        out[i] = g[i] * (k * fast_exp(v * iscale) if v <= zero else scale)


@helper
def _clip6(t, zero, six):
    """min(max(t, 0), 6), NaN kept."""
    t = zero if t < zero else t
    return six if t > six else t


def _hardswish(x, out, a, b, c):
    zero, three, six = x.dtype.type(0), x.dtype.type(3), x.dtype.type(6)
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = v * _clip6(v + three, zero, six) / six


def _hardswish_grad(x, g, out, a, b, c):
    zero, three, half = x.dtype.type(0), x.dtype.type(3), x.dtype.type(0.5)
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = zero if v <= -three else (g[i] * (v / three + half) if v < three else g[i])


def _hardsigmoid(x, out, a, b, c):
    zero, three, six = x.dtype.type(0), x.dtype.type(3), x.dtype.type(6)
    for i in prange(x.shape[0]):
        out[i] = _clip6(x[i] + three, zero, six) / six


def _hardsigmoid_grad(x, g, out, a, b, c):
    zero, three, six = x.dtype.type(0), x.dtype.type(3), x.dtype.type(6)
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = g[i] / six if (v > -three) & (v < three) else zero


def _hardtanh(x, out, a, b, c):
    lo, hi = x.dtype.type(a), x.dtype.type(b)
    for i in prange(x.shape[0]):
        v = x[i]
        v = lo if v < lo else v
        out[i] = hi if v > hi else v


def _hardtanh_grad(x, g, out, a, b, c):
    lo, hi, zero = x.dtype.type(a), x.dtype.type(b), x.dtype.type(0)
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = zero if (v <= lo) | (v >= hi) else g[i]


def _sig_fwd(T):
    return (T[::1], T[::1], nbt.float64, nbt.float64, nbt.float64)


def _sig_bwd(T):
    return (T[::1], T[::1], T[::1], nbt.float64, nbt.float64, nbt.float64)


_FWD = {name: dual(globals()["_" + name], signatures=[_sig_fwd]) for name in KINDS}
_BWD = {name: dual(globals()[f"_{name}_grad"], signatures=[_sig_bwd])
        for name in KINDS if name not in ("sigmoid", "tanh", "exp", "log", "log1p", "expm1")}
# the functions whose backward (from the input x) is a kernel here
GRADS = frozenset(_BWD)


def _params(name: str, params: tuple[float, ...]) -> tuple[float, float, float]:
    k = KINDS[name]
    if len(params) != k:
        raise TypeError(f"{name} takes {k} parameters, got {len(params)}")
    p = [float(v) for v in params] + [0.0] * (3 - k)
    return p[0], p[1], p[2]


def _float_array(x: object) -> np.ndarray | None:
    """``x`` as a C-contiguous float32/float64 ndarray (a copy if strided), else None."""
    if type(x) is not np.ndarray or x.dtype not in _FLOATS:
        return None
    return x if x.flags.c_contiguous else np.ascontiguousarray(x)


def forward(name: str, x: np.ndarray, params: tuple[float, ...] = ()) -> np.ndarray | None:
    """``f(x)`` for the activation ``name`` (a key of KINDS) in x's shape and dtype; None for
    inputs other than float32/float64 ndarrays."""
    a, b, c = _params(name, params)
    xc = _float_array(x)
    if xc is None:
        return None
    out = np.empty(xc.shape, xc.dtype)
    ser, par = _FWD[name]
    (par if use_parallel(xc.size, "elementwise") else ser)(xc.ravel(), out.ravel(), a, b, c)
    return out


def backward(name: str, x: np.ndarray, g: np.ndarray, params: tuple[float, ...] = ()
             ) -> np.ndarray | None:
    """``g * f'(x)`` for the activation ``name`` (one of GRADS); None unless x and g are
    float32/float64 ndarrays of one shape and dtype."""
    a, b, c = _params(name, params)
    if name not in GRADS:
        raise ValueError(f"no input-side gradient kernel for {name}")
    xc, gc = _float_array(x), _float_array(g)
    if xc is None or gc is None or xc.dtype != gc.dtype or xc.shape != gc.shape:
        return None
    out = np.empty(xc.shape, xc.dtype)
    ser, par = _BWD[name]
    (par if use_parallel(xc.size, "elementwise") else ser)(xc.ravel(), gc.ravel(),
                                                            out.ravel(), a, b, c)
    return out
