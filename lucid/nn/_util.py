"""Small helpers shared by the nn files: PyTorch-style type names for error messages, repr
indentation, and moving an array between backends and dtypes."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import _dtype
from ..backend import transfer


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
