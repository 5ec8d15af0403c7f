"""Batch norm and layer norm: fused forward (batch norm: statistics, normalisation, affine and
the running-statistics update in one kernel call) and fused backward.

Measured, float32, microseconds of CPU time on the calling thread (min of repeats; 2 busy cores,
so wall-clock parallel figures are noisy), kernels alone:

    kernel                                serial  parallel (main thread)   torch, 1 thread
    batch norm train fwd 64x32x28x28         616        332                2343 (fwd+bwd 4549)
    batch norm bwd                           566        302
    layer norm fwd 256x1024                   69         54                  95 (fwd+bwd 512)
    layer norm bwd                           150         96

One training step (forward + backward through autograd, running-stat update included), min
of three runs of benchmarks/test_norm_loss.py: batch norm lucid 2.6 ms, numpy 13.4 ms,
torch 4.6 ms; layer norm lucid 189 us, numpy 1573 us, torch 258 us.

Inputs are float32/float64 (``supports``); ``x`` is copied to C order when it is not already.
Batch norm takes ``x`` as (N, C, *spatial); layer norm as (rows, D) with the normalised
dimensions flattened into D. Statistics come back in ``x``'s dtype (computed in float64).
Kernels run their parallel build from ``_threads.parallel_threshold("elementwise")`` elements.
"""

from __future__ import annotations

import math

import numpy as np

from . import _norm_kernels as K
from ._threads import use_parallel

__all__ = [
    "batch_norm_train",
    "batch_norm_backward",
    "layer_norm",
    "layer_norm_backward",
    "supports",
]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def supports(x: np.ndarray) -> bool:
    """True when these kernels handle ``x``'s dtype (float32/float64)."""
    return x.dtype in _FLOATS


def _pick(pair: tuple, n: int, cost: int = 1) -> object:
    """The parallel build of ``pair`` from ``n`` elements of ``cost`` times an elementwise
    kernel's work per element."""
    ser, par = pair
    return par if use_parallel(n * cost, "elementwise") else ser


# Layer norm's rows cost more per element than the elementwise threshold assumes: at 1024 x
# 128 float32 (nanoGPT's), serial / parallel us, forward 37 / 22, backward 134 / 50; at
# 256 x 128 12 / 9 and 30 / 18 (2 cores). The parallel builds start at 32k / 16k elements.
LN_FWD_COST, LN_BWD_COST = 8, 16


def _vec(v: np.ndarray | None, n: int, fill: float, dtype: np.dtype) -> np.ndarray:
    if v is None:
        return np.full(n, fill, dtype)
    return np.ascontiguousarray(v, dtype=dtype).reshape(n)


def _ncl(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x)
    n, c = x.shape[0], x.shape[1]
    return x.reshape(n, c, math.prod(x.shape[2:]))


def _stat_buf(a: np.ndarray | None, dtype: np.dtype) -> tuple[np.ndarray, bool]:
    """A kernel-ready view of a running-stat array, and whether it must be copied back."""
    if a is None:
        return np.empty(0, dtype), False
    if not a.flags.writeable:
        raise RuntimeError("batch_norm: the running statistics are updated in place, but their "
                           "memory is read-only (a tensor made by from_numpy() from a "
                           "non-writable array); clone() them first")
    if a.dtype == dtype and a.flags.c_contiguous and a.flags.writeable and a.ndim == 1:
        return a, False
    return np.ascontiguousarray(a, dtype=dtype).reshape(-1), True


def batch_norm_train(
    x: np.ndarray,
    weight: np.ndarray | None,
    bias: np.ndarray | None,
    running_mean: np.ndarray | None,
    running_var: np.ndarray | None,
    momentum: float,
    eps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training-mode batch norm of ``x`` (N, C, *): returns ``(y, mean, invstd)``.

    Normalises with the batch mean and biased variance per channel, applies ``weight``/``bias``
    and, when given, updates ``running_mean``/``running_var`` in place (unbiased variance,
    ``new = (1 - momentum) * old + momentum * batch``), all in one kernel call.

    Example::

        rm, rv = np.zeros(3, np.float32), np.ones(3, np.float32)
        y, mean, invstd = batch_norm_train(x, None, None, rm, rv, 0.1, 1e-5)
    """
    x3 = _ncl(x)
    dt = x3.dtype
    n, c, l = x3.shape
    w = _vec(weight, c, 1.0, dt)
    b = _vec(bias, c, 0.0, dt)
    rm, back_m = _stat_buf(running_mean, dt)
    rv, back_v = _stat_buf(running_var, dt)
    if rm.shape[0] != rv.shape[0]:
        raise ValueError("running_mean and running_var must both be given or both be None")
    out = np.empty(x3.shape, dt)
    mean = np.empty(c, dt)
    invstd = np.empty(c, dt)
    if x3.size:
        if l == 1:
            _pick(K.bn_fwd_2d, x3.size)(x3.reshape(n, c), w, b, rm, rv, float(momentum),
                                        float(eps), out.reshape(n, c), mean, invstd)
        else:
            _pick(K.bn_fwd, x3.size)(x3, w, b, rm, rv, float(momentum), float(eps), out, mean,
                                     invstd)
    if back_m:
        np.copyto(running_mean, rm.reshape(running_mean.shape), casting="unsafe")
    if back_v:
        np.copyto(running_var, rv.reshape(running_var.shape), casting="unsafe")
    return out.reshape(x.shape), mean, invstd


def batch_norm_backward(
    x: np.ndarray,
    g: np.ndarray,
    mean: np.ndarray,
    invstd: np.ndarray,
    weight: np.ndarray | None,
    need_input: bool = True,
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """Gradients of training-mode ``batch_norm_train``: ``(grad_x or None, grad_w, grad_b)``.

    Example::

        gx, gw, gb = batch_norm_backward(x, g, mean, invstd, w)
    """
    x3 = _ncl(x)
    dt = x3.dtype
    g3 = _ncl(np.asarray(g, dtype=dt))
    n, c, l = x3.shape
    w = _vec(weight, c, 1.0, dt)
    gx = np.empty(x3.shape, dt) if need_input else np.empty((0, 0, 0), dt)
    gw = np.empty(c, dt)
    gb = np.empty(c, dt)
    mean = np.ascontiguousarray(mean, dtype=dt)
    invstd = np.ascontiguousarray(invstd, dtype=dt)
    if x3.size:
        if l == 1:
            gx2 = gx.reshape(n, c) if need_input else np.empty((0, 0), dt)
            _pick(K.bn_bwd_2d, x3.size)(x3.reshape(n, c), g3.reshape(n, c), mean, invstd, w,
                                        need_input, gx2, gw, gb)
        else:
            _pick(K.bn_bwd, x3.size)(x3, g3, mean, invstd, w, need_input, gx, gw, gb)
    else:
        gw[:] = 0
        gb[:] = 0
    return (gx.reshape(x.shape) if need_input else None), gw, gb


def layer_norm(
    x: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None, eps: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Layer norm over the last axis of ``x`` (rows, D): returns ``(y, mean, rstd)``.

    Example::

        y, mean, rstd = layer_norm(np.ones((2, 4), np.float32), None, None, 1e-5)
    """
    x2 = np.ascontiguousarray(x)
    dt = x2.dtype
    m, d = x2.shape
    w = _vec(weight, d, 1.0, dt)
    b = _vec(bias, d, 0.0, dt)
    out = np.empty(x2.shape, dt)
    mean = np.empty(m, dt)
    rstd = np.empty(m, dt)
    if x2.size:
        _pick(K.ln_fwd, x2.size, LN_FWD_COST)(x2, w, b, float(eps), out, mean, rstd)
    else:
        mean[:] = np.nan
        rstd[:] = np.nan
    return out, mean, rstd


def layer_norm_backward(
    x: np.ndarray,
    g: np.ndarray,
    mean: np.ndarray,
    rstd: np.ndarray,
    weight: np.ndarray | None,
    need_input: bool = True,
    need_affine: bool = True,
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """Gradients of ``layer_norm``: ``(grad_x, grad_w, grad_b)``, None where not needed.

    Example::

        gx, gw, gb = layer_norm_backward(x, g, mean, rstd, w)
    """
    x2 = np.ascontiguousarray(x)
    dt = x2.dtype
    g2 = np.ascontiguousarray(g, dtype=dt)
    m, d = x2.shape
    w = _vec(weight, d, 1.0, dt)
    gx = np.empty(x2.shape, dt) if need_input else np.empty((0, 0), dt)
    gw = np.zeros(d, dt)
    gb = np.zeros(d, dt)
    if x2.size:
        _pick(K.ln_bwd, x2.size, LN_BWD_COST)(
            x2, g2, np.ascontiguousarray(mean, dtype=dt), np.ascontiguousarray(rstd, dtype=dt),
            w, need_input, need_affine, gx, gw, gb)
    return (gx if need_input else None), (gw if need_affine else None), \
        (gb if need_affine else None)
