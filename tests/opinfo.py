"""The machinery behind ``op_db``: ``OpInfo`` entries, samples, and building the same
sample as lucid tensors, torch tensors or numpy arrays.

A sample is a list of positional arguments; tensor arguments are ``T`` markers holding the
*logical* values plus a layout: ``"c"`` (contiguous leaf), ``"t"`` (the leaf is stored
transposed and the op sees ``leaf.transpose(-1, -2)``) or ``"s"`` (the leaf has every value
twice along the last dim and the op sees ``leaf[..., ::2]``). Non-contiguous layouts make the
op run on strided views while gradients still flow to contiguous leaves.
"""

from __future__ import annotations

import re
import sys
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import lucid


class T:
    """A tensor argument of a sample."""

    def __init__(self, value: Any, layout: str = "c", grad: bool | None = None) -> None:
        self.value = np.asarray(value)
        self.layout = layout
        self.grad = self.value.dtype.kind == "f" if grad is None else grad
        if layout == "t" and self.value.ndim < 2:
            raise ValueError("layout 't' needs at least 2 dims")
        if layout == "s" and self.value.ndim < 1:
            raise ValueError("layout 's' needs at least 1 dim")

    @property
    def is_float(self) -> bool:
        return self.value.dtype.kind == "f"

    def storage(self, dtype: Any = None) -> np.ndarray:
        """The values of the leaf tensor (before the layout view is taken)."""
        v = self.value
        if self.is_float and dtype is not None:
            v = v.astype(dtype)
        if self.layout == "t":
            return np.ascontiguousarray(np.swapaxes(v, -1, -2))
        if self.layout == "s":
            return np.repeat(v, 2, axis=-1)
        return np.array(v, copy=True)

    def view(self, leaf: Any) -> Any:
        """The op's view of a leaf (lucid tensor, torch tensor or numpy array)."""
        if self.layout == "t":
            return np.swapaxes(leaf, -1, -2) if isinstance(leaf, np.ndarray) else \
                leaf.transpose(-1, -2)
        if self.layout == "s":
            return leaf[..., ::2]
        return leaf

    def __repr__(self) -> str:
        return f"T{tuple(self.value.shape)}{'' if self.layout == 'c' else self.layout}"


class Sample:
    """Positional args (``T`` for tensors) and kwargs of one call. ``fd=False`` marks inputs
    at a kink (ties, values on a clamp bound), where finite differences are meaningless:
    such samples are compared with torch's gradients only."""

    def __init__(self, *args: Any, name: str = "", fd: bool = True, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs
        self.name = name
        self.fd = fd

    @property
    def tensors(self) -> list[T]:
        """Tensor arguments: the positional ones, then the keyword ones, in order."""
        return [a for a in (*self.args, *self.kwargs.values()) if isinstance(a, T)]

    def __repr__(self) -> str:
        if self.name:
            return self.name
        parts = [repr(a) if isinstance(a, T) else _short(a) for a in self.args]
        parts += [f"{k}={v!r}" if isinstance(v, T) else f"{k}={_short(v)}"
                  for k, v in self.kwargs.items()]
        return ",".join(parts)


def _short(v: Any) -> str:
    s = repr(v).replace(" ", "")
    return s if len(s) < 24 else s[:21] + "..."


@dataclass
class ErrorInput:
    """A call that must fail: ``call(m)`` with ``m`` a namespace of factories on the device
    under test (``m.F``, ``m.zeros``, ``m.ones``, ``m.randn``, ``m.rand``, ``m.tensor``); it
    raises ``exc`` with a message that ``re.search``-matches ``match``. ``torch=True``: the same
    call made with torch raises the same type with a message that matches too."""

    call: Callable[[Any], Any]
    exc: type[BaseException]
    match: str
    torch: bool = True

    def __repr__(self) -> str:
        return f"{self.exc.__name__}:{self.match[:28]}"


def exact(msg: str) -> str:
    """A regex that matches exactly ``msg`` (torch's whole message)."""
    return "^" + re.escape(msg) + "$"


@dataclass
class OpInfo:
    """One op: how to call it in lucid, in numpy and in torch, and on which inputs.

    ``op`` / ``torch_op`` / ``ref`` take the sample's positional arguments (tensors in
    place of ``T`` markers) and its keyword arguments. A string names a function looked
    up on ``lucid`` / ``torch``; ``method=True`` also checks ``x.<name>(...)``.
    """

    name: str
    op: str | Callable
    ref: Callable
    samples: Callable[[np.random.Generator], Iterable[Sample]]
    torch_op: str | Callable | None = None
    grad: bool = True  # gradcheck applies (float outputs are differentiable)
    method: bool = False
    atol: float = 1e-7
    rtol: float = 1e-6
    torch_atol: float = 1e-5
    torch_rtol: float = 1e-4
    parity: bool = True
    torch_grad: bool = True  # torch implements this derivative (floor_divide: it does not)
    exact_dtype: bool = True
    error_inputs: list[ErrorInput] = field(default_factory=list)
    _cache: list | None = field(default=None, repr=False)

    def lucid_fn(self) -> Callable:
        return getattr(lucid, self.op) if isinstance(self.op, str) else self.op

    def torch_fn(self, torch: Any) -> Callable:
        t = self.torch_op if self.torch_op is not None else self.op
        if isinstance(t, str):
            obj = torch
            for part in t.split("."):
                obj = getattr(obj, part)
            return obj
        return t

    def method_fn(self) -> Callable:
        name = self.op
        assert isinstance(name, str)
        return lambda x, *a, **k: getattr(x, name)(*a, **k)

    def get_samples(self) -> list[Sample]:
        if self._cache is None:
            rng = np.random.default_rng(zlib.crc32(self.name.encode()))
            self._cache = list(self.samples(rng))
        return self._cache


# ---- building a sample for one library ---------------------------------------------------------


def lucid_leaves(sample: Sample, device: str = "cpu", dtype: Any = np.float64,
                 requires_grad: bool = True) -> list[lucid.Tensor]:
    out = []
    for t in sample.tensors:
        leaf = lucid.tensor(t.storage(dtype), device=device)
        if requires_grad and t.grad and t.is_float:
            leaf.requires_grad_(True)
        out.append(leaf)
    return out


def torch_leaves(torch: Any, sample: Sample, dtype: Any = np.float32,
                 requires_grad: bool = True) -> list[Any]:
    out = []
    for t in sample.tensors:
        leaf = torch.tensor(t.storage(dtype))
        if requires_grad and t.grad and t.is_float:
            leaf.requires_grad_(True)
        out.append(leaf)
    return out


def numpy_leaves(sample: Sample, dtype: Any = np.float64) -> list[np.ndarray]:
    return [t.storage(dtype) for t in sample.tensors]


def bind(fn: Callable, sample: Sample) -> Callable:
    """``f(*leaves)``: the op applied to the sample with views of ``leaves`` for its tensors."""

    def f(*leaves: Any) -> Any:
        it = iter(leaves)
        args = [a.view(next(it)) if isinstance(a, T) else a for a in sample.args]
        kwargs = {k: v.view(next(it)) if isinstance(v, T) else v
                  for k, v in sample.kwargs.items()}
        return fn(*args, **kwargs)

    return f


def as_list(out: Any) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def cases(db: list[OpInfo], pred: Callable[[OpInfo], bool] = lambda i: True) -> list:
    """``pytest.param`` list of (info, sample) pairs with readable ids."""
    import pytest

    res = []
    for info in db:
        if not pred(info):
            continue
        for k, s in enumerate(info.get_samples()):
            res.append(pytest.param(info, s, id=f"{info.name}-{k}-{s!r}"))
    return res


def lib(x: Any) -> Any:
    """The module (lucid, torch or numpy) that owns tensor ``x``."""
    if isinstance(x, lucid.Tensor):
        return lucid
    if isinstance(x, np.ndarray):
        return np
    return sys.modules["torch"]


# ---- value generators ---------------------------------------------------------------------------


def U(rng: np.random.Generator, shape: tuple, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    """Uniform values."""
    return np.asarray(rng.uniform(lo, hi, shape), dtype=np.float64)


def P(rng: np.random.Generator, shape: tuple, lo: float = 0.5, hi: float = 2.0) -> np.ndarray:
    """Positive values (log, sqrt, ...)."""
    return U(rng, shape, lo, hi)


def NZ(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    """Values away from zero (abs, sign, relu, division)."""
    return U(rng, shape, 0.25, 2.0) * rng.choice([-1.0, 1.0], shape)


def OFFINT(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    """Values away from integers and half-integers (floor, ceil, round)."""
    frac = U(rng, shape, 0.1, 0.4) + rng.choice([0.0, 0.5], shape)
    return rng.integers(-3, 3, shape).astype(np.float64) + frac


def SMALLINT(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    """Integer-valued floats, so comparisons see ties."""
    return rng.integers(-2, 3, shape).astype(np.float64)


UNARY_SHAPES = [((3, 4), "c"), ((), "c"), ((0, 3), "c"), ((4, 3), "t"), ((5,), "s"),
                ((2, 3, 2), "c"), ((1,), "c")]


def unary_samples(gen: Callable = U, **kwargs: Any) -> Callable:
    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        for shape, layout in UNARY_SHAPES:
            yield Sample(T(gen(rng, shape), layout), **kwargs)

    return samples


BINARY_SHAPES = [
    ((3, 4), "c", (3, 4), "c"),
    ((3, 4), "c", (4,), "c"),
    ((2, 1, 4), "c", (3, 1), "c"),
    ((3, 4), "t", (3, 4), "s"),
    ((), "c", (3,), "c"),
    ((3,), "c", (), "c"),
    ((1,), "c", (2, 3), "c"),
    ((0, 4), "c", (4,), "c"),
    ((2, 3), "s", (2, 1), "t"),
]


def binary_samples(gen_a: Callable = U, gen_b: Callable = U) -> Callable:
    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        for sa, la, sb, lb in BINARY_SHAPES:
            yield Sample(T(gen_a(rng, sa), la), T(gen_b(rng, sb), lb))

    return samples


def scalar_samples(gen: Callable = U) -> Callable:
    """One tensor argument, for ops written with a Python scalar inside the callable."""

    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        for shape, layout in [((3, 4), "c"), ((), "c"), ((4, 3), "t"), ((0,), "c")]:
            yield Sample(T(gen(rng, shape), layout))

    return samples


def reduce_samples(gen: Callable = U, dims: Iterable = (None, 0, -1, (0, 2), (-1, 1)),
                   empty: bool = True, scalar: bool = True, **extra: Any) -> Callable:
    """Reductions over ``dim`` with and without ``keepdim``; ``extra`` kwargs on every call."""

    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        for d in dims:
            for keep in (False, True):
                yield Sample(T(gen(rng, (2, 3, 4))), dim=d, keepdim=keep, **extra)
        yield Sample(T(gen(rng, (3, 4)), "t"), dim=1, keepdim=False, **extra)
        yield Sample(T(gen(rng, (3, 4)), "s"), dim=-1, keepdim=True, **extra)
        yield Sample(T(gen(rng, (1, 5))), dim=0, keepdim=False, **extra)
        if scalar:
            yield Sample(T(gen(rng, ())), dim=None, keepdim=False, **extra)
            yield Sample(T(gen(rng, ())), dim=0, keepdim=True, **extra)
        if empty:
            yield Sample(T(gen(rng, (0, 3))), dim=1, keepdim=False, **extra)

    return samples


def np_axis(dim: Any) -> Any:
    return tuple(dim) if isinstance(dim, list) else dim
