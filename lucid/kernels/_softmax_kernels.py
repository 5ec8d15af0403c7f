"""njit kernels over rows: softmax / log-softmax forward and backward, fused cross-entropy.

Every kernel takes C-contiguous ``(rows, n)`` arrays and runs one task per row (``prange``).
``fast_exp`` (``_vmath``) is the one exp used here: a polynomial LLVM vectorises for
float32, ``np.exp`` for float64.
Row sums accumulate CH-element chunks in the input dtype and combine them in float64.
"""

from __future__ import annotations

import numpy as np
from numba import prange
from numba.core import types as nbt

from ._jit import dual, helper
from ._vmath import fast_exp, fmax, wide

CH = 4096  # row elements summed in the input dtype before a float64 combine


@helper
def _row_max(r):
    """max of a non-empty 1-d r over ``fmax``, so the loop vectorises (a row of 64 float32:
    0.05 us in eight scalar accumulators, 0.005 us here).
    A NaN may be skipped: it reaches the result through exp(NaN - m) anyway."""
    m = r[0]
    for j in range(r.shape[0]):  # from 0: a count the vector loop divides leaves no scalar tail
        m = fmax(m, r[j])
    return m


def _softmax_last(x, out, log):
    """Row softmax (log-softmax when ``log``) of x[rows, n] into out; n > 0.

    for i in prange(rows):
        m = max_j x[i, j]                               # _row_max
        softmax:  out[i, j] = e_j = exp(x[i, j] - m); s = sum_j e_j; out[i, :] *= 1 / s
        log:      out[i, j] = z = x[i, j] - m;  s = sum_j exp(z);  out[i, :] -= log(s)
    """
    rows, n = x.shape
    for i in prange(rows):
        wide()
        r = x[i]
        o = out[i]
        mx = _row_max(r)
        s = 0.0
        for j0 in range(0, n, CH):
            rr = r[j0 : min(n, j0 + CH)]
            oo = o[j0 : min(n, j0 + CH)]
            acc = x.dtype.type(0)
            if log:
                for j in range(rr.shape[0]):
                    z = rr[j] - mx
                    oo[j] = z
                    acc += fast_exp(z)
            else:
                for j in range(rr.shape[0]):
                    v = fast_exp(rr[j] - mx)
                    oo[j] = v
                    acc += v
            s += acc
        if log:
            # NOTE: (x - m) is stored first: in one expression fastmath may reassociate it into
            # x - (m + log(s)), which loses ~ulp(m) near the max
            c = x.dtype.type(np.log(s))
            for j in range(n):
                o[j] -= c
        else:
            inv = x.dtype.type(1.0 / s)
            for j in range(n):
                o[j] *= inv


def _softmax_bwd_last(y, g, out, log):
    """Gradient of the row softmax (log-softmax when ``log``) from its output y.

    for i in prange(rows):
        softmax:  s = sum_j g[i, j] * y[i, j];  out[i, j] = y[i, j] * (g[i, j] - s)
        log:      s = sum_j g[i, j];            out[i, j] = g[i, j] - exp(y[i, j]) * s
    """
    rows, n = y.shape
    for i in prange(rows):
        wide()
        yr = y[i]
        gr = g[i]
        o = out[i]
        s = 0.0
        for j0 in range(0, n, CH):
            yy = yr[j0 : min(n, j0 + CH)]
            gg = gr[j0 : min(n, j0 + CH)]
            acc = y.dtype.type(0)
            if log:
                for j in range(gg.shape[0]):
                    acc += gg[j]
            else:
                for j in range(gg.shape[0]):
                    acc += gg[j] * yy[j]
            s += acc
        st = y.dtype.type(s)
        if log:
            for j in range(n):
                o[j] = gr[j] - fast_exp(yr[j]) * st
        else:
            for j in range(n):
                o[j] = yr[j] * (gr[j] - st)


def _ce_fwd(x, t, w, ignore, smooth, loss, lse, wt):
    """Cross-entropy of logits x[rows, n] against class indices t, with log-softmax fused;
    returns how many targets (not ``ignore``) lie outside [0, n), their rows scored 0.

    W = sum_c w[c] (n without weights; w empty = no weights)
    for i in prange(rows):
        m = max_j x[i, j];  s = sum_j exp(x[i, j] - m);  sx = sum_j w[j] * x[i, j]
        lse[i] = m + log(s)
        if t[i] == ignore: loss[i] = wt[i] = 0
        else: wt[i] = w[t[i]]
              loss[i] = (1 - smooth) * wt[i] * (lse[i] - x[i, t[i]])
                        + smooth / n * (W * lse[i] - sx)          # label smoothing
    """
    rows, n = x.shape
    has_w = w.shape[0] > 0
    big_w = 0.0
    if has_w:
        for j in range(n):
            big_w += w[j]
    else:
        big_w = float(n)
    bad = 0
    for i in prange(rows):
        wide()
        r = x[i]
        mx = _row_max(r)
        s = 0.0
        sx = 0.0
        for j0 in range(0, n, CH):
            rr = r[j0 : min(n, j0 + CH)]
            acc = x.dtype.type(0)
            for j in range(rr.shape[0]):
                acc += fast_exp(rr[j] - mx)
            s += acc
            if smooth > 0.0:
                ax = x.dtype.type(0)
                if has_w:
                    ww = w[j0 : min(n, j0 + CH)]
                    for j in range(rr.shape[0]):
                        ax += ww[j] * rr[j]
                else:
                    for j in range(rr.shape[0]):
                        ax += rr[j]
                sx += ax
        ls = mx + np.log(s)
        lse[i] = ls
        ti = t[i]
        if ti == ignore or ti < 0 or ti >= n:  # out of range: counted, the caller raises
            loss[i] = 0.0
            wt[i] = 0.0
            if ti != ignore:
                bad += 1
        else:
            wti = w[ti] if has_w else 1.0
            v = (1.0 - smooth) * wti * (ls - r[ti])
            if smooth > 0.0:
                v += smooth / n * (big_w * ls - sx)
            loss[i] = v
            wt[i] = wti
    return bad


def _ce_bwd(x, t, lse, w, grow, ignore, smooth, out):
    """Gradient of the fused cross-entropy: grow[i] * (softmax(x[i]) * A_i - onehot - smoothing).

    for i in prange(rows):
        if t[i] == ignore: out[i, :] = 0
        else: A = (1 - smooth) * w[t[i]] + smooth / n * W
              out[i, j] = grow[i] * (exp(x[i, j] - lse[i]) * A - smooth / n * w[j])
              out[i, t[i]] -= grow[i] * (1 - smooth) * w[t[i]]
    returns how many targets (not ``ignore``) lie outside [0, n), their rows 0.
    """
    rows, n = x.shape
    has_w = w.shape[0] > 0
    big_w = 0.0
    if has_w:
        for j in range(n):
            big_w += w[j]
    else:
        big_w = float(n)
    dt = x.dtype.type
    bad = 0
    for i in prange(rows):
        wide()
        o = out[i]
        ti = t[i]
        if ti == ignore or ti < 0 or ti >= n:  # out of range: counted, the caller raises
            for j in range(n):
                o[j] = 0.0
            if ti != ignore:
                bad += 1
        else:
            r = x[i]
            gi = grow[i]
            wti = w[ti] if has_w else 1.0
            a = dt(gi * ((1.0 - smooth) * wti + smooth / n * big_w))
            ls = dt(lse[i])
            c = dt(gi * smooth / n)
            if has_w and smooth > 0.0:
                for j in range(n):
                    o[j] = fast_exp(r[j] - ls) * a - c * w[j]
            else:
                for j in range(n):
                    o[j] = fast_exp(r[j] - ls) * a - c
            o[ti] -= dt(gi * (1.0 - smooth) * wti)
    return bad


def _sig_rows(T):
    return (T[:, ::1], T[:, ::1], nbt.boolean)


def _sig_rows_bwd(T):
    return (T[:, ::1], T[:, ::1], T[:, ::1], nbt.boolean)


def _sig_ce_fwd(T):
    return (T[:, ::1], nbt.int64[::1], T[::1], nbt.int64, nbt.float64, T[::1], T[::1], T[::1])


def _sig_ce_bwd(T):
    return (T[:, ::1], nbt.int64[::1], T[::1], T[::1], T[::1], nbt.int64, nbt.float64,
            T[:, ::1])


softmax_last = dual(_softmax_last, signatures=[_sig_rows])
softmax_bwd_last = dual(_softmax_bwd_last, signatures=[_sig_rows_bwd])
ce_fwd = dual(_ce_fwd, signatures=[_sig_ce_fwd])
ce_bwd = dual(_ce_bwd, signatures=[_sig_ce_bwd])
