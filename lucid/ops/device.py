"""Moving tensors between devices and dtypes: ``to``, ``cpu``, ``gpu``/``cuda``, casts."""

from __future__ import annotations

import builtins
from typing import Any, NamedTuple

import numpy as np

from .. import _dtype
from .._device import device as _device_cls
from .._memory_format import preserve_format
from .._tensor import Tensor
from ..autograd.function import Op
from ..backend import get_backend, transfer
from ._util import cast
from .shape import clone, in_format


class ToDevice(Op):
    def forward(self, x, dst):
        self.dst = dst
        return transfer(x, self.be, dst, copy=False)

    def backward(self, g):
        return transfer(g, self.dst, self.be, copy=False), None

    def graph_backward(self, g, saved):
        return to_device(g, self.be), None


def to_device(t: Tensor, dst: Any) -> Tensor:
    """``t`` on backend ``dst`` (differentiable)."""
    if t._be is dst:
        return t
    out = ToDevice.apply(t, dst)
    out._be = dst
    return out


class ToArgs(NamedTuple):
    """The arguments of a ``to()`` call, resolved: a backend (None: stay) and a lucid dtype
    (None: keep)."""

    backend: Any
    dtype: _dtype.dtype | None
    non_blocking: bool
    copy: bool
    memory_format: Any


def _is_dtype_like(a: Any) -> bool:
    """A lucid, numpy or torch dtype, or a type object (``float``, ``np.float32``)."""
    return isinstance(a, (_dtype.dtype, builtins.type, np.dtype)) or (
        hasattr(a, "is_floating_point") and hasattr(a, "itemsize"))  # a torch.dtype


def parse_to(*args: Any, **kwargs: Any) -> ToArgs:
    """Parse the arguments of ``Tensor.to`` and ``Module.to`` as PyTorch does: ``to(device)``,
    ``to(dtype)``, ``to(tensor)`` (its device and dtype), ``to(device, dtype)``, then up to two
    positional flags (``non_blocking``, ``copy``), and the keywords ``device=``, ``dtype=``,
    ``non_blocking=``, ``copy=``, ``memory_format=`` (``lucid.channels_last`` & co.).

    Example::

        parse_to("cpu", lucid.float64, copy=True)   # ToArgs(backend=<cpu>, dtype=float64, ...)
    """
    dev = kwargs.pop("device", None)
    dt = kwargs.pop("dtype", None)
    flags = [bool(kwargs.pop("non_blocking", False)), bool(kwargs.pop("copy", False))]
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    n_flags = 0
    for a in args:
        if isinstance(a, Tensor):
            dev, dt = a._be, a.dtype
        elif isinstance(a, bool):
            if n_flags == 2:
                raise TypeError(f"to() received an invalid argument: {a!r}")
            flags[n_flags] = a
            n_flags += 1
        elif a is None:
            continue
        elif _is_dtype_like(a):
            dt = a
        elif isinstance(a, (str, int, _device_cls)) or hasattr(a, "type"):  # torch.device too
            dev = a
        else:
            raise TypeError(f"to() received an invalid argument: {a!r}")
    return ToArgs(None if dev is None else get_backend(dev),
                  None if dt is None else _dtype.to_dtype(dt), flags[0], flags[1], memory_format)


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Return this tensor on another device and/or dtype (self when nothing changes).

    Example::

        x.to(lucid.float64); x.to("gpu"); x.to("cpu", lucid.float16); x.to(other)
    """
    be, dt, _, copy, fmt = parse_to(*args, **kwargs)
    out = self
    if be is not None:
        out = to_device(out, be)
    if dt is not None:
        out = cast(out, dt)
    if copy and out is self:
        out = clone(self)
    if fmt is not None and fmt is not preserve_format:
        out = in_format(out, fmt)
    return out


def _in_format(t: Tensor, memory_format: Any) -> Tensor:
    return t if memory_format is None or memory_format is preserve_format else \
        in_format(t, memory_format)


def cpu(self: Tensor, memory_format: Any = preserve_format) -> Tensor:
    """This tensor in host memory (itself when it is there), stored in ``memory_format``
    (as ``to``)."""
    return _in_format(to_device(self, get_backend("cpu")), memory_format)


def gpu(self: Tensor, device: Any = None, non_blocking: bool = False,
        memory_format: Any = preserve_format) -> Tensor:
    """This tensor on the "gpu" device (``cuda()`` too: torch's name for it), stored in
    ``memory_format`` (as ``to``); ``non_blocking`` changes nothing (the move is
    synchronous)."""
    return _in_format(to_device(self, get_backend("gpu")), memory_format)


def _caster(d: _dtype.dtype) -> Any:
    def f(self: Tensor, memory_format: Any = preserve_format) -> Tensor:
        return _in_format(cast(self, d), memory_format)

    f.__name__ = {"float32": "float", "float64": "double", "float16": "half",
                  "bfloat16": "bfloat16", "int64": "long",
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
