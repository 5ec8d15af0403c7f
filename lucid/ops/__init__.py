"""Every differentiable op, and the binding of ops to ``Tensor`` methods and operators."""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from . import compose as _cmp
from . import creation as _c
from . import device as _dev
from . import elementwise as _e
from . import index as _i
from . import inplace as _ip
from . import linalg as _la
from . import matmul as _x
from . import movement as _m
from . import random as _rnd
from . import reduce as _r
from .compose import *  # noqa: F403
from .creation import *  # noqa: F403
from .device import to_device
from .elementwise import *  # noqa: F403
from .index import *  # noqa: F403
from .linalg import *  # noqa: F403
from .matmul import *  # noqa: F403
from .movement import *  # noqa: F403
from .random import *  # noqa: F403
from .reduce import *  # noqa: F403


def _rev(fn: Any) -> Any:
    def r(self: Tensor, other: Any) -> Tensor:
        return fn(other, self)

    r.__name__ = "__r" + fn.__name__ + "__"
    return r


def _invert(self: Tensor) -> Tensor:
    from .. import _dtype

    if self.dtype is _dtype.bool_:
        return _e.logical_not(self)
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return _e.bitwise_not(self)


def _eq(self: Tensor, other: Any) -> Any:
    if other is None:
        return False
    return _e.eq(self, other)


def _ne(self: Tensor, other: Any) -> Any:
    if other is None:
        return True
    return _e.ne(self, other)


def _iop(name: str) -> Any:
    fn = _ip._binary_inplace(getattr(_e, name))

    def f(self: Tensor, other: Any) -> Tensor:
        return fn(self, other)

    return f


_METHODS: dict[str, Any] = {
    # operators
    "__add__": _e.add, "__radd__": _rev(_e.add), "__sub__": _e.sub, "__rsub__": _rev(_e.sub),
    "__mul__": _e.mul, "__rmul__": _rev(_e.mul), "__truediv__": _e.div,
    "__rtruediv__": _rev(_e.div), "__floordiv__": _e.floor_divide,
    "__rfloordiv__": _rev(_e.floor_divide), "__mod__": _e.remainder,
    "__rmod__": _rev(_e.remainder), "__pow__": _e.pow, "__rpow__": _rev(_e.pow),
    "__matmul__": _x.matmul, "__rmatmul__": _rev(_x.matmul), "__neg__": _e.neg,
    "__pos__": lambda self: self, "__abs__": _e.abs, "__invert__": _invert,
    "__and__": _e.bitwise_and, "__or__": _e.bitwise_or, "__xor__": _e.bitwise_xor,
    "__rand__": _rev(_e.bitwise_and), "__ror__": _rev(_e.bitwise_or),
    "__rxor__": _rev(_e.bitwise_xor),
    "__eq__": _eq, "__ne__": _ne, "__lt__": _e.lt, "__le__": _e.le, "__gt__": _e.gt,
    "__ge__": _e.ge, "__getitem__": _i.getitem, "__setitem__": _i.setitem,
    "__iadd__": _iop("add"), "__isub__": _iop("sub"), "__imul__": _iop("mul"),
    "__itruediv__": _iop("div"), "__ifloordiv__": _iop("floor_divide"),
    "__imod__": _iop("remainder"), "__ipow__": _iop("pow"),
    # device and dtype
    "to": _dev.to, "cpu": _dev.cpu, "gpu": _dev.gpu, "cuda": _dev.gpu,
    "type_as": _dev.type_as, "type": _dev.type,
    # in-place
    "zero_": _ip.zero_, "fill_": _ip.fill_, "copy_": _ip.copy_,
    # new tensors like this one
    "new_tensor": _c._new_tensor, "new_zeros": _c._new_factory("zeros"),
    "new_ones": _c._new_factory("ones"), "new_empty": _c._new_factory("empty"),
    "new_full": _c._new_full,
    "normal_": _rnd.normal_, "uniform_": _rnd.uniform_, "bernoulli_": _rnd.bernoulli_,
}

for _d in ("float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"):
    from .. import _dtype as _dt

    _f = _dev._caster(getattr(_dt, _d if _d != "bool" else "bool_"))
    _METHODS[_f.__name__] = _f

_FUNCS = {
    _e: ["add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "maximum",
         "minimum", "exp", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
         "reciprocal", "sin", "cos", "tan", "tanh", "sigmoid", "asin", "acos", "atan", "arcsin",
         "arccos", "arctan", "sinh", "cosh", "neg", "negative", "abs", "square", "relu", "sign",
         "floor", "ceil", "trunc", "fix", "round", "clamp", "clip", "where", "eq", "ne", "lt",
         "le", "gt", "ge", "less", "less_equal", "greater", "greater_equal", "not_equal",
         "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
         "bitwise_xor", "bitwise_not", "isnan", "isinf", "isfinite"],
    _r: ["sum", "mean", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin", "prod",
         "logsumexp", "norm", "cumsum", "cumprod", "all", "any"],
    _x: ["matmul", "mm", "bmm", "dot", "inner", "mv", "outer", "ger"],
    _la: ["tril", "triu", "diag", "diagonal", "trace", "addmm", "lerp", "diag_embed"],
    _cmp: ["addcmul", "addcdiv", "median", "unfold", "stride"],
    _m: ["reshape", "view", "flatten", "unflatten", "permute", "transpose", "swapaxes",
         "swapdims", "t", "movedim", "moveaxis", "squeeze", "unsqueeze", "expand", "expand_as",
         "broadcast_to", "repeat", "tile", "repeat_interleave", "narrow", "split", "chunk",
         "unbind", "flip", "fliplr", "flipud", "roll", "clone", "contiguous"],
    _i: ["gather", "scatter", "scatter_add", "index_select", "masked_fill", "masked_select",
         "take", "nonzero", "argwhere", "sort", "argsort", "topk"],
}

for _mod, _names in _FUNCS.items():
    for _n in _names:
        _METHODS.setdefault(_n, getattr(_mod, _n))

_INPLACE_BINARY = ["add", "sub", "mul", "div", "pow", "remainder", "fmod", "floor_divide",
                   "maximum", "minimum", "masked_fill", "clamp_min", "clamp_max", "addcmul",
                   "addcdiv"]
_INPLACE_UNARY = ["exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal", "neg", "abs",
                  "sin", "cos", "tanh", "sigmoid", "relu", "sign", "floor", "ceil", "trunc",
                  "round", "clamp", "clip", "square", "scatter", "scatter_add",
                  "index_fill", "t", "squeeze", "unsqueeze"]


def clamp_min(input: Tensor, min: Any) -> Tensor:  # noqa: A002
    return _e.clamp(input, min, None)


def clamp_max(input: Tensor, max: Any) -> Tensor:  # noqa: A002
    return _e.clamp(input, None, max)


_METHODS["clamp_min"] = clamp_min
_METHODS["clamp_max"] = clamp_max


def _view_inplace(fn: Any) -> Any:
    def f(self: Tensor, *args: Any) -> Tensor:
        if self._rg and self.grad_fn is None and _ip._grad_on.on:
            _ip._check_leaf(self)
        r = fn(self, *args)
        self._data = r._data
        if r.grad_fn is not None:  # the new shape's gradient must go through the view op
            self.grad_fn = r.grad_fn
            if self._base is not None:
                self._view_ops = r._view_ops
        return self

    return f


for _n in _INPLACE_BINARY:
    src = _METHODS.get(_n)
    if src is not None:
        _METHODS[_n + "_"] = _ip._binary_inplace(src)
for _n in _INPLACE_UNARY:
    src = _METHODS.get(_n)
    if src is None:
        continue
    if _n in ("t", "squeeze", "unsqueeze"):
        _METHODS[_n + "_"] = _view_inplace(src)
    else:
        _METHODS[_n + "_"] = _ip._unary_inplace(src)

for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)

Tensor.T = property(_m.T)  # type: ignore[attr-defined]
Tensor.mT = property(_m.mT)  # type: ignore[attr-defined]
Tensor.absolute = Tensor.abs  # type: ignore[attr-defined]
Tensor.multiply = Tensor.mul  # type: ignore[attr-defined]
Tensor.divide = Tensor.div  # type: ignore[attr-defined]
Tensor.subtract = Tensor.sub  # type: ignore[attr-defined]
Tensor.true_divide = Tensor.div  # type: ignore[attr-defined]

# NOTE: ``from .matmul import *`` rebinds ``matmul`` to the function, hiding the submodule;
# keep ``lucid.ops.matmul`` the module (``lucid.ops.matmul.linear``). ``lucid.matmul`` is the
# op, imported by ``lucid/__init__.py``.
matmul = _x

__all__ = sorted({*_c.__all__, *_e.__all__, *_i.__all__, *_x.__all__, *_m.__all__,
                  *_la.__all__, *_cmp.__all__,
                  *_rnd.__all__, *_r.__all__, "to_device", "clamp_min", "clamp_max"}
                 - {"matmul"})


def _softmax_method(name: str) -> Any:
    def f(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
        from . import activation

        return getattr(activation, name)(self, dim, dtype=dtype)

    f.__name__ = name
    f.__doc__ = f"``{name}`` over ``dim`` (as ``torch.Tensor.{name}``)."
    return f


for _n in ("softmax", "log_softmax"):
    setattr(Tensor, _n, _softmax_method(_n))
