"""The reference backend: plain numpy, no kernels.

It defines the backend interface every device implements: ops/ and autograd/ do their
array math only through these names. "cpu" subclasses it and swaps in numba kernels
where they measure faster; tests run the op table on this one too, which keeps the
seam honest.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from .. import _dtype
from .._device import device
from .._quiet import quiet
from . import _optim_ref
from ._half import widen
from ._nn_ref import NnReference

Array = np.ndarray
_HALF = _dtype.HALF_NP  # the live set: bfloat16 joins when ml_dtypes loads


def _ax(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


@widen  # float16/bfloat16 through float32 where numpy would not (see _half.py)
class NumpyBackend(NnReference):
    """Backend over numpy arrays. All methods take and return backend arrays; the fused nn
    ops (softmax, cross-entropy, batch/layer norm) come from ``NnReference``."""

    name = "numpy"
    array_type = np.ndarray
    views_share_memory = True  # basic-index views alias their base (MLX copies instead)

    def __init__(self) -> None:
        self.device = device(self.name)

    # ---- dtypes and conversion ---------------------------------------------------------
    @staticmethod
    def dtype_of(x: Array) -> _dtype.dtype:
        r = _dtype._BY_NP.get(x.dtype)
        return r if r is not None else _dtype.from_numpy_dtype(x.dtype)

    @staticmethod
    def np_dtype(d: _dtype.dtype) -> np.dtype:
        return d.np

    @staticmethod
    def asarray(obj: Any, dtype: _dtype.dtype | None = None, copy: bool = False) -> Array:
        if dtype is None:
            return np.array(obj) if copy else np.asarray(obj)
        return np.array(obj, dtype=dtype.np) if copy else np.asarray(obj, dtype=dtype.np)

    @staticmethod
    def from_numpy(a: np.ndarray) -> Array:
        return a

    @staticmethod
    def to_numpy(x: Array) -> np.ndarray:
        return x

    @staticmethod
    def astype(x: Array, d: _dtype.dtype) -> Array:
        # NOTE: half <-> float64 and integers go through float32, as on torch's CPU: a direct
        # float64 -> bfloat16 cast rounds once where torch rounds twice (1 + 2**-8 + 2**-30)
        if d._cat == 1 and x.dtype in _HALF:
            x = x.astype(np.float32)
        elif d in _dtype.HALF and x.dtype == np.float64:
            x = x.astype(np.float32)
        return x.astype(d.np)

    @staticmethod
    def copy(x: Array) -> Array:
        return x.copy()

    @staticmethod
    def is_private(x: Array) -> bool:
        """True when ``x`` owns writable memory no view shares (safe to adopt), or views all of
        an array nothing else refers to (a reshaped kernel output; the references counted:
        x's, this frame's ``b`` and getrefcount's argument)."""
        b = x.base
        return bool(x.flags.writeable) and (b is None or (
            type(b) is np.ndarray and b.base is None and b.size == x.size
            and sys.getrefcount(b) == 3))

    @staticmethod
    def contiguous(x: Array) -> Array:
        """``x`` row-major: ``x`` itself when it already is (no copy, ~60 ns), else a copy."""
        return x if x.flags.c_contiguous else np.ascontiguousarray(x)

    @staticmethod
    def is_contiguous(x: Array) -> bool:
        return bool(x.flags.c_contiguous)

    @staticmethod
    def item(x: Array) -> Any:
        return x.item()

    @staticmethod
    def tolist(x: Array) -> Any:
        return x.tolist()

    # ---- creation -----------------------------------------------------------------------
    @staticmethod
    def zeros(shape: tuple[int, ...], d: _dtype.dtype) -> Array:
        return np.zeros(shape, d.np)

    @staticmethod
    def ones(shape: tuple[int, ...], d: _dtype.dtype) -> Array:
        return np.ones(shape, d.np)

    @staticmethod
    def full(shape: tuple[int, ...], value: Any, d: _dtype.dtype) -> Array:
        return np.full(shape, value, d.np)

    @staticmethod
    def empty(shape: tuple[int, ...], d: _dtype.dtype) -> Array:
        return np.empty(shape, d.np)

    @staticmethod
    def arange(start: Any, end: Any, step: Any, d: _dtype.dtype) -> Array:
        return np.arange(start, end, step).astype(d.np, copy=False)

    @staticmethod
    def linspace(start: Any, end: Any, steps: int, d: _dtype.dtype) -> Array:
        return np.linspace(start, end, steps).astype(d.np, copy=False)

    @staticmethod
    def eye(n: int, m: int, d: _dtype.dtype) -> Array:
        return np.eye(n, m, dtype=d.np)

    @staticmethod
    def zeros_like(x: Array) -> Array:
        return np.zeros_like(x)

    @staticmethod
    def ones_like(x: Array) -> Array:
        return np.ones(x.shape, x.dtype)

    @staticmethod
    def full_like(x: Array, value: Any) -> Array:
        return np.full_like(x, value)

    # ---- random (host generator, so a seed gives the same numbers on every device) -----
    def rand(self, gen: np.random.Generator, shape: tuple[int, ...], d: _dtype.dtype) -> Array:
        return self.from_numpy(gen.random(shape, dtype=np.float64).astype(d.np))

    def randn(self, gen: np.random.Generator, shape: tuple[int, ...], d: _dtype.dtype) -> Array:
        return self.from_numpy(gen.standard_normal(shape).astype(d.np))

    def randint(
        self, gen: np.random.Generator, low: int, high: int, shape: tuple[int, ...],
        d: _dtype.dtype,
    ) -> Array:
        return self.from_numpy(gen.integers(low, high, shape).astype(d.np))

    def randperm(self, gen: np.random.Generator, n: int, d: _dtype.dtype) -> Array:
        return self.from_numpy(gen.permutation(n).astype(d.np))

    def bernoulli(self, gen: np.random.Generator, p: Any, shape: tuple[int, ...],
                  d: _dtype.dtype) -> Array:
        return self.from_numpy((gen.random(shape) < self.to_numpy(p)).astype(d.np))

    # ---- elementwise --------------------------------------------------------------------
    add = staticmethod(np.add)
    sub = staticmethod(np.subtract)
    mul = staticmethod(np.multiply)
    div = staticmethod(np.true_divide)
    floordiv = staticmethod(np.floor_divide)
    remainder = staticmethod(np.remainder)
    fmod = staticmethod(np.fmod)
    pow = staticmethod(np.power)
    neg = staticmethod(np.negative)
    abs = staticmethod(np.abs)

    @staticmethod
    def sign(x: Array) -> Array:
        out = np.sign(x)
        if out.dtype.kind == "f" or out.dtype in _HALF:  # (ml_dtypes' bfloat16 is kind "V")
            out = np.where(np.isnan(out), out.dtype.type(0), out)  # torch: sign(nan) is 0
        return out

    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    log2 = staticmethod(np.log2)
    log10 = staticmethod(np.log10)
    log1p = staticmethod(np.log1p)
    expm1 = staticmethod(np.expm1)
    sqrt = staticmethod(np.sqrt)
    square = staticmethod(np.square)
    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    tan = staticmethod(np.tan)
    tanh = staticmethod(np.tanh)
    arcsin = staticmethod(np.arcsin)
    arccos = staticmethod(np.arccos)
    arctan = staticmethod(np.arctan)
    sinh = staticmethod(np.sinh)
    cosh = staticmethod(np.cosh)
    floor = staticmethod(np.floor)
    ceil = staticmethod(np.ceil)
    trunc = staticmethod(np.trunc)
    round = staticmethod(np.round)
    maximum = staticmethod(np.maximum)
    minimum = staticmethod(np.minimum)
    where = staticmethod(np.where)

    @staticmethod
    def clip(x: Array, lo: Any, hi: Any) -> Array:
        out = np.clip(x, lo, hi)
        # NOTE: numpy clips bfloat16 (ml_dtypes) with Python bounds into float32
        d = getattr(x, "dtype", None)
        return out.astype(d) if d in _HALF and out.dtype != d else out

    eq = staticmethod(np.equal)
    ne = staticmethod(np.not_equal)
    lt = staticmethod(np.less)
    le = staticmethod(np.less_equal)
    gt = staticmethod(np.greater)
    ge = staticmethod(np.greater_equal)
    logical_and = staticmethod(np.logical_and)
    logical_or = staticmethod(np.logical_or)
    logical_xor = staticmethod(np.logical_xor)
    logical_not = staticmethod(np.logical_not)
    bitwise_and = staticmethod(np.bitwise_and)
    bitwise_or = staticmethod(np.bitwise_or)
    bitwise_xor = staticmethod(np.bitwise_xor)
    bitwise_not = staticmethod(np.invert)
    isnan = staticmethod(np.isnan)
    isinf = staticmethod(np.isinf)
    isfinite = staticmethod(np.isfinite)

    @staticmethod
    def reciprocal(x: Array) -> Array:
        return np.reciprocal(x)

    @staticmethod
    def rsqrt(x: Array) -> Array:
        return 1.0 / np.sqrt(x)

    @staticmethod
    def sigmoid(x: Array) -> Array:
        # exp(-|x|) never overflows; both branches are exact
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype, copy=False)

    @staticmethod
    def relu(x: Array) -> Array:
        return np.maximum(x, 0)

    @staticmethod
    def sigmoid_backward(y: Array, g: Array) -> Array:
        return g * y * (1 - y)

    @staticmethod
    def tanh_backward(y: Array, g: Array) -> Array:
        return g * (1 - y * y)

    @staticmethod
    def relu_backward(x: Array, g: Array) -> Array:
        return np.where(x <= 0, 0, g).astype(g.dtype, copy=False)  # NaN passes, as in torch

    # ---- reductions ---------------------------------------------------------------------
    @staticmethod
    def sum(x: Array, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Array:
        return np.add.reduce(x, axis=axis, keepdims=keepdims,
                             dtype=None if dtype is None else dtype.np)

    @staticmethod
    def mean(x: Array, axis: Any = None, keepdims: bool = False) -> Array:
        if x.size == 0:  # NaN, as torch, without numpy's "Mean of empty slice"
            with quiet():
                return np.mean(x, axis=_ax(axis), keepdims=keepdims)
        return np.mean(x, axis=_ax(axis), keepdims=keepdims)

    @staticmethod
    def max(x: Array, axis: Any = None, keepdims: bool = False) -> Array:
        if axis is None and not keepdims:
            return x.max()  # the method: ~1.5 us against np.max's ~5 on small arrays
        return np.max(x, axis=_ax(axis), keepdims=keepdims)

    @staticmethod
    def min(x: Array, axis: Any = None, keepdims: bool = False) -> Array:
        if axis is None and not keepdims:
            return x.min()
        return np.min(x, axis=_ax(axis), keepdims=keepdims)

    @staticmethod
    def argmax(x: Array, axis: int | None = None, keepdims: bool = False) -> Array:
        return np.argmax(x, axis=axis, keepdims=keepdims)

    @staticmethod
    def argmin(x: Array, axis: int | None = None, keepdims: bool = False) -> Array:
        return np.argmin(x, axis=axis, keepdims=keepdims)

    @staticmethod
    def var(x: Array, axis: Any = None, correction: float = 1, keepdims: bool = False) -> Array:
        ax = _ax(axis)
        n = x.size if ax is None else math.prod(
            x.shape[a] for a in (ax if isinstance(ax, tuple) else (ax,)))
        if n <= correction:  # NaN/inf, as torch, without numpy's "Degrees of freedom <= 0"
            with quiet():
                return np.var(x, axis=ax, ddof=correction, keepdims=keepdims)
        return np.var(x, axis=ax, ddof=correction, keepdims=keepdims)

    @staticmethod
    def prod(x: Array, axis: Any = None, keepdims: bool = False) -> Array:
        return np.prod(x, axis=_ax(axis), keepdims=keepdims)

    @staticmethod
    def cumsum(x: Array, axis: int) -> Array:
        out = np.cumsum(x, axis=axis)  # keeps a transposed input's layout: made row-major
        return out if out.flags.c_contiguous else np.ascontiguousarray(out)

    @staticmethod
    def cumprod(x: Array, axis: int) -> Array:
        out = np.cumprod(x, axis=axis)
        return out if out.flags.c_contiguous else np.ascontiguousarray(out)

    @staticmethod
    def all(x: Array, axis: Any = None, keepdims: bool = False) -> Array:
        return np.all(x, axis=_ax(axis), keepdims=keepdims)

    @staticmethod
    def any(x: Array, axis: Any = None, keepdims: bool = False) -> Array:
        return np.any(x, axis=_ax(axis), keepdims=keepdims)

    @staticmethod
    def sort(x: Array, axis: int = -1, descending: bool = False) -> tuple[Array, Array]:
        # NOTE: descending is the stable ascending order of the reversed axis, read backwards:
        # NaN (last ascending, as in torch) comes first, ties keep their order, and no
        # negation wraps unsigned or fails on bool
        if not descending:
            idx = np.argsort(x, axis=axis, kind="stable")
        else:
            n = x.shape[axis]
            idx = np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
            idx = n - 1 - idx
        return np.take_along_axis(x, idx, axis), idx

    # ---- linear algebra -----------------------------------------------------------------
    matmul = staticmethod(np.matmul)

    @staticmethod
    def outer(a: Array, b: Array) -> Array:
        return np.outer(a, b)

    # ---- movement and indexing ----------------------------------------------------------
    @staticmethod
    def reshape(x: Array, shape: tuple[int, ...]) -> Array:
        return x.reshape(shape)

    @staticmethod
    def transpose(x: Array, axes: tuple[int, ...]) -> Array:
        return x.transpose(axes)

    @staticmethod
    def swapaxes(x: Array, a: int, b: int) -> Array:
        return x.swapaxes(a, b)

    @staticmethod
    def as_strided(x: Array, size: tuple[int, ...], stride: tuple[int, ...],
                   offset: int) -> Array:
        """A view of the elements ``offset + sum(i_k * stride_k)`` of a C-contiguous ``x``
        (the caller checks the bounds), writable where ``x`` is."""
        flat = x.reshape(-1)
        return np.lib.stride_tricks.as_strided(flat[offset:], size,
                                               tuple(s * flat.itemsize for s in stride),
                                               writeable=bool(x.flags.writeable))

    @staticmethod
    def diagonal(x: Array, offset: int, d1: int, d2: int) -> Array:
        """The ``offset`` diagonals of the (d1, d2) planes as the last dim: a view, writable
        where ``x`` is (numpy hands diagonals out read-only)."""
        v = np.diagonal(x, offset, d1, d2)
        if x.flags.writeable:
            v.flags.writeable = True
        return v

    @staticmethod
    def broadcast_to(x: Array, shape: tuple[int, ...]) -> Array:
        if x.size == 1:  # np.full is ~4x cheaper than np.broadcast_to for small results
            return np.full(shape, x.reshape(()), x.dtype)
        return np.broadcast_to(x, shape)

    @staticmethod
    def view(x: Array, shape: tuple[int, ...]) -> Array:
        return x.reshape(shape, copy=False)

    @staticmethod
    def expand_dims(x: Array, axis: int) -> Array:
        return np.expand_dims(x, axis)

    @staticmethod
    def squeeze(x: Array, axis: Any = None) -> Array:
        return np.squeeze(x, axis=_ax(axis))

    @staticmethod
    def concatenate(xs: list[Array], axis: int) -> Array:
        return np.concatenate(xs, axis=axis)

    @staticmethod
    def stack(xs: list[Array], axis: int) -> Array:
        return np.stack(xs, axis=axis)

    @staticmethod
    def flip(x: Array, axis: Any) -> Array:
        return np.flip(x, axis=_ax(axis))

    @staticmethod
    def tile(x: Array, reps: tuple[int, ...]) -> Array:
        return np.tile(x, reps)

    @staticmethod
    def repeat(x: Array, repeats: Any, axis: int | None) -> Array:
        return np.repeat(x, repeats, axis=axis)

    @staticmethod
    def pad(x: Array, widths: list[tuple[int, int]], value: Any = 0, mode: str = "constant"
            ) -> Array:
        if mode == "constant":
            return np.pad(x, widths, mode="constant", constant_values=value)
        return np.pad(x, widths, mode={"replicate": "edge", "circular": "wrap"}.get(mode, mode))

    @staticmethod
    def getitem(x: Array, idx: Any) -> Array:
        return x[idx]

    @staticmethod
    def setitem(x: Array, idx: Any, v: Any) -> Array:
        x[idx] = v
        return x

    @staticmethod
    def index_add(shape: tuple[int, ...], idx: Any, g: Array) -> Array:
        """zeros(shape) with ``g`` scatter-added at ``idx`` (repeated indices accumulate)."""
        out = np.zeros(shape, g.dtype)
        np.add.at(out, idx, g)
        return out

    @staticmethod
    def take(x: Array, idx: Array, axis: int) -> Array:
        return np.take(x, idx, axis=axis)

    @staticmethod
    def take_along_axis(x: Array, idx: Array, axis: int) -> Array:
        return np.take_along_axis(x, idx, axis=axis)

    @staticmethod
    def scatter_add(shape: tuple[int, ...], idx: Array, src: Array, axis: int) -> Array:
        """zeros(shape) with ``src`` added along ``axis`` at ``idx`` (gather's backward)."""
        out = np.zeros(shape, src.dtype)
        full_idx = list(np.indices(idx.shape, sparse=True))
        full_idx[axis] = idx
        np.add.at(out, tuple(full_idx), src)
        return out

    @staticmethod
    def scatter(x: Array, idx: Array, src: Any, axis: int) -> Array:
        """``x`` with ``src`` written along ``axis`` at ``idx``, within ``idx``'s extent only
        (``src`` a scalar or an array of ``idx``'s shape)."""
        out = x.copy()
        full_idx = list(np.indices(idx.shape, sparse=True))
        full_idx[axis] = idx
        out[tuple(full_idx)] = src
        return out

    @staticmethod
    def nonzero(x: Array) -> tuple[Array, ...]:
        return np.nonzero(x)

    # ---- in-place -----------------------------------------------------------------------
    @staticmethod
    def assign(dst: Array, src: Any) -> Array:
        """Write ``src`` into ``dst``'s memory; returns the array to keep (``dst`` here)."""
        if not isinstance(dst, np.ndarray):
            # a numpy scalar (a full reduction's result) has no memory to write into: a fresh
            # 0-d array takes its place
            return np.array(src, dtype=dst.dtype)
        dst[...] = src
        return dst

    @staticmethod
    def iadd(dst: Array, src: Any) -> Array:
        """``dst += src`` in ``dst``'s memory; returns the array to keep (``dst`` here)."""
        if not isinstance(dst, np.ndarray):  # a numpy scalar: see ``assign``
            return np.array(dst + src, dtype=dst.dtype)
        return np.add(dst, src, out=dst)

    @staticmethod
    def imul(dst: Array, src: Any) -> Array:
        """``dst *= src`` in ``dst``'s memory, as ``iadd``."""
        if not isinstance(dst, np.ndarray):
            return np.array(dst * src, dtype=dst.dtype)
        return np.multiply(dst, src, out=dst)

    @staticmethod
    def shares_memory(a: Array, b: Array) -> bool:
        return np.shares_memory(a, b)

    # ---- optimizer update rules (torch.optim's, one parameter at a time) ----------------
    # Each updates its arrays in place and returns them as (param, *state); a device whose
    # arrays are immutable returns new ones (the rules: _optim_ref.py).
    sgd_update = staticmethod(_optim_ref.sgd)
    adam_update = staticmethod(_optim_ref.adam)
    adamax_update = staticmethod(_optim_ref.adamax)
    adagrad_update = staticmethod(_optim_ref.adagrad)
    rmsprop_update = staticmethod(_optim_ref.rmsprop)
    nadam_update = staticmethod(_optim_ref.nadam)
    radam_update = staticmethod(_optim_ref.radam)

    # ---- convolution and pooling over NCHW arrays (the interface and reference math:
    # _conv_ref.py) -------------------------------------------------------------------------
    from . import _conv_ref as _cv

    conv2d = staticmethod(_cv.conv2d)
    conv2d_grad_input = staticmethod(_cv.conv2d_grad_input)
    conv2d_grad_weight = staticmethod(_cv.conv2d_grad_weight)
    unfold = staticmethod(_cv.unfold)
    fold = staticmethod(_cv.fold)
    max_pool2d = staticmethod(_cv.max_pool2d)
    adaptive_max_pool2d = staticmethod(_cv.adaptive_max_pool2d)
    max_pool2d_backward = staticmethod(_cv.max_pool2d_backward)
    avg_pool2d = staticmethod(_cv.avg_pool2d)
    avg_pool2d_backward = staticmethod(_cv.avg_pool2d_backward)
    adaptive_avg_pool2d = staticmethod(_cv.adaptive_avg_pool2d)
    adaptive_avg_pool2d_backward = staticmethod(_cv.adaptive_avg_pool2d_backward)
    del _cv
