"""Tensor creation: ``tensor``, ``zeros``, ``arange``, ``eye``, the ``*_like`` forms, ..."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

from .. import _dtype
from .._convert import to_array
from .._memory_format import preserve_format
from .._tensor import Tensor, _make
from ..backend import get_backend
from ._util import size_arg, sized
from .factory_options import (
    check_layout,
    format_order,
    leaf,
    stored_in,
)


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new tensor that copies ``data`` (nested lists, numbers, numpy arrays, tensors).

    Python floats become the default float dtype (float32), ints int64, bools bool;
    numpy arrays keep their dtype.

    Example::

        lucid.tensor([[1, 2], [3, 4]])                 # int64
        lucid.tensor([0.5, 1.5], requires_grad=True)   # float32
    """
    be = get_backend(device if device is not None else
                     (data._be if isinstance(data, Tensor) else None))
    if pin_memory:
        check_layout("tensor", None, pin_memory, be)
    t = _make(to_array(data, dtype, be), be, False, None)
    if requires_grad:
        t.requires_grad_(True)
    return t


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like ``tensor`` but shares memory with a numpy array or tensor when it can."""
    if isinstance(data, Tensor):
        out = data
        if device is not None or dtype is not None:
            out = data.to(device=device, dtype=dtype)  # type: ignore[attr-defined]
        return out
    be = get_backend(device)
    return _make(to_array(data, dtype, be, copy=False), be, False, None)


def _has_buffer(obj: Any) -> bool:
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def _alias_error(what: str) -> ValueError:
    return ValueError(f"can't alias {what}.")


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool | None = None) -> Tensor:
    """``obj`` (a tensor, numpy array or scalar, buffer, number or sequence) as a tensor,
    sharing its memory where it can, as ``torch.asarray``.

    ``copy=None`` shares memory unless ``dtype``/``device`` need a new tensor; ``copy=True``
    always copies; ``copy=False`` always shares and raises ``ValueError`` where it cannot.
    A tensor comes back itself when nothing changes (a cast or copy keeps its autograd
    history). ``requires_grad`` None keeps a tensor's flag (False for other objects); True or
    False sets it on the result (on ``obj`` itself when that is the result, as torch). An
    object with the buffer protocol (``bytes``, ``bytearray``) is read as elements of
    ``dtype`` (default float).

    Example::

        a = np.arange(3.0)
        lucid.asarray(a)                  # shares a's memory, float64
        lucid.asarray([1, 2], dtype=lucid.float32, requires_grad=True)
    """
    if isinstance(obj, Tensor):
        d = None if dtype is None else _dtype.to_dtype(dtype)
        be = None if device is None else get_backend(device)
        wrong_dtype = d is not None and d is not obj.dtype
        wrong_device = be is not None and be is not obj._be
        if copy is False and wrong_device:
            raise _alias_error(f"tensor from device '{obj.device}' to '{be.device}'")
        if copy is False and wrong_dtype:
            raise _alias_error(f"tensor with dtype '{_dtype.torch_name(obj.dtype)}' into dtype "
                               f"'{_dtype.torch_name(d)}'")
        out = obj
        if wrong_dtype or wrong_device:
            out = obj.to(device=be, dtype=d, copy=bool(copy))  # type: ignore[attr-defined]
        elif copy:
            out = obj.clone()  # type: ignore[attr-defined]
        if requires_grad is None:
            return out
        if out.grad_fn is not None:
            return out if requires_grad else out.detach()  # type: ignore[attr-defined]
        if requires_grad and not (out.dtype.is_floating_point or out.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        return out.requires_grad_(bool(requires_grad))
    be = get_backend(device)
    if isinstance(obj, np.ndarray):
        own = _dtype.from_numpy_dtype(obj.dtype)
        d = own if dtype is None else _dtype.to_dtype(dtype)
        if copy is False and d is not own:
            raise _alias_error(f"tensor with dtype '{_dtype.torch_name(own)}' into dtype "
                               f"'{_dtype.torch_name(d)}'")
        if copy is False and be.name == "gpu":
            raise _alias_error(f"tensor from device 'cpu' to '{be.device}'")
        data = to_array(obj, d, be, copy=bool(copy))
    elif not isinstance(obj, (list, tuple, np.generic, numbers.Number)) and _has_buffer(obj):
        d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
        arr = np.frombuffer(obj, dtype=d.np)
        data = be.from_numpy(arr.copy() if copy else arr)
    else:
        if copy is False:
            raise _alias_error("arbitrary sequence into a tensor" if isinstance(
                obj, (list, tuple)) else "scalar into a tensor")
        data = to_array(obj, dtype, be)
    return leaf(data, be, bool(requires_grad))


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A cpu tensor sharing memory with ``ndarray``."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    be = get_backend("cpu")
    return _make(ndarray, be, False, None)


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D cpu tensor sharing memory with ``buffer`` (any object with the buffer protocol),
    ``count`` elements of ``dtype`` from byte ``offset`` (-1: to the end). A read-only buffer
    gives a tensor that refuses in-place writes.

    Example::

        lucid.frombuffer(bytearray(b"\\x01\\x02"), dtype=lucid.uint8)    # tensor([1, 2])
    """
    d = _dtype.to_dtype(dtype)
    view = memoryview(buffer)
    nbytes = view.nbytes
    item = np.dtype(d.np).itemsize
    if offset < 0 or offset > nbytes or (offset == nbytes and nbytes):
        raise ValueError(f"both buffer length ({nbytes}) and offset ({offset}) must be positive "
                         "and the offset must be smaller than the buffer length")
    if count == 0 or (count < 0 and nbytes == 0):
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if count < 0:
        if (nbytes - offset) % item:
            raise ValueError(f"buffer length ({nbytes - offset} after offset) must be a multiple "
                             f"of element size ({item})")
        count = (nbytes - offset) // item
    elif offset + count * item > nbytes:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset "
                         f"({offset}) must not be greater than actual buffer length ({nbytes})")
    arr = np.frombuffer(buffer, dtype=d.np, count=count, offset=offset)
    t = _make(arr, get_backend("cpu"), False, None)
    if requires_grad:
        t.requires_grad_(True)
    return t


def range(start: Any = 0, end: Any = None, step: Any = 1, *, dtype: Any = None,  # noqa: A001
          layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """torch's deprecated ``range``: ``start`` to ``end`` *inclusive* by ``step``, in the
    default float dtype unless ``dtype`` says otherwise (``arange`` is the usual form).

    Example::

        lucid.range(1, 4)       # tensor([1., 2., 3., 4.]) with a deprecation warning
    """
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    be = get_backend(device)
    if layout is not None:
        check_layout("range", layout, False, be)
    if end is None:
        start, end = 0, start
    vals = [float(v.item() if isinstance(v, Tensor) else v) for v in (start, end, step)]
    if vals[2] == 0:
        raise RuntimeError("step must be nonzero")
    if (vals[1] - vals[0]) * vals[2] < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    n = int(math.floor((vals[1] - vals[0]) / vals[2])) + 1
    return leaf(be.from_numpy((vals[0] + np.arange(n) * vals[2]).astype(d.np)), be,
                requires_grad)


def _factory(fill: str) -> Any:
    def f(*sizes: Any, size: Any = None, dtype: Any = None, layout: Any = None,
          device: Any = None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
        shape = size_arg(sized(fill, sizes, size))
        d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
        be = get_backend(device)
        if layout is not None or pin_memory:
            check_layout(fill, layout, pin_memory, be)
        return leaf(getattr(be, fill)(shape, d), be, requires_grad)

    f.__name__ = fill
    f.__doc__ = f"A tensor of the given size filled by ``{fill}`` (default float dtype)."
    return f


zeros = _factory("zeros")
ones = _factory("ones")


def empty(*sizes: Any, size: Any = None, dtype: Any = None, layout: Any = None,
          device: Any = None, pin_memory: bool = False, requires_grad: bool = False,
          memory_format: Any = None) -> Tensor:
    """An uninitialised tensor of the given size (default float dtype), stored in
    ``memory_format`` (``lucid.contiguous_format`` by default, or ``lucid.channels_last``
    for a 4-D / ``channels_last_3d`` for a 5-D size).

    Example::

        lucid.empty(2, 3, 4, 5, memory_format=lucid.channels_last).stride()   # (60, 1, 15, 3)
    """
    shape = size_arg(sized("empty", sizes, size))
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    be = get_backend(device)
    if layout is not None or pin_memory:
        check_layout("empty", layout, pin_memory, be)
    data = be.empty(shape, d)
    if memory_format is not None:
        data = stored_in(data, be, format_order(memory_format, None, len(shape)))
    return leaf(data, be, requires_grad)


def full(size: Any, fill_value: Any, *, dtype: Any = None, layout: Any = None,
         device: Any = None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value`` (dtype inferred from the value)."""
    v = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    if not isinstance(v, (int, float, bool, np.number, np.bool_)):
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not "
                        f"{type(v).__name__}")
    if dtype is None:
        dtype = _dtype.bool_ if isinstance(v, bool) else (
            _dtype.int64 if isinstance(v, int) else _dtype.get_default_dtype())
    d = _dtype.to_dtype(dtype)
    be = get_backend(device)
    if layout is not None or pin_memory:
        check_layout("full", layout, pin_memory, be)
    return leaf(be.full(size_arg((size,)), fill_value, d), be, requires_grad)


def _like(fill: str) -> Any:
    name = fill + "_like"

    def f(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
          pin_memory: bool = False, requires_grad: bool = False,
          memory_format: Any = preserve_format) -> Tensor:
        d = input.dtype if dtype is None else _dtype.to_dtype(dtype)
        be = input._be if device is None else get_backend(device)
        if layout is not None or pin_memory:
            check_layout(name, layout, pin_memory, be)
        shape = tuple(input._data.shape)
        data = getattr(be, fill)(shape, d)
        if memory_format is not None:
            data = stored_in(data, be, format_order(memory_format, input, len(shape)))
        return leaf(data, be, requires_grad)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"``{fill}`` with the shape, dtype and device of ``input``, stored in "
                 "``memory_format`` (by default ``lucid.preserve_format``: in the order of "
                 "``input``'s strides, as torch).")
    return f


zeros_like = _like("zeros")
ones_like = _like("ones")
empty_like = _like("empty")


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, layout: Any = None,
              device: Any = None, pin_memory: bool = False, requires_grad: bool = False,
              memory_format: Any = preserve_format) -> Tensor:
    """``full`` with the shape, dtype and device of ``input``, stored in ``memory_format``
    (as the other ``*_like`` factories)."""
    d = input.dtype if dtype is None else _dtype.to_dtype(dtype)
    be = input._be if device is None else get_backend(device)
    if layout is not None or pin_memory:
        check_layout("full_like", layout, pin_memory, be)
    shape = tuple(input._data.shape)
    data = be.full(shape, fill_value.item() if isinstance(fill_value, Tensor) else fill_value,
                   d)
    if memory_format is not None:
        data = stored_in(data, be, format_order(memory_format, input, len(shape)))
    return leaf(data, be, requires_grad)


def arange(start: Any = 0, end: Any = None, step: Any = 1, *, dtype: Any = None,
           layout: Any = None, device: Any = None, pin_memory: bool = False,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` up to (not including) ``end`` by ``step``.

    The dtype is int64 when all arguments are ints, else the default float.
    """
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if vals[2] == 0:
        raise RuntimeError("step must be nonzero")
    if (vals[1] - vals[0]) * vals[2] < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        d = _dtype.int64 if all(isinstance(v, int) for v in vals) else \
            _dtype.get_default_dtype()
    else:
        d = _dtype.to_dtype(dtype)
    be = get_backend(device)
    if layout is not None or pin_memory:
        check_layout("arange", layout, pin_memory, be)
    n = max(math.ceil((vals[1] - vals[0]) / vals[2]), 0)
    return leaf(be.from_numpy((vals[0] + np.arange(n) * vals[2]).astype(d.np)), be,
                requires_grad)


def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, layout: Any = None,
             device: Any = None, pin_memory: bool = False,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` (both included)."""
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    be = get_backend(device)
    if layout is not None or pin_memory:
        check_layout("linspace", layout, pin_memory, be)
    return leaf(be.linspace(float(start), float(end), int(steps), d), be, requires_grad)


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None,
             layout: Any = None, device: Any = None, pin_memory: bool = False,
             requires_grad: bool = False) -> Tensor:
    """``steps`` values ``base ** linspace(start, end, steps)``."""
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    be = get_backend(device)
    if layout is not None or pin_memory:
        check_layout("logspace", layout, pin_memory, be)
    arr = np.power(base, np.linspace(float(start), float(end), int(steps))).astype(d.np)
    return leaf(be.from_numpy(arr), be, requires_grad)


def eye(n: int, m: int | None = None, *, dtype: Any = None, layout: Any = None,
        device: Any = None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The ``n x m`` (default ``n x n``) identity matrix."""
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    be = get_backend(device)
    if layout is not None or pin_memory:
        check_layout("eye", layout, pin_memory, be)
    return leaf(be.eye(int(n), int(n if m is None else m), d), be, requires_grad)


def _new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    """``Tensor.new_tensor``: a copy of ``data`` with this tensor's dtype and device."""
    return tensor(data, dtype=self.dtype if dtype is None else dtype,
                  device=self._be if device is None else device, requires_grad=requires_grad)


def _new_factory(factory: Any) -> Any:
    name = factory.__name__

    def f(self: Tensor, *size: Any, dtype: Any = None, layout: Any = None, device: Any = None,
          pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
        return factory(*size, dtype=self.dtype if dtype is None else dtype, layout=layout,
                       device=self._be if device is None else device, pin_memory=pin_memory,
                       requires_grad=requires_grad)

    f.__name__ = "new_" + name
    f.__doc__ = f"``Tensor.new_{name}``: ``{name}`` with this tensor's dtype and device."
    return f


def _new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None,
              layout: Any = None, device: Any = None, pin_memory: bool = False,
              requires_grad: bool = False) -> Tensor:
    """``Tensor.new_full``: ``full`` with this tensor's dtype and device."""
    return full(size, fill_value, dtype=self.dtype if dtype is None else dtype, layout=layout,
                device=self._be if device is None else device, pin_memory=pin_memory,
                requires_grad=requires_grad)


def scalar_tensor(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """A 0-D tensor holding the number ``s`` (default float dtype)."""
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    be = get_backend(device)
    if layout is not None or pin_memory:
        check_layout("scalar_tensor", layout, pin_memory, be)
    return leaf(to_array(s.item() if isinstance(s, Tensor) else s, d, be), be, requires_grad)


__all__ = [
    "arange", "as_tensor", "asarray", "empty", "empty_like", "eye", "from_numpy", "frombuffer",
    "full", "range",
    "full_like", "linspace", "logspace", "ones", "ones_like", "scalar_tensor", "tensor", "zeros",
    "zeros_like"
]
