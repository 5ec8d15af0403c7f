"""njit normalisation kernels: batch norm (training forward with the running-statistics update,
backward) and layer norm (forward, backward).

Layouts (C-contiguous):
    batch norm   x[N, C, L] (one task per channel c, rows x[n, c, :] contiguous)
                 x[N, C]    (L == 1: tasks are blocks of KC channels, inner loop over channels)
    layer norm   x[M, D]    (one task per row forward; backward tasks are RB-row blocks, each
                             with its own partial weight/bias gradient, summed at the end)
Sums accumulate each contiguous row in the input dtype (vectorised under fastmath), as
deviations from a sample of the data so large offsets keep their precision, and combine rows in
float64; variances are two-pass (sum of squared deviations from the mean).
"""

from __future__ import annotations

import numpy as np
from numba import prange
from numba.core import types as nbt

from ._jit import dual, helper
from ._vmath import wide

KC = 256  # channels per task in the (N, C) batch-norm kernels
RB = 32  # rows per task in the layer-norm backward


@helper
def _sum_dev(r, s0):
    """sum_j (r[j] - s0) in r's dtype: with s0 a sample of r the terms are small, so a row far
    from zero (x ~ 1e4) sums without losing the digits that survive centring."""
    s = r.dtype.type(0)
    for j in range(r.shape[0]):
        s += r[j] - s0
    return s


@helper
def _sq_dev(r, mu):
    """sum_j (r[j] - mu)**2 in r's dtype."""
    s = r.dtype.type(0)
    for j in range(r.shape[0]):
        d = r[j] - mu
        s += d * d
    return s


def _bn_fwd(x, w, b, rm, rv, momentum, eps, out, mean, invstd):
    """Training batch norm of x[N, C, L]; running stats updated in place when rm is non-empty.

    for c in prange(C):
        mu = sum_{n,l} x[n, c, l] / M                       # M = N * L
        var = sum_{n,l} (x[n, c, l] - mu)**2 / M
        k = w[c] / sqrt(var + eps);  mt = mu in x's dtype
        out[n, c, l] = (x[n, c, l] - mt) * k + (b[c] - (mu - mt) * k)
        mean[c], invstd[c] = mu, 1 / sqrt(var + eps)
        rm[c] = (1 - momentum) * rm[c] + momentum * mu
        rv[c] = (1 - momentum) * rv[c] + momentum * var * M / (M - 1)    # unbiased
    """
    n_, c_, l_ = x.shape
    m = n_ * l_
    upd = rm.shape[0] > 0
    dt = x.dtype.type
    for c in prange(c_):
        s0 = x[0, c, 0]  # the caller skips empty input
        s = 0.0
        for i in range(n_):
            s += np.float64(_sum_dev(x[i, c], s0))
        mu = np.float64(s0) + s / m
        mut = dt(mu)
        q = 0.0
        for i in range(n_):
            q += np.float64(_sq_dev(x[i, c], mut))
        var = q / m - (mu - np.float64(mut)) ** 2
        inv = 1.0 / np.sqrt(var + eps)
        k = w[c] * inv
        kt = dt(k)
        # NOTE: x - mt is exact near the mean; x * k - mu * k cancels (1e-3 off at x ~ 1e4)
        sh = dt(b[c] - (mu - np.float64(mut)) * k)
        for i in range(n_):
            r = x[i, c]
            o = out[i, c]
            for j in range(l_):
                o[j] = (r[j] - mut) * kt + sh
        mean[c] = mu
        invstd[c] = inv
        if upd:
            rm[c] = (1.0 - momentum) * rm[c] + momentum * mu
            rv[c] = (1.0 - momentum) * rv[c] + momentum * var * m / (m - 1)


def _bn_fwd_2d(x, w, b, rm, rv, momentum, eps, out, mean, invstd):
    """Training batch norm of x[N, C] (one value per channel per row); as _bn_fwd.

    for t in prange(ceil(C / KC)):                         # channels c0:c1
        acc[c] = sum_n x[n, c];  mu = acc / N              # inner loops over c, float64
        acc[c] = sum_n (x[n, c] - mu[c])**2;  var = acc / N
        out[n, c] = (x[n, c] - mt[c]) * k[c] + sh[c];  running stats as in _bn_fwd
    """
    n_, c_ = x.shape
    upd = rm.shape[0] > 0
    nt = (c_ + KC - 1) // KC
    for t in prange(nt):
        c0 = t * KC
        c1 = min(c_, c0 + KC)
        nc = c1 - c0
        acc = np.zeros(nc, np.float64)
        for i in range(n_):
            r = x[i, c0:c1]
            for j in range(nc):
                acc[j] += r[j]
        mu = acc / n_
        acc[:] = 0.0
        for i in range(n_):
            r = x[i, c0:c1]
            for j in range(nc):
                d = r[j] - mu[j]
                acc[j] += d * d
        var = acc / n_
        k = np.empty(nc, x.dtype)
        sh = np.empty(nc, x.dtype)
        mt = np.empty(nc, x.dtype)
        for j in range(nc):
            c = c0 + j
            inv = 1.0 / np.sqrt(var[j] + eps)
            k[j] = w[c] * inv
            mt[j] = mu[j]
            sh[j] = b[c] - (mu[j] - np.float64(mt[j])) * (w[c] * inv)  # as in _bn_fwd
            mean[c] = mu[j]
            invstd[c] = inv
            if upd:
                rm[c] = (1.0 - momentum) * rm[c] + momentum * mu[j]
                rv[c] = (1.0 - momentum) * rv[c] + momentum * var[j] * n_ / (n_ - 1)
        for i in range(n_):
            r = x[i, c0:c1]
            o = out[i, c0:c1]
            for j in range(nc):
                o[j] = (r[j] - mt[j]) * k[j] + sh[j]


def _bn_bwd(x, g, mean, invstd, w, need_gx, gx, gw, gb):
    """Batch-norm backward for x[N, C, L] with batch statistics (mean, invstd).

    for c in prange(C):
        sg = sum g[:, c, :];  sgx = sum g[:, c, :] * (x[:, c, :] - mean[c])
        gb[c] = sg;  gw[c] = sgx * invstd[c]
        a = w[c] * invstd[c];  k1 = -a * invstd[c]**2 * sgx / M;  k0 = -a * sg / M - mean[c] * k1
        gx[n, c, l] = a * g[n, c, l] + k1 * x[n, c, l] + k0     (when need_gx)
    """
    n_, c_, l_ = x.shape
    m = n_ * l_
    dt = x.dtype.type
    for c in prange(c_):
        mu = mean[c]
        mut = dt(mu)
        sg = 0.0
        sgx = 0.0
        for i in range(n_):
            r = x[i, c]
            gr = g[i, c]
            a1 = dt(0)
            a2 = dt(0)
            for j in range(l_):
                gv = gr[j]
                a1 += gv
                a2 += gv * (r[j] - mut)
            sg += np.float64(a1)
            sgx += np.float64(a2)
        inv = invstd[c]
        gb[c] = sg
        gw[c] = sgx * inv
        if need_gx:
            a = w[c] * inv
            k1 = -a * inv * inv * sgx / m
            k0 = -a * sg / m - mu * k1
            at = dt(a)
            k1t = dt(k1)
            k0t = dt(k0)
            for i in range(n_):
                r = x[i, c]
                gr = g[i, c]
                o = gx[i, c]
                for j in range(l_):
                    o[j] = at * gr[j] + k1t * r[j] + k0t


def _bn_bwd_2d(x, g, mean, invstd, w, need_gx, gx, gw, gb):
    """Batch-norm backward for x[N, C]; as _bn_bwd with channel blocks of KC.

    for t in prange(ceil(C / KC)):
        sg[c] = sum_n g[n, c];  sgx[c] = sum_n g[n, c] * (x[n, c] - mean[c])      # float64
        gx[n, c] = a[c] * g[n, c] + k1[c] * x[n, c] + k0[c]
    """
    n_, c_ = x.shape
    nt = (c_ + KC - 1) // KC
    for t in prange(nt):
        c0 = t * KC
        c1 = min(c_, c0 + KC)
        nc = c1 - c0
        sg = np.zeros(nc, np.float64)
        sgx = np.zeros(nc, np.float64)
        mu = mean[c0:c1]
        for i in range(n_):
            r = x[i, c0:c1]
            gr = g[i, c0:c1]
            for j in range(nc):
                gv = gr[j]
                sg[j] += gv
                sgx[j] += gv * (r[j] - mu[j])
        a = np.empty(nc, x.dtype)
        k1 = np.empty(nc, x.dtype)
        k0 = np.empty(nc, x.dtype)
        for j in range(nc):
            c = c0 + j
            inv = invstd[c]
            gb[c] = sg[j]
            gw[c] = sgx[j] * inv
            aa = w[c] * inv
            kk = -aa * inv * inv * sgx[j] / n_
            a[j] = aa
            k1[j] = kk
            k0[j] = -aa * sg[j] / n_ - mu[j] * kk
        if need_gx:
            for i in range(n_):
                r = x[i, c0:c1]
                gr = g[i, c0:c1]
                o = gx[i, c0:c1]
                for j in range(nc):
                    o[j] = a[j] * gr[j] + k1[j] * r[j] + k0[j]


def _ln_fwd(x, w, b, eps, out, mean, rstd):
    """Layer norm over the rows of x[M, D], then the elementwise affine (w, b of length D).

    for i in prange(M):
        mu = sum_j x[i, j] / D;  var = sum_j (x[i, j] - mu)**2 / D;  k = 1 / sqrt(var + eps)
        out[i, j] = ((x[i, j] - mt) * k - (mu - mt) * k) * w[j] + b[j]   # mt: mu in x's dtype
    """
    m_, d_ = x.shape
    dt = x.dtype.type
    for i in prange(m_):
        wide()
        r = x[i]
        s0 = r[0] if d_ else dt(0)
        mu = np.float64(s0) + np.float64(_sum_dev(r, s0)) / d_
        mut = dt(mu)
        var = np.float64(_sq_dev(r, mut)) / d_ - (mu - np.float64(mut)) ** 2
        inv = 1.0 / np.sqrt(var + eps)
        it = dt(inv)
        # NOTE: r - mut is exact near the mean; c1 = (mu - mut) * inv is what rounding mu to
        # x's dtype lost. Written as ((r - mut) - (mu - mut)) fastmath reassociates it into
        # r - mu and cancels (2e-4 off at x ~ 1e4)
        c1 = dt((mu - np.float64(mut)) * inv)
        o = out[i]
        for j in range(d_):
            o[j] = ((r[j] - mut) * it - c1) * w[j] + b[j]
        mean[i] = mu
        rstd[i] = inv


@helper
def _fill0(a):
    for j in range(a.shape[0]):
        a[j] = 0


@helper
def _ln_bwd_row(r, gr, w, mu, it, qw, qb, o, need_wb, need_gx):
    """One row of the layer-norm backward (see _ln_bwd); qw/qb accumulate in place."""
    s1 = r.dtype.type(0)
    s2 = r.dtype.type(0)
    if need_wb:
        for j in range(r.shape[0]):
            gv = gr[j]
            xh = (r[j] - mu) * it
            gh = gv * w[j]
            qw[j] += gv * xh
            qb[j] += gv
            s1 += gh
            s2 += gh * xh
    else:
        for j in range(r.shape[0]):
            gh = gr[j] * w[j]
            s1 += gh
            s2 += gh * ((r[j] - mu) * it)
    if need_gx:
        # NOTE: divided by the length in x's dtype: an int divisor makes c1, c2 float64 and
        # the loop below convert every element to float64 and back
        d = r.dtype.type(r.shape[0])
        c1 = s1 / d
        c2 = s2 / d
        for j in range(r.shape[0]):
            o[j] = it * (gr[j] * w[j] - c1 - (r[j] - mu) * it * c2)


def _ln_bwd(x, g, mean, rstd, w, need_gx, need_wb, gx, gw, gb):
    """Layer-norm backward: gx and the weight/bias gradients summed over rows.

    for t in prange(ceil(M / RB)):                 # rows i0:i1, partial pw[t], pb[t]
        for i in rows:
            xh = (x[i] - mean[i]) * rstd[i];  gh = g[i] * w
            gx[i] = rstd[i] * (gh - mean_j(gh) - xh * mean_j(gh * xh))
            pw[t] += g[i] * xh;  pb[t] += g[i]
    gw = sum_t pw[t];  gb = sum_t pb[t]             # float64
    """
    m_, d_ = x.shape
    dt = x.dtype.type
    nt = (m_ + RB - 1) // RB
    # NOTE: np.empty, zeroed per task: np.zeros would be a parallel region of its own
    pw = np.empty((nt if need_wb else 0, d_), x.dtype)
    pb = np.empty((nt if need_wb else 0, d_), x.dtype)
    for t in prange(nt):
        wide()
        if need_wb:
            _fill0(pw[t])
            _fill0(pb[t])
        for i in range(t * RB, min(m_, t * RB + RB)):
            if need_wb:
                _ln_bwd_row(x[i], g[i], w, dt(mean[i]), dt(rstd[i]), pw[t], pb[t], gx[i],
                            True, need_gx)
            else:
                _ln_bwd_row(x[i], g[i], w, dt(mean[i]), dt(rstd[i]), w, w, gx[i], False,
                            need_gx)
    if need_wb:
        for j in range(d_):
            sw = 0.0
            sb = 0.0
            for t in range(nt):
                sw += pw[t, j]
                sb += pb[t, j]
            gw[j] = sw
            gb[j] = sb


def _sig_bn_fwd(T):
    v = T[::1]
    return (T[:, :, ::1], v, v, v, v, nbt.float64, nbt.float64, T[:, :, ::1], v, v)


def _sig_bn_fwd_2d(T):
    v = T[::1]
    return (T[:, ::1], v, v, v, v, nbt.float64, nbt.float64, T[:, ::1], v, v)


def _sig_bn_bwd(T):
    v = T[::1]
    return (T[:, :, ::1], T[:, :, ::1], v, v, v, nbt.boolean, T[:, :, ::1], v, v)


def _sig_bn_bwd_2d(T):
    v = T[::1]
    return (T[:, ::1], T[:, ::1], v, v, v, nbt.boolean, T[:, ::1], v, v)


def _sig_ln_fwd(T):
    v = T[::1]
    return (T[:, ::1], v, v, nbt.float64, T[:, ::1], v, v)


def _sig_ln_bwd(T):
    v = T[::1]
    return (T[:, ::1], T[:, ::1], v, v, v, nbt.boolean, nbt.boolean, T[:, ::1], v, v)


bn_fwd = dual(_bn_fwd, signatures=[_sig_bn_fwd])
bn_fwd_2d = dual(_bn_fwd_2d, signatures=[_sig_bn_fwd_2d])
bn_bwd = dual(_bn_bwd, signatures=[_sig_bn_bwd])
bn_bwd_2d = dual(_bn_bwd_2d, signatures=[_sig_bn_bwd_2d])
ln_fwd = dual(_ln_fwd, signatures=[_sig_ln_fwd])
ln_bwd = dual(_ln_bwd, signatures=[_sig_ln_bwd])
