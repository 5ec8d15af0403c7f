"""Half-precision compute on the numpy-array backends ("numpy", "cpu").

float16 and bfloat16 (``ml_dtypes``) arrays are stored as such. numpy's ufuncs already compute
each element of them through float32 and round once, as PyTorch's CPU kernels do, so
elementwise math needs nothing here. What does need it is listed in ``WIDEN``: reductions that
would accumulate in 2-byte floats (a bfloat16 sum of 300 numbers loses whole units), matmul
(numpy gives float32 for bfloat16 and runs float16 without BLAS), and the fused nn ops and
convolutions, whose kernels take float32/float64 only. For those, ``widen`` wraps the backend
method once, at class creation: half inputs become float32, the method runs, and its float32
results are rounded back to the input's half dtype. float32/float64 calls never reach the
wrapper on "cpu" (its overrides test ``x.dtype in _F`` first and only route other dtypes
here); on the reference backend they pay one dtype test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._dtype import HALF_NP

__all__ = ["WIDEN", "widen", "widened"]

_F32 = np.dtype(np.float32)
_HALF = HALF_NP  # the live set: bfloat16 joins when ml_dtypes loads

# method name -> indices of array arguments the method updates in place (written back)
WIDEN: dict[str, tuple[int, ...]] = {
    "sum": (), "mean": (), "var": (), "cumsum": (), "cumprod": (),
    "matmul": (), "outer": (), "erf": (), "sigmoid": (),
    "softmax": (), "softmax_backward": (), "cross_entropy": (), "cross_entropy_backward": (),
    "attention": (), "attention_backward": (),
    "batch_norm_train": (3, 4), "batch_norm_backward": (), "layer_norm": (),
    "layer_norm_backward": (),
    "conv2d": (), "conv2d_grad_input": (), "conv2d_grad_weight": (), "unfold": (), "fold": (),
    "avg_pool2d": (), "avg_pool2d_backward": (), "adaptive_avg_pool2d": (),
    "adaptive_avg_pool2d_backward": (),
}


def _up(a: Any) -> Any:
    if isinstance(a, np.ndarray) and a.dtype in _HALF:
        return a.astype(_F32)
    return a


def _down(r: Any, h: np.dtype) -> Any:
    if isinstance(r, np.ndarray):
        return r.astype(h) if r.dtype == _F32 else r
    if isinstance(r, tuple):
        return tuple(_down(x, h) for x in r)
    if isinstance(r, np.floating) and r.dtype == _F32:  # a 0-d result numpy made a scalar
        return np.asarray(r, h)
    return r


def widened(fn: Callable[..., Any], inplace: tuple[int, ...] = ()) -> Callable[..., Any]:
    """``fn`` computing in float32 when its first argument is a float16/bfloat16 array; the
    results are rounded back to that dtype, and the arguments at ``inplace`` (updated in place
    by ``fn``) are written back. ``sum``'s ``dtype`` argument (4th) is honoured."""
    is_sum = fn.__name__ == "sum"

    def f(*args: Any, **kwargs: Any) -> Any:
        x = args[0]
        h = getattr(x, "dtype", None)
        if h not in _HALF:
            return fn(*args, **kwargs)
        wide = tuple(_up(a) for a in args)
        out = fn(*wide, **{k: _up(v) for k, v in kwargs.items()})
        for i in inplace:
            if i < len(args) and args[i] is not wide[i]:
                args[i][...] = wide[i]
        if is_sum:
            d = kwargs.get("dtype", args[3] if len(args) > 3 else None)
            if d is not None:
                return np.asarray(out).astype(d.np, copy=False)
        return _down(out, h)

    f.__name__, f.__doc__ = fn.__name__, fn.__doc__
    f.__wrapped__ = fn  # type: ignore[attr-defined]
    return f


def widen(cls: type) -> type:
    """Wrap each ``WIDEN`` method of a backend class with ``widened`` (returns ``cls``)."""
    for name, inplace in WIDEN.items():
        fn = cls.__dict__.get(name)
        if fn is None:  # inherited: wrap what the class resolves
            fn = getattr(cls, name)
        elif isinstance(fn, staticmethod):
            fn = fn.__func__
        setattr(cls, name, staticmethod(widened(fn, inplace)))
    return cls
