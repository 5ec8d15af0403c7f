"""A whole LSTM, GRU or Elman RNN sequence (one layer and direction, no projection, every
row active) in one kernel call, forward and backward through time, its hidden units split
over numba's threads.

Thread k owns a block of ``Hk = H / nt`` hidden units. Its gates' rows of ``W_hh`` (4 for
LSTM, 3 for GRU, 1 for the RNN) are one contiguous block (each thread copies its own out of
``w_hh`` once per call, transposed where BLAS takes it that way), so each step is, per
thread,

    forward    g_k = h_{t-1} @ W_k^T (single-threaded BLAS) -> the gate math of its units
               (``rnn.lstm_fwd_at`` / ``rnn.gru_fwd_at`` on the block) -> its columns of h_t
               (and c_t)
    backward   dh_k = dy_t + sum of the threads' partial products from the step before
               (+ GRU's direct part dh z) -> the gate backward of its units -> its partial
               product dgates_k @ W_k, a share of the next step's dh

and the threads meet once per step. A thread's weight block stays in its core's cache from
step to step. Each step a thread gathers its gate columns of ``gx`` into a buffer of its own
and scatters its gate gradients into ``dgx`` the same way; the saved activations keep the
per-thread layout (T, nt, B, 4 Hk). (Permuting the whole of gx and dgx into that layout with
numpy instead took 1.6 ms of the word-language-model step.)

Measured on 2 busy cores, float32, the word-language-model benchmark's LSTM layer (B=20,
H=200, T=35), ms per sequence, forward / backward:

    per-step loop (BLAS 20x200 @ 200x800 on one thread + the step kernel)   10.7 / 13.2
    this kernel, 2 threads                                                   7.9 /  9.6
    the same GRU layer (3 gates), loop / this kernel               6.5-7.4 / 8.0-8.6
                                                                   4.6-4.7 / 5.8-6.2

and the benchmark's training step went from 166-192 ms to 155-160 ms (same minutes). Each
thread's 20x200 @ 200x400 product took ~115 us in OpenBLAS, ~70% of a step: M = 20 rows is
far from its efficient shapes. Batches under ``SMALL_ROWS`` rows now take that product in
``_abt``, dot products of 4 rows against 2 weight rows at a time (one thread, float32,
microseconds, OpenBLAS / ``_abt``: 20x200 @ 200x400 79 / 45, 20x400 @ 400x200 80 / 40,
20x200 @ 200x800 157 / 95, 8x512 @ 512x2048 809 / 264; but 128x512 @ 512x1024 1695 / 2085).
Where the products run on MKL (``_blaslib.library()``), BLAS takes them at every batch
(``abt_rows``): on an AVX-512 Xeon, one thread, 20x200 @ 200x800 38-40 us through MKL
against 146-169 us in ``_abt``; the layer above, 2 threads, forward / backward
4.3 / 3.8 ms -> 2.2 / 2.4 ms.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange
from numba.core import types as nbt

from . import _blaslib
from ._chunks import launch
from ._gemm import gemm
from ._jit import dual, helper
from ._threads import ONE_BLAS_THREAD as _BLAS
from ._threads import use_parallel
from .rnn import gru_bwd_at as _gru_step_bwd
from .rnn import gru_fwd_at as _gru_step
from .rnn import lstm_bwd_at as _lstm_step_bwd
from .rnn import lstm_fwd_at as _lstm_step
from .rnn import rnn_bwd_at as _rnn_step_bwd
from .rnn import rnn_fwd_at as _rnn_step

__all__ = ["GATES", "split", "permute_gates", "sequence_forward", "sequence_backward"]

SMALL_ROWS = 64


def abt_rows() -> int:
    """Batches below this many rows take the recurrent products in ``_abt``: under scipy's
    OpenBLAS (``SMALL_ROWS``), whose small-row products are slow. MKL's beat ``_abt`` at every
    batch: one thread, float32, 20x200 @ 200x800 38-40 us against 146-169 us, and the
    word-language-model LSTM (2 x 200 units, T = 35, batch 20) forward + backward went from
    27.9 to 22.5 ms on an AVX-512 Xeon, so there it is 0."""
    return 0 if _blaslib.library() == "mkl" else SMALL_ROWS


@helper
def _abt(a, b, c):
    """c = a @ b.T for a (M, K) with few rows and b (N, K), both C-contiguous: blocks of 4
    rows of a against 2 rows of b, each a K-long dot product the compiler vectorises."""
    M, K = a.shape
    N = b.shape[0]
    z = a.dtype.type(0)
    m4 = M - M % 4
    n2 = N - N % 2
    for i0 in range(0, m4, 4):
        h0, h1, h2, h3 = a[i0], a[i0 + 1], a[i0 + 2], a[i0 + 3]
        for j in range(0, n2, 2):
            w, v = b[j], b[j + 1]
            s0 = s1 = s2 = s3 = t0 = t1 = t2 = t3 = z
            for q in range(K):
                wq, vq = w[q], v[q]
                x0, x1, x2, x3 = h0[q], h1[q], h2[q], h3[q]
                s0 += x0 * wq
                s1 += x1 * wq
                s2 += x2 * wq
                s3 += x3 * wq
                t0 += x0 * vq
                t1 += x1 * vq
                t2 += x2 * vq
                t3 += x3 * vq
            c[i0, j], c[i0 + 1, j], c[i0 + 2, j], c[i0 + 3, j] = s0, s1, s2, s3
            c[i0, j + 1], c[i0 + 1, j + 1], c[i0 + 2, j + 1], c[i0 + 3, j + 1] = t0, t1, t2, t3
        for j in range(n2, N):
            w = b[j]
            s0 = s1 = s2 = s3 = z
            for q in range(K):
                wq = w[q]
                s0 += h0[q] * wq
                s1 += h1[q] * wq
                s2 += h2[q] * wq
                s3 += h3[q] * wq
            c[i0, j], c[i0 + 1, j], c[i0 + 2, j], c[i0 + 3, j] = s0, s1, s2, s3
    for i in range(m4, M):
        h = a[i]
        for j in range(N):
            w = b[j]
            s0 = z
            for q in range(K):
                s0 += h[q] * w[q]
            c[i, j] = s0


@helper
def _order(s, t_len, reverse):
    """(t, its predecessor) of the s-th step processed forward."""
    t = t_len - 1 - s if reverse else s
    return t, (t + 1 if reverse else t - 1)


@helper
def _columns(blk, full, lo, gates, gather):
    """A thread's block blk (B, G Hk) and its columns of full (B, G H), gate g's units
    lo:lo+Hk: blk = those columns when ``gather``, else those columns = blk."""
    hk = blk.shape[1] // gates
    hsz = full.shape[1] // gates
    for r in range(blk.shape[0]):
        for g in range(gates):
            b = blk[r, g * hk:(g + 1) * hk]
            f = full[r, g * hsz + lo:g * hsz + lo + hk]
            if gather:
                for j in range(hk):
                    b[j] = f[j]
            else:
                for j in range(hk):
                    f[j] = b[j]


@helper
def _block_of(w_hh, k, gates, blk, transpose):
    """Thread k's block of w_hh (G H, H): its units' rows of each gate, W_k (G Hk, H), into
    blk; its transpose W_k^T (H, G Hk) when ``transpose``, in 16 x 16 tiles (each thread
    builds its own block, into its own core's cache: numpy's transposed copy of a
    1024 x 256 float32 W_hh took 0.4-0.6 ms)."""
    h = w_hh.shape[1]
    hsz = w_hh.shape[0] // gates
    hk = (blk.shape[1] if transpose else blk.shape[0]) // gates
    lo = k * hk
    for g in range(gates):
        src = w_hh[g * hsz + lo:g * hsz + lo + hk]
        if not transpose:
            for i in range(hk):
                s, d = src[i], blk[g * hk + i]
                for j in range(h):
                    d[j] = s[j]
            continue
        for j0 in range(0, h, 16):
            j1 = min(j0 + 16, h)
            for i0 in range(0, hk, 16):
                i1 = min(i0 + 16, hk)
                for j in range(j0, j1):
                    d = blk[j]
                    for i in range(i0, i1):
                        d[g * hk + i] = src[i, j]


def _seq_fwd(gx, h0, c0, w_hh, bp, hs, cs, actsp, reverse, small, gates, relu, nt):
    """gx (T, B, G H); actsp (T, nt, B, 4Hk); w_hh (G H, H); bp (nt, G Hk); hs, cs (T, B, H).
    ``gates`` = 4 (LSTM), 3 (GRU; c0 and cs unused) or 1 (Elman RNN, tanh or ``relu``; c0,
    cs and actsp unused). Thread k first builds its block of
    w_hh: W_k (G Hk, H) for ``_abt`` where ``small``, else W_k^T (H, G Hk) for BLAS (MKL's
    h @ W_k^T ran 1.25x slower reading W_k transposed). Each step, thread k gathers its gate
    columns of gx[t] into its own buffer."""
    t_len, b_len = gx.shape[0], gx.shape[1]
    h = w_hh.shape[1]
    hk = w_hh.shape[0] // gates // nt
    wk = np.empty((nt, gates * hk, h) if small else (nt, h, gates * hk), gx.dtype)
    for k in prange(nt):
        _block_of(w_hh, k, gates, wk[k], not small)
    gbuf = np.empty((nt, b_len, gates * hk), gx.dtype)
    xbuf = np.empty((nt, b_len, gates * hk), gx.dtype)
    for s in range(t_len):
        t, tp = _order(s, t_len, reverse)
        hp = h0 if s == 0 else hs[tp]
        for k in prange(nt):
            lo = k * hk
            if small:
                _abt(hp, wk[k], gbuf[k])
            else:
                gemm(hp, wk[k], gbuf[k])
            _columns(xbuf[k], gx[t], lo, gates, True)
            if gates == 4:
                cp = c0 if s == 0 else cs[tp]
                _lstm_step(xbuf[k], gbuf[k], bp[k], cp, actsp[t, k], cs[t], hs[t], lo)
            elif gates == 3:
                _gru_step(xbuf[k], gbuf[k], bp[k], hp, actsp[t, k], hs[t], lo)
            else:
                _rnn_step(xbuf[k], gbuf[k], bp[k], hs[t], lo, relu)


def _seq_bwd(dyh, dyc, h0, c0, w_hh, hs, cs, actsp, dgx, dgh, dc, dhk, pbuf, reverse,
             small, gates, relu, nt):
    """dyh, dyc, hs, cs (T, B, H); w_hh (G H, H), of which thread k first builds its block
    W_k (G Hk, H) for BLAS, or W_k^T for ``_abt`` where ``small``; actsp
    (T, nt, B, 4Hk); dgx, dgh (T, B, G H) (LSTM, RNN: the same array); dc (B, H) and dhk
    (nt, B, Hk) zero on entry: dc_0 and GRU's direct part of dh_0 on return; pbuf
    (2, nt, B, H) zero on entry: the partial products of the step processed last are in
    pbuf[T % 2]. Thread k's gate gradients go through its own buffers into its columns.
    ``small``: the products in ``_abt``, else BLAS."""
    t_len, b_len = dyh.shape[0], dyh.shape[1]
    h = w_hh.shape[1]
    hk = w_hh.shape[0] // gates // nt
    wk = np.empty((nt, h, gates * hk) if small else (nt, gates * hk, h), dyh.dtype)
    for k in prange(nt):
        _block_of(w_hh, k, gates, wk[k], small)
    xbuf = np.empty((nt, b_len, gates * hk), dyh.dtype)
    hbuf = np.empty((nt if gates == 3 else 0, b_len, gates * hk), dyh.dtype)
    for s in range(t_len):
        t, tp = _order(t_len - 1 - s, t_len, reverse)
        last = s == t_len - 1
        cur = (s + 1) % 2
        prev = s % 2
        for k in prange(nt):
            lo = k * hk
            d = dhk[k]
            for r in range(b_len):
                dr, yr = d[r], dyh[t, r, lo:lo + hk]
                if gates != 3:
                    for j in range(hk):
                        dr[j] = yr[j]
                else:  # GRU: d holds the direct part dh_{t+1} z from the step before
                    for j in range(hk):
                        dr[j] += yr[j]
                for q in range(nt):
                    pr = pbuf[prev, q, r, lo:lo + hk]
                    for j in range(hk):
                        dr[j] += pr[j]
            if gates == 4:
                for r in range(b_len):
                    cr, ycr = dc[r, lo:lo + hk], dyc[t, r, lo:lo + hk]
                    for j in range(hk):
                        cr[j] += ycr[j]
                cp = c0 if last else cs[tp]
                _lstm_step_bwd(d, dc, actsp[t, k], cp, cs[t], xbuf[k], lo)
                dghk = xbuf[k]
            elif gates == 1:
                _rnn_step_bwd(d, hs[t], xbuf[k], lo, relu)
                dghk = xbuf[k]
            else:
                hp = h0 if last else hs[tp]
                _gru_step_bwd(d, actsp[t, k], hp, xbuf[k], hbuf[k], lo)
                dghk = hbuf[k]
                _columns(dghk, dgh[t], lo, gates, False)
            _columns(xbuf[k], dgx[t], lo, gates, False)
            if small:
                _abt(dghk, wk[k], pbuf[cur, k])
            else:
                gemm(dghk, wk[k], pbuf[cur, k])


def _sig_fwd(T):
    c2, c3, c4 = T[:, ::1], T[:, :, ::1], T[:, :, :, ::1]
    return (c3, c2, c2, c2, c2, c3, c3, c4, nbt.boolean, nbt.boolean, nbt.int64, nbt.boolean,
            nbt.int64)


def _sig_bwd(T):
    c2, c3, c4 = T[:, ::1], T[:, :, ::1], T[:, :, :, ::1]
    return (c3, c3, c2, c2, c2, c3, c3, c4, c3, c3, c2, c3, c4, nbt.boolean, nbt.boolean,
            nbt.int64, nbt.boolean, nbt.int64)


FWD = dual(_seq_fwd, name="rnn_seq.fwd", signatures=[_sig_fwd])
BWD = dual(_seq_bwd, name="rnn_seq.bwd", signatures=[_sig_bwd])
GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def split(b_len: int, hsz: int, p: int, gates: int = 4) -> int:
    """Thread count for a layer of batch ``b_len``, ``hsz`` units and input ``p`` to the
    recurrent GEMM: numba's threads when they divide ``hsz`` and the step is big enough."""
    nt = numba.get_num_threads()
    if nt < 2 or hsz % nt or not use_parallel(b_len * gates * hsz * p // 8, "elementwise") \
            or not _BLAS.available():
        return 1
    return nt


def permute_gates(b: np.ndarray, nt: int, gates: int) -> np.ndarray:
    """(G H,) gate bias (one block of H per gate) -> (nt, G Hk): thread k's units of every
    gate, contiguous."""
    hk = b.shape[0] // gates // nt
    return np.ascontiguousarray(b.reshape(gates, nt, hk).transpose(1, 0, 2)).reshape(
        nt, gates * hk)


def _c(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a)


def sequence_forward(mode: str, gx: np.ndarray, h0: np.ndarray, c0: np.ndarray | None,
                     w_hh: np.ndarray, b_hh: np.ndarray, reverse: bool, nt: int
                     ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """``(hs, cs, acts_p)`` of an LSTM, GRU or Elman RNN (``mode``, a key of ``GATES``) over
    gx (T, B, G H) with ``b_ih`` in it, from h0 (B, H) and c0 (LSTM), w_hh (G H, H), b_hh
    (G H,); cs is None but for LSTM, and acts_p is in the permuted layout of ``nt`` threads
    (no columns for the RNN, whose backward reads hs)."""
    gates = GATES[mode]
    t_len, b_len, g = gx.shape
    hsz = g // gates
    dt = gx.dtype
    hs = np.empty((t_len, b_len, hsz), dt)
    lstm = gates == 4
    cs = np.empty((t_len, b_len, hsz), dt) if lstm else np.empty((1, 1, 1), dt)
    c0a = _c(c0) if lstm else np.empty((1, 1), dt)
    acts = np.empty((t_len, nt, b_len, 4 * hsz // nt if gates > 1 else 0), dt)
    launch(FWD, nt, _c(gx), _c(h0), c0a, _c(w_hh), permute_gates(b_hh, nt, gates), hs, cs,
           acts, bool(reverse), b_len < abt_rows(), gates, mode == "RNN_RELU")
    return hs, (cs if lstm else None), acts


def sequence_backward(mode: str, dyh: np.ndarray, dyc: np.ndarray | None, h0: np.ndarray,
                      c0: np.ndarray | None, w_hh: np.ndarray, hs: np.ndarray,
                      cs: np.ndarray | None, acts_p: np.ndarray, reverse: bool
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """``(dgx, dgh, dh0, dc0)`` through the sequence ``sequence_forward`` ran: dgx
    (T, B, G H) is the gradient of gx, dgh that of the hidden products (the same array for
    LSTM and RNN; GRU's n block differs by the reset gate); dc0 is None but for LSTM."""
    gates = GATES[mode]
    t_len, nt, b_len, _ = acts_p.shape
    hsz = hs.shape[2]
    dt = hs.dtype
    lstm = gates == 4
    dgx = np.empty((t_len, b_len, gates * hsz), dt)
    dgh = np.empty_like(dgx) if gates == 3 else dgx
    dc = np.zeros((b_len, hsz) if lstm else (1, 1), dt)
    dhk = np.zeros((nt, b_len, hsz // nt), dt)
    pbuf = np.zeros((2, nt, b_len, hsz), dt)
    one3 = np.empty((1, 1, 1), dt)
    launch(BWD, nt, _c(dyh), _c(dyc) if lstm else one3, _c(h0),
           _c(c0) if lstm else np.empty((1, 1), dt), _c(w_hh), hs,
           cs if lstm else one3, acts_p, dgx, dgh, dc, dhk, pbuf, bool(reverse),
           b_len < abt_rows(), gates, mode == "RNN_RELU")
    dh0 = pbuf[t_len % 2].sum(0)
    if gates == 3:  # GRU's direct part dh_1 z_1, per thread's units
        dh0 += dhk.transpose(1, 0, 2).reshape(b_len, hsz)
    return dgx, dgh, dh0, (dc if lstm else None)
