"""A whole LSTM sequence (one layer and direction, no projection, every row active) in one
kernel call, forward and backward through time, its hidden units split over numba's threads.

Thread k owns a block of ``Hk = H / nt`` hidden units. Its four gates' rows of ``W_hh`` are
one contiguous block (``w_hh`` permuted once per call), so each step is, per thread,

    forward    g_k = h_{t-1} @ W_k^T (single-threaded BLAS) -> the gate math of its units
               (``rnn._lstm_fwd`` on the block) -> its columns of c_t and h_t
    backward   dh_k = dy_t + sum of the threads' partial products from the step before ->
               the gate backward of its units (``rnn._lstm_bwd``) -> its partial product
               dgates_k @ W_k, half of the next step's dh

and the threads meet once per step. A thread's weight block stays in its core's cache from
step to step. The gate arrays (``gx``, ``acts``, ``dgx``) use the permuted layout
(T, nt, B, 4Hk) inside (``permute_gates`` / ``unpermute_gates``).

Measured on 2 busy cores, float32, the word-language-model benchmark's layer (B=20, H=200,
T=35), ms per sequence, forward / backward:

    per-step loop (BLAS 20x200 @ 200x800 on one thread + the step kernel)   10.7 / 13.2
    this kernel, 2 threads                                                   7.9 /  9.6

and the benchmark's training step went from 166-192 ms to 155-160 ms (same minutes). Each
thread's 20x200 @ 200x400 product takes ~115 us in OpenBLAS, ~70% of a step: M = 20 rows is
far from its efficient shapes.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange
from numba.core import types as nbt

from ._chunks import launch
from ._jit import dual, helper
from ._threads import ONE_BLAS_THREAD as _BLAS
from ._threads import use_parallel
from .rnn import _lstm_bwd, _lstm_fwd

__all__ = ["split", "permute_gates", "unpermute_gates", "sequence_forward",
           "sequence_backward"]

_step_fwd = helper(_lstm_fwd)
_step_bwd = helper(_lstm_bwd)


def _seq_fwd(gxp, h0, c0, wt, bp, hs, cs, actsp, reverse, nt):
    """gxp, actsp (T, nt, B, 4Hk); wt (nt, H, 4Hk) = W_k^T; bp (nt, 4Hk); hs, cs (T, B, H)."""
    t_len, b_len = gxp.shape[0], gxp.shape[2]
    hk = wt.shape[2] // 4
    gbuf = np.empty((nt, b_len, 4 * hk), gxp.dtype)
    for s in range(t_len):
        t = t_len - 1 - s if reverse else s
        tp = t + 1 if reverse else t - 1
        hp = h0 if s == 0 else hs[tp]
        cp = c0 if s == 0 else cs[tp]
        for k in prange(nt):
            lo = k * hk
            np.dot(hp, wt[k], gbuf[k])
            _step_fwd(gxp[t, k], gbuf[k], bp[k], cp[:, lo:lo + hk], actsp[t, k],
                      cs[t][:, lo:lo + hk], hs[t][:, lo:lo + hk])


def _seq_bwd(dyh, dyc, c0, w, cs, actsp, dgxp, dc, pbuf, reverse, nt):
    """dyh, dyc, cs (T, B, H); w (nt, 4Hk, H) = W_k; actsp, dgxp (T, nt, B, 4Hk); dc (B, H)
    zero on entry, dc_0 on return; pbuf (2, nt, B, H) zero on entry: the partial products
    of the step processed last are in pbuf[T % 2] (their sum is dh_0)."""
    t_len, b_len = dyh.shape[0], dyh.shape[1]
    hk = w.shape[1] // 4
    dhk = np.empty((nt, b_len, hk), dyh.dtype)
    for s in range(t_len):
        t = s if reverse else t_len - 1 - s
        tp = t + 1 if reverse else t - 1
        cp = c0 if s == t_len - 1 else cs[tp]
        cur = (s + 1) % 2
        prev = s % 2
        for k in prange(nt):
            lo = k * hk
            d = dhk[k]
            dck = dc[:, lo:lo + hk]
            for r in range(b_len):
                dr, yr, cr, ycr = d[r], dyh[t, r, lo:lo + hk], dck[r], dyc[t, r, lo:lo + hk]
                for j in range(hk):
                    dr[j] = yr[j]
                    cr[j] += ycr[j]
                for q in range(nt):
                    pr = pbuf[prev, q, r, lo:lo + hk]
                    for j in range(hk):
                        dr[j] += pr[j]
            _step_bwd(d, dck, actsp[t, k], cp[:, lo:lo + hk], cs[t][:, lo:lo + hk],
                      dgxp[t, k])
            np.dot(dgxp[t, k], w[k], pbuf[cur, k])


def _sig_fwd(T):
    c2, c3, c4 = T[:, ::1], T[:, :, ::1], T[:, :, :, ::1]
    return (c4, c2, c2, c3, c2, c3, c3, c4, nbt.boolean, nbt.int64)


def _sig_bwd(T):
    c2, c3, c4 = T[:, ::1], T[:, :, ::1], T[:, :, :, ::1]
    return (c3, c3, c2, c3, c3, c4, c4, c2, c4, nbt.boolean, nbt.int64)


FWD = dual(_seq_fwd, name="lstm.seq_fwd", signatures=[_sig_fwd])
BWD = dual(_seq_bwd, name="lstm.seq_bwd", signatures=[_sig_bwd])


def split(b_len: int, hsz: int, p: int) -> int:
    """Thread count for a layer of batch ``b_len``, ``hsz`` units and input ``p`` to the
    recurrent GEMM: numba's threads when they divide ``hsz`` and the step is big enough."""
    nt = numba.get_num_threads()
    if nt < 2 or hsz % nt or not use_parallel(b_len * 4 * hsz * p // 8, "elementwise") \
            or not _BLAS.available():
        return 1
    return nt


def permute_gates(a: np.ndarray, nt: int) -> np.ndarray:
    """(..., 4H) gate columns (i, f, g, o blocks) -> (nt, ..., 4Hk) per-thread blocks, as a
    new C-contiguous array whose leading axis is moved after a first axis of length T when
    ``a`` is 3-D: (T, B, 4H) -> (T, nt, B, 4Hk)."""
    hk = a.shape[-1] // 4 // nt
    lead = a.shape[:-1]
    b = a.reshape(*lead, 4, nt, hk)
    if a.ndim == 3:  # (T, B, 4, nt, hk) -> (T, nt, B, 4, hk)
        return np.ascontiguousarray(b.transpose(0, 3, 1, 2, 4)).reshape(
            lead[0], nt, lead[1], 4 * hk)
    if a.ndim == 1:  # (4, nt, hk) -> (nt, 4, hk)
        return np.ascontiguousarray(b.transpose(1, 0, 2)).reshape(nt, 4 * hk)
    raise ValueError("permute_gates takes a (T, B, 4H) or (4H,) array")


def unpermute_gates(p: np.ndarray) -> np.ndarray:
    """Inverse of ``permute_gates`` for (T, nt, B, 4Hk): back to (T, B, 4H)."""
    t_len, nt, b_len, g = p.shape
    hk = g // 4
    return np.ascontiguousarray(p.reshape(t_len, nt, b_len, 4, hk).transpose(0, 2, 3, 1, 4)
                                ).reshape(t_len, b_len, 4 * nt * hk)


def _weight_blocks(w_hh: np.ndarray, nt: int) -> np.ndarray:
    """(4H, H) -> (nt, 4Hk, H): thread k's gate rows, contiguous."""
    g, h = w_hh.shape
    hk = g // 4 // nt
    return np.ascontiguousarray(w_hh.reshape(4, nt, hk, h).transpose(1, 0, 2, 3)).reshape(
        nt, 4 * hk, h)


def sequence_forward(gx: np.ndarray, h0: np.ndarray, c0: np.ndarray, w_hh: np.ndarray,
                     b_hh: np.ndarray, reverse: bool, nt: int
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(hs, cs, acts_p)`` of an LSTM over gx (T, B, 4H) with ``b_ih`` in it, from h0, c0
    (B, H), w_hh (4H, H), b_hh (4H,); acts_p in the permuted layout of ``nt`` threads."""
    t_len, b_len, g = gx.shape
    hsz = g // 4
    dt = gx.dtype
    hs = np.empty((t_len, b_len, hsz), dt)
    cs = np.empty((t_len, b_len, hsz), dt)
    acts = np.empty((t_len, nt, b_len, g // nt), dt)
    wt = np.ascontiguousarray(_weight_blocks(w_hh, nt).transpose(0, 2, 1))
    args = (permute_gates(gx, nt), np.ascontiguousarray(h0), np.ascontiguousarray(c0), wt,
            permute_gates(b_hh, nt), hs, cs, acts, bool(reverse))
    launch(FWD, nt, *args)
    return hs, cs, acts


def sequence_backward(dyh: np.ndarray, dyc: np.ndarray, c0: np.ndarray, w_hh: np.ndarray,
                      cs: np.ndarray, acts_p: np.ndarray, reverse: bool
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dgx, dh0, dc0)`` through the sequence ``sequence_forward`` ran: dgx (T, B, 4H) is
    the gradient of the gate pre-activations (of gx, and of b_hh summed over T and B)."""
    t_len, nt, b_len, _ = acts_p.shape
    hsz = cs.shape[2]
    dt = cs.dtype
    dgxp = np.empty_like(acts_p)
    dc = np.zeros((b_len, hsz), dt)
    pbuf = np.zeros((2, nt, b_len, hsz), dt)
    launch(BWD, nt, np.ascontiguousarray(dyh), np.ascontiguousarray(dyc),
           np.ascontiguousarray(c0), _weight_blocks(w_hh, nt), cs, acts_p, dgxp, dc, pbuf,
           bool(reverse))
    return unpermute_gates(dgxp), pbuf[t_len % 2].sum(0), dc
