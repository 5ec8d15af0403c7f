"""Tensor creation: ``tensor``, ``zeros``, ``arange``, ``eye``, the ``*_like`` forms, ..."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import _dtype
from .._convert import to_array
from .._tensor import Tensor, _make
from ..backend import get_backend
from ._util import size_arg, sized


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


asarray = as_tensor


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
          device: Any = None, requires_grad: bool = False) -> Tensor:
    """torch's deprecated ``range``: ``start`` to ``end`` *inclusive* by ``step``, in the
    default float dtype unless ``dtype`` says otherwise (``arange`` is the usual form).

    Example::

        lucid.range(1, 4)       # tensor([1., 2., 3., 4.]) with a deprecation warning
    """
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    vals = [float(v.item() if isinstance(v, Tensor) else v) for v in (start, end, step)]
    if vals[2] == 0:
        raise RuntimeError("step must be nonzero")
    if (vals[1] - vals[0]) * vals[2] < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    n = int(math.floor((vals[1] - vals[0]) / vals[2])) + 1
    be = get_backend(device)
    t = _make(be.from_numpy((vals[0] + np.arange(n) * vals[2]).astype(d.np)), be, False, None)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _factory(fill: str) -> Any:
    def f(*sizes: Any, size: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, out: Any = None, layout: Any = None,
          pin_memory: bool = False) -> Tensor:
        shape = size_arg(sized(fill, sizes, size))
        d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
        be = get_backend(device)
        t = _make(getattr(be, fill)(shape, d), be, False, None)
        if requires_grad:
            t.requires_grad_(True)
        return t

    f.__name__ = fill
    f.__doc__ = f"A tensor of the given size filled by ``{fill}`` (default float dtype)."
    return f


zeros = _factory("zeros")
ones = _factory("ones")
empty = _factory("empty")


def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
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
    t = _make(be.full(size_arg((size,)), fill_value, d), be, False, None)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _like(factory: Any) -> Any:
    name = factory.__name__

    def f(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          memory_format: Any = None) -> Tensor:
        return factory(*input.shape, dtype=input.dtype if dtype is None else dtype,
                       device=input._be if device is None else device,
                       requires_grad=requires_grad)

    f.__name__ = name + "_like"
    f.__doc__ = f"``{name}`` with the shape, dtype and device of ``input``."
    return f


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    return full(input.shape, fill_value, dtype=input.dtype if dtype is None else dtype,
                device=input._be if device is None else device, requires_grad=requires_grad)


def arange(start: Any = 0, end: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
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
    n = max(math.ceil((vals[1] - vals[0]) / vals[2]), 0)
    data = be.from_numpy((vals[0] + np.arange(n) * vals[2]).astype(d.np))
    t = _make(data, be, False, None)
    if requires_grad:
        t.requires_grad_(True)
    return t


def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    be = get_backend(device)
    t = _make(be.linspace(float(start), float(end), int(steps), d), be, False, None)
    if requires_grad:
        t.requires_grad_(True)
    return t


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None,
             device: Any = None) -> Tensor:
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    be = get_backend(device)
    arr = np.power(base, np.linspace(float(start), float(end), int(steps))).astype(d.np)
    return _make(be.from_numpy(arr), be, False, None)


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    be = get_backend(device)
    t = _make(be.eye(int(n), int(n if m is None else m), d), be, False, None)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    """``Tensor.new_tensor``: a copy of ``data`` with this tensor's dtype and device."""
    return tensor(data, dtype=self.dtype if dtype is None else dtype,
                  device=self._be if device is None else device, requires_grad=requires_grad)


def _new_factory(factory: Any) -> Any:
    name = factory.__name__

    def f(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
        return factory(*size, dtype=self.dtype if dtype is None else dtype,
                       device=self._be if device is None else device,
                       requires_grad=requires_grad)

    f.__name__ = "new_" + name
    f.__doc__ = f"``Tensor.new_{name}``: ``{name}`` with this tensor's dtype and device."
    return f


def _new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None,
              device: Any = None, requires_grad: bool = False) -> Tensor:
    """``Tensor.new_full``: ``full`` with this tensor's dtype and device."""
    return full(size, fill_value, dtype=self.dtype if dtype is None else dtype,
                device=self._be if device is None else device, requires_grad=requires_grad)


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    return tensor(s, dtype=dtype or _dtype.get_default_dtype(), device=device)


__all__ = [
    "arange", "as_tensor", "asarray", "empty", "empty_like", "eye", "from_numpy", "frombuffer",
    "full", "range",
    "full_like", "linspace", "logspace", "ones", "ones_like", "scalar_tensor", "tensor", "zeros",
    "zeros_like"
]
