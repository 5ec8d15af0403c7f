"""im2col / col2im helpers of the conv kernels (``_conv_kernels``): one image's columns
built or scattered back, row by row or through a tap table, in the (CK, L) layout or
transposed (L, CK), and blocks of images' columns and output gradients side by side.

A column row r = (c*KH + kh)*KW + kw holds x[c, oh*sh - pt + kh*dh, ow*sw - pl + kw*dw] at
oh*OW + ow (zero where that falls in the padding).
"""

from __future__ import annotations

import numpy as np

from ._jit import helper


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
