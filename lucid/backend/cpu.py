"""The "cpu" backend: numpy arrays, with numba kernels where they measure faster.

Each override calls its kernel only for float32/float64 inputs at sizes where the kernel
measured faster than numpy (figures next to each threshold); everything else takes the
inherited numpy path, so results never depend on which path ran beyond float rounding.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import numpy as np

from .._background_compile import KernelNotReady, catcher
from .._dtype import HALF_NP
from ..kernels import activation as _act
from ..kernels import attention as _at
from ..kernels import elementwise as _ew
from ..kernels import index as _ik
from ..kernels import matmul as _mm
from ..kernels import norm as _nk
from ..kernels import pointwise as _pw
from ..kernels import random as _rand
from ..kernels import reduce as _red
from ..kernels import rnn as _rnn_steps
from ..kernels import rnn_seq as _rnn_seq
from ..kernels import softmax as _sm
from . import _cpu_optim
from ._fallback import falls_back_to
from ._nn_ref import draw_seed, dropout_scale_host
from .numpy_ref import Array, NumpyBackend, _ax

_F = (np.dtype(np.float32), np.dtype(np.float64))
_F32 = np.dtype(np.float32)
_HALF = HALF_NP  # the live set: bfloat16 joins when ml_dtypes loads

# Reductions (float32, us, kernel vs numpy): the kernel wrapper costs a few us against numpy's
# ~1 us, so small arrays stay on numpy. Sums and means from 16k elements (4.5 vs 4.8 at 16k,
# 21 vs 61 at 256k, 46 vs 182 for a (256, 4096) row sum, torch 43); var at any float size
# (3x at 1k, 1071 vs 86 at 1M); max/min only where the parallel build runs, from 512k
# elements (79 vs 139 at 1M): numpy's SIMD max beats the serial kernel.
REDUCE_MIN = 1 << 14
EXTREMA_MIN = 1 << 19


@catcher
def host_dropout_scale(gen: np.random.Generator, shape: tuple[int, ...], p: float, d: Any
                       ) -> Array:
    """Dropout's multiplier as a numpy array: the kernel for float32/float64, the reference
    (same bits) for other dtypes; "gpu" uploads it."""
    seed = draw_seed(gen)
    try:
        out = _rand.dropout_scale(shape, seed, p, d.np)
    except KernelNotReady:  # compiling in the background: the same bits from the reference
        out = None
    return dropout_scale_host(shape, seed, p, d.np) if out is None else out


def _fused_unary(name: str, fallback: Any, only: np.dtype | None = None) -> staticmethod:
    """A backend method running kernels/pointwise.py's ``name`` on float arrays (of dtype
    ``only`` when given), ``fallback`` on everything else."""

    def method(x: Array) -> Array:
        out = _pw.forward(name, x) if only is None or getattr(x, "dtype", None) == only \
            else None
        return fallback(x) if out is None else out

    method.__name__ = method.__qualname__ = name
    return staticmethod(method)


@falls_back_to(NumpyBackend)  # a kernel still compiling: the reference runs (_fallback.py)
class CpuBackend(NumpyBackend):
    """numpy + lucid.kernels. Each override below names the figure that justifies it."""

    name = "cpu"

    @staticmethod
    def sum(x: Array, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Array:
        # other dtypes (integers; float16/bfloat16 accumulate in float32) take the reference
        if x.dtype in _F:
            if dtype is None and x.size >= REDUCE_MIN:
                return _red.sum(x, axis, keepdims)
            return np.add.reduce(x, axis=axis, keepdims=keepdims,
                                 dtype=None if dtype is None else dtype.np)
        return NumpyBackend.sum(x, axis, keepdims, dtype)

    @staticmethod
    def mean(x: Array, axis: Any = None, keepdims: bool = False) -> Array:
        if x.dtype in _F:
            if x.size >= REDUCE_MIN:
                return _red.mean(x, axis, keepdims)
            if x.size:
                return np.mean(x, axis=_ax(axis), keepdims=keepdims)
        return NumpyBackend.mean(x, axis, keepdims)

    @staticmethod
    def max(x: Array, axis: Any = None, keepdims: bool = False) -> Array:
        if x.size >= EXTREMA_MIN and x.dtype in _F:
            return _red.max(x, axis, keepdims)
        return NumpyBackend.max(x, axis, keepdims)

    @staticmethod
    def min(x: Array, axis: Any = None, keepdims: bool = False) -> Array:
        if x.size >= EXTREMA_MIN and x.dtype in _F:
            return _red.min(x, axis, keepdims)
        return NumpyBackend.min(x, axis, keepdims)

    @staticmethod
    def var(x: Array, axis: Any = None, correction: float = 1, keepdims: bool = False) -> Array:
        if x.size and x.dtype in _F:
            return _red.var(x, axis, correction, keepdims)
        return NumpyBackend.var(x, axis, correction, keepdims)

    @staticmethod
    def matmul(a: Array, b: Array) -> Array:
        # a weight shared across batch entries becomes one GEMM over stacked rows:
        # 32x128x256 @ 256x128 float32 1046 us vs numpy's per-matrix loop 2260 us
        if a.dtype in _HALF:  # through float32 BLAS, rounded back (backend/_half.py)
            return NumpyBackend.matmul(a, b)
        if a.ndim >= 2 and b.ndim >= 2:
            return _mm.matmul(a, b)
        return np.matmul(a, b)

    # a linear layer's two gradient products side by side, half the threads on each
    # (kernels/blas.py: gemm_pair)
    def matmul_pair(self, a1: Array, b1: Array, a2: Array, b2: Array) -> tuple[Array, Array]:
        if a1.dtype in _HALF:
            return NumpyBackend.matmul_pair(self, a1, b1, a2, b2)
        return _mm.matmul_pair(a1, b1, a2, b2)

    # a linear layer's product and bias in one call: the bias goes onto the fresh product
    # while it is in cache (kernels/blas.py)
    def addmm(self, c: Array, a: Array, b: Array) -> Array:
        if a.dtype in _HALF or a.ndim < 2 or b.ndim != 2:
            return NumpyBackend.addmm(self, c, a, b)
        return _mm.matmul(a, b, c)

    # Fused elementwise backward passes win at every size for same-shape contiguous floats
    # (relu_backward 1M float32: 442/244 us serial/parallel vs numpy 4147 us; sigmoid_backward
    # 1M: 461/249 vs 929 us; kernels/elementwise.py has the table). The kernels fall back to
    # numpy themselves for other inputs.
    sigmoid_backward = staticmethod(_ew.sigmoid_backward)
    # same-shape arithmetic on both cores from 64k elements (kernels/elementwise.py: a
    # step's operands come from memory, where one thread's bandwidth is the limit)
    add = staticmethod(_ew.add)
    sub = staticmethod(_ew.sub)
    mul = staticmethod(_ew.mul)
    div = staticmethod(_ew.div)

    # powers torch computes as products, reciprocals and roots (kernels/elementwise.py:
    # ``power``): numpy's float32 power by 3.0 calls powf per element, 16 ms at 524k
    @staticmethod
    def pow(a: Array, b: Any) -> Array:
        out = _ew.power(a, b)
        return np.power(a, b) if out is None else out

    @staticmethod
    def iadd(dst: Array, src: Any) -> Array:
        if _ew.binary("add", dst, src, dst) is not None:
            return dst
        return NumpyBackend.iadd(dst, src)

    @staticmethod
    def setitem(x: Array, idx: Any, v: Any) -> Array:
        if _ew.copy_into(x, idx, v):
            return x
        return NumpyBackend.setitem(x, idx, v)

    @staticmethod
    def imul(dst: Array, src: Any) -> Array:
        if _ew.scale_(dst, src):
            return dst
        return NumpyBackend.imul(dst, src)

    tanh_backward = staticmethod(_ew.tanh_backward)
    relu_backward = staticmethod(_ew.relu_backward)
    relu = staticmethod(_ew.relu)

    # a row scatter-add (embedding backward) in one serial pass: 700 x 200 float32 rows into
    # a 10000-row table ~0.1 ms vs np.add.at's 1-2 ms (kernels/index.py)
    @staticmethod
    def index_add(shape: tuple[int, ...], idx: Any, g: Array) -> Array:
        out = _ik.index_add_rows(shape, idx, g)
        return NumpyBackend.index_add(shape, idx, g) if out is None else out

    # dropout's mask in one parallel pass (kernels/random.py): a 32x64x512 float32 mask
    # 6.7 ms through numpy's Generator.random, compare, astype and multiply
    def dropout_scale(self, gen: np.random.Generator, shape: tuple[int, ...], p: float,
                      d: Any) -> Array:
        return host_dropout_scale(gen, shape, p, d)

    # recurrent layers: numba step kernels and whole LSTM/GRU sequences in one call, whose
    # per-step products of small batches run in numba (kernels/rnn_seq.py and
    # backend/_rnn_loop.py have the figures)
    @staticmethod
    def rnn_steps(dt: np.dtype) -> tuple[ModuleType, ModuleType | None]:
        return (_rnn_steps, _rnn_seq) if np.dtype(dt) in _F else NumpyBackend.rnn_steps(dt)

    # pointwise activations in one pass each (kernels/pointwise.py): float32 16x64x512
    # forward + backward, ms, composed of numpy calls -> kernel: silu 15.0 -> 0.87, mish 45 ->
    # 1.0, softplus 15 -> 0.93, elu 18 -> 0.77, hardswish 4.2 -> 0.31, sigmoid 6.4 -> 0.67
    # (numpy's float32 exp alone is 1.3 ms there). Other dtypes take the composition.
    def activation(self, name: str, x: Array, params: tuple[float, ...] = ()) -> Array:
        out = _pw.forward(name, x, params)
        return NumpyBackend.activation(self, name, x, params) if out is None else out

    def activation_backward(self, name: str, x: Array, g: Array,
                            params: tuple[float, ...] = ()) -> Array:
        out = _pw.backward(name, x, g, params)
        return NumpyBackend.activation_backward(self, name, x, g, params) if out is None \
            else out

    # the sigmoid and tanh forwards from the same kernels; float32 exp, log, log1p and expm1
    # on the vectorised polynomials (kernels/_vmath.py; within 1.2e-7-4e-7 relative): 512k
    # float32 elements through numpy here (scalar loops on this machine) exp 1.0 -> 0.4 ms,
    # log 1.1 -> 0.4, log1p 4.8 -> 0.5, expm1 5.2 -> 0.6; lucid.exp forward + backward 1.57 ->
    # 0.58 ms (torch 0.65). float64 keeps numpy's exp, log, log1p and expm1.
    sigmoid = _fused_unary("sigmoid", NumpyBackend.sigmoid)
    tanh = _fused_unary("tanh", np.tanh)
    exp = _fused_unary("exp", np.exp, _F32)
    log = _fused_unary("log", np.log, _F32)
    log1p = _fused_unary("log1p", np.log1p, _F32)
    expm1 = _fused_unary("expm1", np.expm1, _F32)

    # leaky ReLU in one pass (kernels/activation.py) instead of numpy's compare/multiply/where
    @staticmethod
    def leaky_relu(x: Array, slope: float) -> Array:
        out = _act.leaky_relu(x, slope)
        return NumpyBackend.leaky_relu(x, slope) if out is None else out

    @staticmethod
    def leaky_relu_backward(x: Array, g: Array, slope: float) -> Array:
        out = _act.leaky_relu_backward(x, g, slope)
        return NumpyBackend.leaky_relu_backward(x, g, slope) if out is None else out

    # GELU in one pass (kernels/activation.py): exact float32 forward 16x64x512 0.35 ms vs
    # 14-17 ms for numpy + scipy's erf
    @staticmethod
    def gelu(x: Array, approximate: bool = False) -> Array:
        out = _act.gelu(x, approximate)
        return NumpyBackend.gelu(x, approximate) if out is None else out

    @staticmethod
    def gelu_backward(x: Array, g: Array, approximate: bool = False) -> Array:
        out = _act.gelu_backward(x, g, approximate)
        return NumpyBackend.gelu_backward(x, g, approximate) if out is None else out

    # Attention in one kernel per head (kernels/attention.py): nanoGPT's 16 x 4 heads of
    # 64 x 32, float32 forward + backward 1.2 ms (torch 1.6 ms) vs 3.0-4.6 ms composed of
    # numpy's batched matmul and the softmax kernels
    @staticmethod
    def attention(q: Array, k: Array, v: Array, bias: Array | None, scale: float,
                  causal: bool) -> tuple[Array, Array]:
        lead = q.shape[:-2]
        b4 = None if bias is None else _as4(np.broadcast_to(bias, lead + (q.shape[-2],
                                                                          k.shape[-2])))
        res = _at.attention(_as4(q), _as4(k), _as4(v), b4, scale, causal)
        if res is None:
            return NumpyBackend.attention(q, k, v, bias, scale, causal)
        out, a = res
        return out.reshape(lead + out.shape[-2:]), a.reshape(lead + a.shape[-2:])

    @staticmethod
    def attention_backward(q: Array, k: Array, v: Array, attn: Array, g: Array, scale: float,
                           causal: bool = False) -> tuple[Array, Array, Array]:
        if not (q.size and k.size and v.size):
            return NumpyBackend.attention_backward(q, k, v, attn, g, scale, causal)
        res = _at.attention_backward(_as4(q), _as4(k), _as4(v), _as4(attn), _as4(g), scale,
                                     causal)
        if res is None:
            return NumpyBackend.attention_backward(q, k, v, attn, g, scale, causal)
        gq, gk, gv = res
        return gq.reshape(q.shape), gk.reshape(k.shape), gv.reshape(v.shape)

    # Fused nn kernels (kernels/norm.py, kernels/softmax.py) for float32/float64: one pass per
    # row or channel, e.g. batch norm training forward+backward 64x32x28x28 float32 ~1.4 ms of
    # CPU serial vs torch 4.5 ms single-threaded; side-by-side ratios against numpy and torch
    # are in benchmarks/test_norm_loss.py. Other dtypes take the numpy reference.
    @staticmethod
    def softmax(x: Array, axis: int, log: bool = False) -> Array:
        if x.dtype in _F and x.size:  # empty: the reference keeps the shape
            return _sm.softmax(x, axis, log)
        return NumpyBackend.softmax(x, axis, log)

    @staticmethod
    def softmax_backward(y: Array, g: Array, axis: int, log: bool = False) -> Array:
        if y.dtype in _F and y.size:
            return _sm.softmax_backward(y, g, axis, log)
        return NumpyBackend.softmax_backward(y, g, axis, log)

    @staticmethod
    def cross_entropy(x: Array, target: Array, weight: Array | None, ignore_index: int,
                      label_smoothing: float) -> tuple[Array, Array, Array]:
        if x.dtype in _F:
            return _sm.cross_entropy(x, target, weight, ignore_index, label_smoothing)
        return NumpyBackend.cross_entropy(x, target, weight, ignore_index, label_smoothing)

    @staticmethod
    def cross_entropy_backward(x: Array, target: Array, lse: Array, weight: Array | None,
                               grow: Array, ignore_index: int, label_smoothing: float) -> Array:
        if x.dtype in _F:
            gx = _sm.cross_entropy_backward(x, target, lse, grow, weight, ignore_index,
                                            label_smoothing)
            if not math.isfinite(lse.sum()):  # one pass over the rows (~1 us), not over x
                # the kernel zeroes ignored rows; torch's log-softmax backward gives them
                # NaN where the row's log-sum-exp is not finite (a NaN or +inf logit, all -inf)
                gx[(target == ignore_index) & ~np.isfinite(lse)] = np.nan
            return gx
        return NumpyBackend.cross_entropy_backward(x, target, lse, weight, grow, ignore_index,
                                                   label_smoothing)

    @staticmethod
    def batch_norm_train(x: Array, weight: Array | None, bias: Array | None,
                         running_mean: Array | None, running_var: Array | None,
                         momentum: float, eps: float) -> tuple[Array, Array, Array]:
        if x.dtype in _F:
            return _nk.batch_norm_train(x, weight, bias, running_mean, running_var, momentum,
                                        eps)
        return NumpyBackend.batch_norm_train(x, weight, bias, running_mean, running_var,
                                             momentum, eps)

    @staticmethod
    def batch_norm_backward(x: Array, g: Array, mean: Array, invstd: Array,
                            weight: Array | None, need_input: bool = True) -> tuple:
        if x.dtype in _F:
            return _nk.batch_norm_backward(x, g, mean, invstd, weight, need_input)
        return NumpyBackend.batch_norm_backward(x, g, mean, invstd, weight, need_input)

    @staticmethod
    def layer_norm(x: Array, weight: Array | None, bias: Array | None, eps: float) -> tuple:
        if x.dtype in _F:
            return _nk.layer_norm(x, weight, bias, eps)
        return NumpyBackend.layer_norm(x, weight, bias, eps)

    @staticmethod
    def layer_norm_backward(x: Array, g: Array, mean: Array, rstd: Array, weight: Array | None,
                            need_input: bool = True, need_affine: bool = True) -> tuple:
        if x.dtype in _F:
            return _nk.layer_norm_backward(x, g, mean, rstd, weight, need_input, need_affine)
        return NumpyBackend.layer_norm_backward(x, g, mean, rstd, weight, need_input,
                                                need_affine)

    # Optimizer updates: one fused kernel pass per parameter (kernels/optim.py has the
    # figures: an Adam step over an MLP 784-512-256-10 takes 429 us, torch 2.13's CPU default
    # 982 us, its fused=True kernel 343 us, plain numpy 1989 us).
    # Arrays the kernels do not take (float16, a gradient of another dtype) take the numpy rules.
    sgd_update = staticmethod(_cpu_optim.sgd)
    adam_update = staticmethod(_cpu_optim.adam)
    adamax_update = staticmethod(_cpu_optim.adamax)
    adagrad_update = staticmethod(_cpu_optim.adagrad)
    rmsprop_update = staticmethod(_cpu_optim.rmsprop)
    nadam_update = staticmethod(_cpu_optim.nadam)
    radam_update = staticmethod(_cpu_optim.radam)

    # Convolution and pooling: numba kernels for float32/float64, other dtypes take the
    # reference (kernels/conv.py and kernels/pool.py have the figures: conv2d 16->32 forward +
    # backward at N=64, 28x28: 11.4 ms vs numpy 56 ms, torch 7.2 ms; max_pool2d k=2: 1.5 ms vs
    # numpy 20 ms, torch 5.0 ms).
    from ..kernels import conv as _kc
    from ..kernels import pool as _kp
    from . import _conv_ref as _cv

    def _pick(kern: Any, ref: Any, n: int = 1) -> Any:  # the first n arguments set the dtype
        def f(*a: Any, **kw: Any) -> Any:
            d = a[0].dtype
            if d in _F and all(a[i].dtype == d for i in range(1, n) if a[i] is not None):
                return kern(*a, **kw)
            return ref(*a, **kw)

        f.__name__, f.__doc__ = kern.__name__, kern.__doc__
        return staticmethod(f)

    _R = NumpyBackend  # its methods widen float16/bfloat16 (backend/_half.py)
    conv2d = _pick(_kc.conv2d, _R.conv2d, 3)
    conv2d_grad_input = _pick(_kc.conv2d_grad_input, _R.conv2d_grad_input, 2)
    conv2d_grad_weight = _pick(_kc.conv2d_grad_weight, _R.conv2d_grad_weight, 2)
    unfold = _pick(_kc.unfold, _R.unfold)
    fold = _pick(_kc.fold, _R.fold)
    max_pool2d = _pick(_kp.max_pool2d, _cv.max_pool2d)
    adaptive_max_pool2d = _pick(_kp.adaptive_max_pool2d, _cv.adaptive_max_pool2d)
    max_pool2d_backward = _pick(_kp.max_pool2d_backward, _cv.max_pool2d_backward)
    avg_pool2d = _pick(_kp.avg_pool2d, _R.avg_pool2d)
    avg_pool2d_backward = _pick(_kp.avg_pool2d_backward, _R.avg_pool2d_backward)
    adaptive_avg_pool2d = _pick(_kp.adaptive_avg_pool2d, _R.adaptive_avg_pool2d)
    adaptive_avg_pool2d_backward = _pick(_kp.adaptive_avg_pool2d_backward,
                                         _R.adaptive_avg_pool2d_backward)
    del _cv, _kc, _kp, _pick, _R


def _as4(x: Array) -> Array:
    """``x`` as (batch, heads, rows, cols): missing leading dims added, extra ones merged."""
    if x.ndim == 4:
        return x
    if x.ndim < 4:
        return x.reshape((1,) * (4 - x.ndim) + x.shape)
    return x.reshape((-1,) + x.shape[-3:])
