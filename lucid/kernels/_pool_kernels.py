"""njit kernels behind ``lucid.kernels.pool`` (wrappers and figures live there).

Every pool works on planes x (P, H, W), P = N*C, C-contiguous float32/float64. A window is
given per output row and column by index arrays (int64), so fixed-size, padded, dilated,
ceil-mode and adaptive windows share one kernel:

    rows of output oh:  hs[oh], hs[oh] + dh, ... < he[oh]    (already clipped to [0, H))
    cols of output ow:  ws[ow], ws[ow] + dw, ... < we[ow]    (already clipped to [0, W))
"""

from __future__ import annotations

import numpy as np
from numba import prange
from numba.core import types as nbt

from ._jit import dual


def _max_pool(x, hs, he, ws, we, dh, dw, out, idx):
    """Max over each window, with the flat index ih*W + iw of the maximum (torch's rules).

    for p in prange(P): for oh, ow:
        best = -inf; at = first position of the window
        for ih in rows(oh): for iw in cols(ow):
            v = x[p, ih, iw]
            if v > best or v is NaN: best = v; at = ih*W + iw      # NaN wins, last NaN kept
        out[p, oh, ow] = best; idx[p, oh, ow] = at
    """
    P, H, W = x.shape
    OH, OW = out.shape[1], out.shape[2]
    ninf = -np.inf
    for p in prange(P):
        xp = x[p]
        op = out[p]
        ip = idx[p]
        for oh in range(OH):
            h0 = hs[oh]
            h1 = he[oh]
            for ow in range(OW):
                w0 = ws[ow]
                w1 = we[ow]
                best = ninf
                at = h0 * W + w0
                for ih in range(h0, h1, dh):
                    xr = xp[ih]
                    for iw in range(w0, w1, dw):
                        v = xr[iw]
                        if v > best or v != v:
                            best = v
                            at = ih * W + iw
                op[oh, ow] = best
                ip[oh, ow] = at


def _max_pool_2x2(x, out, idx):
    """2x2 windows, stride 2, no padding or dilation (the common CNN case), same rules.

    for p in prange(P): for oh, ow: the four inputs x[p, 2oh:2oh+2, 2ow:2ow+2] as _max_pool
    """
    P, H, W = x.shape
    OH, OW = out.shape[1], out.shape[2]
    for p in prange(P):
        xp = x[p]
        op = out[p]
        ip = idx[p]
        for oh in range(OH):
            r0 = xp[2 * oh]
            r1 = xp[2 * oh + 1]
            base = 2 * oh * W
            for ow in range(OW):
                c = 2 * ow
                best = r0[c]
                at = base + c
                v = r0[c + 1]
                if v > best or v != v:
                    best = v
                    at = base + c + 1
                v = r1[c]
                if v > best or v != v:
                    best = v
                    at = base + W + c
                v = r1[c + 1]
                if v > best or v != v:
                    best = v
                    at = base + W + c + 1
                op[oh, ow] = best
                ip[oh, ow] = at


def _max_pool_backward(gy, idx, dx, bad):
    """Scatter each output gradient to the input position that held the maximum.

    for p in prange(P):
        dx[p] = 0
        for o:  if 0 <= idx[p, o] < HW: dx[p, idx[p, o]] += gy[p, o]
                else: bad[p] = True        # never written through: the caller raises
    """
    P, L = gy.shape
    hw = dx.shape[1]
    zero = dx.dtype.type(0)
    for p in prange(P):
        d = dx[p]
        d[:] = zero
        g = gy[p]
        ix = idx[p]
        for o in range(L):
            j = ix[o]
            if j < 0 or j >= hw:
                bad[p] = True
            else:
                d[j] += g[o]


def _avg_pool(x, hs, he, ws, we, divh, divw, out):
    """Window sums divided by divh[oh] * divw[ow] (the caller folds torch's divisor rules in).

    for p in prange(P): for oh, ow:
        out[p, oh, ow] = sum(x[p, hs:he, ws:we]) / (divh[oh] * divw[ow])
    """
    P = x.shape[0]
    OH, OW = out.shape[1], out.shape[2]
    for p in prange(P):
        xp = x[p]
        op = out[p]
        for oh in range(OH):
            h0 = hs[oh]
            h1 = he[oh]
            for ow in range(OW):
                w0 = ws[ow]
                m = we[ow] - w0
                s = 0.0
                for ih in range(h0, h1):
                    xr = xp[ih, w0:]
                    for i in range(m):
                        s += xr[i]
                op[oh, ow] = s / (divh[oh] * divw[ow])


def _avg_pool_backward(gy, hs, he, ws, we, divh, divw, dx):
    """Spread each output gradient evenly (by the same divisor) over its window.

    for p in prange(P):
        dx[p] = 0
        for oh, ow:  dx[p, hs:he, ws:we] += gy[p, oh, ow] / (divh[oh] * divw[ow])
    """
    P = gy.shape[0]
    OH, OW = gy.shape[1], gy.shape[2]
    zero = dx.dtype.type(0)
    for p in prange(P):
        d = dx[p]
        d[:] = zero
        g = gy[p]
        for oh in range(OH):
            h0 = hs[oh]
            h1 = he[oh]
            for ow in range(OW):
                w0 = ws[ow]
                m = we[ow] - w0
                v = g[oh, ow] / (divh[oh] * divw[ow])
                for ih in range(h0, h1):
                    dr = d[ih, w0:]
                    for i in range(m):
                        dr[i] += v


_I = nbt.int64[::1]


def _sig_max(T):
    return (T[:, :, ::1], _I, _I, _I, _I, nbt.int64, nbt.int64, T[:, :, ::1],
            nbt.int64[:, :, ::1])


def _sig_max2(T):
    return (T[:, :, ::1], T[:, :, ::1], nbt.int64[:, :, ::1])


def _sig_max_bwd(T):
    return (T[:, ::1], nbt.int64[:, ::1], T[:, ::1], nbt.boolean[::1])


def _sig_avg(T):
    return (T[:, :, ::1], _I, _I, _I, _I, T[::1], T[::1], T[:, :, ::1])


MAX_POOL = dual(_max_pool, signatures=[_sig_max])
MAX_POOL_2X2 = dual(_max_pool_2x2, signatures=[_sig_max2])
MAX_POOL_BACKWARD = dual(_max_pool_backward, signatures=[_sig_max_bwd])
AVG_POOL = dual(_avg_pool, signatures=[_sig_avg])
AVG_POOL_BACKWARD = dual(_avg_pool_backward, signatures=[_sig_avg])
