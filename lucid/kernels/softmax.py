"""Softmax, log-softmax and cross-entropy fused with log-softmax, one pass per row.

Measured, float32, microseconds, min of repeats on 2 busy cores (kernels alone; torch 2.13 on
2 threads, its single-thread figure in brackets):

    kernel (rows x n = 256 x 1000)      numpy   serial  parallel  torch
    softmax                               464      157        79    81 [169]
    log_softmax                             -      164        81    81
    cross_entropy forward (fused)           -      148        77    76
    cross_entropy backward                  -      124        58     -

One training step (forward + backward through autograd), benchmarks/test_norm_loss.py:
lucid 206 us, numpy 424 us, torch 316 us.

The exp inside is a vectorised float32 polynomial (see _softmax_kernels.py); float64 uses
``np.exp``. ``axis`` other than the last is moved last with one copy; the result comes back as
a view in the input's axis order. Only float32/float64 are handled (``supports``); callers keep
numpy for the rest. Kernels pick their parallel build above ``_threads.parallel_threshold``
counting ``WORK`` units per element (an exp costs about two streams of a fused elementwise pass).
"""

from __future__ import annotations

import numpy as np

from . import _softmax_kernels as K
from ._targets import check_targets
from ._threads import use_parallel

__all__ = ["softmax", "softmax_backward", "cross_entropy", "cross_entropy_backward", "supports"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
WORK = 2


def supports(x: np.ndarray) -> bool:
    """True when these kernels handle ``x``'s dtype (float32/float64)."""
    return x.dtype in _FLOATS


def _pick(pair: tuple, n: int) -> object:
    ser, par = pair
    return par if use_parallel(n * WORK, "elementwise") else ser


def _rows(x: np.ndarray, axis: int) -> tuple[np.ndarray, int]:
    axis = axis % x.ndim if x.ndim else 0
    if x.ndim == 0:
        return x.reshape(1, 1), axis
    if axis != x.ndim - 1:
        x = np.moveaxis(x, axis, -1)
    x = np.ascontiguousarray(x)
    return x.reshape(-1, x.shape[-1]), axis


def _back(out2: np.ndarray, like: np.ndarray, axis: int) -> np.ndarray:
    if like.ndim == 0:
        return out2.reshape(())
    shape = list(like.shape)
    shape.append(shape.pop(axis))
    out = out2.reshape(shape)
    return out if axis == like.ndim - 1 else np.moveaxis(out, -1, axis)


def softmax(x: np.ndarray, axis: int = -1, log: bool = False) -> np.ndarray:
    """Softmax (``log``: log-softmax) of ``x`` along ``axis``, stable for large logits.

    Example::

        softmax(np.array([[1.0, 2.0, 3.0]], np.float32), -1)   # [[0.090, 0.245, 0.665]]
    """
    x2, ax = _rows(np.asarray(x), axis)
    out = np.empty(x2.shape, x2.dtype)
    if x2.size:
        _pick(K.softmax_last, x2.size)(x2, out, log)
    return _back(out, x, ax)


def softmax_backward(y: np.ndarray, g: np.ndarray, axis: int = -1, log: bool = False
                     ) -> np.ndarray:
    """Input gradient of ``softmax`` from its output ``y`` and the incoming gradient ``g``.

    softmax: ``y * (g - sum(g * y))``; log-softmax: ``g - exp(y) * sum(g)`` (sums along axis).

    Example::

        y = softmax(x, 1); gx = softmax_backward(y, np.ones_like(y), 1)   # ~0
    """
    y2, ax = _rows(np.asarray(y), axis)
    g2, _ = _rows(np.asarray(g, dtype=y2.dtype), axis)
    out = np.empty(y2.shape, y2.dtype)
    if y2.size:
        _pick(K.softmax_bwd_last, y2.size)(y2, g2, out, log)
    return _back(out, y, ax)


def _prep_weight(weight: np.ndarray | None, dtype: np.dtype) -> np.ndarray:
    if weight is None:
        return np.empty(0, dtype)
    return np.ascontiguousarray(weight, dtype=dtype)


def cross_entropy(
    x: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None = None,
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-row cross-entropy of logits ``x`` (rows, n) against class indices ``target`` (rows,).

    Returns ``(loss, lse, wt)``: the per-row loss (0 where ignored), the row log-sum-exp
    (for the backward) and the target's class weight (0 where ignored; its sum is the "mean"
    divisor). Raises IndexError for a class index outside ``[0, n)``.

    Example::

        loss, lse, wt = cross_entropy(logits, np.array([2, 0]))
    """
    x = np.ascontiguousarray(x)
    rows, n = x.shape
    t = np.ascontiguousarray(target, dtype=np.int64).reshape(-1)
    w = _prep_weight(weight, x.dtype)
    loss = np.empty(rows, x.dtype)
    lse = np.empty(rows, x.dtype)
    wt = np.empty(rows, x.dtype)
    if rows and n:
        if _pick(K.ce_fwd, x.size)(x, t, w, int(ignore_index), float(label_smoothing), loss,
                                   lse, wt):
            check_targets(t, n, ignore_index)  # the kernel counted targets out of range
    elif rows:  # no classes: every target not ignored is out of range
        check_targets(t, n, ignore_index)
        loss[...] = 0
        lse[...] = 0
        wt[...] = 0
    return loss, lse, wt


def cross_entropy_backward(
    x: np.ndarray,
    target: np.ndarray,
    lse: np.ndarray,
    grow: np.ndarray,
    weight: np.ndarray | None = None,
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> np.ndarray:
    """Gradient of ``cross_entropy`` w.r.t. ``x``, row i scaled by ``grow[i]``.

    ``grow`` already holds the incoming gradient and the reduction's divisor. Raises
    IndexError for a class index outside ``[0, n)`` (the kernel never reads through one).

    Example::

        gx = cross_entropy_backward(logits, t, lse, np.full(len(t), 1 / len(t)))
    """
    x = np.ascontiguousarray(x)
    rows, n = x.shape
    t = np.ascontiguousarray(target, dtype=np.int64).reshape(-1)
    w = _prep_weight(weight, x.dtype)
    g = np.empty(rows, x.dtype)  # writable: a read-only array would compile another overload
    g[...] = grow
    out = np.empty(x.shape, x.dtype)
    if x.size and _pick(K.ce_bwd, x.size)(x, t, np.ascontiguousarray(lse, dtype=x.dtype), w, g,
                                          int(ignore_index), float(label_smoothing), out):
        check_targets(t, n, ignore_index)  # the kernel counted targets out of range
    return out
