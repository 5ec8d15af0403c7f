"""The rest of torch's pointwise math: ``atan2``, ``hypot``, ``logaddexp``, ``xlogy``,
``copysign``, ``fmax``/``fmin``, ``frac``, ``logit``, ``sinc``, ``float_power``, ``gcd``/``lcm``,
``ldexp``/``frexp``, the inverse hyperbolic functions and torch's spelling aliases
(``multiply``, ``divide``, ``subtract``, ``arctan2``, ...).

Most are compositions of ``lucid.ops.elementwise`` ops, so they are differentiable on every
device; the few without a backend method (``atan2``, ``copysign``, ``gcd``, ``frexp``, ...)
compute on a host copy of the arrays (``be.to_numpy`` / ``be.from_numpy``), which serves every
device, and carry their own derivative.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Op
from . import elementwise as _e
from . import select as _s
from ._util import broadcast_error, cast, coerce, float_dtype_for, sum_to, wrap
from .creation import ones_like, zeros_like

__all__ = [
    "acosh", "arccosh", "arcsinh", "arctan2", "arctanh", "asinh", "atan2", "atanh", "copysign",
    "deg2rad", "divide", "exp2", "float_power", "fmax", "fmin", "frac", "frexp", "gcd",
    "heaviside", "hypot", "i0", "is_complex", "is_same_size", "is_signed", "isneginf",
    "isposinf", "isreal", "lcm", "ldexp", "logaddexp", "logaddexp2", "logit", "multiply",
    "nextafter", "positive", "rad2deg", "rsub", "sgn", "signbit", "sinc", "subtract",
    "true_divide", "xlogy",
]


def _c(a: Any) -> np.ndarray:
    """A C-contiguous array that keeps a 0-d result 0-d (``np.ascontiguousarray`` does not)."""
    return np.require(a, requirements="C")


def _host(be: Any, x: Any) -> np.ndarray:
    return np.asarray(be.to_numpy(x))


def _floats(a: Any, b: Any) -> tuple[Tensor, Tensor]:
    """Two operands at their common dtype, promoted to floating point."""
    a, b = coerce(a, b)
    err = broadcast_error(a, b)
    if err is not None:
        raise err
    if not isinstance(a, Tensor):
        a = wrap(b._be.full((), a, b.dtype), b._be)
    if not isinstance(b, Tensor):
        b = wrap(a._be.full((), b, a.dtype), a._be)
    d = a.dtype if a.dtype.is_floating_point else float_dtype_for(a)
    return cast(a, d), cast(b, d)


class _HostBinary(Op):
    """``fn(a, b)`` computed on host arrays; ``grads(self, be, a, b, g)`` gives the
    derivatives with backend functions (so they can be differentiated again). Host-only
    facts the derivative needs (sign bits) are taken in ``forward`` by ``facts(ha, hb)``."""

    fn: Any = None

    def forward(self, a, b):
        be = self.be
        ha, hb = _host(be, a), _host(be, b)
        self.sa, self.sb = ha.shape, hb.shape
        out = np.asarray(type(self).fn(ha, hb)).astype(np.result_type(ha, hb), copy=False)
        if any(p is not None for p in self.parents):
            self.saved = (a, b)
            self.facts(be, ha, hb)
        return be.from_numpy(_c(out))

    def facts(self, be: Any, ha: np.ndarray, hb: np.ndarray) -> None:
        pass

    def backward(self, g):
        be = self.be
        a, b = self.saved
        ga, gb = self.grads(be, a, b, g)
        p = self.parents
        return (sum_to(be, ga, self.sa) if p[0] is not None else None,
                sum_to(be, gb, self.sb) if p[1] is not None else None)


class _Atan2(_HostBinary):
    fn = staticmethod(np.arctan2)

    def grads(self, be, y, x, g):
        r = be.add(be.mul(x, x), be.mul(y, y))
        return be.div(be.mul(g, x), r), be.neg(be.div(be.mul(g, y), r))


class _Copysign(_HostBinary):
    fn = staticmethod(np.copysign)

    def facts(self, be, a, b):
        # torch: d/da = sign agreement (0 where a == 0), no gradient for b
        s = np.where(a == 0, 0.0, np.where(np.signbit(a) == np.signbit(np.copysign(1.0, b)),
                                           1.0, -1.0))
        self.sign = be.from_numpy(_c(np.broadcast_to(s, np.broadcast_shapes(a.shape, b.shape))
                                     .astype(a.dtype)))

    def grads(self, be, a, b, g):
        return be.mul(g, self.sign), be.zeros_like(g)


def atan2(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise arctangent of ``input / other`` with the quadrant of the point
    ``(other, input)``, in radians."""
    a, b = _floats(input, other)
    return _Atan2.apply(a, b)


arctan2 = atan2


def copysign(input: Tensor, other: Any) -> Tensor:
    """``input``'s magnitude with ``other``'s sign (signed zeros included); float result."""
    a, b = _floats(input, other)
    return _Copysign.apply(a, b)


def hypot(input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input**2 + other**2)`` elementwise."""
    return _e.sqrt(_e.add(_e.mul(input, input), _e.mul(other, other)))


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """``log(exp(input) + exp(other))`` without overflow, in the operands' promoted dtype
    (a bool or integer operand beside a float one takes its dtype, as torch)."""
    input, other = coerce(input, other)
    d = _dtype.result_type(input, other)
    if not (d.is_floating_point or d.is_complex):
        raise NotImplementedError(f'"logaddexp_cpu" not implemented for '
                                  f"'{_dtype.torch_name(d)}'")
    input, other = (cast(t, d) if isinstance(t, Tensor) else t for t in (input, other))
    m = _e.maximum(input, other).detach()
    m = _s.where(_s.isfinite(m), m, zeros_like(m))
    return _e.add(m, _e.log(_e.add(_e.exp(_e.sub(input, m)), _e.exp(_e.sub(other, m)))))


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    """``log2(2**input + 2**other)`` without overflow."""
    ln2 = math.log(2.0)
    return _e.div(logaddexp(_e.mul(input, ln2), _e.mul(other, ln2)), ln2)


def xlogy(input: Any, other: Any) -> Tensor:
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""
    a, b = coerce(input, other)
    if not isinstance(a, Tensor):
        a = wrap(b._be.full((), a, b.dtype), b._be)
    if not isinstance(b, Tensor):
        b = wrap(a._be.full((), b, a.dtype), a._be)
    d = a.dtype if a.dtype.is_floating_point else float_dtype_for(a)
    a, b = cast(a, d), cast(b, d)
    zero = _s.logical_and(_s.eq(a, 0), _s.logical_not(_s.isnan(b)))
    # where input is 0 the derivative in input is still log(other) (0 for other <= 0), as in
    # torch: only a log that is undefined is replaced
    safe = _s.where(_s.logical_and(zero, _s.le(b, 0)), ones_like(b), b)
    out = _e.mul(a, _e.log(safe))
    return _s.where(_s.logical_and(zero, _s.isinf(b)), zeros_like(out), out)


def fmax(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum that ignores NaN (NaN only where both are NaN). As torch's, the
    gradient goes to ``input`` where ``input >= other`` or ``other`` is NaN (ties included),
    else to ``other``."""
    a, b = coerce(input, other)
    return _s.where(_s.logical_or(_s.ge(a, b), _s.isnan(b)), a, b)


def fmin(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum that ignores NaN (NaN only where both are NaN); the gradient as
    ``fmax``'s, with ``input <= other``."""
    a, b = coerce(input, other)
    return _s.where(_s.logical_or(_s.le(a, b), _s.isnan(b)), a, b)


def frac(input: Tensor) -> Tensor:
    """The fractional part, ``input - trunc(input)`` (sign kept)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"\"frac_cpu\" not implemented for '{_dtype.torch_name(input.dtype)}'")
    return _e.sub(input, _e.trunc(input).detach())


def sgn(input: Tensor) -> Tensor:
    """The sign (``sign`` for real tensors)."""
    return _e.sign(input)


def signbit(input: Tensor) -> Tensor:
    """Whether the sign bit is set (True for -0.0)."""
    be = input._be
    return wrap(be.from_numpy(_c(np.signbit(_host(be, input._data)))), be)


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    if eps is not None and (isinstance(eps, bool) or not isinstance(eps, (int, float))):
        raise TypeError("logit(): argument 'eps' (position 2) must be float, not "
                        f"{type(eps).__name__}")
    x = input if input.dtype.is_floating_point else input.to(float_dtype_for(input))
    if eps is not None:
        x = _s.clamp(x, eps, 1.0 - eps)
    elif x.requires_grad:
        # torch's derivative: NaN outside [0, 1] (where the value is NaN too), 1 / (x (1 - x))
        # inside, so +inf at 0 and 1; the NaN offset leaves the value as it was
        x = _e.add(x, _s.where((x < 0.0) | (x > 1.0), math.nan, 0.0).to(x.dtype))
        return _e.sub(_e.log(x), _e.log1p(_e.neg(x)))
    return _e.log(_e.div(x, _e.sub(1.0, x)))


def _as_float(t: Tensor) -> Tensor:
    return t if t.dtype.is_floating_point else t.to(float_dtype_for(t))


def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians."""
    return _e.mul(_as_float(input), math.pi / 180.0)


def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees."""
    return _e.mul(_as_float(input), 180.0 / math.pi)


def exp2(input: Tensor) -> Tensor:
    """``2 ** input``."""
    return _e.exp(_e.mul(_as_float(input), math.log(2.0)))


def sinc(input: Tensor) -> Tensor:
    """The normalised sinc, ``sin(pi x) / (pi x)``, 1 at 0."""
    x = _as_float(input)
    zero = _s.eq(x, 0)
    one = ones_like(x)
    px = _e.mul(_s.where(zero, one, x), math.pi)
    return _s.where(zero, one, _e.div(_e.sin(px), px))


def float_power(input: Any, exponent: Any) -> Tensor:
    """``input ** exponent`` computed in float64 (as torch)."""
    a = input.to(_dtype.float64) if isinstance(input, Tensor) else input
    b = exponent.to(_dtype.float64) if isinstance(exponent, Tensor) else float(exponent)
    if not isinstance(a, Tensor):
        a = wrap(b._be.full((), float(a), _dtype.float64), b._be)
    return _e.pow(a, b)


def acosh(input: Tensor) -> Tensor:
    """Inverse hyperbolic cosine, ``log(x + sqrt(x^2 - 1))``."""
    x = _as_float(input)
    return _e.log(_e.add(x, _e.sqrt(_e.sub(_e.mul(x, x), 1.0))))


def asinh(input: Tensor) -> Tensor:
    """Inverse hyperbolic sine (odd, accurate for large negative inputs)."""
    x = _as_float(input)
    ax = _e.abs(x)
    return _e.mul(_e.sign(x).detach(), _e.log(_e.add(ax, _e.sqrt(_e.add(_e.mul(ax, ax), 1.0)))))


def atanh(input: Tensor) -> Tensor:
    """Inverse hyperbolic tangent, ``0.5 * log((1 + x) / (1 - x))``."""
    x = _as_float(input)
    return _e.mul(_e.sub(_e.log1p(x), _e.log1p(_e.neg(x))), 0.5)


arccosh, arcsinh, arctanh = acosh, asinh, atanh


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """0 where ``input < 0``, ``values`` where ``input == 0``, 1 where ``input > 0``."""
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    return _s.where(_s.eq(input, 0), values,
                    _s.where(_s.gt(input, 0), ones_like(input), zeros_like(input))).detach()


def _int_binary(name: str, fn: Any, a: Tensor, b: Any) -> Tensor:
    a, b = coerce(a, b)
    if not isinstance(b, Tensor):
        b = wrap(a._be.full((), b, a.dtype), a._be)
    if a.dtype.is_floating_point or a.dtype is _dtype.bool_:
        raise RuntimeError(
            f"\"{name}_cpu\" not implemented for '{_dtype.torch_name(a.dtype)}'")
    be = a._be
    out = fn(_host(be, a._data), _host(be, b._data)).astype(a.dtype.np, copy=False)
    return wrap(be.from_numpy(_c(out)), be)


def gcd(input: Tensor, other: Tensor) -> Tensor:
    """Greatest common divisor (integer tensors; ``gcd(0, 0) = 0``)."""
    return _int_binary("gcd", np.gcd, input, other)


def lcm(input: Tensor, other: Tensor) -> Tensor:
    """Least common multiple (integer tensors)."""
    return _int_binary("lcm", np.lcm, input, other)


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """``input * 2 ** other``."""
    return _e.mul(_as_float(input), exp2(other))


def frexp(input: Tensor) -> tuple[Tensor, Tensor]:
    """(mantissa, exponent) with ``input = mantissa * 2 ** exponent``, ``|mantissa|`` in
    [0.5, 1); the exponent is int32."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    be = input._be
    m, e = np.frexp(_host(be, input._data))
    return (wrap(be.from_numpy(_c(m)), be),
            wrap(be.from_numpy(_c(e.astype(np.int32))), be))


def nextafter(input: Tensor, other: Tensor) -> Tensor:
    """The next representable value after ``input`` towards ``other``."""
    a, b = coerce(input, other)
    be = a._be
    out = np.nextafter(_host(be, a._data), _host(be, b._data)).astype(a.dtype.np)
    return wrap(be.from_numpy(_c(out)), be)


def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 0 (no gradient)."""
    x = _as_float(input)
    be = x._be
    out = np.i0(_host(be, x._data)).astype(x.dtype.np)
    return wrap(be.from_numpy(_c(out)), be)


def isposinf(input: Tensor) -> Tensor:
    """Where ``input`` is +inf."""
    return _s.logical_and(_s.isinf(input), _s.gt(input, 0))


def isneginf(input: Tensor) -> Tensor:
    """Where ``input`` is -inf."""
    return _s.logical_and(_s.isinf(input), _s.lt(input, 0))


def isreal(input: Tensor) -> Tensor:
    """True everywhere for a real tensor; for a complex one, where the imaginary part is 0."""
    imag = getattr(input, "imag", None) if is_complex(input) else None
    if imag is not None:
        return _s.eq(imag, 0)
    return ones_like(input, dtype=_dtype.bool_)


def is_complex(input: Tensor) -> bool:
    """Whether the dtype is complex."""
    return bool(getattr(input.dtype, "is_complex", False))


def is_signed(input: Tensor) -> bool:
    """Whether the dtype is signed (every dtype but uint8 and bool)."""
    return input.dtype not in (_dtype.uint8, _dtype.bool_)


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether the two tensors have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


def positive(input: Tensor) -> Tensor:
    """``input`` itself (torch refuses bool)."""
    if input.dtype is _dtype.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def rsub(input: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    """``other - alpha * input``."""
    return _e.sub(other, _e.mul(input, alpha) if alpha != 1 else input)


def multiply(input: Tensor, other: Any) -> Tensor:
    """Alias of ``mul``."""
    return _e.mul(input, other)


def divide(input: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """Alias of ``div``."""
    return _e.div(input, other, rounding_mode=rounding_mode)


true_divide = _e.div


def subtract(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """Alias of ``sub``."""
    return _e.sub(input, other, alpha=alpha)
