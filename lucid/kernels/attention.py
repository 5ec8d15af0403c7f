"""Fused scaled-dot-product attention over (B, H, L, D) arrays: forward and backward.

One task per (batch, head). BLAS reads each head of q, k and v in place (the callers' q/k/v
are usually strided views of one fused projection: rows H * D apart, which BLAS takes as a
leading dimension) and writes the head's output and gradients straight into their arrays.
Per head, with the scores kept transposed, a[j, i] for key j and query i:

    forward   a = k q^T (BLAS) -> softmax down each query's column of a * scale (+ bias),
              with the causal mask (key j > query i gets 0 weight) -> out = a^T v (BLAS)
    backward  gv = a g;  d = v g^T;  d = scale * a * (d - colsum(a * d));  gq = d^T k;
              gk = d q

The transposed layout is for the softmax: its max, sum and scale run along a row of
queries, the same length for every key, so the loops have no horizontal reductions and,
under a causal mask, no rows of every length ending in scalar tails (the mask is -inf
written above the diagonal). With no bias and a positive scale, the scale is applied inside
the exp (exp((s - max) * scale)), so no scaled copy of q is made. ``a`` (the weights,
stored (B, H, S, L); ``attention`` returns its (B, H, L, S) transposed view) is written
once and kept for the backward. Heads go to numba's threads, each calling single-threaded
BLAS (``ONE_BLAS_THREAD``, as conv). A query whose every score is -inf gets the weights 0
and the output 0, as torch's attention (its safe softmax) gives.

The output and the gradients of q, k and v take their input's memory order (``_like``), as
torch's CPU flash attention does: for heads viewed out of a (B, L, H * D) projection they
are laid out (B, L, H, D), so the usual ``y.transpose(1, 2).contiguous().view(B, L, C)``
and the gradients' way back into the projection are views, not copies.

Measured, float32, nanoGPT's attention (16 x 4 heads, L = S = 64, D = 32, causal; q, k, v
strided views), 2 busy cores, microseconds per call, forward / forward + backward, medians
of alternating runs on an AVX-512 Xeon (the machine's slow and fast states differ ~1.5x;
each line is against torch in the same run):

    heads copied into per-thread buffers, scalar row max    780-845 / 1950-2060
    scores by row (query, key), a softmax per row           545 / 1554
    scores by column, this kernel                           490 / 1244
      + 512-bit vectors in the softmax loops (``wide``)     0.89x / 0.95x of the line above
    torch 2.13's CPU flash attention                        430 / 1606-1628

One head's forward, serial: k q^T ~2.9 us, the -inf mask 0.25 us, the softmax ~3.3 us
(max 0.5, exp and sum 1.9, scale 0.15 in isolation), a^T v ~2.6 us. By rows the softmax
was ~6 us: each of the 64 rows ends in scalar code for up to 31 scores. Selects on the
key index in the max and exp loops, in place of the -inf mask, were 1.27x slower.
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
from ._vmath import fast_exp, wide

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
def _mask_causal(a, r0, r1, m):
    """Key j of a transposed causal block (a[j, c]: key j, query r0 + c, keys 0..m-1 of a
    head of ``a.shape[0]``) may not see the queries before it: a[j, :j - r0] = -inf (their
    exp gives the weight 0); the keys past the block's get the weight 0 outright."""
    ninf = a.dtype.type(-np.inf)
    for j in range(r0 + 1, m):
        row = a[j]
        for c in range(r0, min(j, r1)):
            row[c] = ninf
    for j in range(m, a.shape[0]):
        row = a[j]
        for c in range(r0, r1):
            row[c] = 0


@helper
def _scale_block(a, r0, r1, m, bias, sc):
    """a[j, c] = a[j, c] * sc + bias[r0 + c, j] (``bias`` None: a * sc) over the block's keys
    and queries: the scores' scale when it cannot go into the exp."""
    for j in range(m):
        row = a[j]
        for c in range(r0, r1):
            row[c] = row[c] * sc if bias is None else row[c] * sc + bias[c, j]


@helper
def _softmax_cols(a, r0, r1, m, es, mx, s):
    """Softmax over keys 0..m-1 of each query column r0..r1-1 of a transposed block,
    a[j, c] = softmax_j(es * a[j, c]) in place (es > 0, applied inside the exp); ``mx`` and
    ``s`` are scratch of r1 - r0 entries.

    Every loop runs along a whole row of queries, contiguous, the same length for every key:
    the max and the sum are kept per query, so no row needs a horizontal reduction or ends in
    a scalar tail. A query that may see no key (every score -inf) gets the weights 0, as
    torch's (safe) softmax in attention gives. The max skips a NaN score; the NaN still
    reaches its query's sum and weights, but for the masked keys' 0."""
    wide()
    n = r1 - r0
    ninf = a.dtype.type(-np.inf)
    for c in range(n):
        mx[c] = ninf
        s[c] = 0
    for j in range(m):
        row = a[j, r0:r1]
        for c in range(n):  # skips a NaN score (one vmaxps), which fmax need not
            mx[c] = row[c] if row[c] > mx[c] else mx[c]
    for c in range(n):  # no key to see: exp(-inf - 0) gives its weights 0, not NaN
        mx[c] = mx[c] if mx[c] > ninf else 0
    for j in range(m):
        row = a[j, r0:r1]
        for c in range(n):
            e = fast_exp((row[c] - mx[c]) * es)
            row[c] = e
            s[c] += e
    for c in range(n):  # a query that sees no key keeps its 0 weights, as torch
        s[c] = 1 / s[c] if s[c] > 0 else 0
    for j in range(m):
        row = a[j, r0:r1]
        for c in range(n):
            row[c] *= s[c]


@helper
def _zero(x):
    """x[...] = 0 for a 2-D array of any strides."""
    for i in range(x.shape[0]):
        r = x[i]
        for j in range(r.shape[0]):
            r[j] = 0


def _attn_fwd(q, k, v, bias, has_bias, causal, scale, out, attn, nt):
    """out[b, h] = softmax(q[b, h] k[b, h]^T * scale + bias[b, h]) v[b, h]; attn[b, h] keeps
    the weights transposed (key, query)

    for t in prange(nt):                           # a contiguous range of heads each
        for head i in chunk t, for each block of query columns r0..r1 (one block unless
        causal and longer than QB), against the m keys it may see, with a = attn[i]:
            a[:m, r0:r1] = k[i][:m] @ q[i][r0:r1].T      (BLAS, reading the heads in place)
            the scale (and bias) unless it can go into the exp; -inf where a key comes
            after its query; softmax down each column (``_softmax_cols``)
            out[i][r0:r1] = a[:m, r0:r1].T @ v[i][:m]    (BLAS)
    """
    B, H, L = q.shape[:3]
    S = k.shape[2]
    sc = q.dtype.type(scale)
    fold = sc > 0 and not has_bias
    es = sc if fold else q.dtype.type(1)
    qb = QB if causal and L > QB else L
    BH = B * H
    for t in prange(nt):
        mx = np.empty(qb, q.dtype)
        s = np.empty(qb, q.dtype)
        for i in range(t * BH // nt, (t + 1) * BH // nt):
            b, h = i // H, i % H
            qh, kh, vh, a, oh = q[b, h], k[b, h], v[b, h], attn[b, h], out[b, h]
            for r0 in range(0, L, qb):
                r1 = min(r0 + qb, L)
                m = min(r1, S) if causal else S
                gemm(kh[:m], qh[r0:r1].T, a[:m, r0:r1])
                if has_bias:
                    _scale_block(a, r0, r1, m, bias[b, h], sc)
                elif not fold:
                    _scale_block(a, r0, r1, m, None, sc)
                if causal:
                    _mask_causal(a, r0, r1, m)
                _softmax_cols(a, r0, r1, m, es, mx, s)
                gemm(a[:m, r0:r1].T, vh[:m], oh[r0:r1])


def _attn_bwd(q, k, v, attn, g, scale, causal, gq, gk, gv, nt):
    """Gradients of ``_attn_fwd`` given g = d out (B, H, L, Dv) and its transposed weights.

    for t in prange(nt):
        for head i in chunk t, for each block of query columns r0..r1 against its m keys
        (as the forward), with a = attn[i][:m, r0:r1] (key, query):
            d = v[i][:m] @ g[i][r0:r1]^T                                  (BLAS)
            d = scale * a * (d - colsum(a * d))                           (softmax backward)
            gq[i][r0:r1] = d^T @ k[i][:m];  gk[i][:m] (+)= d @ q[i][r0:r1];
            gv[i][:m] (+)= a @ g[i][r0:r1]    (BLAS; blocks add into the keys they saw)
    """
    B, H, L = q.shape[:3]
    S = k.shape[2]
    sc = q.dtype.type(scale)
    qb = QB if causal and L > QB else L
    BH = B * H
    for t in prange(nt):
        ds = np.empty(qb * S, q.dtype)
        acc = np.empty(qb, q.dtype)
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
                ab = a[:m, r0:r1]
                d = ds[: (r1 - r0) * m].reshape((m, r1 - r0))
                gemm(vh[:m], gh[r0:r1].T, d)
                _softmax_grad_cols(a, r0, r1, d, sc, acc)
                gemm(d.T, kh[:m], gqh[r0:r1])
                if qb < L:
                    gemm_add(d, qh[r0:r1], gkh[:m])
                    gemm_add(ab, gh[r0:r1], gvh[:m])
                else:
                    gemm(d, qh, gkh[:m])
                    gemm(ab, gh, gvh[:m])
                    _zero(gkh[m:])
                    _zero(gvh[m:])


@helper
def _softmax_grad_cols(a, r0, r1, d, sc, acc):
    """d[j, c] = sc * a[j, r0 + c] * (d[j, c] - sum_j a[j, r0 + c] d[j, c]) for the keys
    j < d.shape[0]: the softmax backward down each query column, times the scale; ``acc``
    is scratch of r1 - r0 entries."""
    wide()
    n = r1 - r0
    for c in range(n):
        acc[c] = 0
    for j in range(d.shape[0]):
        ar, dr = a[j, r0:r1], d[j]
        for c in range(n):
            acc[c] += ar[c] * dr[c]
    for j in range(d.shape[0]):
        ar, dr = a[j, r0:r1], d[j]
        for c in range(n):
            dr[c] = sc * ar[c] * (dr[c] - acc[c])


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
    masks j > i instead of a bias. The weights are the (B, H, L, S) transposed view of the
    (B, H, S, L) array the kernel fills. None when the arrays are not of that form."""
    if not _ok(q, k, v):
        return None
    B, H, L, D = q.shape
    S, Dv = k.shape[2], v.shape[3]
    if k.shape[:2] != (B, H) or v.shape[:3] != (B, H, S) or k.shape[3] != D:
        return None
    out = _like(q, Dv)
    attn = np.empty((B, H, S, L), q.dtype)  # kept transposed: (key, query) per head
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
    return out, attn.transpose(0, 1, 3, 2)


def attention_backward(q: np.ndarray, k: np.ndarray, v: np.ndarray, attn: np.ndarray,
                       g: np.ndarray, scale: float, causal: bool = False
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(gq, gk, gv)`` of ``attention`` given the weights it returned and g = d out; None
    when the arrays are not of the form ``attention`` takes. ``causal``: the weights came
    from a causal ``attention`` (zero above the diagonal), whose blocks are skipped. Weights
    in another layout than ``attention``'s are copied into it first."""
    if not _ok(q, k, v, attn, g) or g.shape[:3] != q.shape[:3]:
        return None
    B, H, L, D = q.shape
    S, Dv = k.shape[2], v.shape[3]
    if attn.shape != (B, H, L, S):
        return None
    attn_t = np.ascontiguousarray(attn.transpose(0, 1, 3, 2))  # as the forward keeps it
    gq, gk, gv = _like(q, D), _like(k, D), _like(v, Dv)
    nt = _split(B * H, B * H * L * S * (2 * D + 2 * Dv) // 8)
    launch(BWD, nt, q, k, v, attn_t, g, float(scale), bool(causal), gq, gk, gv,
           sig=_SIGS[q.dtype]["bwd"])
    return gq, gk, gv
