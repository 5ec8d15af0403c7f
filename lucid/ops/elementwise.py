"""Elementwise ops: arithmetic, math functions, comparisons, ``where``, ``clamp``, casts."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _make
from ..autograd.function import Op
from . import _autocast as _ac
from ._util import broadcast_error, cast, coerce, shape_of, sum_to

# ---- binary arithmetic ------------------------------------------------------------------------


class Add(Op):
    def forward(self, a, b):
        self.sa, self.sb = shape_of(a), shape_of(b)
        return self.be.add(a, b)

    def backward(self, g):
        be = self.be
        p = self.parents
        return (sum_to(be, g, self.sa) if p[0] is not None else None,
                sum_to(be, g, self.sb) if p[1] is not None else None)


class Sub(Op):
    def forward(self, a, b):
        self.sa, self.sb = shape_of(a), shape_of(b)
        return self.be.sub(a, b)

    def backward(self, g):
        be = self.be
        p = self.parents
        gb = sum_to(be, be.neg(g), self.sb) if p[1] is not None else None
        return (sum_to(be, g, self.sa) if p[0] is not None else None), gb


class Mul(Op):
    def forward(self, a, b):
        p = self.parents
        self.sa, self.sb = getattr(a, "shape", ()), getattr(b, "shape", ())
        # save only what the wanted gradients use (x * 2 never needs x)
        self.saved = (a if p[1] is not None else None, b if p[0] is not None else None)
        return self.be.mul(a, b)

    def backward(self, g):
        be = self.be
        a, b = self.saved
        p = self.parents
        ga = sum_to(be, be.mul(g, b), self.sa) if p[0] is not None else None
        gb = sum_to(be, be.mul(g, a), self.sb) if p[1] is not None else None
        return ga, gb


class Div(Op):
    def forward(self, a, b):
        self.sa, self.sb = getattr(a, "shape", ()), getattr(b, "shape", ())
        self.saved = (a if self.parents[1] is not None else None, b)
        return self.be.div(a, b)

    def backward(self, g):
        be = self.be
        a, b = self.saved
        p = self.parents
        ga = sum_to(be, be.div(g, b), self.sa) if p[0] is not None else None
        gb = None
        if p[1] is not None:
            gb = sum_to(be, be.neg(be.div(be.mul(g, a), be.mul(b, b))), self.sb)
        return ga, gb


class Pow(Op):
    def forward(self, a, b):
        out = self.be.pow(a, b)
        self.saved = (a, b, out)
        return out

    def backward(self, g):
        be = self.be
        a, b, out = self.saved
        p = self.parents
        ga = gb = None
        if p[0] is not None:
            ga = sum_to(be, be.mul(g, be.mul(b, be.pow(a, b - 1))), shape_of(a))
        if p[1] is not None:
            la = be.log(be.where(be.gt(a, 0), a, 1)) if hasattr(a, "shape") else math.log(a)
            gb = sum_to(be, be.mul(g, be.mul(out, la)), shape_of(b))
        return ga, gb


class Maximum(Op):
    _pick = "gt"

    def forward(self, a, b):
        self.saved = (a, b)
        return self.be.maximum(a, b) if self._pick == "gt" else self.be.minimum(a, b)

    def backward(self, g):
        # NOTE: torch's rule: ties split the gradient; a side gets it unless it lost, so at a
        # NaN (no comparison holds) both sides get the full gradient
        be = self.be
        a, b = self.saved
        lt, gt = be.lt(a, b), be.gt(a, b)
        share = be.where(be.eq(a, b), be.mul(g, 0.5), g)
        zero = be.zeros_like(g)
        ga = be.where(lt if self._pick == "gt" else gt, zero, share)
        gb = be.where(gt if self._pick == "gt" else lt, zero, share)
        return sum_to(be, ga, shape_of(a)), sum_to(be, gb, shape_of(b))


class Minimum(Maximum):
    _pick = "lt"


class Remainder(Op):
    """``a - b * round(a / b)``: ``floor`` rounding (``%``) or ``trunc`` (``fmod``)."""

    fn, rounding = "remainder", "floor"

    def forward(self, a, b):
        self.saved = (a, b)
        return getattr(self.be, self.fn)(a, b)

    def backward(self, g):
        be = self.be
        a, b = self.saved
        gb = None
        if self.parents[1] is not None:
            q = getattr(be, self.rounding)(be.div(a, b))
            gb = sum_to(be, be.neg(be.mul(g, q)), shape_of(b))
        return sum_to(be, g, shape_of(a)), gb


class Fmod(Remainder):
    fn, rounding = "fmod", "trunc"


class ZeroGrad(Op):
    """Ops whose gradient is zero almost everywhere (floor, ceil, round, sign, //)."""

    def forward(self, *xs, fn):
        self.shapes = [shape_of(x) for x in xs]
        return getattr(self.be, fn)(*xs)

    def backward(self, g):
        be = self.be
        return tuple(be.zeros(s, be.dtype_of(g)) for s in self.shapes)


def _binary(cls: type[Op], a: Any, b: Any, **params: Any) -> Tensor:
    a, b = coerce(a, b)
    try:
        return cls.apply(a, b, **params)
    except ValueError:
        err = broadcast_error(a, b)
        if err is not None:
            raise err from None
        raise


def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input + alpha * other`` with broadcasting."""
    if alpha != 1:
        other = mul(other, alpha)
    return _binary(Add, input, other)


def _is_bool(x: Any) -> bool:
    return x.dtype is _dtype.bool_ if isinstance(x, Tensor) else isinstance(x, bool)


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input - alpha * other`` with broadcasting."""
    if _is_bool(input) or _is_bool(other):
        if _is_bool(input) and _is_bool(other):
            raise RuntimeError(
                "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                "`^` or `logical_xor()` operator instead."
            )
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    if alpha != 1:
        other = mul(other, alpha)
    return _binary(Sub, input, other)


def mul(input: Any, other: Any) -> Tensor:
    return _binary(Mul, input, other)


def _to_float(x: Any) -> Any:
    if isinstance(x, Tensor) and not x.dtype.is_floating_point:
        return cast(x, _dtype.get_default_dtype())
    return x


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """True division (integers give the default float); ``rounding_mode`` "trunc"/"floor"."""
    a, b = coerce(input, other)
    if rounding_mode is None:
        a, b = _to_float(a), _to_float(b)
        return _binary(Div, a, b)
    if rounding_mode == "floor":
        return floor_divide(a, b)
    if rounding_mode == "trunc":
        t = a if isinstance(a, Tensor) else b
        if t.dtype.is_floating_point:
            return trunc(_binary(Div, a, b))
        _no_integer_zero_divisor(a, b)
        q = _binary(Div, _to_float(a), _to_float(b))
        return cast(trunc(q), t.dtype)
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
        f"'{rounding_mode}'"
    )


def _no_integer_zero_divisor(a: Any, b: Any) -> None:
    """Integer ``//``, ``%``, ``fmod`` and rounded ``div`` by zero raise as torch does on cpu
    (numpy would return 0 with a warning; MLX garbage); ``a``, ``b`` are already coerced."""
    if isinstance(b, Tensor):
        d = b.dtype
        if d.is_floating_point or d is _dtype.bool_:
            return
        be = b._be
        if be.item(be.any(be.eq(b._data, 0))):
            raise RuntimeError("ZeroDivisionError")
    elif isinstance(a, Tensor) and isinstance(b, int) and b == 0 \
            and not a.dtype.is_floating_point:
        raise RuntimeError("ZeroDivisionError")


def _integer_safe(cls: type[Op], input: Any, other: Any, **params: Any) -> Tensor:
    a, b = coerce(input, other)
    _no_integer_zero_divisor(a, b)
    return _binary(cls, a, b, **params)


def floor_divide(input: Any, other: Any) -> Tensor:
    return _integer_safe(ZeroGrad, input, other, fn="floordiv")


def remainder(input: Any, other: Any) -> Tensor:
    return _integer_safe(Remainder, input, other)


def fmod(input: Any, other: Any) -> Tensor:
    return _integer_safe(Fmod, input, other)


def pow(input: Any, exponent: Any) -> Tensor:  # noqa: A001
    """``input ** exponent`` with broadcasting."""
    if _ac.state.on:
        input, exponent = _ac.cast("pow", input, exponent)
    a, b = coerce(input, exponent)
    if isinstance(a, Tensor) and isinstance(b, int) and not isinstance(b, bool) and b < 0 \
            and not a.dtype.is_floating_point:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if isinstance(b, Tensor) and b.dtype.is_signed and not b.dtype.is_floating_point \
            and not b.dtype.is_complex:
        out = _int_pow_negative(a, b)
        if out is not None:
            return out
    out = _binary(Pow, a, b)
    # scalar ** tensor: torch answers row-major, numpy keeps a transposed exponent's layout
    return out if isinstance(a, Tensor) else out.contiguous()


def _int_pow_negative(a: Any, b: Tensor) -> Tensor | None:
    """An integer power with negative exponents in a tensor, by PyTorch's rule (numpy raises,
    MLX answers 0): ``1 ** -n = 1``, ``(-1) ** -n = +-1`` by parity, anything else 0. None when
    no exponent is negative (or the shapes do not broadcast: the plain path says so)."""
    be = b._be
    if not be.item(be.any(be.lt(b._data, 0))) or broadcast_error(a, b) is not None:
        return None
    bn = np.asarray(be.to_numpy(b._data))
    an = np.asarray(be.to_numpy(a._data)) if isinstance(a, Tensor) else np.asarray(a, bn.dtype)
    neg = bn < 0
    out = np.power(an, np.where(neg, 0, bn))
    at_neg = np.where(an == 1, 1, np.where(an == -1, np.where(bn & 1, -1, 1), 0))
    out = np.ascontiguousarray(np.where(neg, at_neg, out).astype(bn.dtype))
    return _make(be.from_numpy(out), be, False, None)


def maximum(input: Tensor, other: Tensor) -> Tensor:
    return _binary(Maximum, input, other)


def minimum(input: Tensor, other: Tensor) -> Tensor:
    return _binary(Minimum, input, other)


# ---- unary math -------------------------------------------------------------------------------


class Unary(Op):
    """``y = f(x)`` with ``dy/dx`` written in ``grad``; ``fn`` names the backend function."""

    fn = ""
    uses = "x"  # what the derivative needs: "x" or "y"

    def forward(self, x):
        y = getattr(self.be, self.fn)(x)
        self.saved = (x if self.uses == "x" else y,)
        return y

    def backward(self, g):
        return self.grad(self.be, self.saved[0], g)


def _unary(name: str, fn: str, grad: Any, uses: str = "x") -> type[Op]:
    cls = type(name, (Unary,), {"fn": fn, "uses": uses, "grad": staticmethod(grad),
                                "saves_output": uses == "y"})
    return cls


Neg = type("Neg", (Op,), {"forward": lambda self, x: self.be.neg(x),
                          "backward": lambda self, g: self.be.neg(g)})
Exp = _unary("Exp", "exp", lambda be, y, g: be.mul(g, y), "y")
Expm1 = _unary("Expm1", "expm1", lambda be, y, g: be.mul(g, be.add(y, 1)), "y")
Log = _unary("Log", "log", lambda be, x, g: be.div(g, x))
Log2 = _unary("Log2", "log2", lambda be, x, g: be.div(g, be.mul(x, 0.6931471805599453)))
Log10 = _unary("Log10", "log10", lambda be, x, g: be.div(g, be.mul(x, 2.302585092994046)))
Log1p = _unary("Log1p", "log1p", lambda be, x, g: be.div(g, be.add(x, 1)))
Sqrt = _unary("Sqrt", "sqrt", lambda be, y, g: be.div(g, be.mul(y, 2)), "y")
Rsqrt = _unary("Rsqrt", "rsqrt", lambda be, y, g: be.mul(be.mul(g, -0.5), be.mul(y, be.mul(y, y))),
               "y")
Square = _unary("Square", "square", lambda be, x, g: be.mul(g, be.mul(x, 2)))
Reciprocal = _unary("Reciprocal", "reciprocal", lambda be, y, g: be.neg(be.mul(g, be.mul(y, y))),
                    "y")
Abs = _unary("Abs", "abs", lambda be, x, g: be.mul(g, be.sign(x)))
Sin = _unary("Sin", "sin", lambda be, x, g: be.mul(g, be.cos(x)))
Cos = _unary("Cos", "cos", lambda be, x, g: be.neg(be.mul(g, be.sin(x))))
Tan = _unary("Tan", "tan", lambda be, y, g: be.mul(g, be.add(be.mul(y, y), 1)), "y")
Tanh = _unary("Tanh", "tanh", lambda be, y, g: be.tanh_backward(y, g), "y")
Sigmoid = _unary("Sigmoid", "sigmoid", lambda be, y, g: be.sigmoid_backward(y, g), "y")
Relu = _unary("Relu", "relu", lambda be, y, g: be.relu_backward(y, g), "y")
Asin = _unary("Asin", "arcsin", lambda be, x, g: be.div(g, be.sqrt(be.sub(1, be.mul(x, x)))))
Acos = _unary("Acos", "arccos",
              lambda be, x, g: be.neg(be.div(g, be.sqrt(be.sub(1, be.mul(x, x))))))
Atan = _unary("Atan", "arctan", lambda be, x, g: be.div(g, be.add(be.mul(x, x), 1)))
Sinh = _unary("Sinh", "sinh", lambda be, x, g: be.mul(g, be.cosh(x)))
Cosh = _unary("Cosh", "cosh", lambda be, x, g: be.mul(g, be.sinh(x)))


def _float_unary(cls: type[Op]) -> Any:
    name = cls.fn if hasattr(cls, "fn") and cls.fn else cls.__name__.lower()

    def f(input: Tensor) -> Tensor:
        if _ac.state.on:
            (input,) = _ac.cast(name, input)
        return cls.apply(_to_float(input))

    f.__name__ = name
    f.__doc__ = f"Elementwise ``{f.__name__}``; integer inputs are computed in the default float."
    return f


exp = _float_unary(Exp)
expm1 = _float_unary(Expm1)
log = _float_unary(Log)
log2 = _float_unary(Log2)
log10 = _float_unary(Log10)
log1p = _float_unary(Log1p)
sqrt = _float_unary(Sqrt)
rsqrt = _float_unary(Rsqrt)
reciprocal = _float_unary(Reciprocal)
sin = _float_unary(Sin)
cos = _float_unary(Cos)
tan = _float_unary(Tan)
tanh = _float_unary(Tanh)
sigmoid = _float_unary(Sigmoid)
asin = arcsin = _float_unary(Asin)
acos = arccos = _float_unary(Acos)
atan = arctan = _float_unary(Atan)
sinh = _float_unary(Sinh)
cosh = _float_unary(Cosh)


def neg(input: Tensor) -> Tensor:
    if input.dtype is _dtype.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return Neg.apply(input)


negative = neg


def abs(input: Tensor) -> Tensor:  # noqa: A001
    return Abs.apply(input)


def square(input: Tensor) -> Tensor:
    return Square.apply(input)


def relu(input: Tensor) -> Tensor:
    return Relu.apply(input)


def sign(input: Tensor) -> Tensor:
    return ZeroGrad.apply(input, fn="sign")


def floor(input: Tensor) -> Tensor:
    return ZeroGrad.apply(input, fn="floor")


def ceil(input: Tensor) -> Tensor:
    return ZeroGrad.apply(input, fn="ceil")


def trunc(input: Tensor) -> Tensor:
    return ZeroGrad.apply(input, fn="trunc")


fix = trunc


def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001
    """Round half to even, as PyTorch does."""
    if decimals:
        s = 10.0 ** decimals
        return div(ZeroGrad.apply(mul(input, s), fn="round"), s)
    return ZeroGrad.apply(input, fn="round")


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``.

    Example::

        lucid.addcmul(p, g, g, value=0.5)
    """
    prod = mul(tensor1, tensor2)
    return add(input, prod if value == 1 else mul(prod, value))


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 / tensor2``.

    Example::

        lucid.addcdiv(p, m, v.sqrt() + 1e-8, value=-lr)
    """
    q = div(tensor1, tensor2)
    return add(input, q if value == 1 else mul(q, value))


__all__ = [
    "abs", "acos", "add", "addcdiv", "addcmul", "arccos", "arcsin", "arctan", "asin", "atan",
    "ceil", "cos", "cosh", "div", "exp", "expm1", "fix", "floor", "floor_divide", "fmod", "log",
    "log10", "log1p", "log2", "maximum", "minimum", "mul", "neg", "negative", "pow", "reciprocal",
    "relu", "remainder", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "square",
    "sub", "tan", "tanh", "trunc"
]
