"""The transforms of Winograd F(2x2, 3x3), compiled into ``winograd.py``'s kernels.

A 3x3 correlation over a 2x2 block of outputs takes 16 products of transformed 4x4 input
tiles with transformed weights instead of 36 multiply-adds (Lavin & Gray, "Fast Algorithms
for Convolutional Neural Networks", 2015):

    B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]
    G   = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]
    A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]

Plane 4i + j holds entry (i, j) of a transformed tile. The coefficients are 0, +-1 and +-1/2,
so float32 results stay within a few ulps of the direct sum's rounding. Scratch buffers come
flat (``sizes``) and are shaped here, as ``_winograd_f43.py`` shapes its own.
"""

from __future__ import annotations

from ._jit import helper


@helper
def sizes(TH, TW):
    """Floats of the scratch buffers: padded plane (x's, then gy's), row lines, output rows."""
    return (2 * TH + 2) * (2 * TW + 2), 4 * (2 * TW + 2), 4 * TW


@helper
def input_tiles(x, s0, m, pm, T, TH, TW, pt, pl, Pf, uf, V):
    """V[:, c * pm + j * T + tile] = B^T d B for images s0 .. s0 + m of x (padded by pt, pl)."""
    P = Pf[:(2 * TH + 2) * (2 * TW + 2)].reshape(2 * TH + 2, 2 * TW + 2)
    u = uf[:4 * (2 * TW + 2)].reshape(4, 2 * TW + 2)
    for j in range(m):
        for c in range(x.shape[1]):
            plane(x[s0 + j, c], P, pt, pl)
            _tiles_in(P, V, c * pm + j * T, TW, u)


@helper
def gy_tiles(gy, s0, m, pm, T, TH, TW, Pf, uf, E):
    """E[:, k * pm + j * T + tile] = A e A^T for the 2x2 blocks e of images s0 .. s0 + m."""
    Pg = Pf[:4 * TH * TW].reshape(2 * TH, 2 * TW)
    for j in range(m):
        for k in range(gy.shape[1]):
            plane(gy[s0 + j, k], Pg, 0, 0)
            _tiles_gy(Pg, E, k * pm + j * T, TW)


@helper
def output_tiles(M, s0, m, pm, T, TH, TW, out, bias, ybf):
    """out[s0 + j, k] = A^T m A + bias[k] for the tiles of images s0 .. s0 + m."""
    yb = ybf[:4 * TW].reshape(2, 2 * TW)
    for j in range(m):
        for k in range(out.shape[1]):
            _tiles_out(M, k * pm + j * T, TW, out[s0 + j, k], bias[k], yb)


@helper
def plane(src, buf, pt, pl):
    """buf = 0, then src copied to buf[pt:, pl:] (cropped to buf)."""
    zero = buf.dtype.type(0)
    buf[:] = zero
    H = min(src.shape[0], buf.shape[0] - pt)
    W = min(src.shape[1], buf.shape[1] - pl)
    for i in range(H):
        s = src[i]
        d = buf[pt + i, pl:pl + W]
        for j in range(W):
            d[j] = s[j]


@helper
def _tiles_in(P, V, o0, TW, u):
    """V[:, o0 + ty * TW + tx] = B^T d B for every 4x4 tile d = P[2ty:2ty+4, 2tx:2tx+4]."""
    TH = (P.shape[0] - 2) // 2
    Wp = P.shape[1]
    u0, u1, u2, u3 = u[0], u[1], u[2], u[3]
    for ty in range(TH):
        d0, d1, d2, d3 = P[2 * ty], P[2 * ty + 1], P[2 * ty + 2], P[2 * ty + 3]
        for j in range(Wp):
            u0[j] = d0[j] - d2[j]
            u1[j] = d1[j] + d2[j]
            u2[j] = d2[j] - d1[j]
            u3[j] = d1[j] - d3[j]
        q = o0 + ty * TW
        for i in range(4):
            r = u[i]
            v0 = V[4 * i, q:q + TW]
            v1 = V[4 * i + 1, q:q + TW]
            v2 = V[4 * i + 2, q:q + TW]
            v3 = V[4 * i + 3, q:q + TW]
            for tx in range(TW):
                a0, a1, a2, a3 = r[2 * tx], r[2 * tx + 1], r[2 * tx + 2], r[2 * tx + 3]
                v0[tx] = a0 - a2
                v1[tx] = a1 + a2
                v2[tx] = a2 - a1
                v3[tx] = a1 - a3


@helper
def _tiles_gy(P, E, o0, TW):
    """E[:, o0 + ty * TW + tx] = A e A^T for every 2x2 block e = P[2ty:2ty+2, 2tx:2tx+2]."""
    TH = P.shape[0] // 2
    for ty in range(TH):
        g0, g1 = P[2 * ty], P[2 * ty + 1]
        q = o0 + ty * TW
        for i in range(4):
            e0 = E[4 * i, q:q + TW]
            e1 = E[4 * i + 1, q:q + TW]
            e2 = E[4 * i + 2, q:q + TW]
            e3 = E[4 * i + 3, q:q + TW]
            for tx in range(TW):
                x0, x1 = g0[2 * tx], g0[2 * tx + 1]
                y0, y1 = g1[2 * tx], g1[2 * tx + 1]
                if i == 0:
                    a0, a1 = x0, x1
                elif i == 1:
                    a0, a1 = x0 + y0, x1 + y1
                elif i == 2:
                    a0, a1 = x0 - y0, x1 - y1
                else:
                    a0, a1 = -y0, -y1
                e0[tx] = a0
                e1[tx] = a0 + a1
                e2[tx] = a0 - a1
                e3[tx] = -a1


@helper
def _tiles_out(M, o0, TW, o, b, yb):
    """o[2ty:2ty+2, 2tx:2tx+2] = A^T m A + b for the 4x4 tiles m = M[:, o0 + ty*TW + tx]
    (rows and columns past o's edge dropped)."""
    OH, OW = o.shape
    TH = (OH + 1) // 2
    y0, y1 = yb[0], yb[1]
    for ty in range(TH):
        q = o0 + ty * TW
        for tx in range(TW):
            p = q + tx
            m0 = M[0, p] + M[4, p] + M[8, p]
            m1 = M[1, p] + M[5, p] + M[9, p]
            m2 = M[2, p] + M[6, p] + M[10, p]
            m3 = M[3, p] + M[7, p] + M[11, p]
            n0 = M[4, p] - M[8, p] - M[12, p]
            n1 = M[5, p] - M[9, p] - M[13, p]
            n2 = M[6, p] - M[10, p] - M[14, p]
            n3 = M[7, p] - M[11, p] - M[15, p]
            y0[2 * tx] = m0 + m1 + m2 + b
            y0[2 * tx + 1] = m1 - m2 - m3 + b
            y1[2 * tx] = n0 + n1 + n2 + b
            y1[2 * tx + 1] = n1 - n2 - n3 + b
        r0 = o[2 * ty]
        for j in range(OW):
            r0[j] = y0[j]
        if 2 * ty + 1 < OH:
            r1 = o[2 * ty + 1]
            for j in range(OW):
                r1[j] = y1[j]


@helper
def _col(g0, g1, g2, h):
    """(G g): the 4 rows of one column (g0, g1, g2) of a 3x3 tile."""
    return g0, h * (g0 + g1 + g2), h * (g0 - g1 + g2), g2


@helper
def weight_rows(w, r, flip, t, U):
    """U[4i + j, r, c] = (G g G^T)[i, j] for the tap sets g = w[r, c] of row r (w[c, r]
    turned by 180 degrees with ``flip``), every c; t is a (4+, 3, Q) scratch. Both passes run
    along c, so U's rows are written whole (vectorised)."""
    h = U.dtype.type(0.5)
    Q = t.shape[2]
    for j in range(3):  # G down each column of taps
        t0, t1, t2, t3 = t[0, j], t[1, j], t[2, j], t[3, j]
        if flip:
            jj = 2 - j
            for c in range(Q):
                t0[c], t1[c], t2[c], t3[c] = _col(w[c, r, 2, jj], w[c, r, 1, jj],
                                                  w[c, r, 0, jj], h)
        else:
            for c in range(Q):
                t0[c], t1[c], t2[c], t3[c] = _col(w[r, c, 0, j], w[r, c, 1, j], w[r, c, 2, j],
                                                  h)
    for i in range(4):  # G along each row
        a0, a1, a2 = t[i, 0], t[i, 1], t[i, 2]
        b0, b1, b2, b3 = U[4 * i, r], U[4 * i + 1, r], U[4 * i + 2, r], U[4 * i + 3, r]
        for c in range(Q):
            b0[c], b1[c], b2[c], b3[c] = _col(a0[c], a1[c], a2[c], h)


@helper
def weight_back_rows(buf, t, o):
    """o[c] (3x3) = G^T M G for M[i, j] = buf[4i + j, c], every c; t is a (3, 6, C)
    scratch (columns 0-3 used)."""
    h = buf.dtype.type(0.5)
    C = t.shape[2]
    for j in range(4):
        m0, m1, m2, m3 = buf[j, :C], buf[4 + j, :C], buf[8 + j, :C], buf[12 + j, :C]
        t0, t1, t2 = t[0, j], t[1, j], t[2, j]
        for c in range(C):
            t0[c] = m0[c] + h * (m1[c] + m2[c])
            t1[c] = h * (m1[c] - m2[c])
            t2[c] = h * (m1[c] + m2[c]) + m3[c]
    for i in range(3):
        s0, s1, s2, s3 = t[i, 0], t[i, 1], t[i, 2], t[i, 3]
        for c in range(C):
            o[c, i, 0] = s0[c] + h * (s1[c] + s2[c])
            o[c, i, 1] = h * (s1[c] - s2[c])
            o[c, i, 2] = h * (s1[c] + s2[c]) + s3[c]
