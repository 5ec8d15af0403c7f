"""Fused scaled-dot-product attention over (B, H, L, D) arrays: forward and backward.

One task per (batch, head). BLAS reads each head of q, k and v in place (the callers' q/k/v
are usually strided views of one fused projection: rows H * D apart, which BLAS takes as a
leading dimension) and writes the head's output and gradients straight into their arrays.
Per head

    forward   a = q k^T (BLAS) -> row softmax of a * scale (+ bias), with the causal mask
              (j > i gets 0 weight) -> out = a v (BLAS)
    backward  gv = a^T g;  ds = scale * a * (g v^T - rowsum(a * g v^T));  gq = ds k;
              gk = ds^T q

With no bias and a positive scale, the scale is applied inside the exp (exp((s - max) *
scale)), so no scaled copy of q is made. ``a`` (the attention weights, (B, H, L, S)) is
written once and kept for the backward. Heads go to numba's threads, each calling
single-threaded BLAS (``ONE_BLAS_THREAD``, as conv). A row whose every score is -inf gives
NaN weights, as torch's math path does.

The output and the gradients of q, k and v take their input's memory order (``_like``), as
torch's CPU flash attention does: for heads viewed out of a (B, L, H * D) projection they
are laid out (B, L, H, D), so the usual ``y.transpose(1, 2).contiguous().view(B, L, C)``
and the gradients' way back into the projection are views, not copies.
The softmax's row max runs over ``_vmath.fmax``, whose loop vectorises (numba's ``max`` in a
loop stays scalar).

Measured, float32, nanoGPT's attention (16 x 4 heads, L = S = 64, D = 32, causal; q, k, v
strided views), 2 busy cores, microseconds per call, forward / forward + backward, medians
of alternating runs on an AVX-512 Xeon:

    heads copied into per-thread buffers, scalar row max    780-845 / 1950-2060
    this kernel                                             530-660 / 1490-1820
    torch 2.13's CPU flash attention                        430-525 / 1600-1945

One head's forward, serial: q k^T ~3 us, the 64 causal row softmaxes ~6 us (each row's loops
end in scalar code for its last up to 31 scores: rows of n scores run slower per score than
full rows of 64), a v ~3 us. These were slower for the softmax rows: the tail set to -inf
and every loop over the whole row; a select on the column index in the loops; an additive
(L, S) mask row; chunks of 8 or 16 in fixed-length inner loops (the compiler unrolls those
and does not vectorise them).
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
from ._gemm import gemm, gemm_add
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
# At L = 64 one block is the whole head: two blocks of 32 rows there (now that a block is
# scored in place, not copied) were no faster (forward 590-635 vs 620-670 us per call).
QB = 64

# The bias argument when there is none (never read): a (1, 1, 2, 1) view that is not
# contiguous, so numba types it any-layout, exactly as the warmed signature declares it
# (calls go by that signature, ``launch(..., sig=)``; a contiguous dummy would still fit it).
_NO_BIAS = {dt: np.empty((1, 1, 2, 2), dt)[:, :, :, :1] for dt in _FLOATS}


@helper
def _softmax_row(row, n, sc):
    """row[:n] = softmax(sc * row[:n]) in place (sc > 0, applied inside the exp), row[n:] = 0.

    The max may skip a NaN score; it still makes its whole row NaN through the sum, as
    torch's math path does."""
    zero = row.dtype.type(0)
    mx = _row_max(row[:n])
    s = zero
    for j in range(n):
        e = fast_exp((row[j] - mx) * sc)
        row[j] = e
        s += e
    inv = row.dtype.type(1) / s
    for j in range(n):
        row[j] *= inv
    for j in range(n, row.shape[0]):
        row[j] = zero


@helper
def _scale_row(row, br, sc):
    """row = row * sc + br (``br`` None: row * sc): the scores' scale when it cannot go into
    the exp."""
    for j in range(row.shape[0]):
        row[j] = row[j] * sc if br is None else row[j] * sc + br[j]


@helper
def _zero(x):
    """x[...] = 0 for a 2-D array of any strides."""
    for i in range(x.shape[0]):
        r = x[i]
        for j in range(r.shape[0]):
            r[j] = 0


def _attn_fwd(q, k, v, bias, has_bias, causal, scale, out, attn, nt):
    """out[b, h] = softmax(q[b, h] k[b, h]^T * scale + bias[b, h]) v[b, h]   (attn keeps a)

    for t in prange(nt):                           # a contiguous range of heads each
        for head i in chunk t, for each block of query rows r0..r1 (one block unless
        causal and longer than QB), against the m keys it may see:
            a[r0:r1, :m] = q[i][r0:r1] @ k[i][:m].T      (BLAS, reading the heads in place)
            softmax over each row (the scale inside the exp, or first with the bias), 0 on
            the keys it may not see;  out[i][r0:r1] = a[r0:r1, :m] @ v[i][:m]    (BLAS)
    """
    B, H, L = q.shape[:3]
    S = k.shape[2]
    sc = q.dtype.type(scale)
    fold = sc > 0 and not has_bias
    es = sc if fold else q.dtype.type(1)
    qb = QB if causal and L > QB else L
    BH = B * H
    for t in prange(nt):
        for i in range(t * BH // nt, (t + 1) * BH // nt):
            b, h = i // H, i % H
            qh, kh, vh, a, oh = q[b, h], k[b, h], v[b, h], attn[b, h], out[b, h]
            for r0 in range(0, L, qb):
                r1 = min(r0 + qb, L)
                m = min(r1, S) if causal else S
                gemm(qh[r0:r1], kh[:m].T, a[r0:r1, :m])
                for r in range(r0, r1):
                    if has_bias:
                        _scale_row(a[r, :m], bias[b, h, r], sc)
                    elif not fold:
                        _scale_row(a[r, :m], None, sc)
                    _softmax_row(a[r], min(r + 1, m) if causal else m, es)
                gemm(a[r0:r1, :m], vh[:m], oh[r0:r1])


def _attn_bwd(q, k, v, attn, g, scale, causal, gq, gk, gv, nt):
    """Gradients of ``_attn_fwd`` given g = d out (B, H, L, Dv).

    for t in prange(nt):
        for head i in chunk t, for each block of query rows r0..r1 against its m keys
        (as the forward), with a = attn[i][r0:r1, :m]:
            ds = g[i][r0:r1] @ v[i][:m]^T                                 (BLAS)
            ds = scale * a * (ds - rowsum(a * ds))                        (softmax backward)
            gq[i][r0:r1] = ds @ k[i][:m];  gk[i][:m] (+)= ds^T @ q[i][r0:r1];
            gv[i][:m] (+)= a^T @ g[i][r0:r1]      (BLAS; blocks add into the keys they saw)
    """
    B, H, L = q.shape[:3]
    S = k.shape[2]
    sc = q.dtype.type(scale)
    qb = QB if causal and L > QB else L
    BH = B * H
    for t in prange(nt):
        ds = np.empty(qb * S, q.dtype)
        for i in range(t * BH // nt, (t + 1) * BH // nt):
            b, h = i // H, i % H
            qh, kh, vh, gh, a = q[b, h], k[b, h], v[b, h], g[b, h], attn[b, h]
            gqh, gkh, gvh = gq[b, h], gk[b, h], gv[b, h]
            if qb < L:
                _zero(gkh)
                _zero(gvh)
            for r0 in range(0, L, qb):
                r1 = min(r0 + qb, L)
                m = min(r1, S) if causal else S
                ab = a[r0:r1, :m]
                d = ds[: (r1 - r0) * m].reshape((r1 - r0, m))
                gemm(gh[r0:r1], vh[:m].T, d)
                for r in range(r1 - r0):
                    _softmax_grad_row(ab[r], d[r], sc)
                gemm(d, kh[:m], gqh[r0:r1])
                if qb < L:
                    gemm_add(d.T, qh[r0:r1], gkh[:m])
                    gemm_add(ab.T, gh[r0:r1], gvh[:m])
                else:
                    gemm(d.T, qh, gkh[:m])
                    gemm(ab.T, gh, gvh[:m])
                    _zero(gkh[m:])
                    _zero(gvh[m:])


@helper
def _softmax_grad_row(ar, dr, sc):
    """dr = sc * ar * (dr - sum(ar * dr)): the softmax backward of one row, times the scale."""
    acc = ar.dtype.type(0)
    for j in range(ar.shape[0]):
        acc += ar[j] * dr[j]
    for j in range(ar.shape[0]):
        dr[j] = sc * ar[j] * (dr[j] - acc)


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
