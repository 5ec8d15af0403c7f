"""The "gpu" backend: MLX arrays, on Metal (Apple silicon), on CUDA (MLX's CUDA build) or, on
any other machine, on MLX's CPU stream (with a one-time warning), so the same code and tests
run everywhere. ``lucid.gpu.backend()`` says which (lucid follows MLX's default device). It
implements every method of the reference ``NumpyBackend`` (which defines the interface) with
MLX's own ops, fused ones where MLX has them (``mx.softmax``, ``mx.logsumexp``,
``mx.fast.layer_norm``, ``mx.conv_general`` and its vjp, ``mx.matmul``); what MLX lacks is
built from MLX primitives on the device (fmod, stable first-index argmax, reflect/circular
pad, scatter-add, pooling, unfold/fold, integer matmul, optimizer rules).

dtypes: bool, uint8, int8, int16, int32, int64, float16 and float32 map to the MLX dtype of the
same name. float64 works on MLX's CPU stream; on Metal and CUDA, which have no float64, asking
for it raises a TypeError that names the dtype. MLX's uint32 results (``argmax``) read as int64.
MLX's CPU stream computes exp, sin, cos, sigmoid, erf, softmax, logsumexp, layer norm and
convolutions at float32 precision even for float64; float64 takes exact compositions of MLX
ops instead (``_gpu_common``, im2col + matmul in ``_gpu_conv``).

Arrays are immutable: ``assign`` and ``setitem`` return the array to keep. MLX updates the array
*object* in place (``a[...] = b``), so every tensor holding that object (``.data``,
``.detach()``) sees the new values, as with shared memory on "cpu"; views are separate
objects, which ``lucid.ops.views.sync_views`` keeps in step with their base. Deliberate
differences from "cpu" (MLX arrays have no strides): ``is_contiguous()`` is always True and
``reshape`` always returns a view (PyTorch documents that it may copy or not).

Laziness stays inside: ``item``/``tolist``/``to_numpy`` evaluate what they read, and every
in-place write (``assign``, optimizer updates, batch-norm running statistics) schedules its
result with ``mx.async_eval`` so no graph outlives a training step and memory stays flat.

Host round trips, and why:

- ``nonzero`` and boolean-mask indexing (``x[mask]``, ``x[mask] = values``): the result's shape
  depends on the mask's values, and MLX has no boolean indexing. ``x[mask] = scalar`` stays on
  the device (``where``).
- bounds of integer indices (indexing, ``index_select``, ``gather``, ``scatter``, embedding,
  cross-entropy targets): MLX does not check them and would read garbage, so one boolean or
  the min and max come back per call, never the indices.
- ``one_hot`` with ``num_classes=-1`` reads the largest class (it sets the output's shape).
- bool scalars used as indices (``x[True]``) and ``repeat`` with per-element counts held in a
  device array: rare forms, done in numpy.
- float64 ``erf`` on MLX's CPU stream runs scipy's (MLX's is float32-precise; float64 exists
  only on the CPU stream, whose memory is the host's).
- random numbers: drawn from lucid's host generator so a seed gives identical values on
  every device, then copied to the device (``bernoulli`` compares on the device).
- creation from host data (``tensor``, ``arange``/``linspace`` values, pooling and unfold index
  tables, which depend only on shapes) is a host-to-device copy by nature.
- ``to_numpy``/``item``/``tolist``: reading values on the host is their purpose.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from .. import _dtype
from .._device import device
from . import _gpu_common as _gc
from . import _gpu_conv, _gpu_index, _gpu_nn, _gpu_ops, _gpu_optim
from ._activation_ref import ActivationReference
from ._gpu_common import (
    FLOATS,
    FROM_MX,
    MX,
    MX_BY_NP,
    detect,
    float64_error,
    mx,
    to_host,
    warn_cpu_stream,
)
from ._gpu_state import GpuState

Array = mx.array


def _host() -> ModuleType:
    """The "cpu" backend module, whose numba kernels serve the few ops "gpu" runs on host
    arrays (dropout's mask, recurrent layers)."""
    from . import cpu  # NOTE: numba loads at the first such op, not with MLX

    return cpu


def _ax(axis: Any) -> Any:
    return list(axis) if isinstance(axis, (tuple, list)) else axis


def _cast_to(x: Any, d: Any) -> Any:
    return x if x.dtype == d else x.astype(d)


class GpuBackend(GpuState):
    """Backend over MLX arrays. All methods take and return MLX arrays.

    Example::

        be = lucid.backend.get_backend("gpu")
        be.to_numpy(be.add(be.ones((2,), lucid.float32), 1))   # array([2., 2.], dtype=float32)
    """

    name = "gpu"
    array_type = mx.array
    # views are copies here: lucid.ops.views writes them back into their base
    views_share_memory = False

    def __init__(self) -> None:
        self.device = device(self.name)
        self.kind = detect()
        self.float64 = self.kind == "cpu"
        if self.kind == "cpu":
            warn_cpu_stream()

    # ---- dtypes and conversion ---------------------------------------------------------
    @staticmethod
    def dtype_of(x: Array) -> _dtype.dtype:
        return FROM_MX[x.dtype]

    def mx_dtype(self, d: _dtype.dtype) -> Any:
        if d is _dtype.float64 and not self.float64:
            raise float64_error(self.kind)
        return MX[d]

    @staticmethod
    def np_dtype(d: _dtype.dtype) -> np.dtype:
        return d.np

    def asarray(self, obj: Any, dtype: _dtype.dtype | None = None, copy: bool = False) -> Array:
        if isinstance(obj, mx.array):
            return obj if dtype is None else _cast_to(obj, self.mx_dtype(dtype))
        a = np.asarray(obj) if dtype is None else np.asarray(obj, dtype=dtype.np)
        return self.from_numpy(a)

    def from_numpy(self, a: np.ndarray) -> Array:
        d = MX_BY_NP.get(a.dtype)
        if d is None:
            raise TypeError(f"lucid does not support dtype {a.dtype}")
        if d == mx.float64 and not self.float64:
            raise float64_error(self.kind)
        if a.size == 0:  # NOTE: MLX reductions misread empty arrays built from numpy
            return mx.zeros(a.shape, d)
        return mx.array(a, dtype=d)

    @staticmethod
    def to_numpy(x: Array) -> np.ndarray:
        # a copy: a view of MLX's buffer could be written through behind MLX's back
        return to_host(x)

    def astype(self, x: Array, d: _dtype.dtype) -> Array:
        return x.astype(self.mx_dtype(d))

    @staticmethod
    def copy(x: Array) -> Array:
        return mx.array(x)

    @staticmethod
    def is_private(x: Array) -> bool:
        return True  # MLX arrays are immutable: adopting one never aliases a mutable buffer

    @staticmethod
    def contiguous(x: Array) -> Array:
        return x

    @staticmethod
    def is_contiguous(x: Array) -> bool:
        return True  # MLX arrays are always addressed row-major from outside

    @staticmethod
    def item(x: Array) -> Any:
        return x.item()

    @staticmethod
    def tolist(x: Array) -> Any:
        return x.tolist()

    # ---- creation -----------------------------------------------------------------------
    def zeros(self, shape: tuple[int, ...], d: _dtype.dtype) -> Array:
        return mx.zeros(tuple(shape), self.mx_dtype(d))

    def ones(self, shape: tuple[int, ...], d: _dtype.dtype) -> Array:
        return mx.ones(tuple(shape), self.mx_dtype(d))

    def full(self, shape: tuple[int, ...], value: Any, d: _dtype.dtype) -> Array:
        if isinstance(value, mx.array):
            return mx.broadcast_to(value.astype(self.mx_dtype(d)), tuple(shape))
        return mx.full(tuple(shape), mx.array(value, self.mx_dtype(d)))

    def empty(self, shape: tuple[int, ...], d: _dtype.dtype) -> Array:
        return mx.zeros(tuple(shape), self.mx_dtype(d))

    def arange(self, start: Any, end: Any, step: Any, d: _dtype.dtype) -> Array:
        # computed as numpy does (float64 positions, then cast) so both devices agree
        return self.from_numpy(np.arange(start, end, step).astype(d.np, copy=False))

    def linspace(self, start: Any, end: Any, steps: int, d: _dtype.dtype) -> Array:
        return self.from_numpy(np.linspace(start, end, steps).astype(d.np, copy=False))

    def eye(self, n: int, m: int, d: _dtype.dtype) -> Array:
        return mx.eye(n, m, dtype=self.mx_dtype(d))

    @staticmethod
    def zeros_like(x: Array) -> Array:
        return mx.zeros(x.shape, x.dtype)

    @staticmethod
    def ones_like(x: Array) -> Array:
        return mx.ones(x.shape, x.dtype)

    @staticmethod
    def full_like(x: Array, value: Any) -> Array:
        return mx.full(x.shape, mx.array(value, x.dtype))

    # ---- random (host generator, so a seed gives the same numbers on every device) -----
    def rand(self, gen: np.random.Generator, shape: tuple[int, ...], d: _dtype.dtype) -> Array:
        return self.from_numpy(gen.random(shape, dtype=np.float64).astype(d.np))

    def randn(self, gen: np.random.Generator, shape: tuple[int, ...], d: _dtype.dtype) -> Array:
        return self.from_numpy(gen.standard_normal(shape).astype(d.np))

    def randint(self, gen: np.random.Generator, low: int, high: int, shape: tuple[int, ...],
                d: _dtype.dtype) -> Array:
        return self.from_numpy(gen.integers(low, high, shape).astype(d.np))

    def randperm(self, gen: np.random.Generator, n: int, d: _dtype.dtype) -> Array:
        return self.from_numpy(gen.permutation(n).astype(d.np))

    def bernoulli(self, gen: np.random.Generator, p: Any, shape: tuple[int, ...],
                  d: _dtype.dtype) -> Array:
        u = gen.random(shape)
        if isinstance(p, mx.array):  # compare on the device; p never comes back
            pd = p.dtype if p.dtype in FLOATS else mx.float32
            return mx.less(mx.array(u, pd), p).astype(self.mx_dtype(d))
        return self.from_numpy((u < p).astype(d.np))

    def dropout_scale(self, gen: np.random.Generator, shape: tuple[int, ...], p: float,
                      d: _dtype.dtype) -> Array:
        return self.from_numpy(_host().host_dropout_scale(gen, shape, p, d))

    @staticmethod
    def rnn_steps(dt: np.dtype) -> tuple[ModuleType, ModuleType | None]:
        """Recurrent layers run on host arrays with the "cpu" kernels (ops/rnn.py converts)."""
        return _host().CpuBackend.rnn_steps(dt)

    # ---- elementwise --------------------------------------------------------------------
    add = staticmethod(mx.add)
    sub = staticmethod(mx.subtract)
    mul = staticmethod(mx.multiply)
    div = staticmethod(mx.divide)
    floordiv = staticmethod(mx.floor_divide)
    remainder = staticmethod(mx.remainder)
    pow = staticmethod(mx.power)
    neg = staticmethod(mx.negative)
    abs = staticmethod(mx.abs)
    sign = staticmethod(mx.sign)
    exp = staticmethod(_gc.exp)
    log = staticmethod(mx.log)
    log2 = staticmethod(mx.log2)
    log10 = staticmethod(mx.log10)
    log1p = staticmethod(mx.log1p)
    expm1 = staticmethod(mx.expm1)
    sqrt = staticmethod(mx.sqrt)
    square = staticmethod(mx.square)
    sin = staticmethod(_gc.sin)
    cos = staticmethod(_gc.cos)
    tan = staticmethod(mx.tan)
    tanh = staticmethod(mx.tanh)
    arcsin = staticmethod(mx.arcsin)
    arccos = staticmethod(mx.arccos)
    arctan = staticmethod(mx.arctan)
    sinh = staticmethod(mx.sinh)
    cosh = staticmethod(mx.cosh)
    floor = staticmethod(mx.floor)
    ceil = staticmethod(mx.ceil)
    trunc = staticmethod(mx.trunc)
    maximum = staticmethod(mx.maximum)
    minimum = staticmethod(mx.minimum)
    where = staticmethod(mx.where)
    eq = staticmethod(mx.equal)
    ne = staticmethod(mx.not_equal)
    lt = staticmethod(mx.less)
    le = staticmethod(mx.less_equal)
    gt = staticmethod(mx.greater)
    ge = staticmethod(mx.greater_equal)
    logical_and = staticmethod(mx.logical_and)
    logical_or = staticmethod(mx.logical_or)
    logical_not = staticmethod(mx.logical_not)
    bitwise_and = staticmethod(mx.bitwise_and)
    bitwise_or = staticmethod(mx.bitwise_or)
    bitwise_xor = staticmethod(mx.bitwise_xor)
    isnan = staticmethod(mx.isnan)
    isinf = staticmethod(mx.isinf)
    isfinite = staticmethod(mx.isfinite)
    reciprocal = staticmethod(mx.reciprocal)
    rsqrt = staticmethod(mx.rsqrt)
    sigmoid = staticmethod(_gc.sigmoid)
    erf = staticmethod(_gc.erf)

    round = staticmethod(_gpu_ops.round)
    fmod = staticmethod(_gpu_ops.fmod)
    logical_xor = staticmethod(_gpu_ops.logical_xor)
    bitwise_not = staticmethod(_gpu_ops.bitwise_not)
    clip = staticmethod(_gpu_ops.clip)
    @staticmethod
    def relu(x: Array) -> Array:
        return mx.maximum(x, 0)

    @staticmethod
    def sigmoid_backward(y: Array, g: Array) -> Array:
        return g * y * (1 - y)

    @staticmethod
    def tanh_backward(y: Array, g: Array) -> Array:
        return g * (1 - y * y)

    @staticmethod
    def relu_backward(x: Array, g: Array) -> Array:
        return mx.where(x <= 0, mx.zeros_like(g), g)  # NaN passes, as in torch

    # ---- reductions ---------------------------------------------------------------------
    def sum(self, x: Array, axis: Any = None, keepdims: bool = False, dtype: Any = None
            ) -> Array:
        if dtype is not None:
            x = _cast_to(x, self.mx_dtype(dtype))
        elif x.dtype == mx.bool_:
            x = x.astype(mx.int64)
        return mx.sum(_gc.reducible(x), axis=_ax(axis), keepdims=keepdims)

    @staticmethod
    def mean(x: Array, axis: Any = None, keepdims: bool = False) -> Array:
        return mx.mean(_gc.reducible(x), axis=_ax(axis), keepdims=keepdims)

    @staticmethod
    def max(x: Array, axis: Any = None, keepdims: bool = False) -> Array:
        return mx.max(_gc.reducible(x), axis=_ax(axis), keepdims=keepdims)

    @staticmethod
    def min(x: Array, axis: Any = None, keepdims: bool = False) -> Array:
        return mx.min(_gc.reducible(x), axis=_ax(axis), keepdims=keepdims)

    argmax = staticmethod(_gpu_ops.argmax)
    argmin = staticmethod(_gpu_ops.argmin)
    var = staticmethod(_gpu_ops.var)
    @staticmethod
    def prod(x: Array, axis: Any = None, keepdims: bool = False) -> Array:
        return mx.prod(_gc.reducible(x), axis=_ax(axis), keepdims=keepdims)

    @staticmethod
    def cumsum(x: Array, axis: int) -> Array:
        return mx.cumsum(x, axis=axis)

    @staticmethod
    def cumprod(x: Array, axis: int) -> Array:
        return mx.cumprod(x, axis=axis)

    @staticmethod
    def all(x: Array, axis: Any = None, keepdims: bool = False) -> Array:
        return mx.all(_gc.reducible(x), axis=_ax(axis), keepdims=keepdims)

    @staticmethod
    def any(x: Array, axis: Any = None, keepdims: bool = False) -> Array:
        return mx.any(_gc.reducible(x), axis=_ax(axis), keepdims=keepdims)

    sort = staticmethod(_gpu_ops.sort)
    # ---- linear algebra -----------------------------------------------------------------
    matmul = staticmethod(_gpu_ops.matmul)

    @staticmethod
    def matmul_pair(a1: Array, b1: Array, a2: Array, b2: Array) -> tuple[Array, Array]:
        return _gpu_ops.matmul(a1, b1), _gpu_ops.matmul(a2, b2)

    @staticmethod
    def addmm(c: Array, a: Array, b: Array) -> Array:
        return _gpu_ops.matmul(a, b) + c
    @staticmethod
    def outer(a: Array, b: Array) -> Array:
        return mx.outer(a, b)

    # ---- movement and indexing ----------------------------------------------------------
    @staticmethod
    def reshape(x: Array, shape: tuple[int, ...]) -> Array:
        return mx.reshape(x, tuple(shape))

    view = reshape

    @staticmethod
    def transpose(x: Array, axes: tuple[int, ...]) -> Array:
        return mx.transpose(x, tuple(axes))

    @staticmethod
    def swapaxes(x: Array, a: int, b: int) -> Array:
        return mx.swapaxes(x, a, b)

    @staticmethod
    def as_strided(x: Array, size: tuple[int, ...], stride: tuple[int, ...],
                   offset: int) -> Array:
        return mx.as_strided(mx.contiguous(x), list(size), list(stride), offset)

    @staticmethod
    def diagonal(x: Array, offset: int, d1: int, d2: int) -> Array:
        return mx.diagonal(x, offset, d1, d2)

    @staticmethod
    def broadcast_to(x: Array, shape: tuple[int, ...]) -> Array:
        return mx.broadcast_to(x, tuple(shape))

    @staticmethod
    def expand_dims(x: Array, axis: int) -> Array:
        return mx.expand_dims(x, axis)

    @staticmethod
    def squeeze(x: Array, axis: Any = None) -> Array:
        if isinstance(axis, (tuple, list)) and not axis:
            return x
        return mx.squeeze(x, axis=_ax(axis))

    @staticmethod
    def concatenate(xs: list[Array], axis: int) -> Array:
        return mx.concatenate(list(xs), axis=axis)

    @staticmethod
    def stack(xs: list[Array], axis: int) -> Array:
        return mx.stack(list(xs), axis=axis)

    flip = staticmethod(_gpu_ops.flip)
    @staticmethod
    def tile(x: Array, reps: tuple[int, ...]) -> Array:
        return mx.tile(x, list(reps))

    repeat = staticmethod(_gpu_ops.repeat)
    pad = staticmethod(_gpu_ops.pad)
    getitem = staticmethod(_gpu_index.getitem)
    setitem = staticmethod(_gpu_index.setitem)
    index_add = staticmethod(_gpu_index.index_add)

    @staticmethod
    def take(x: Array, idx: Array, axis: int) -> Array:
        return mx.take(x, idx, axis=axis)

    @staticmethod
    def take_along_axis(x: Array, idx: Array, axis: int) -> Array:
        return mx.take_along_axis(x, idx, axis=axis)

    scatter_add = staticmethod(_gpu_ops.scatter_add)
    scatter = staticmethod(_gpu_ops.scatter)
    nonzero = staticmethod(_gpu_ops.nonzero)
    # ---- in-place -----------------------------------------------------------------------
    @staticmethod
    def assign(dst: Array, src: Any) -> Array:
        """Give ``dst`` the values of ``src``; returns the array to keep (``dst``, updated)."""
        dst[...] = _cast_to(src, dst.dtype) if isinstance(src, mx.array) \
            else mx.array(src, dst.dtype)
        mx.async_eval(dst)
        return dst

    @classmethod
    def iadd(cls, dst: Array, src: Any) -> Array:
        return cls.assign(dst, dst + src)

    @classmethod
    def imul(cls, dst: Array, src: Any) -> Array:
        return cls.assign(dst, dst * src)

    @staticmethod
    def shares_memory(a: Array, b: Array) -> bool:
        return a is b

    # ---- fused nn ops, optimizer updates, convolution and pooling -----------------------
    # the composed reference over this backend's own methods
    activation = ActivationReference.activation
    activation_backward = ActivationReference.activation_backward
    softmax = staticmethod(_gpu_nn.softmax)
    gelu = staticmethod(_gpu_nn.gelu)
    leaky_relu = staticmethod(_gpu_nn.leaky_relu)
    leaky_relu_backward = staticmethod(_gpu_nn.leaky_relu_backward)
    gelu_backward = staticmethod(_gpu_nn.gelu_backward)
    softmax_backward = staticmethod(_gpu_nn.softmax_backward)
    attention = staticmethod(_gpu_nn.attention)
    attention_backward = staticmethod(_gpu_nn.attention_backward)
    cross_entropy = staticmethod(_gpu_nn.cross_entropy)
    cross_entropy_backward = staticmethod(_gpu_nn.cross_entropy_backward)
    batch_norm_train = staticmethod(_gpu_nn.batch_norm_train)
    batch_norm_backward = staticmethod(_gpu_nn.batch_norm_backward)
    layer_norm = staticmethod(_gpu_nn.layer_norm)
    layer_norm_backward = staticmethod(_gpu_nn.layer_norm_backward)

    sgd_update = staticmethod(_gpu_optim.sgd)
    adam_update = staticmethod(_gpu_optim.adam)
    adamax_update = staticmethod(_gpu_optim.adamax)
    adagrad_update = staticmethod(_gpu_optim.adagrad)
    rmsprop_update = staticmethod(_gpu_optim.rmsprop)
    nadam_update = staticmethod(_gpu_optim.nadam)
    radam_update = staticmethod(_gpu_optim.radam)

    conv2d = staticmethod(_gpu_conv.conv2d)
    conv2d_grad_input = staticmethod(_gpu_conv.conv2d_grad_input)
    conv2d_grad_weight = staticmethod(_gpu_conv.conv2d_grad_weight)
    unfold = staticmethod(_gpu_conv.unfold)
    fold = staticmethod(_gpu_conv.fold)
    max_pool2d = staticmethod(_gpu_conv.max_pool2d)
    adaptive_max_pool2d = staticmethod(_gpu_conv.adaptive_max_pool2d)
    max_pool2d_backward = staticmethod(_gpu_conv.max_pool2d_backward)
    avg_pool2d = staticmethod(_gpu_conv.avg_pool2d)
    avg_pool2d_backward = staticmethod(_gpu_conv.avg_pool2d_backward)
    adaptive_avg_pool2d = staticmethod(_gpu_conv.adaptive_avg_pool2d)
    adaptive_avg_pool2d_backward = staticmethod(_gpu_conv.adaptive_avg_pool2d_backward)
