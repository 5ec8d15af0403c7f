"""njit reduction kernels over two canonical layouts (reduce.py maps every axis choice onto them).

    last: x[outer, n]         -> out[outer]          reduced elements contiguous
    mid:  x[outer, n, inner]  -> out[outer, inner]   reduced axis strided, inner contiguous

Parallel work is split into tasks so that few long rows (outer small, e.g. axis=None) and many
short rows both keep every thread busy: last-axis tasks are (row, CH-element chunk) pairs, mid
tasks are (outer, KC-element inner chunk) pairs whose inner loop is contiguous.
Float sums accumulate each CH chunk (column sums: RCH rows) in the input dtype (vectorised,
32 lanes under fastmath) and combine chunks in float64.
"""

from __future__ import annotations

import numpy as np
from numba import prange
from numba.core import types as nbt

from ._jit import dual, helper

CH = 4096  # reduced elements per last-axis task
# Column sums of one (n, inner) block (outer 1, inner <= KC: a linear layer's bias gradient)
# have a single mid task; ``_sum_rows`` splits the rows into up to ROW_BLOCKS blocks of at
# least ROWS_MIN rows instead: 1024 x 384 float32 51 -> 27 us on 2 cores.
ROW_BLOCKS, ROWS_MIN = 8, 64
# rows a column's partial sum adds in the input dtype before the float64 combine: float32
# column sums of 700 x 10000 within 1.6e-5 of float64's (torch's 1.5e-5; 256 rows: 3.9e-5)
RCH = 64
KC = 1024  # kept inner elements per mid task (float64 accumulator chunk: 8 KiB, stays in L1)
LANES = 64  # independent max/min lanes: the compare-select then vectorises (~4x a scalar loop)
ALANES = 32  # argmax lanes of (value, index): 216 -> 140 us vs a max pass + search pass


def _sig_last(T):
    return (T[:, ::1], T[::1], nbt.float64)


def _sig_mid(T):
    return (T[:, :, ::1], T[:, ::1], nbt.float64)


@helper
def _sum_span(r):
    """s = sum(r) in r's dtype; fastmath splits it into vector lanes.

    for j in range(len(r)): s += r[j]
    """
    s = r.dtype.type(0)
    for j in range(r.shape[0]):
        s += r[j]
    return s


@helper
def _ext_span(r, is_min, a):
    """NaN-propagating max (or min) of a non-empty 1-d r; ``a``: LANES scratch values.

    for b in range(nb // LANES):             # LANES independent running extremes
        for k in range(LANES):
            lane[k] = v if (v > lane[k]) | (v != v) else lane[k]     # v = r[b*LANES + k]
    then fold the lanes and the tail with the same pick.
    """
    # NOTE: every index starts at 0 so LLVM can drop numba's negative-index wraparound;
    # with an offset start it vectorised into gathers (2x slower).
    m = r[0]
    n = r.shape[0]
    start = 1
    if n >= 4 * LANES:
        a[:] = r[:LANES]
        nb = n - n % LANES
        blocks = r[:nb].reshape(nb // LANES, LANES)
        if is_min:
            for b in range(1, nb // LANES):
                rb = blocks[b]
                for k in range(LANES):
                    v = rb[k]
                    a[k] = v if (v < a[k]) | (v != v) else a[k]
        else:
            for b in range(1, nb // LANES):
                rb = blocks[b]
                for k in range(LANES):
                    v = rb[k]
                    a[k] = v if (v > a[k]) | (v != v) else a[k]
        for k in range(LANES):
            v = a[k]
            if is_min:
                m = v if (v < m) | (v != v) else m
            else:
                m = v if (v > m) | (v != v) else m
        start = nb
    tail = r[start:]
    for j in range(tail.shape[0]):
        v = tail[j]
        if is_min:
            m = v if (v < m) | (v != v) else m
        else:
            m = v if (v > m) | (v != v) else m
    return m


@helper
def _arg_span(r, is_min, a, ix):
    """(extreme, first index) of a non-empty 1-d r, NaN = extreme; a/ix: ALANES scratch.

    for b in range(nb // ALANES):             # ALANES lanes of (value, block index)
        for k in range(ALANES):
            take = (v > lane[k]) | ((v != v) & (lane[k] == lane[k]))   # v = r[b*ALANES + k]
            lane[k], idx[k] = (v, b) if take else (lane[k], idx[k])
    then the lowest index b*ALANES + k among lanes holding the extreme, then the tail.
    """
    n = r.shape[0]
    nb = n - n % ALANES
    m = r[0]
    mi = 0
    start = 0
    if nb >= 4 * ALANES:
        a[:] = r[:ALANES]
        ix[:] = 0
        blocks = r[:nb].reshape(nb // ALANES, ALANES)
        for b in range(1, nb // ALANES):
            rb = blocks[b]
            if is_min:
                for k in range(ALANES):
                    v = rb[k]
                    w = a[k]
                    take = (v < w) | ((v != v) & (w == w))
                    a[k] = v if take else w
                    ix[k] = b if take else ix[k]
            else:
                for k in range(ALANES):
                    v = rb[k]
                    w = a[k]
                    take = (v > w) | ((v != v) & (w == w))
                    a[k] = v if take else w
                    ix[k] = b if take else ix[k]
        m = a[0]
        mi = ix[0] * ALANES
        for k in range(1, ALANES):
            v = a[k]
            j = ix[k] * ALANES + k
            if m != m:
                if v != v and j < mi:
                    mi = j
            elif v != v or (v < m if is_min else v > m):
                m = v
                mi = j
            elif v == m and j < mi:
                mi = j
        start = nb
    tail = r[start:]
    for j in range(tail.shape[0]):
        if m != m:
            break
        v = tail[j]
        if v != v or (v < m if is_min else v > m):
            m = v
            mi = start + j
    return m, mi


def _sum_last(x, out, scale):
    """out[i] = scale * sum_j x[i, j]

    for t in prange(outer * nch):                 # task = (row i, chunk c) of CH elements
        part[t] = float64(sum(x[i, c*CH:(c+1)*CH]))   # _sum_span, dtype accumulators
    for i in range(outer):
        out[i] = scale * sum_c part[i*nch + c]
    """
    outer, n = x.shape
    nch = (n + CH - 1) // CH
    part = np.empty(outer * nch, np.float64)
    for t in prange(outer * nch):
        i = t // nch
        j0 = (t - i * nch) * CH
        part[t] = np.float64(_sum_span(x[i, j0 : min(n, j0 + CH)]))
    for i in range(outer):
        s = 0.0
        for c in range(nch):
            s += part[i * nch + c]
        out[i] = s * scale


@helper
def _sum_rows_into(x, o, j0, j1, k0, acc, part):
    """acc += sum of x[o, j0:j1, k0:k0 + len(acc)] over its rows (float64 acc): chunks of up
    to RCH rows summed four rows per pass into ``part`` (input dtype: a quarter of the partial
    sums' loads and stores, twice the float32 lanes of float64), then added. Rows are sliced
    one by one (contiguous to numba, so the loops vectorise). Float32, serial, AVX-512 Xeon,
    us: column sums of 1024 x 128 17.7 -> 8.7-11, 1024 x 512 75 -> 47; (1, 700, 10000) over
    its middle axis 1860-2090 -> 1260-1320 (parallel 980-1270 -> 600-630)."""
    inner, k1 = acc.shape[0], k0 + acc.shape[0]
    for c0 in range(j0, j1, RCH):
        c1 = min(c0 + RCH, j1)
        part[:] = 0
        j = c0
        while j + 4 <= c1:
            r0, r1 = x[o, j, k0:k1], x[o, j + 1, k0:k1]
            r2, r3 = x[o, j + 2, k0:k1], x[o, j + 3, k0:k1]
            for k in range(inner):
                part[k] += (r0[k] + r1[k]) + (r2[k] + r3[k])
            j += 4
        for jj in range(j, c1):
            for k in range(inner):
                part[k] += x[o, jj, k0 + k]
        for k in range(inner):
            acc[k] += part[k]


def _sum_mid(x, out, scale):
    """out[o, k] = scale * sum_j x[o, j, k]

    for t in prange(outer * nkc):                 # task = (o, inner chunk k0:k1 of KC)
        acc[o, k0:k1] = sum_j x[o, j, k0:k1]      # _sum_rows_into: float64 over chunks of rows
        out[o, k0:k1] = scale * acc[o, k0:k1]"""
    outer, n, inner = x.shape
    nkc = (inner + KC - 1) // KC
    acc = np.zeros((outer, inner), np.float64)
    for t in prange(outer * nkc):
        o = t // nkc
        k0 = (t - o * nkc) * KC
        k1 = min(inner, k0 + KC)
        a = acc[o, k0:k1]
        _sum_rows_into(x, o, 0, n, k0, a, np.empty(k1 - k0, x.dtype))
        w = out[o, k0:k1]
        for k in range(k1 - k0):
            w[k] = a[k] * scale


def _sum_rows(x, out, scale):
    """out[k] = scale * sum_j x[j, k] for a (n, inner) x with few columns (a bias gradient)

    for b in prange(nb):       # nb row blocks, fixed by n alone: both builds add in one order
        acc[b] = sum of rows j0:j1 of x           # _sum_rows_into: float64 over chunks of rows
    out = scale * sum_b acc[b]"""
    n, inner = x.shape
    nb = min(ROW_BLOCKS, max(1, n // ROWS_MIN))
    acc = np.zeros((nb, inner), np.float64)
    x3 = x.reshape((1, n, inner))
    for b in prange(nb):
        _sum_rows_into(x3, 0, b * n // nb, (b + 1) * n // nb, 0, acc[b], np.empty(inner, x.dtype))
    for k in range(inner):  # a loop: np.sum here would be a parallel region per k
        s = 0.0
        for b in range(nb):
            s += acc[b, k]
        out[k] = s * scale


def _ext_last(x, out, is_min):
    """out[i] = max_j x[i, j] (min when is_min), NaN-propagating; n > 0

    long rows (n >= CH):
        for t in prange(outer * nch):             # task = (row i, chunk c)
            part[t] = _ext_span(x[i, c*CH:(c+1)*CH])
        out[i] = pick over part[i*nch : (i+1)*nch]
    short rows:
        for t in prange(ceil(outer / rpt)):       # task = rpt = CH // n whole rows
            for i in task rows: out[i] = _ext_span(x[i])
    """
    outer, n = x.shape
    if n < CH:
        rpt = CH // n
        for t in prange((outer + rpt - 1) // rpt):
            a = np.empty(LANES, x.dtype)
            for i in range(t * rpt, min(outer, (t + 1) * rpt)):
                out[i] = _ext_span(x[i], is_min, a)
        return
    nch = (n + CH - 1) // CH
    part = np.empty(outer * nch, x.dtype)
    for t in prange(outer * nch):
        i = t // nch
        j0 = (t - i * nch) * CH
        a = np.empty(LANES, x.dtype)
        part[t] = _ext_span(x[i, j0 : min(n, j0 + CH)], is_min, a)
    a = np.empty(LANES, x.dtype)
    for i in range(outer):
        out[i] = _ext_span(part[i * nch : (i + 1) * nch], is_min, a)


def _ext_mid(x, out, is_min):
    """out[o, k] = max_j x[o, j, k] (min when is_min), NaN-propagating; n > 0

    for t in prange(outer * nkc):                 # task = (o, inner chunk k0:k1)
        out[o, k0:k1] = x[o, 0, k0:k1]
        for j in range(1, n):
            for k in range(k0, k1):               # contiguous compare-select
                out[o, k] = v if (v > out[o, k]) | (v != v) else out[o, k]
    """
    outer, n, inner = x.shape
    nkc = (inner + KC - 1) // KC
    for t in prange(outer * nkc):
        o = t // nkc
        k0 = (t - o * nkc) * KC
        k1 = min(inner, k0 + KC)
        m = k1 - k0
        a = out[o, k0:k1]
        r0 = x[o, 0, k0:k1]
        for k in range(m):
            a[k] = r0[k]
        for j in range(1, n):
            r = x[o, j, k0:k1]
            if is_min:
                for k in range(m):
                    v = r[k]
                    a[k] = v if (v < a[k]) | (v != v) else a[k]
            else:
                for k in range(m):
                    v = r[k]
                    a[k] = v if (v > a[k]) | (v != v) else a[k]


def _arg_last(x, out, is_min):
    """out[i] = first index of max_j x[i, j] (min when is_min); a NaN counts as the extreme

    long rows (n >= CH):
        for t in prange(outer * nch):             # task = (row i, chunk c)
            pval[t], pidx[t] = _arg_span(x[i, chunk])
        out[i] = pidx of the first chunk holding the row's extreme
    short rows:
        for t in prange(ceil(outer / rpt)):       # task = rpt = CH // n whole rows
            for i in task rows: out[i] = _arg_span(x[i])[1]
    """
    outer, n = x.shape
    if n < CH:
        rpt = CH // n
        for t in prange((outer + rpt - 1) // rpt):
            a = np.empty(ALANES, x.dtype)
            ix = np.empty(ALANES, np.int32)
            for i in range(t * rpt, min(outer, (t + 1) * rpt)):
                out[i] = _arg_span(x[i], is_min, a, ix)[1]
        return
    nch = (n + CH - 1) // CH
    pval = np.empty(outer * nch, x.dtype)
    pidx = np.empty(outer * nch, np.int64)
    for t in prange(outer * nch):
        i = t // nch
        j0 = (t - i * nch) * CH
        a = np.empty(ALANES, x.dtype)
        ix = np.empty(ALANES, np.int32)
        m, mi = _arg_span(x[i, j0 : min(n, j0 + CH)], is_min, a, ix)
        pval[t] = m
        pidx[t] = j0 + mi
    for i in range(outer):
        best = pval[i * nch]
        bi = pidx[i * nch]
        for c in range(1, nch):
            if best != best:
                break
            v = pval[i * nch + c]
            better = v < best if is_min else v > best
            if better or v != v:
                best = v
                bi = pidx[i * nch + c]
        out[i] = bi


def _arg_mid(x, out, is_min):
    """out[o, k] = first j of max_j x[o, j, k] (min when is_min); a NaN counts as the extreme

    for t in prange(outer * nkc):                 # task = (o, inner chunk k0:k1)
        val[k0:k1] = x[o, 0, k0:k1]; out[o, k0:k1] = 0
        for j in range(1, n):
            for k in range(k0, k1):               # contiguous compare-select of (val, idx)
                take = (v > val[k]) | ((v != v) & (val[k] == val[k]))
                val[k], out[o, k] = (v, j) if take else (val[k], out[o, k])
    """
    outer, n, inner = x.shape
    nkc = (inner + KC - 1) // KC
    val = np.empty((outer, inner), x.dtype)
    for t in prange(outer * nkc):
        o = t // nkc
        k0 = (t - o * nkc) * KC
        k1 = min(inner, k0 + KC)
        m = k1 - k0
        a = val[o, k0:k1]
        ix = out[o, k0:k1]
        r0 = x[o, 0, k0:k1]
        for k in range(m):
            a[k] = r0[k]
            ix[k] = 0
        for j in range(1, n):
            r = x[o, j, k0:k1]
            if is_min:
                for k in range(m):
                    v = r[k]
                    w = a[k]
                    take = (v < w) | ((v != v) & (w == w))
                    a[k] = v if take else w
                    ix[k] = j if take else ix[k]
            else:
                for k in range(m):
                    v = r[k]
                    w = a[k]
                    take = (v > w) | ((v != v) & (w == w))
                    a[k] = v if take else w
                    ix[k] = j if take else ix[k]


def _var_last(x, out, inv_dof):
    """out[i] = inv_dof * sum_j (x[i, j] - mean_i)**2   (two passes, both chunked)

    for t in prange(outer * nch): part[t] = sum of chunk           # pass 1
    mean[i] = sum_c part[i, c] / n
    for t in prange(outer * nch):                                   # pass 2
        part[t] = sum over chunk of (x[i, j] - mean[i])**2
    out[i] = inv_dof * sum_c part[i, c]
    """
    outer, n = x.shape
    nch = (n + CH - 1) // CH
    part = np.empty(outer * nch, np.float64)
    mean = np.empty(outer, x.dtype)
    for t in prange(outer * nch):
        i = t // nch
        j0 = (t - i * nch) * CH
        part[t] = np.float64(_sum_span(x[i, j0 : min(n, j0 + CH)]))
    for i in range(outer):
        s = 0.0
        for c in range(nch):
            s += part[i * nch + c]
        mean[i] = s / n
    for t in prange(outer * nch):
        i = t // nch
        j0 = (t - i * nch) * CH
        r = x[i, j0 : min(n, j0 + CH)]
        mu = mean[i]
        s2 = x.dtype.type(0)
        for j in range(r.shape[0]):
            d = r[j] - mu
            s2 += d * d
        part[t] = np.float64(s2)
    for i in range(outer):
        s = 0.0
        for c in range(nch):
            s += part[i * nch + c]
        out[i] = s * inv_dof


def _var_mid(x, out, inv_dof):
    """out[o, k] = inv_dof * sum_j (x[o, j, k] - mean[o, k])**2   (two passes)

    for t in prange(outer * nkc):                 # task = (o, inner chunk k0:k1)
        acc = 0; for j: for k in chunk: acc[k] += x[o, j, k]       # float64
        mean = acc / n; acc = 0
        for j: for k in chunk: d = x[o, j, k] - mean[k]; acc[k] += d * d
        out[o, k0:k1] = inv_dof * acc
    """
    outer, n, inner = x.shape
    nkc = (inner + KC - 1) // KC
    acc = np.zeros((outer, inner), np.float64)
    mean = np.empty((outer, inner), np.float64)
    for t in prange(outer * nkc):
        o = t // nkc
        k0 = (t - o * nkc) * KC
        k1 = min(inner, k0 + KC)
        m = k1 - k0
        a = acc[o, k0:k1]
        mu = mean[o, k0:k1]
        for j in range(n):
            r = x[o, j, k0:k1]
            for k in range(m):
                a[k] += r[k]
        for k in range(m):
            mu[k] = a[k] / n
            a[k] = 0.0
        for j in range(n):
            r = x[o, j, k0:k1]
            for k in range(m):
                d = r[k] - mu[k]
                a[k] += d * d
        w = out[o, k0:k1]
        for k in range(m):
            w[k] = a[k] * inv_dof


def _sig_ext_last(T):
    return (T[:, ::1], T[::1], nbt.boolean)


def _sig_ext_mid(T):
    return (T[:, :, ::1], T[:, ::1], nbt.boolean)


def _sig_arg_last(T):
    return (T[:, ::1], nbt.int64[::1], nbt.boolean)


def _sig_arg_mid(T):
    return (T[:, :, ::1], nbt.int64[:, ::1], nbt.boolean)


sum_last = dual(_sum_last, signatures=[_sig_last])
sum_mid = dual(_sum_mid, signatures=[_sig_mid])
sum_rows = dual(_sum_rows, signatures=[_sig_last])
ext_last = dual(_ext_last, signatures=[_sig_ext_last])
ext_mid = dual(_ext_mid, signatures=[_sig_ext_mid])
arg_last = dual(_arg_last, signatures=[_sig_arg_last])
arg_mid = dual(_arg_mid, signatures=[_sig_arg_mid])
var_last = dual(_var_last, signatures=[_sig_last])
var_mid = dual(_var_mid, signatures=[_sig_mid])
