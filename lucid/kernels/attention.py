"""Fused scaled-dot-product attention over (B, H, L, D) arrays: forward and backward.

One task per (batch, head): the head's q (times the scale), k and v are copied into small
C-contiguous buffers (the callers' q/k/v are usually strided views of one fused projection),
then per head

    forward   a = q k^T (BLAS) -> + bias, or the causal mask (j > i gets 0 weight) -> row
              softmax in place (``_vmath.fast_exp``) -> out = a v (BLAS)
    backward  gv = a^T g;  ds = a * (g v^T - rowsum(a * g v^T));  gq = ds k * scale;
              gk = ds^T (q * scale)

``a`` (the attention weights, (B, H, L, S)) is written once and kept for the backward. Heads
go to numba's threads, each calling single-threaded BLAS (``ONE_BLAS_THREAD``, as conv).
A row whose every score is -inf gives NaN weights, as torch's math path does.

The output and the gradients of q, k and v take their input's memory order (``_like``), as
torch's CPU flash attention does: for heads viewed out of a (B, L, H * D) projection they
are laid out (B, L, H, D), so the usual ``y.transpose(1, 2).contiguous().view(B, L, C)``
and the gradients' way back into the projection are views, not copies (four 0.5 MB copies
per nanoGPT layer before). Each head's results are written from the thread's buffer.
The softmax's row max runs in eight independent accumulators (``_softmax_kernels._row_max``):
one running max is a chain of dependent selects, and causal rows of 1-64 scores are too short
for the compiler's vectorised loop body. 2048 causal rows of 64: 0.21 -> 0.15-0.16 ms.

Measured, float32, nanoGPT's attention (16 x 4 heads, L = S = 64, D = 32, causal; q, k, v
strided views), 2 busy cores, milliseconds, forward / backward, ranges over runs:

    composed (numpy batched matmul, softmax kernel, mask add)    1.35-2.3 / 1.65-2.3
    this kernel                                                  1.05-1.2 / 1.5-2.0
    (torch 2.13's CPU flash attention in its GPT step, profiled: ~0.98 / ~2.2)

Small BLAS calls stay faster than numba loops here: 64x32 @ 32x64 on one thread 7.3 us
through ``np.dot``, 18.5 us as an i-k-j loop.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange
from numba.core import types as nbt

from ._chunks import launch
from ._chunks import split as _split
from ._gemm import add_rows, gemm
from ._jit import dual, helper
from ._softmax_kernels import _row_max
from ._vmath import fast_exp

__all__ = ["attention", "attention_backward"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

# Query rows per block of a causal head longer than this. Each block is scored only against
# the keys its rows may see, so the products above the diagonal are skipped: of the 16 x 4
# heads of 32 channels, float32, forward / backward ms, full -> blocks (QB = 64; QB = 32 had
# more small BLAS calls and lost at every length):
#     L = 128:  5.2 -> 4.5 / 8.9 -> 6.0        L = 256:  13.6 -> 11.0 / 25.3 -> 15.5
# At L = 64 one block is the whole head, and its copies made it 5-10% slower than the full
# path, so heads of QB rows or fewer keep that.
QB = 64

# The bias argument when there is none (never read): a (1, 1, 2, 1) view that is not
# contiguous, so numba types it any-layout, exactly as the warmed signature declares it
# (calls go by that signature, ``launch(..., sig=)``; a contiguous dummy would still fit it).
_NO_BIAS = {dt: np.empty((1, 1, 2, 2), dt)[:, :, :, :1] for dt in _FLOATS}


@helper
def _load(src, dst, scale):
    """dst = src * scale for 2-D arrays: a strided head view into a thread's C-contiguous
    buffer, or a buffer out into a strided head of the result."""
    for i in range(src.shape[0]):
        s, d = src[i], dst[i]
        for j in range(s.shape[0]):
            d[j] = s[j] * scale


@helper
def _load_head(q, k, v, b, h, sc, qb, kb, vb):
    """Head (b, h) into the thread's buffers: qb = q * sc, kb = k, vb = v."""
    one = q.dtype.type(1)
    _load(q[b, h], qb, sc)
    _load(k[b, h], kb, one)
    _load(v[b, h], vb, one)


@helper
def _head_buffers(q, k, v):
    """A thread's C-contiguous buffers for one head's q, k and v."""
    L, D = q.shape[2], q.shape[3]
    S, Dv = k.shape[2], v.shape[3]
    return np.empty((L, D), q.dtype), np.empty((S, D), q.dtype), np.empty((S, Dv), q.dtype)


@helper
def _softmax_row(row, n):
    """row[:n] = softmax(row[:n]) in place, row[n:] = 0.

    The max may skip a NaN score; it still makes its whole row NaN through the sum, as
    torch's math path does."""
    zero = row.dtype.type(0)
    mx = _row_max(row[:n])  # eight accumulators: 0.21 -> 0.15 ms over 2048 causal rows of 64
    s = zero
    for j in range(n):
        e = fast_exp(row[j] - mx)
        row[j] = e
        s += e
    inv = row.dtype.type(1) / s
    for j in range(n):
        row[j] *= inv
    for j in range(n, row.shape[0]):
        row[j] = zero


def _attn_fwd(q, k, v, bias, has_bias, causal, scale, out, attn, nt):
    """out[b, h] = softmax(q[b, h] k[b, h]^T * scale + bias[b, h]) v[b, h]   (attn keeps a)

    for t in prange(nt):                           # a contiguous range of heads each
        for head i in chunk t:
            qb = q[i] * scale; kb = k[i]; vb = v[i]          (C-contiguous copies)
            a = attn[i] = qb @ kb.T (BLAS);  a += bias[i]
            softmax over each row of a;  out[i] = a @ vb (BLAS)
            (causal heads longer than QB: by blocks of query rows, _causal_fwd)
    """
    B, H, L = q.shape[:3]
    S, Dv = k.shape[2], v.shape[3]
    sc = q.dtype.type(scale)
    one = q.dtype.type(1)
    BH = B * H
    for t in prange(nt):
        qb, kb, vb = _head_buffers(q, k, v)
        ob = np.empty((L, Dv), q.dtype)
        sbuf = np.empty(QB * S, q.dtype)
        for i in range(t * BH // nt, (t + 1) * BH // nt):
            b, h = i // H, i % H
            _load_head(q, k, v, b, h, sc, qb, kb, vb)
            a = attn[b, h]
            if causal and L > QB:
                _causal_fwd(qb, kb, vb, a, ob, sbuf)
            else:
                gemm(qb, kb.T, a)
                for r in range(L):
                    row = a[r]
                    if has_bias:
                        br = bias[b, h, r]
                        for j in range(S):
                            row[j] += br[j]
                    _softmax_row(row, min(r + 1, S) if causal else S)
                gemm(a, vb, ob)
            _load(ob, out[b, h], one)


@helper
def _causal_fwd(qb, kb, vb, a, ob, sbuf):
    """One causal head: for each block of QB query rows r0..r1, only the keys j < r1 are
    scored (the rest of its rows of ``a`` is 0)."""
    L, S = a.shape
    for r0 in range(0, L, QB):
        r1 = min(r0 + QB, L)
        n, m = r1 - r0, min(r1, S)
        s = sbuf[: n * m].reshape((n, m))
        gemm(qb[r0:r1], kb[:m].T, s)
        for i in range(n):
            row, dst = s[i], a[r0 + i]
            _softmax_row(row, min(r0 + i + 1, m))
            for j in range(m):
                dst[j] = row[j]
            for j in range(m, S):
                dst[j] = 0
        gemm(s, vb[:m], ob[r0:r1])


def _attn_bwd(q, k, v, attn, g, scale, causal, gq, gk, gv, nt):
    """Gradients of ``_attn_fwd`` given g = d out (B, H, L, Dv).

    for t in prange(nt):
        for head i in chunk t:
            gv[i] = a^T @ g[i];  ds = g[i] @ v[i]^T                       (BLAS)
            ds = a * (ds - rowsum(a * ds))                                (softmax backward)
            gq[i] = (ds @ k[i]) * scale;  gk[i] = ds^T @ (q[i] * scale)   (BLAS)
            (causal heads longer than QB: by blocks of query rows, _causal_bwd)
    """
    B, H, L, D = q.shape
    S, Dv = k.shape[2], v.shape[3]
    sc = q.dtype.type(scale)
    one = q.dtype.type(1)
    BH = B * H
    for t in prange(nt):
        qb, kb, vb = _head_buffers(q, k, v)
        gb = np.empty((L, Dv), q.dtype)
        ds = np.empty((L, S), q.dtype)
        qd, kd, vd = _head_buffers(q, k, v)
        ab = np.empty(QB * S, q.dtype)
        tb = np.empty(S * max(D, Dv), q.dtype)
        for i in range(t * BH // nt, (t + 1) * BH // nt):
            b, h = i // H, i % H
            _load_head(q, k, v, b, h, sc, qb, kb, vb)
            _load(g[b, h], gb, one)
            a = attn[b, h]
            if causal and L > QB:
                _causal_bwd(qb, kb, vb, gb, a, qd, kd, vd, ds, ab, tb)
            else:
                gemm(a.T, gb, vd)
                gemm(gb, vb.T, ds)
                for r in range(L):
                    _softmax_grad_row(a[r], ds[r], S)
                gemm(ds, kb, qd)
                gemm(ds.T, qb, kd)
            _load(vd, gv[b, h], one)
            _load(qd, gq[b, h], sc)
            _load(kd, gk[b, h], one)


@helper
def _softmax_grad_row(ar, dr, n):
    """dr[:n] = ar * (dr - sum(ar * dr)): the softmax backward of one row."""
    acc = ar.dtype.type(0)
    for j in range(n):
        acc += ar[j] * dr[j]
    for j in range(n):
        dr[j] = ar[j] * (dr[j] - acc)


@helper
def _causal_bwd(qb, kb, vb, gb, a, qd, kd, vd, ds, ab, tb):
    """One causal head's gradients by blocks of QB query rows, each against the keys j < r1
    it saw: gq rows of the block, and its share of gk and gv (added to the key rows)."""
    L, S = a.shape
    D, Dv = qb.shape[1], vb.shape[1]
    kd[:] = 0
    vd[:] = 0
    for r0 in range(0, L, QB):
        r1 = min(r0 + QB, L)
        n, m = r1 - r0, min(r1, S)
        ablk = ab[: n * m].reshape((n, m))
        dblk = ds.ravel()[: n * m].reshape((n, m))
        for i in range(n):
            src, dst = a[r0 + i], ablk[i]
            for j in range(m):
                dst[j] = src[j]
        gemm(gb[r0:r1], vb[:m].T, dblk)
        for i in range(n):
            _softmax_grad_row(ablk[i], dblk[i], m)
        gemm(dblk, kb[:m], qd[r0:r1])
        t = tb[: m * D].reshape((m, D))
        gemm(dblk.T, qb[r0:r1], t)
        add_rows(t, kd[:m])
        t = tb[: m * Dv].reshape((m, Dv))
        gemm(ablk.T, gb[r0:r1], t)
        add_rows(t, vd[:m])


def _sig_fwd(T):
    a4, c4 = T[:, :, :, :], T[:, :, :, ::1]
    return (a4, a4, a4, a4, nbt.boolean, nbt.boolean, nbt.float64, a4, c4, nbt.int64)


def _sig_fwd_mask(T):
    """A mask or bias given: ``np.broadcast_to``'s read-only view of it."""
    a4, c4 = T[:, :, :, :], T[:, :, :, ::1]
    ro4 = nbt.Array(T, 4, "A", readonly=True)
    return (a4, a4, a4, ro4, nbt.boolean, nbt.boolean, nbt.float64, a4, c4, nbt.int64)


def _sig_bwd(T):
    a4, c4 = T[:, :, :, :], T[:, :, :, ::1]
    return (a4, a4, a4, c4, a4, nbt.float64, nbt.boolean, a4, a4, a4, nbt.int64)


def _like(x: np.ndarray, last: int) -> np.ndarray:
    """An empty (B, H, rows, last) array in ``x``'s memory order: (B, rows, H, last) when x is
    a head view of a (B, rows, H * D) projection (as torch's CPU flash attention returns),
    so ``transpose(1, 2).reshape(B, rows, H * last)`` is free; else C-contiguous."""
    B, H, n = x.shape[:3]
    if H > 1 and n > 1 and x.strides[1] < x.strides[2]:
        return np.empty((B, n, H, last), x.dtype).transpose(0, 2, 1, 3)
    return np.empty((B, H, n, last), x.dtype)


FWD = dual(_attn_fwd, signatures=[_sig_fwd, _sig_fwd_mask])
BWD = dual(_attn_bwd, signatures=[_sig_bwd])
# the warmed argument types every call is made with (any layout takes C-contiguous heads too)
_SIGS = {dt: {name: spec(numba.from_dtype(dt)) for name, spec in
              (("fwd", _sig_fwd), ("mask", _sig_fwd_mask), ("bwd", _sig_bwd))}
         for dt in _FLOATS}


def _ok(*xs: np.ndarray) -> bool:
    d = xs[0].dtype
    return d in _FLOATS and all(type(x) is np.ndarray and x.dtype == d and x.ndim == 4
                                for x in xs)


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, bias: np.ndarray | None,
              scale: float, causal: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """``(softmax(q k^T scale + bias) v, weights)`` for 4-D float32/float64 q (B, H, L, D),
    k (B, H, S, D), v (B, H, S, Dv) and a bias broadcastable to (B, H, L, S); ``causal``
    masks j > i instead of a bias. None when the arrays are not of that form."""
    if not _ok(q, k, v):
        return None
    B, H, L, D = q.shape
    S, Dv = k.shape[2], v.shape[3]
    if k.shape[:2] != (B, H) or v.shape[:3] != (B, H, S) or k.shape[3] != D:
        return None
    out = _like(q, Dv)
    attn = np.empty((B, H, L, S), q.dtype)
    if out.size == 0 or attn.size == 0 or D == 0:
        return None
    b4 = _NO_BIAS[q.dtype]
    if bias is not None:
        if type(bias) is not np.ndarray or bias.dtype != q.dtype or bias.ndim > 4:
            return None
        try:
            b4 = np.broadcast_to(bias, (B, H, L, S))
        except ValueError:
            return None
    nt = _split(B * H, B * H * L * S * (D + Dv) // 8)
    launch(FWD, nt, q, k, v, b4, bias is not None, bool(causal), float(scale), out, attn,
           sig=_SIGS[q.dtype]["fwd" if bias is None else "mask"])
    return out, attn


def attention_backward(q: np.ndarray, k: np.ndarray, v: np.ndarray, attn: np.ndarray,
                       g: np.ndarray, scale: float, causal: bool = False
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(gq, gk, gv)`` of ``attention`` given the weights it returned and g = d out; None
    when the arrays are not of the form ``attention`` takes. ``causal``: the weights came
    from a causal ``attention`` (zero above the diagonal), whose blocks are skipped."""
    if not _ok(q, k, v, attn, g) or not attn.flags.c_contiguous or g.shape[:3] != q.shape[:3]:
        return None
    B, H, L, D = q.shape
    S, Dv = k.shape[2], v.shape[3]
    gq, gk, gv = _like(q, D), _like(k, D), _like(v, Dv)
    nt = _split(B * H, B * H * L * S * (2 * D + 2 * Dv) // 8)
    launch(BWD, nt, q, k, v, attn, g, float(scale), bool(causal), gq, gk, gv,
           sig=_SIGS[q.dtype]["bwd"])
    return gq, gk, gv
