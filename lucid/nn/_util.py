"""Small helpers shared by the nn files: PyTorch-style type names for error messages, repr
indentation, and moving an array between backends and dtypes."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import _dtype
from .._dtype import torch_name
from .._tensor import Tensor
from ..backend import transfer


def typename(obj: Any) -> str:
    """``torch.typename`` with lucid names: tensors by legacy type ("lucid.FloatTensor"),
    other objects by module-qualified class name ("int" for builtins)."""
    if isinstance(obj, Tensor):
        name = torch_name(obj.dtype) + "Tensor"
        dev = obj._be.name
        return f"lucid.{name}" if dev == "cpu" else f"lucid.{dev}.{name}"
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


def addindent(s: str, n: int, indent_blank: bool = False) -> str:
    """Indent every line but the first by ``n`` spaces (blank lines stay empty unless
    ``indent_blank``)."""
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    pad = " " * n
    return first + "\n" + "\n".join(
        pad + ln if indent_blank or ln.strip() else "" for ln in lines)


def abs_index(idx: Any, size: int) -> int:
    """``idx`` (an int-like, negative counts from the end) as a position in ``range(size)``;
    IndexError when outside."""
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx + size if idx < 0 else idx


def convert_array(arr: Any, src: Any, be: Any, dt: _dtype.dtype | None) -> Any:
    """``arr`` (on backend ``src``, or numpy when None) on backend ``be`` with dtype ``dt``
    (None keeps the dtype)."""
    if src is None:
        if dt is None:
            dt = _dtype.from_numpy_dtype(arr.dtype)
        return be.from_numpy(np.asarray(arr, dtype=dt.np))
    if src is not be:
        arr = transfer(arr, src, be, copy=True)
    if dt is not None and be.dtype_of(arr) is not dt:
        arr = be.astype(arr, dt)
    return arr
