"""More random sampling: the in-place samplers ``random_``, ``exponential_``,
``geometric_``, ``cauchy_``, ``log_normal_``, and ``rand_like`` / ``randn_like`` /
``randint_like``. Numbers are drawn on the host from the global (or given) generator, as
in ``lucid/ops/random.py``, so one seed gives the same values on every device."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._memory_format import preserve_format
from .._tensor import Tensor, _make
from ..backend import get_backend
from .factory_options import check_layout, format_order, leaf, stored_in
from .random import Generator, _gen, _inplace_sampler, rand, randint, randn


def _upload_like(t: Tensor, values: np.ndarray) -> Tensor:
    be = t._be
    return _make(be.from_numpy(np.asarray(values.astype(t.dtype.np), order="C")), be, False,
                 None)


def _continuous(t: Tensor, name: str) -> None:
    if not t.dtype.is_floating_point:
        d = "long int" if name == "Cauchy" else _dtype.torch_name(t.dtype)
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {d}")


_INT_RANGE = {
    "bool": (0, 2), "uint8": (0, 1 << 8), "int8": (-(1 << 7), 1 << 7),
    "int16": (-(1 << 15), 1 << 15), "int32": (-(1 << 31), 1 << 31),
    "int64": (-(1 << 63), 1 << 63), "float16": (0, (1 << 11) + 1),
    "float32": (0, (1 << 24) + 1), "float64": (0, (1 << 53) + 1),
}


def _random_values(t: Tensor, *args: Any, generator: Generator | None = None,
                   **kw: Any) -> Tensor:
    low, high = kw.pop("from", None), kw.pop("to", None)
    if kw:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kw))}'")
    if len(args) > 2:
        raise TypeError(f"random_() takes at most 2 positional arguments ({len(args)} given)")
    if len(args) == 1:
        low, high = (args[0], high) if high is not None else (0, args[0])
    elif len(args) == 2:
        low, high = args
    lo_d, hi_d = _INT_RANGE[t.dtype.name]
    low = 0 if low is None else int(low)
    high = hi_d if high is None else int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    if not t.dtype.is_floating_point and (low < lo_d or high - 1 >= hi_d):
        bad = "from" if low < lo_d else "to - 1"
        names = {"uint8": "unsigned char", "int8": "signed char", "int16": "short",
                 "int32": "int", "int64": "long", "bool": "bool"}
        raise RuntimeError(f"{bad} is out of bounds for {names[t.dtype.name]}")
    rng = _gen(generator)
    vals = rng.integers(low, high, tuple(t.shape), dtype=np.int64, endpoint=False) \
        if high <= (1 << 63) else rng.integers(low, high - 1, tuple(t.shape), dtype=np.int64,
                                               endpoint=True)
    return _upload_like(t, vals)


def _exponential_values(t: Tensor, lambd: float = 1.0, *,
                        generator: Generator | None = None) -> Tensor:
    _continuous(t, "Exponential")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _upload_like(t, _gen(generator).exponential(1.0 / lambd, tuple(t.shape)))


def _geometric_values(t: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return _upload_like(t, _gen(generator).geometric(p, tuple(t.shape)))


def _cauchy_values(t: Tensor, median: float = 0.0, sigma: float = 1.0, *,
                   generator: Generator | None = None) -> Tensor:
    _continuous(t, "Cauchy")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    return _upload_like(t, median + sigma * _gen(generator).standard_cauchy(tuple(t.shape)))


def _log_normal_values(t: Tensor, mean: float = 1.0, std: float = 2.0, *,
                       generator: Generator | None = None) -> Tensor:
    _continuous(t, "Log-normal")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _upload_like(t, _gen(generator).lognormal(mean, std, tuple(t.shape)))


def _named_sampler(fn: Any, name: str, doc: str) -> Any:
    """The in-place ``Tensor`` method ``name`` filling its tensor with ``fn``'s samples."""
    f = _inplace_sampler(fn)
    f.__name__, f.__doc__ = name, doc
    return f


random_ = _named_sampler(_random_values, "random_", """\
Fill with integers drawn uniformly from ``[from, to)``: ``random_(to)``,
``random_(from, to)``, or with no bounds ``[0, 2**mantissa]`` for floats and the dtype's
non-negative range for integers.""")
exponential_ = _named_sampler(_exponential_values, "exponential_",
                              "Fill with exponential samples of rate ``lambd``.")
geometric_ = _named_sampler(_geometric_values, "geometric_",
                            "Fill with geometric samples (trials until the first success, >= 1).")
cauchy_ = _named_sampler(_cauchy_values, "cauchy_",
                         "Fill with Cauchy samples of location ``median`` and scale ``sigma``.")
log_normal_ = _named_sampler(_log_normal_values, "log_normal_",
                             "Fill with ``exp(N(mean, std))`` samples.")


def _like_args(name: str, input: Tensor, dtype: Any, layout: Any, device: Any,
               pin_memory: bool) -> tuple[_dtype.dtype, Any]:
    d = input.dtype if dtype is None else _dtype.to_dtype(dtype)
    be = input._be if device is None else get_backend(device)
    if layout is not None or pin_memory:
        check_layout(name, layout, pin_memory, be)
    return d, be


def _like_out(t: Tensor, input: Tensor, memory_format: Any, requires_grad: bool) -> Tensor:
    """``t``'s values stored in ``memory_format`` (``preserve_format``: in the order of
    ``input``'s strides), as a new leaf."""
    data = t._data
    if memory_format is not None:
        data = stored_in(data, t._be, format_order(memory_format, input, t.ndim))
    return leaf(data, t._be, requires_grad)


def rand_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None,
              layout: Any = None, device: Any = None, pin_memory: bool = False,
              requires_grad: bool = False, memory_format: Any = preserve_format) -> Tensor:
    """Uniform [0, 1) samples with the shape (and by default dtype and device) of ``input``,
    stored in ``memory_format`` (as ``zeros_like``)."""
    d, be = _like_args("rand_like", input, dtype, layout, device, pin_memory)
    if not d.is_floating_point:
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for "
                                  f"'{_dtype.torch_name(d)}'")
    return _like_out(rand(*input.shape, generator=generator, dtype=d, device=be), input,
                     memory_format, requires_grad)


def randn_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None,
               layout: Any = None, device: Any = None, pin_memory: bool = False,
               requires_grad: bool = False, memory_format: Any = preserve_format) -> Tensor:
    """Standard normal samples with the shape (and by default dtype and device) of
    ``input``, stored in ``memory_format`` (as ``zeros_like``)."""
    d, be = _like_args("randn_like", input, dtype, layout, device, pin_memory)
    if not d.is_floating_point:
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                  f"'{_dtype.torch_name(d)}'")
    return _like_out(randn(*input.shape, generator=generator, dtype=d, device=be), input,
                     memory_format, requires_grad)


def randint_like(input: Tensor, low: int = 0, high: int | None = None, *,
                 generator: Generator | None = None, dtype: Any = None, layout: Any = None,
                 device: Any = None, pin_memory: bool = False, requires_grad: bool = False,
                 memory_format: Any = preserve_format) -> Tensor:
    """Integers from ``[low, high)`` with the shape (and by default dtype and device) of
    ``input``: ``randint_like(x, high)`` or ``randint_like(x, low, high)``; stored in
    ``memory_format`` (as ``zeros_like``)."""
    if high is None:
        low, high = 0, low
    d, be = _like_args("randint_like", input, dtype, layout, device, pin_memory)
    out = randint(int(low), int(high), tuple(input.shape), generator=generator, dtype=d,
                  device=be)
    return _like_out(out, input, memory_format, requires_grad)


__all__ = ["rand_like", "randint_like", "randn_like"]
