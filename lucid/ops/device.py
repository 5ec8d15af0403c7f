"""Moving tensors between devices and dtypes: ``to``, ``cpu``, ``gpu``/``cuda``, casts."""

from __future__ import annotations

import builtins
from typing import Any

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Op
from ..backend import get_backend
from ._util import cast


class ToDevice(Op):
    def forward(self, x, dst):
        self.dst = dst
        return dst.from_numpy(self.be.to_numpy(x))

    def backward(self, g):
        return self.be.from_numpy(self.dst.to_numpy(g)), None


def to_device(t: Tensor, dst: Any) -> Tensor:
    """``t`` on backend ``dst`` (differentiable)."""
    if t._be is dst:
        return t
    out = ToDevice.apply(t, dst)
    out._be = dst
    return out


def _parse_to(args: tuple, kwargs: dict) -> tuple[Any, Any, bool]:
    dev = kwargs.pop("device", None)
    dt = kwargs.pop("dtype", None)
    copy = bool(kwargs.pop("copy", False))
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            dev, dt = a._be, a.dtype
        elif isinstance(a, bool):
            copy = a
        elif isinstance(a, (_dtype.dtype, builtins.type)):  # ``type`` is shadowed below
            dt = a
        elif a is None:
            continue
        elif isinstance(a, (str, int)) or hasattr(a, "type"):
            dev = a
        else:
            dt = _dtype.to_dtype(a)
    return dev, dt, copy


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Return this tensor on another device and/or dtype (self when nothing changes).

    Example::

        x.to(lucid.float64); x.to("gpu"); x.to("cpu", lucid.float16); x.to(other)
    """
    dev, dt, copy = _parse_to(args, dict(kwargs))
    out = self
    if dev is not None:
        be = dev if hasattr(dev, "dtype_of") else get_backend(dev)
        out = to_device(out, be)
    if dt is not None:
        out = cast(out, _dtype.to_dtype(dt))
    if copy and out is self:
        from .movement import clone

        out = clone(self)
    return out


def cpu(self: Tensor) -> Tensor:
    return to_device(self, get_backend("cpu"))


def gpu(self: Tensor, device: Any = None) -> Tensor:
    return to_device(self, get_backend("gpu"))


def _caster(d: _dtype.dtype) -> Any:
    def f(self: Tensor, memory_format: Any = None) -> Tensor:
        return cast(self, d)

    f.__name__ = {"float32": "float", "float64": "double", "float16": "half", "int64": "long",
                  "int32": "int", "bool": "bool", "int16": "short", "uint8": "byte",
                  "int8": "char"}[d.name]
    f.__doc__ = f"This tensor as ``lucid.{d.name}``."
    return f


def type_as(self: Tensor, other: Tensor) -> Tensor:
    return to(self, other)


def type(self: Tensor, dtype: Any = None) -> Any:  # noqa: A001
    if dtype is None:
        return f"lucid.{_dtype.torch_name(self.dtype)}Tensor"
    return cast(self, _dtype.to_dtype(dtype))
