"""Fused nn ops of the "gpu" backend: softmax, cross-entropy, batch and layer norm (MLX).

Signatures and results follow the reference ``NumpyBackend`` methods of the same names.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..kernels._targets import check_targets
from ._gpu_common import erf, exp, logsumexp, mx

Array = Any


def softmax(x: Array, axis: int, log: bool = False) -> Array:
    """Softmax (log-softmax when ``log``) along ``axis`` with MLX's fused kernels."""
    if x.size == 0:
        return x
    if log:
        return _log_softmax(x, axis)
    if x.dtype == mx.float64:  # exact float64 (see _gpu_common)
        lse = logsumexp(x, axis, True)
        # a +inf logit makes the whole row NaN, as torch's (and MLX's float32 kernel)
        return exp(x - mx.where(lse == float("inf"), float("nan"), lse))
    return mx.softmax(x, axis=axis, precise=True)


def _log_softmax(x: Array, axis: int) -> Array:
    """``z - log1p(rest)`` with ``z = x - max`` and ``rest`` the sum of exp(z) without one
    maximum: a row dominated by its maximum keeps full relative precision. A row whose
    maximum is not finite (+inf, NaN, or every entry -inf) is NaN throughout, as torch's."""
    m = mx.max(x, axis=axis, keepdims=True)
    z = x - mx.where(mx.isfinite(m), m, float("nan"))
    e = exp(z)
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    first = mx.reshape(mx.arange(x.shape[axis]), shape) == mx.argmax(x, axis=axis,
                                                                       keepdims=True)
    return z - mx.log1p(mx.sum(mx.where(first, 0, e), axis=axis, keepdims=True))


def leaky_relu(x: Array, slope: float) -> Array:
    return mx.where(x > 0, x, x * slope)


def leaky_relu_backward(x: Array, g: Array, slope: float) -> Array:
    return mx.where(x > 0, g, g * slope)


def gelu(x: Array, approximate: bool = False) -> Array:
    if approximate:
        inner = (x + 0.044715 * x * x * x) * 0.7978845608028654
        return 0.5 * x * (1 + mx.tanh(inner))
    return 0.5 * x * (1 + erf(x * 0.7071067811865476))


def gelu_backward(x: Array, g: Array, approximate: bool = False) -> Array:
    if approximate:
        t = mx.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))
        d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * 0.7978845608028654 * (
            1 + 3 * 0.044715 * x * x)
    else:
        d = 0.5 * (1 + erf(x * 0.7071067811865476)) + \
            x * exp(-0.5 * x * x) * 0.3989422804014327
    return g * d


def softmax_backward(y: Array, g: Array, axis: int, log: bool = False) -> Array:
    if log:
        return g - exp(y) * mx.sum(g, axis=axis, keepdims=True)
    return y * (g - mx.sum(g * y, axis=axis, keepdims=True))


def attention(q: Array, k: Array, v: Array, bias: Array | None, scale: float,
              causal: bool) -> tuple[Array, Array]:
    s = mx.matmul(q * scale, mx.swapaxes(k, -1, -2))
    if causal:
        lq, n = s.shape[-2:]
        s = mx.where(mx.tril(mx.ones((lq, n), dtype=mx.bool_)), s, -float("inf"))
    elif bias is not None:
        s = s + bias
    blind = mx.all(s == -float("inf"), axis=-1, keepdims=True)  # no key: weights 0, as torch
    a = mx.where(blind, 0, softmax(mx.where(blind, 0, s), -1))
    return mx.matmul(a, v), a


def attention_backward(q: Array, k: Array, v: Array, attn: Array, g: Array, scale: float,
                       causal: bool = False) -> tuple[Array, Array, Array]:
    gv = mx.matmul(mx.swapaxes(attn, -1, -2), g)
    ds = softmax_backward(attn, mx.matmul(g, mx.swapaxes(v, -1, -2)), -1)
    return mx.matmul(ds, k) * scale, mx.matmul(mx.swapaxes(ds, -1, -2), q * scale), gv


def _ce_parts(x: Array, target: Array, weight: Array | None, ignore_index: int
              ) -> tuple[Array, Array, Array, Array]:
    keep = target != ignore_index
    t = mx.where(keep, target, 0)
    w = mx.ones((x.shape[1],), x.dtype) if weight is None else weight
    wt = mx.where(keep, mx.take(w, t) if x.shape[1] else 0, 0).astype(x.dtype)
    return keep, t, wt, w


def _check_targets(target: Array, n: int, ignore_index: int) -> None:
    """``check_targets`` with the test on the device: one sync, the message from the host."""
    if not target.size:
        return
    bad = mx.logical_and(target != ignore_index, mx.logical_or(target < 0, target >= n))
    if mx.any(bad).item():
        check_targets(np.array(target), n, ignore_index)


def cross_entropy(x: Array, target: Array, weight: Array | None, ignore_index: int,
                  label_smoothing: float) -> tuple[Array, Array, Array]:
    """Per-row loss of logits (rows, n) against class indices: ``(loss, lse, wt)``; raises
    IndexError for a class index outside ``[0, n)``."""
    _check_targets(target, x.shape[1], ignore_index)
    keep, t, wt, w = _ce_parts(x, target, weight, ignore_index)
    if x.size == 0:  # no rows, or no classes (only valid with every target ignored)
        z = mx.zeros((x.shape[0],), x.dtype)
        return z, z, wt
    lse = logsumexp(x, 1)
    lse = mx.where(mx.isfinite(lse), lse, float("nan"))  # a non-finite maximum: NaN, as torch
    nll = lse - mx.take_along_axis(x, t[:, None], 1)[:, 0]
    loss = (1 - label_smoothing) * wt * nll
    if label_smoothing > 0:
        loss = loss + label_smoothing / x.shape[1] * mx.sum(w * (lse[:, None] - x), axis=1)
    loss = mx.where(keep, loss, 0)  # an ignored row scores 0 whatever its logits
    return loss.astype(x.dtype), lse.astype(x.dtype), wt


def cross_entropy_backward(x: Array, target: Array, lse: Array, weight: Array | None,
                           grow: Array, ignore_index: int, label_smoothing: float) -> Array:
    """d(sum_i grow[i] * loss[i]) / dx for ``cross_entropy``."""
    keep, t, wt, w = _ce_parts(x, target, weight, ignore_index)
    n, ls = x.shape[1], label_smoothing
    grow = mx.where(keep, grow, 0).astype(x.dtype)
    a = grow * ((1 - ls) * wt + ls / n * mx.sum(w))
    out = exp(x - lse[:, None]) * a[:, None] - (grow * ls / n)[:, None] * w
    hit = mx.arange(n)[None, :] == t[:, None]  # one-hot of the target, on the device
    out = out - mx.where(hit, (grow * (1 - ls) * wt)[:, None], 0)
    return out.astype(x.dtype)


def _bshape(x: Array) -> tuple[tuple[int, ...], list[int]]:
    return (1, -1) + (1,) * (x.ndim - 2), [0, *range(2, x.ndim)]


def _sample(x: Array, axes: list[int]) -> Array:
    """One element of ``x`` per reduction (the first), keeping dims; zeros when empty."""
    if x.size == 0:
        return mx.zeros([1 if i in axes else n for i, n in enumerate(x.shape)], x.dtype)
    return x[tuple(slice(0, 1) if i in axes else slice(None) for i in range(x.ndim))]


def batch_norm_train(x: Array, weight: Array | None, bias: Array | None,
                     running_mean: Array | None, running_var: Array | None,
                     momentum: float, eps: float) -> tuple[Array, Array, Array]:
    """Training batch norm of x (N, C, *): ``(y, mean, invstd)``; running stats (if given)
    updated in place (the MLX array objects), with the unbiased variance."""
    shape, axes = _bshape(x)
    m = x.size // x.shape[1]
    s0 = _sample(x, axes)
    d = x - s0  # NOTE: statistics of x - (a sample of x): exact centring for data far from 0
    dm = mx.mean(d, axis=axes, keepdims=True)
    c = d - dm
    var = mx.mean(c * c, axis=axes)
    mean = (s0 + dm).reshape(-1)
    invstd = mx.rsqrt(var + eps).astype(x.dtype)
    k = invstd if weight is None else weight * invstd
    y = c * k.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    if running_mean is not None:
        running_mean[...] = ((1 - momentum) * running_mean + momentum * mean
                             ).astype(running_mean.dtype)
        running_var[...] = ((1 - momentum) * running_var + momentum * var * (m / (m - 1))
                            ).astype(running_var.dtype)
        mx.async_eval(running_mean, running_var)  # no graph through the running stats
    return y.astype(x.dtype), mean.astype(x.dtype), invstd


def batch_norm_backward(x: Array, g: Array, mean: Array, invstd: Array,
                        weight: Array | None, need_input: bool = True
                        ) -> tuple[Array | None, Array, Array]:
    """Gradients of ``batch_norm_train``: ``(grad_x or None, grad_weight, grad_bias)``."""
    shape, axes = _bshape(x)
    m = x.size // x.shape[1]
    xh = (x - mean.reshape(shape)) * invstd.reshape(shape)
    gb = mx.sum(g, axis=axes)
    gw = mx.sum(g * xh, axis=axes)
    gx = None
    if need_input:
        k = invstd if weight is None else weight * invstd
        gx = k.reshape(shape) * (g - (gb / m).reshape(shape) - xh * (gw / m).reshape(shape))
        gx = gx.astype(x.dtype)
    return gx, gw, gb


def layer_norm(x: Array, weight: Array | None, bias: Array | None, eps: float
               ) -> tuple[Array, Array, Array]:
    """Layer norm over the last axis of x (rows, D) with ``mx.fast.layer_norm``:
    ``(y, mean, rstd)``."""
    # layer norm is shift-invariant: normalising x - x[:, :1] keeps the digits a row far
    # from zero (x ~ 1e4) would lose in its mean, in the fused kernel too
    d = x - _sample(x, [1])
    dm = mx.mean(d, axis=1)
    mean = (x[:, 0] + dm) if x.shape[1] else dm
    rstd = mx.rsqrt(mx.var(d, axis=1) + eps).astype(x.dtype)
    if x.shape[1] == 0 or x.shape[0] == 0:
        return x, mean, rstd
    if x.dtype == mx.float64:  # the fused kernel computes in float32 precision
        y = (d - dm[:, None]) * rstd[:, None]
        y = y if weight is None else y * weight
        y = y if bias is None else y + bias
    else:
        y = mx.fast.layer_norm(d, weight, bias, eps)
    return y.astype(x.dtype), mean, rstd


def layer_norm_backward(x: Array, g: Array, mean: Array, rstd: Array, weight: Array | None,
                        need_input: bool = True, need_affine: bool = True
                        ) -> tuple[Array | None, Array | None, Array | None]:
    """Gradients of ``layer_norm``: ``(grad_x, grad_weight, grad_bias)``, None if unneeded."""
    xh = (x - mean[:, None]) * rstd[:, None]
    gw = mx.sum(g * xh, axis=0) if need_affine else None
    gb = mx.sum(g, axis=0) if need_affine else None
    gx = None
    if need_input:
        gh = g if weight is None else g * weight
        gx = rstd[:, None] * (gh - mx.mean(gh, axis=1, keepdims=True)
                              - xh * mx.mean(gh * xh, axis=1, keepdims=True))
        gx = gx.astype(x.dtype)
    return gx, gw, gb
