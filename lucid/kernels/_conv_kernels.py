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

from ._gemm import gemm
from ._jit import dual, helper


@helper
def _span(o_n, k, s, p, d, n_in):
    """Outputs o in [lo, hi) read an in-bounds input: 0 <= o*s - p + k*d < n_in."""
    off = k * d - p
    lo = 0
    if off < 0:
        lo = (-off + s - 1) // s
    top = n_in - 1 - off
    hi = top // s + 1 if top >= 0 else 0
    if hi > o_n:
        hi = o_n
    if lo > hi:
        lo = hi
    return lo, hi


@helper
def _im2col(x, buf, j, KH, KW, sh, sw, pt, pl, dh, dw, OH, OW):
    """One image's columns: buf[(c, kh, kw), j, oh*OW + ow] = x[c, ih, iw] or 0 in the padding.

    ``buf`` is (rows, images, L): image j of a block; its rows stay C-contiguous (a 2-D slice
    of a block would type as a strided array and lose the vectorised row copies).

    for c, kh, kw:                          # one buf row each
        for oh, ow:  buf[r, oh*OW+ow] = x[c, oh*sh-pt+kh*dh, ow*sw-pl+kw*dw]
    (stride 1 with OW == W: the row is one shifted contiguous copy of the plane, then the
    columns that wrapped around an edge are zeroed)
    """
    C, H, W = x.shape
    zero = x.dtype.type(0)
    flat = sh == 1 and sw == 1 and OW == W
    for c in range(C):
        xc = x[c]
        xf = xc.reshape(H * W)
        for kh in range(KH):
            ohlo, ohhi = _span(OH, kh, sh, pt, dh, H)
            for kw in range(KW):
                row = buf[(c * KH + kh) * KW + kw, j]
                owlo, owhi = _span(OW, kw, sw, pl, dw, W)
                off = kw * dw - pl
                if flat:
                    shift = (kh * dh - pt) * W + off
                    a = max(ohlo * OW, -shift)
                    b = min(ohhi * OW, H * W - shift)
                    b = max(a, b)
                    row[:a] = zero
                    row[b:] = zero
                    dst = row[a:b]
                    src = xf[a + shift:b + shift]
                    for i in range(b - a):
                        dst[i] = src[i]
                    if owlo > 0 or owhi < OW:
                        for oh in range(ohlo, ohhi):
                            for ow in range(owlo):
                                row[oh * OW + ow] = zero
                            for ow in range(owhi, OW):
                                row[oh * OW + ow] = zero
                    continue
                row[:ohlo * OW] = zero
                row[ohhi * OW:] = zero
                m = owhi - owlo
                for oh in range(ohlo, ohhi):
                    base = oh * OW
                    xr = xc[oh * sh - pt + kh * dh]
                    row[base:base + owlo] = zero
                    row[base + owhi:base + OW] = zero
                    dst = row[base + owlo:base + owhi]
                    src = xr[owlo * sw + off:]
                    if sw == 1:
                        for i in range(m):
                            dst[i] = src[i]
                    else:
                        for i in range(m):
                            dst[i] = src[i * sw]


@helper
def _col2im(buf, j, dx, KH, KW, sh, sw, pt, pl, dh, dw, OH, OW, scratch):
    """Scatter-add one image's columns back: dx[c, ih, iw] += buf[(c, kh, kw), j, oh*OW + ow]
    (``buf`` is (rows, images, L), as for ``_im2col``).

    dx must be zeroed first. for c, kh, kw: for oh, ow in range: dx[c, ih, iw] += buf[r, p]
    With ``scratch`` (buf may be overwritten) and stride 1, OW == W: padding columns of buf
    are zeroed, then each row is added as one shifted contiguous run.
    """
    C, H, W = dx.shape
    zero = buf.dtype.type(0)
    flat = scratch and sh == 1 and sw == 1 and OW == W
    for c in range(C):
        dc = dx[c]
        df = dc.reshape(H * W)
        for kh in range(KH):
            ohlo, ohhi = _span(OH, kh, sh, pt, dh, H)
            for kw in range(KW):
                row = buf[(c * KH + kh) * KW + kw, j]
                owlo, owhi = _span(OW, kw, sw, pl, dw, W)
                off = kw * dw - pl
                if flat:
                    if owlo > 0 or owhi < OW:
                        for oh in range(ohlo, ohhi):
                            for ow in range(owlo):
                                row[oh * OW + ow] = zero
                            for ow in range(owhi, OW):
                                row[oh * OW + ow] = zero
                    shift = (kh * dh - pt) * W + off
                    a = max(ohlo * OW, -shift)
                    b = min(ohhi * OW, H * W - shift)
                    if b > a:
                        src = row[a:b]
                        dst = df[a + shift:b + shift]
                        for i in range(b - a):
                            dst[i] += src[i]
                    continue
                m = owhi - owlo
                if m <= 0:
                    continue
                for oh in range(ohlo, ohhi):
                    src = row[oh * OW + owlo:oh * OW + owhi]
                    dst = dc[oh * sh - pt + kh * dh, owlo * sw + off:]
                    if sw == 1:
                        for i in range(m):
                            dst[i] += src[i]
                    else:
                        for i in range(m):
                            dst[i * sw] += src[i]


@helper
def _tap_index(H, W, KH, KW, sh, sw, pt, pl, dh, dw, OH, OW):
    """Where each column element comes from, for strided or narrowed maps: idx[kk, p] =
    ih*W + iw read by tap kk = kh*KW + kw at output position p = oh*OW + ow, or -1 in the
    padding. Empty (0, 0) for stride 1 with OW >= 16, where ``_im2col`` copies whole rows or
    runs of at least 16 (vectorised).

    Per-row slices cost ~25 ns each: a 4x4 map of 128 channels by a 4x4 kernel (DCGAN's last
    discriminator layer) spent 1.6 ms of a 65k multiply-add convolution on them; reading
    through this table is one load and store per element.
    """
    if sh == 1 and sw == 1 and OW >= 16:
        return np.empty((0, 0), np.int64)
    return _tap_table(H, W, KH, KW, sh, sw, pt, pl, dh, dw, OH, OW)


@helper
def _tap_table(H, W, KH, KW, sh, sw, pt, pl, dh, dw, OH, OW):
    """The table of ``_tap_index``, whatever the geometry (the transposed-column kernels)."""
    idx = np.empty((KH * KW, OH * OW), np.int64)
    for kh in range(KH):
        for kw in range(KW):
            r = idx[kh * KW + kw]
            for oh in range(OH):
                ih = oh * sh - pt + kh * dh
                for ow in range(OW):
                    iw = ow * sw - pl + kw * dw
                    ok = 0 <= ih < H and 0 <= iw < W
                    r[oh * OW + ow] = ih * W + iw if ok else -1
    return idx


@helper
def _im2col_idx(x, buf, j, idx):
    """``_im2col`` through the tap table: buf[(c, kk), j, p] = x[c].flat[idx[kk, p]] or 0."""
    C, H, W = x.shape
    KK, L = idx.shape
    zero = x.dtype.type(0)
    for c in range(C):
        xf = x[c].reshape(H * W)
        for kk in range(KK):
            row = buf[c * KK + kk, j]
            ir = idx[kk]
            for p in range(L):
                o = ir[p]
                row[p] = xf[o] if o >= 0 else zero


@helper
def _col2im_idx(buf, j, dx, idx):
    """``_col2im`` through the tap table: dx[c].flat[idx[kk, p]] += buf[(c, kk), j, p]."""
    C, H, W = dx.shape
    KK, L = idx.shape
    for c in range(C):
        df = dx[c].reshape(H * W)
        for kk in range(KK):
            row = buf[c * KK + kk, j]
            ir = idx[kk]
            for p in range(L):
                o = ir[p]
                if o >= 0:
                    df[o] += row[p]


@helper
def _im2col_t(x, buft, r0, idx):
    """One image's columns, transposed: buft[r0 + p, (c, kk)] = x[c].flat[idx[kk, p]] or 0."""
    C, H, W = x.shape
    KK, L = idx.shape
    zero = x.dtype.type(0)
    xf = x.reshape(C, H * W)
    for p in range(L):
        row = buft[r0 + p]
        for c in range(C):
            xc = xf[c]
            base = c * KK
            for kk in range(KK):
                o = idx[kk, p]
                row[base + kk] = xc[o] if o >= 0 else zero


@helper
def _col2im_t(buft, r0, dx, idx):
    """Scatter-add transposed columns: dx[c].flat[idx[kk, p]] += buft[r0 + p, (c, kk)]."""
    C, H, W = dx.shape
    KK, L = idx.shape
    df = dx.reshape(C, H * W)
    for p in range(L):
        row = buft[r0 + p]
        for c in range(C):
            dc = df[c]
            base = c * KK
            for kk in range(KK):
                o = idx[kk, p]
                if o >= 0:
                    dc[o] += row[base + kk]


@helper
def _gather_block_t(gy, gflat, s, m, g):
    """Output gradients of images s .. s+m-1 (group g), transposed: (m*L, OCg).

    for j in range(m):  gbt[j*L:(j+1)*L, :] = gy[s+j, g].T
    """
    OCg, L = gy.shape[2], gy.shape[3] * gy.shape[4]
    gbt = gflat[:OCg * m * L].reshape(m * L, OCg)
    for j in range(m):
        src = gy[s + j, g].reshape(OCg, L)
        for oc in range(OCg):
            sr = src[oc]
            for p in range(L):
                gbt[j * L + p, oc] = sr[p]
    return gbt


@helper
def _im2col_block(x, flat, s, m, g, CK, KH, KW, sh, sw, pt, pl, dh, dw, OH, OW, idx):
    """Columns of images s .. s+m-1 (group g) side by side: a (CK, m*L) view of ``flat``.

    for j in range(m):  buf[:, j*L:(j+1)*L] = im2col(x[s+j, g])   (through ``idx`` if any)
    """
    L = OH * OW
    buf3 = flat[:CK * m * L].reshape(CK, m, L)
    for j in range(m):
        if idx.shape[0] > 0:
            _im2col_idx(x[s + j, g], buf3, j, idx)
        else:
            _im2col(x[s + j, g], buf3, j, KH, KW, sh, sw, pt, pl, dh, dw, OH, OW)
    return flat[:CK * m * L].reshape(CK, m * L)


@helper
def _gather_block(gy, gflat, s, m, g):
    """Output gradients of images s .. s+m-1 (group g) side by side: (OCg, m*L).

    for j in range(m):  gb[:, j*L:(j+1)*L] = gy[s+j, g]
    """
    OCg, L = gy.shape[2], gy.shape[3] * gy.shape[4]
    gb = gflat[:OCg * m * L].reshape(OCg, m * L)
    for j in range(m):
        src = gy[s + j, g].reshape(OCg, L)
        for oc in range(OCg):
            gb[oc, j * L:(j + 1) * L] = src[oc]
    return gb


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


def _gemm_grad_weight(x, gy, dwp, KH, KW, sh, sw, pt, pl, dh, dw, nb, nt):
    """dwp[t, g] = sum over n in chunk t of gy[n, g] @ im2col(x[n, g]).T   (caller sums over t)

    for t in prange(nt):
        for g: for each block of nb images in chunk t:
            nb == 1:  buf = im2col(x[n, g]) (CK, L);  prod = gy[n, g] @ buf.T (BLAS)
            nb > 1:   buft = [im2col(x[n0, g]).T ; ...] (nb*L, CK)
                      prod = [gy[n0, g] | ...] (OCg, nb*L) @ buft (BLAS)
            dwp[t, g] = prod (first block) or += prod
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
        tmp = np.empty((OCg, CK), x.dtype)
        acc = dwp[t]
        if n1 <= n0:
            acc[:] = zero
        for g in range(G):
            a = acc[g]
            for s in range(n0, n1, nb):
                m = min(nb, n1 - s)
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
                    for oc in range(OCg):
                        for k in range(CK):
                            a[oc, k] += tmp[oc, k]


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
    return (T[:, :, :, :, ::1], T[:, :, :, :, ::1], T[:, :, :, ::1]) + (i,) * 10


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
