"""Scalar exp, sigmoid and tanh that LLVM vectorises, for the njit kernels' inner loops.

Without SVML numba calls a scalar ``expf``/``exp``/``tanh`` per element (256k float32 exps:
580 us as a loop against 101 us through the polynomial below; numpy 107 us, torch 70 us).
Each function is made by ``_scalar``: an ``overload`` picks its float32 or float64 body at
compile time, so the loops carry no dtype branch; under NUMBA_DISABLE_JIT the Python bodies
run the same math.

    fast_exp   float32: Cephes-style expf (rel. error ~1.2e-7), 2**k applied by one
               ``vscalefps`` where LLVM and the CPU allow (``_exp32_scalef``); float64:
               ``np.exp``
    sigm       1 / (1 + exp(-x)): float32 on fast_exp, float64 on Cephes exp (~1 ulp)
    tanh       Cephes tanhf / tanh: odd polynomial below |x| = 0.625, 1 - 2 / (exp(2x) + 1) above
    log1p_near log(1 + t) for t in [-0.5, 1] (softplus's log1p(exp(-|z|))): float32 by the
               atanh series 2 s (1 + s^2/3 + ... + s^14/15), s = t / (2 + t), |s| <= 1/3 (no
               1 + t formed, so tiny t keep full precision; rel. error ~1e-7); float64
               ``np.log1p``
    expm1      exp(x) - 1: float32 Taylor to x^8 for |x| < 0.5, fast_exp(x) - 1 beyond;
               float64 ``np.expm1``
    exp_full   exp over float32's whole range (fast_exp of x - 1 times e above 88, of x + 20
               times e^-20 below -86, so the largest finite and the subnormal results come
               out as numpy's); float64 ``np.exp``
    log        Cephes logf: x = m 2^e, m in [sqrt(1/2), sqrt(2)), log m by a degree-9
               polynomial (~1 ulp); subnormals scaled by 2^23 first; 0 -> -inf, x < 0 -> NaN;
               float64 ``np.log``
    log1p      float32: log1p_near's series for -0.5 <= x <= 1, log(1 + x) beyond
               (no cancellation there); float64 ``np.log1p``
    expm1_full float32: expm1 with the whole-range exp above 0.5; float64 ``np.expm1``

The bitcasts that build 2**k (``_bits_f32``, ``_bits_f64``) are numba intrinsics, as are
``fmax`` (LLVM's ``maxnum``), the max a row-max loop vectorises over, and ``wide``, which
asks for 512-bit vectors in the loop that calls it.
"""

from __future__ import annotations

import llvmlite.binding as ll
import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils
from numba.core import types as nbt
from numba.extending import intrinsic, overload

from ._jit import FASTMATH, helper

__all__ = ["exp_full", "expm1", "expm1_full", "fast_exp", "fmax", "log", "log1p", "log1p_near",
           "sigm", "tanh", "wide"]

_F32 = np.float32
_LOG2E = _F32(1.44269504088896341)
_LN2_HI = _F32(0.693359375)
_LN2_LO = _F32(-2.12194440e-4)
_LO = _F32(-87.0)  # below: exp underflows float32's normal range; returns 0
_HI = _F32(88.5)  # above: returns inf


def _bitcast(int_np: type, float_np: type, sig: object, ir_type: object) -> object:
    """Reinterpret an integer's bits as a float of the same width: a numba intrinsic (one
    LLVM bitcast, which vectorises), or numpy's view under NUMBA_DISABLE_JIT."""
    if numba.config.DISABLE_JIT:
        return lambda i: np.array(i, int_np).view(float_np)[()]

    def bits(typingctx, i):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir_type)

        return sig, codegen

    bits.__name__ = f"bits_{np.dtype(float_np).name}"
    return intrinsic(bits)


_bits_f32 = _bitcast(np.int32, np.float32, nbt.float32(nbt.int32), ir.FloatType())
_bits_f64 = _bitcast(np.int64, np.float64, nbt.float64(nbt.int64), ir.DoubleType())


def _f32_bits_impl() -> object:
    """A float32's bits as an int32 (the inverse of ``_bits_f32``)."""
    if numba.config.DISABLE_JIT:
        return lambda f: np.array(f, np.float32).view(np.int32)[()]

    def f32_bits(typingctx, f):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.IntType(32))

        return nbt.int32(nbt.float32), codegen

    return intrinsic(f32_bits)


_f32_bits = _f32_bits_impl()


def _fmax_impl() -> object:
    """max(a, b) of two floats of one type as LLVM's ``maxnum``, flagged no-NaN; numba's
    ``max`` is a compare-and-select that a loop's reduction does not vectorise over."""
    if numba.config.DISABLE_JIT:
        return lambda a, b: max(a, b)

    def fmax(typingctx, a, b):
        if not isinstance(a, nbt.Float) or a != b:
            return None

        def codegen(context, builder, signature, args):
            t = args[0].type
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(t, [t, t]),
                                                f"llvm.maxnum.f{a.bitwidth}")
            return builder.call(fn, args, fastmath=("nnan", "nsz"))

        return a(a, b), codegen

    return intrinsic(fmax)


def _wide_impl() -> object:
    """An intrinsic that asks LLVM to vectorise the function it is compiled into with 512-bit
    registers where the CPU has them (the ``prefer-vector-width`` function attribute): LLVM's
    default for Intel's AVX-512 server chips is 256 bits. It emits no code. Called inside a
    ``prange`` body, it marks the outlined loop function of a parallel build and the kernel
    itself in the serial build."""
    if numba.config.DISABLE_JIT:
        return lambda: None

    def wide(typingctx):
        def codegen(context, builder, signature, args):
            # llvmlite's attribute set validates enum attributes only: a string attribute
            # goes in as the text it prints as in the function's definition
            set.add(builder.function.attributes, '"prefer-vector-width"="512"')
            return context.get_dummy_value()

        return nbt.void(), codegen

    return intrinsic(wide)


# 512-bit vectors for a compute-bound loop (exp, erf, a division per element). Time with
# ``wide`` / without, float32, AVX-512 Xeon, 2 threads, 16x64x512 unless noted, forward +
# backward through nn.functional: GELU 0.75 (forward alone 0.72), tanh GELU 0.78, SiLU 0.81,
# sigmoid 0.84, tanh 0.90, softmax (512x64x64) 0.90, cross-entropy (1024x256) 0.90, layer
# norm (16x64x128) 0.95. No gain (so not used): the LSTM sequence kernels, dropout's hash,
# attention; memory-bound loops; batch norm lost 7%.
wide = _wide_impl()


# max of two floats; a loop's running max over it vectorises (a row of 64 float32: 0.05 us
# in eight scalar accumulators of numba's ``max``, ~0.005 us over this). A NaN operand may be
# skipped: a caller lets NaN reach its result another way (a softmax's exp(x - max) does)
fmax = _fmax_impl()


@helper
def _exp32_split(xc):
    """(k, p(r)) with exp(xc) = 2**k * p(r), |r| <= ln2/2, for a float32 xc already clamped to
    the range its caller scales (k an int32): the reduction and polynomial both exp bodies
    share."""
    k = np.floor(xc * _LOG2E + _F32(0.5))
    r = xc - k * _LN2_HI - k * _LN2_LO
    p = _F32(1.9875691500e-4) * r + _F32(1.3981999507e-3)
    p = p * r + _F32(8.3334519073e-3)
    p = p * r + _F32(4.1665795894e-2)
    p = p * r + _F32(1.6666665459e-1)
    p = p * r + _F32(5.0000001201e-1)
    return np.int32(k), p * (r * r) + r + _F32(1.0)


def _exp32(x):
    """Cephes-style expf: exp(x) = 2**k * p(r), |r| <= ln2/2; max rel. error ~1.2e-7.

    Exact 0 below -87 (no denormals), inf above 88.5, NaN kept.
    """
    k, y = _exp32_split(min(max(x, _LO), _HI))
    y = y * _bits_f32((k + np.int32(127)) << np.int32(23))
    y = y if x > _LO else _F32(0.0)
    y = y if x < _HI else _F32(np.inf)
    return y if x == x else x


def _scalef_target() -> bool:
    """Whether the kernels compile for an AVX-512 CPU with an LLVM whose ``ldexp`` becomes one
    ``vscalefps`` there (checked on LLVM 22; elsewhere LLVM may call libm's ldexpf per element,
    so ``fast_exp`` keeps its bit-built 2**k)."""
    if numba.config.DISABLE_JIT or ll.llvm_version_info < (22,):
        return False
    feats = numba.config.CPU_FEATURES
    if feats is None:
        if numba.config.CPU_NAME not in (None, "host"):
            return False  # a named target (portable caches): its features are not the host's
        feats = ll.get_host_cpu_features().flatten()
    return "+avx512f" in feats.split(",")


def _ldexp_impl() -> object:
    """ldexp(y, k) of a float32 and an int32 as LLVM's ``ldexp``: on AVX-512, one vscalefps
    (inf above float32's range built in)."""
    if numba.config.DISABLE_JIT:
        return lambda y, k: np.float32(np.ldexp(y, k))

    def ldexp32(typingctx, y, k):
        def codegen(context, builder, signature, args):
            f, i = ir.FloatType(), ir.IntType(32)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(f, [f, i]),
                                                "llvm.ldexp.f32.i32")
            return builder.call(fn, args)

        return nbt.float32(nbt.float32, nbt.int32), codegen

    return intrinsic(ldexp32)


_ldexp32 = _ldexp_impl()
_HI_SCALEF = _F32(89.0)  # exp(89) overflows: ldexp gives inf from here (k = 128)


def _exp32_scalef(x):
    """``_exp32`` with 2**k applied by ``_ldexp32`` (one vscalefps, which also overflows to
    inf, so no select for the top of the range): exact 0 below -87, NaN kept, finite up to
    float32's largest exp (88.72). A loop over it: 524k float32, 2 threads, 104 -> 84 us."""
    k, y = _exp32_split(min(max(x, _LO), _HI_SCALEF))
    y = _ldexp32(y, k)
    y = y if x > _LO else _F32(0.0)
    return y if x == x else x


_EXP32 = _exp32_scalef if _scalef_target() else _exp32


_ONE = _F32(1.0)
_TWO = _F32(2.0)


def _sig32(x):
    return _ONE / (_ONE + fast_exp(-x))


def _tanh32(x):
    """Cephes tanhf: an odd polynomial below |x| = 0.625, 1 - 2 / (exp(2x) + 1) above."""
    z = x * x
    p = _F32(-5.70498872745e-3) * z + _F32(2.06390887954e-2)
    p = p * z + _F32(-5.37397155531e-2)
    p = p * z + _F32(1.33314422036e-1)
    p = p * z + _F32(-3.33332819422e-1)
    small = p * z * x + x
    big = _ONE - _TWO / (fast_exp(_TWO * x) + _ONE)
    return small if abs(x) < _F32(0.625) else big


@helper
def _exp64(x):
    """Cephes exp: 2**k * (1 + 2 r P(r^2) / (Q(r^2) - r P(r^2))), |r| <= ln2/2 (~1 ulp).

    0 below -708, inf above 708 (the sigmoid and tanh built on it saturate long before)."""
    xc = min(max(x, -708.0), 708.0)
    k = np.floor(xc * 1.4426950408889634 + 0.5)
    r = xc - k * 6.93145751953125e-1 - k * 1.42860682030941723212e-6
    rr = r * r
    px = r * ((1.26177193074810590878e-4 * rr + 3.02994407707441961300e-2) * rr
              + 9.99999999999999999910e-1)
    qx = ((3.00198505138664455042e-6 * rr + 2.52448340349684104192e-3) * rr
          + 2.27265548208155028766e-1) * rr + 2.0
    y = (1.0 + 2.0 * px / (qx - px)) * _bits_f64((np.int64(k) + np.int64(1023)) << np.int64(52))
    y = y if x > -708.0 else 0.0
    y = y if x < 708.0 else np.inf
    return y if x == x else x


def _sig64(x):
    return 1.0 / (1.0 + _exp64(-x))


def _tanh64(x):
    """Cephes tanh: x + x z P(z) / Q(z) (z = x^2) below |x| = 0.625, 1 - 2 / (exp(2x) + 1)
    above."""
    z = x * x
    p = (-9.64399179425052238628e-1 * z - 9.92877231001918586564e1) * z \
        - 1.61468768441708447952e3
    q = ((z + 1.12811678491632931402e2) * z + 2.23548839060100448583e3) * z \
        + 4.84406305325125486048e3
    small = x + x * z * p / q
    big = 1.0 - 2.0 / (_exp64(2.0 * x) + 1.0)
    return small if abs(x) < 0.625 else big


def _log1p_near32(x):
    s = x / (_TWO + x)
    z = s * s
    p = _F32(1.0 / 15.0) * z + _F32(1.0 / 13.0)
    p = p * z + _F32(1.0 / 11.0)
    p = p * z + _F32(1.0 / 9.0)
    p = p * z + _F32(1.0 / 7.0)
    p = p * z + _F32(1.0 / 5.0)
    p = p * z + _F32(1.0 / 3.0)
    return _TWO * s * (p * z + _ONE)


def _expm1_32(x):
    """Taylor to x^8 below |x| = 0.5 (remainder < 6e-9 of the result), fast_exp(x) - 1 beyond
    (no cancellation: |exp(x) - 1| > 0.39 there)."""
    p = _F32(1.0 / 40320.0) * x + _F32(1.0 / 5040.0)
    p = p * x + _F32(1.0 / 720.0)
    p = p * x + _F32(1.0 / 120.0)
    p = p * x + _F32(1.0 / 24.0)
    p = p * x + _F32(1.0 / 6.0)
    p = p * x + _F32(0.5)
    small = (p * x + _ONE) * x
    return small if abs(x) < _F32(0.5) else fast_exp(x) - _ONE


_E1 = _F32(2.718281828459045)
_EM20 = _F32(2.061153622438558e-09)


def _exp_full32(x):
    hi = x > _F32(88.0)
    lo = x < _F32(-86.0)
    w = x - _ONE if hi else (x + _F32(20.0) if lo else x)
    r = fast_exp(w)
    return r * _E1 if hi else (r * _EM20 if lo else r)


def _log32(x):
    tiny = x < _F32(1.17549435e-38)
    xs = x * _F32(8388608.0) if tiny else x
    bits = _f32_bits(xs)
    ef = _F32((bits >> np.int32(23)) & np.int32(0xFF)) - _F32(126.0)
    ef = ef - _F32(23.0) if tiny else ef
    m = _bits_f32((bits & np.int32(0x007FFFFF)) | np.int32(0x3F000000))
    small = m < _F32(0.707106781186547524)
    ef = ef - _ONE if small else ef
    m = (m + m - _ONE) if small else (m - _ONE)
    z = m * m
    p = _F32(7.0376836292e-2) * m - _F32(1.1514610310e-1)
    p = p * m + _F32(1.1676998740e-1)
    p = p * m - _F32(1.2420140846e-1)
    p = p * m + _F32(1.4249322787e-1)
    p = p * m - _F32(1.6668057665e-1)
    p = p * m + _F32(2.0000714765e-1)
    p = p * m - _F32(2.4999993993e-1)
    p = p * m + _F32(3.3333331174e-1)
    y = p * m * z + ef * _F32(-2.12194440e-4) - _F32(0.5) * z
    r = m + y + ef * _F32(0.693359375)
    r = _F32(-np.inf) if x == _F32(0.0) else r
    r = _F32(np.nan) if x < _F32(0.0) else r
    return x if (x == _F32(np.inf)) | (x != x) else r


def _log1p_any32(x):
    inside = (x >= _F32(-0.5)) & (x <= _ONE)
    return log1p_near(x) if inside else log(_ONE + x)


def _expm1_full32(x):
    return expm1(x) if x < _F32(0.5) else exp_full(x) - _ONE


def _scalar(name: str, f32: object, f64: object, doc: str) -> object:
    """One scalar function of the kernels' loops: ``f32`` for float32 and ``f64`` for float64
    arguments. An ``overload`` picks the body at compile time, so the loops carry no dtype
    branch; under NUMBA_DISABLE_JIT the returned Python function runs the same bodies."""

    def fn(x):
        return f32(x) if isinstance(x, np.float32) else f64(x)  # type: ignore[operator]

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc

    @overload(fn, jit_options={"fastmath": set(FASTMATH), "error_model": "numpy"})
    def _pick(x):
        return f32 if isinstance(x, nbt.Float) and x.bitwidth == 32 else f64

    return fn


fast_exp = _scalar("fast_exp", _EXP32, lambda x: np.exp(x),
                   "exp(x): the vectorisable polynomial for float32, ``np.exp`` for float64.")
sigm = _scalar("sigm", _sig32, _sig64, "Logistic sigmoid of one scalar (both bodies vectorise).")
tanh = _scalar("tanh", _tanh32, _tanh64, "tanh of one scalar (both bodies vectorise).")
log1p_near = _scalar("log1p_near", _log1p_near32, lambda x: np.log1p(x),
                     "log(1 + x) for x in [-0.5, 1] (the float32 body vectorises).")
expm1 = _scalar("expm1", _expm1_32, lambda x: np.expm1(x),
                "exp(x) - 1 of one scalar, float32 below 88.5 (the float32 body vectorises).")
exp_full = _scalar("exp_full", _exp_full32, lambda x: np.exp(x),
                   "exp(x) over the whole float32 range (the float32 body vectorises).")
log = _scalar("log", _log32, lambda x: np.log(x),
              "Natural log of one scalar (the float32 body vectorises).")
log1p = _scalar("log1p", _log1p_any32, lambda x: np.log1p(x),
                "log(1 + x) of one scalar (the float32 body vectorises).")
expm1_full = _scalar("expm1_full", _expm1_full32, lambda x: np.expm1(x),
                     "exp(x) - 1 over the whole float32 range (the float32 body vectorises).")
