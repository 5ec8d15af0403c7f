"""njit kernels behind ``lucid.kernels.conv`` (the Python wrappers, layouts and figures live there).

Shapes (all C-contiguous, float32 or float64; G groups, Cg = C/G, OCg = OC/G, L = OH*OW):

    x    (N, G, Cg, H, W)        input            w    (G, OCg, Cg*KH*KW)   weight, GEMM form
    out  (N, G, OCg, OH, OW)     output
    buf  (Cg*KH*KW, L)           one image's columns

A column row r = (c*KH + kh)*KW + kw holds x[c, oh*sh - pt + kh*dh, ow*sw - pl + kw*dw] at
oh*OW + ow (zero where that falls in the padding): the (CKg, L) layout makes the per-image GEMMs
``w[g] @ buf`` land directly in the NCHW output.
"""

from __future__ import annotations

import numpy as np
from numba import prange
from numba.core import types as nbt

from ._conv_columns import (
    _col2im,
    _col2im_idx,
    _col2im_t,
    _gather_block,
    _gather_block_t,
    _im2col,
    _im2col_block,
    _im2col_t,
    _tap_index,
    _tap_table,
)
from ._gemm import add_rows, gemm
from ._jit import dual


def _gemm_forward(x, w, bias, out, KH, KW, sh, sw, pt, pl, dh, dw, nb, nt):
    """out[n, g] = w[g] @ im2col(x[n, g]) + bias[g]      (N images split into nt chunks)

    for t in prange(nt):                     # one column buffer per chunk, stays in cache
        for g: for each block of nb images n0.. in chunk t:
            buf = [im2col(x[n0, g]) | im2col(x[n0+1, g]) | ...]   (CK, nb*L)
            res = w[g] @ buf (BLAS);  out[n, g] = res[:, block of n] + bias[g]
    A block of images makes one GEMM of nb*L columns, so a small feature map (L = 16 at 4x4)
    does not reread w[g] once per image; nb = 1 writes the product straight into out.
    """
    N, G = x.shape[0], x.shape[1]
    OCg, CK = w.shape[1], w.shape[2]
    OH, OW = out.shape[3], out.shape[4]
    L = OH * OW
    idx = _tap_index(x.shape[3], x.shape[4], KH, KW, sh, sw, pt, pl, dh, dw, OH, OW)
    for t in prange(nt):
        n0, n1 = t * N // nt, (t + 1) * N // nt
        flat = np.empty(CK * nb * L, x.dtype)
        rflat = np.empty(OCg * nb * L if nb > 1 else 1, x.dtype)
        for g in range(G):
            for s in range(n0, n1, nb):
                m = min(nb, n1 - s)
                buf = _im2col_block(x, flat, s, m, g, CK, KH, KW, sh, sw, pt, pl, dh, dw,
                                    OH, OW, idx)
                if nb == 1:
                    o = out[s, g].reshape(OCg, L)
                    gemm(w[g], buf, o)
                    for oc in range(OCg):
                        b = bias[g, oc]
                        orow = o[oc]
                        for p in range(L):
                            orow[p] += b
                    continue
                res = rflat[:OCg * m * L].reshape(OCg, m * L)
                gemm(w[g], buf, res)
                for j in range(m):
                    o = out[s + j, g].reshape(OCg, L)
                    for oc in range(OCg):
                        b = bias[g, oc]
                        orow = o[oc]
                        src = res[oc, j * L:(j + 1) * L]
                        for p in range(L):
                            orow[p] = src[p] + b


def _gemm_grad_input(gy, w, dx, KH, KW, sh, sw, pt, pl, dh, dw, nb, nt):
    """dx[n, g] = col2im(w[g].T @ gy[n, g])

    for t in prange(nt):
        for g: for each block of nb images in chunk t:
            nb == 1:  buf = w[g].T @ gy[n, g] (BLAS, (CK, L));  dx[n, g] = col2im(buf)
            nb > 1:   gbt = [gy[n0, g].T ; gy[n0+1, g].T ; ...] (nb*L, OCg)
                      buft = gbt @ w[g] (BLAS, (nb*L, CK));  dx[n, g] = col2im_t(rows of n)
    (``w[g].T`` is a transposed view: BLAS reads it in place. The transposed product of a
    block ran at the forward's speed, ~25% faster than ``w[g].T @ gb``: (256 x 512) @
    (512 x 4608) on one thread 22-27 vs 30-38 ms.)
    """
    N, G = gy.shape[0], gy.shape[1]
    OCg = gy.shape[2]
    OH, OW = gy.shape[3], gy.shape[4]
    CK = w.shape[2]
    L = OH * OW
    zero = dx.dtype.type(0)
    H, W = dx.shape[3], dx.shape[4]
    if nb > 1:
        idx = _tap_table(H, W, KH, KW, sh, sw, pt, pl, dh, dw, OH, OW)
    else:
        idx = _tap_index(H, W, KH, KW, sh, sw, pt, pl, dh, dw, OH, OW)
    for t in prange(nt):
        n0, n1 = t * N // nt, (t + 1) * N // nt
        flat = np.empty(CK * nb * L, dx.dtype)
        gflat = np.empty(OCg * nb * L if nb > 1 else 1, dx.dtype)
        for g in range(G):
            for s in range(n0, n1, nb):
                m = min(nb, n1 - s)
                if nb > 1:
                    buft = flat[:CK * m * L].reshape(m * L, CK)
                    gemm(_gather_block_t(gy, gflat, s, m, g), w[g], buft)
                    for j in range(m):
                        d = dx[s + j, g]
                        d[:] = zero
                        _col2im_t(buft, j * L, d, idx)
                    continue
                buf = flat[:CK * L].reshape(CK, L)
                gemm(w[g].T, gy[s, g].reshape(OCg, L), buf)
                buf3 = flat[:CK * L].reshape(CK, 1, L)
                d = dx[s, g]
                d[:] = zero
                if idx.shape[0] > 0:
                    _col2im_idx(buf3, 0, d, idx)
                else:
                    _col2im(buf3, 0, d, KH, KW, sh, sw, pt, pl, dh, dw, OH, OW, True)


def _gemm_grad_weight(x, gy, dwp, KH, KW, sh, sw, pt, pl, dh, dw, nb, tr, nt):
    """dwp[t, g] = sum over n in chunk t of gy[n, g] @ im2col(x[n, g]).T   (caller sums over t)

    for t in prange(nt):
        for g: for each block of nb images in chunk t:
            nb == 1:  buf = im2col(x[n, g]) (CK, L);  prod = gy[n, g] @ buf.T (BLAS)
            nb > 1:   buft = [im2col(x[n0, g]).T ; ...] (nb*L, CK)
                      prod = [gy[n0, g] | ...] (OCg, nb*L) @ buft (BLAS)
              tr (nb > 1 only): buf = [im2col(x[n0, g]) | ...] (CK, nb*L)
                      prod^T = buf @ [gy[n0, g].T ; ...] (BLAS, (CK, OCg))
            dwp[t, g] = prod (first block) or += prod   (tr: the sum of prod^T, transposed)
    """
    N, G = x.shape[0], x.shape[1]
    OCg, OH, OW = gy.shape[2], gy.shape[3], gy.shape[4]
    CK = dwp.shape[3]
    L = OH * OW
    zero = x.dtype.type(0)
    H, W = x.shape[3], x.shape[4]
    if nb > 1:
        idx = _tap_table(H, W, KH, KW, sh, sw, pt, pl, dh, dw, OH, OW)
    else:
        idx = _tap_index(H, W, KH, KW, sh, sw, pt, pl, dh, dw, OH, OW)
    for t in prange(nt):
        n0, n1 = t * N // nt, (t + 1) * N // nt
        flat = np.empty(CK * nb * L, x.dtype)
        gflat = np.empty(OCg * nb * L if nb > 1 else 1, x.dtype)
        tmp = np.empty((OCg, CK) if tr == 0 else (CK, OCg), x.dtype)
        acct = np.empty((CK, OCg) if tr else (0, 0), x.dtype)
        acc = dwp[t]
        if n1 <= n0:
            acc[:] = zero
        for g in range(G):
            a = acc[g]
            for s in range(n0, n1, nb):
                m = min(nb, n1 - s)
                if tr:
                    buf = _im2col_block(x, flat, s, m, g, CK, KH, KW, sh, sw, pt, pl, dh, dw,
                                        OH, OW, idx)
                    gemm(buf, _gather_block_t(gy, gflat, s, m, g), acct if s == n0 else tmp)
                    if s != n0:
                        add_rows(tmp, acct)
                    continue
                dst = a if s == n0 else tmp
                if nb > 1:
                    buft = flat[:CK * m * L].reshape(m * L, CK)
                    for j in range(m):
                        _im2col_t(x[s + j, g], buft, j * L, idx)
                    gemm(_gather_block(gy, gflat, s, m, g), buft, dst)
                else:
                    buf = _im2col_block(x, flat, s, 1, g, CK, KH, KW, sh, sw, pt, pl, dh, dw,
                                        OH, OW, idx)
                    gemm(gy[s, g].reshape(OCg, L), buf.T, dst)
                if s != n0:
                    add_rows(tmp, a)
            if tr and n1 > n0:
                for oc in range(OCg):
                    for k in range(CK):
                        a[oc, k] = acct[k, oc]


def _unfold(x, cols, KH, KW, sh, sw, pt, pl, dh, dw, OH, OW):
    """torch's unfold (im2col) over a batch: cols[n] = im2col(x[n]).

    for n in prange(N):  cols[n] = im2col(x[n])      # (C*KH*KW, OH*OW) each
    """
    for n in prange(x.shape[0]):
        c = cols[n]
        _im2col(x[n], c.reshape(c.shape[0], 1, c.shape[1]), 0, KH, KW, sh, sw, pt, pl, dh, dw,
                OH, OW)


def _fold(cols, out, KH, KW, sh, sw, pt, pl, dh, dw, OH, OW):
    """torch's fold (col2im) over a batch: out[n] = sum of the overlapping column blocks.

    for n in prange(N):  out[n] = 0;  out[n] += col2im(cols[n])
    """
    zero = out.dtype.type(0)
    for n in prange(out.shape[0]):
        o = out[n]
        o[:] = zero
        c = cols[n]
        _col2im(c.reshape(c.shape[0], 1, c.shape[1]), 0, o, KH, KW, sh, sw, pt, pl, dh, dw,
                OH, OW, False)


def _sig_gemm_fwd(T):
    i = nbt.int64
    return (T[:, :, :, :, ::1], T[:, :, ::1], T[:, ::1], T[:, :, :, :, ::1]) + (i,) * 10


def _sig_gemm_gi(T):
    i = nbt.int64
    return (T[:, :, :, :, ::1], T[:, :, ::1], T[:, :, :, :, ::1]) + (i,) * 10


def _sig_gemm_gw(T):
    i = nbt.int64
    return (T[:, :, :, :, ::1], T[:, :, :, :, ::1], T[:, :, :, ::1]) + (i,) * 11


def _sig_fold(T):
    i = nbt.int64
    return (T[:, :, ::1], T[:, :, :, ::1]) + (i,) * 10


def _sig_unfold(T):
    i = nbt.int64
    return (T[:, :, :, ::1], T[:, :, ::1]) + (i,) * 10


GEMM_FORWARD = dual(_gemm_forward, signatures=[_sig_gemm_fwd])
GEMM_GRAD_INPUT = dual(_gemm_grad_input, signatures=[_sig_gemm_gi])
GEMM_GRAD_WEIGHT = dual(_gemm_grad_weight, signatures=[_sig_gemm_gw])
UNFOLD = dual(_unfold, signatures=[_sig_unfold])
FOLD = dual(_fold, signatures=[_sig_fold])
