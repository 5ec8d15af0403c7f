"""``make_tensor``: PyTorch's ``torch.testing.make_tensor`` (random test tensors of a dtype,
device and value range)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..ops.complex import complex as complex_
from ..ops.creation import empty
from ..ops.random import randint

__all__ = ["make_tensor"]


def _low_high(dtype: _dtype.dtype, low: float | None, high: float | None, lowest: float,
              highest: float, default_low: float, default_high: float,
              integral: bool) -> tuple[float, float]:
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and not integral:
        warnings.warn("Passing `low==high` to `lucid.testing.make_tensor` for floating types "
                      "is deprecated (as in PyTorch). Use `lucid.full(...)` instead.",
                      FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if integral:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape: int | Sequence[int], dtype: _dtype.dtype, device: Any,
                low: float | None = None, high: float | None = None,
                requires_grad: bool = False, noncontiguous: bool = False,
                exclude_zero: bool = False, memory_format: Any = None) -> Tensor:
    """A tensor of ``shape``, ``dtype`` and ``device`` filled with values drawn uniformly from
    ``[low, high)``, as ``torch.testing.make_tensor``.

    Defaults: bool ``[0, 2)``, unsigned integers ``[0, 10)``, signed integers ``[-9, 10)``,
    floats ``[-9, 9)``; ``low``/``high`` outside the dtype's range are clamped to it.
    ``noncontiguous=True`` returns a strided view (every other element of a wider tensor);
    ``exclude_zero=True`` replaces zeros by 1 (integers, bool) or the dtype's smallest normal
    number (floats). Values come from lucid's generator (``lucid.manual_seed``).

    Example::

        from lucid.testing import make_tensor
        x = make_tensor(2, 3, dtype=lucid.float32, device="cpu", low=-1, high=1)
    """
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = tuple(shape[0])  # type: ignore[assignment]
    dims = tuple(int(s) for s in shape)  # type: ignore[arg-type]
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and "
                         f"memory_format={memory_format}")
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        "lucid.testing.make_tensor().")
    integral = not (dtype.is_floating_point or getattr(dtype, "is_complex", False))
    if requires_grad and integral:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(dims) > 1
    if noncontiguous:
        dims = (*dims[:-1], 2 * dims[-1])
    if dtype is _dtype.bool_:
        lo, hi = _low_high(dtype, low, high, 0, 2, 0, 2, True)
        result = randint(int(lo), int(hi), dims, dtype=dtype, device=device)
    elif integral:
        info = np.iinfo(dtype.np)
        top = int(info.max) + (1 if dtype is not _dtype.int64 else 0)
        lo, hi = _low_high(dtype, low, high, int(info.min), top,
                           0 if info.min == 0 else -9, 10, True)
        result = randint(int(lo), int(hi), dims, dtype=dtype, device=device)
    else:
        is_complex = getattr(dtype, "is_complex", False)
        real = _dtype.float64 if dtype.np == np.complex128 else _dtype.float32
        finfo = np.finfo(dtype.np)
        lo, hi = _low_high(dtype, low, high, float(finfo.min), float(finfo.max), -9, 9, False)

        def draw() -> Tensor:
            t = empty(dims, dtype=real if is_complex else dtype, device=device)
            if hi - lo >= float(finfo.max):
                return t.uniform_(lo / 2, hi / 2).mul_(2)
            return t.uniform_(lo, hi)

        result = complex_(draw(), draw()) if is_complex else draw()
    if noncontiguous:
        result = result[..., 1::2]
    if exclude_zero:
        if integral:
            result[result == 0] = 1
        else:
            tiny = float(np.finfo(dtype.np).tiny)
            result[result == 0] = complex(tiny, tiny) if getattr(dtype, "is_complex", False) \
                else tiny
    if not integral:
        result.requires_grad_(requires_grad)
    return result
