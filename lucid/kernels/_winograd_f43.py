"""The transforms of Winograd F(4x4, 3x3), compiled into ``winograd.py``'s kernels.

A 4x4 block of outputs takes 36 products of transformed 6x6 input tiles with transformed
weights (2.25 per output, against F(2x2, 3x3)'s 4 and the direct sum's 9), on the points
0, +-1, +-2 (Lavin & Gray 2015):

    B^T = [[4,  0, -5,  0, 1, 0],       G = [[ 1/4,     0,    0],     A^T = [[1, 1,  1, 1,  1, 0],
           [0, -4, -4,  1, 1, 0],            [-1/6,  -1/6, -1/6],            [0, 1, -1, 2, -2, 0],
           [0,  4, -4, -1, 1, 0],            [-1/6,   1/6, -1/6],            [0, 1,  1, 4,  4, 0],
           [0, -2, -1,  2, 1, 0],            [1/24,  1/12,  1/6],            [0, 1, -1, 8, -8, 1]]
           [0,  2, -1, -2, 1, 0],            [1/24, -1/12,  1/6],
           [0,  4,  0, -5, 0, 1]]            [   0,     0,    1]]

The planes follow ``winograd.py``'s layout: plane 6i + j holds entry (i, j) of a transformed
tile. The weight gradient is the transposed algorithm F(3x3, 4x4): G^T [(A e A^T) . D] G.
"""

from __future__ import annotations

import numpy as np

from ._jit import helper

# Integer literals would turn float32 arithmetic into float64 (int * float32 is float64 to
# numba, and the conversions kept these loops scalar): the constants are float32, which
# float64 operands widen exactly.
_2, _4, _5, _8 = np.float32(2), np.float32(4), np.float32(5), np.float32(8)


@helper
def _bt(a0, a1, a2, a3, a4, a5):
    """B^T applied to one line of six values."""
    return (_4 * a0 - _5 * a2 + a4, a3 + a4 - _4 * (a1 + a2), _4 * (a1 - a2) + a4 - a3,
            _2 * (a3 - a1) + a4 - a2, _2 * (a1 - a3) + a4 - a2, _4 * a1 - _5 * a3 + a5)


@helper
def _a(e0, e1, e2, e3):
    """A applied to one line of four values (the weight gradient's transform of gy)."""
    return (e0, e0 + e1 + e2 + e3, e0 - e1 + e2 - e3, e0 + _2 * e1 + _4 * e2 + _8 * e3,
            e0 - _2 * e1 + _4 * e2 - _8 * e3, e3)


@helper
def _at(m0, m1, m2, m3, m4, m5):
    """A^T applied to one line of six values."""
    s12, d12, s34, d34 = m1 + m2, m1 - m2, m3 + m4, m3 - m4
    return m0 + s12 + s34, d12 + _2 * d34, s12 + _4 * s34, d12 + _8 * d34 + m5


@helper
def _g(g0, g1, g2, c4, c6, c12, c24):
    """G applied to one line of three taps (c4 = 1/4, c6 = 1/6, c12 = 1/12, c24 = 1/24)."""
    s = g0 + g2
    return (c4 * g0, -c6 * (s + g1), c6 * (g1 - s), c24 * g0 + c12 * g1 + c6 * g2,
            c24 * g0 - c12 * g1 + c6 * g2, g2)


@helper
def _gt(m0, m1, m2, m3, m4, m5, c4, c6, c12, c24):
    """G^T applied to one line of six values."""
    s12, s34 = m1 + m2, m3 + m4
    return (c4 * m0 - c6 * s12 + c24 * s34, c6 * (m2 - m1) + c12 * (m3 - m4),
            c6 * (s34 - s12) + m5)


# Layout. A padded plane's row 4ty + ri, column 4tx + f lies at P[ri, f, ty * TW + tx]; the two
# columns past the last whole tile, 4TW and 4TW + 1, at X[ri, f, ty]. A tile's six rows are
# then P[0..3, f, z] and P[0..1, f, z + TW] (z = ty * TW + tx), so each pass of a transform is
# one loop over all TH * TW tiles of a plane: per tile row (TW = 8 on a 32x32 map) the loops
# were too short to vectorise and ran scalar.


@helper
def sizes(TH, TW):
    """Floats of the scratch buffers: padded plane (x's, then gy's), lines, output lines."""
    T = TH * TW
    return 16 * (T + TW) + 8 * (TH + 1), 24 * (T + 1) + 12 * TH, 40 * T


@helper
def _planes(Pf, TH, TW):
    """The padded plane P and its columns past the last whole tile X (layout above)."""
    T = TH * TW
    return (Pf[:16 * (T + TW)].reshape(4, 4, T + TW),
            Pf[16 * (T + TW):16 * (T + TW) + 8 * (TH + 1)].reshape(4, 2, TH + 1))


@helper
def _plane(src, P, X, pt, pl, TW):
    """P, X = 0, then src copied in at (pt, pl) of the padded plane (layout above; columns
    and rows past P's and X's reach dropped)."""
    zero = P.dtype.type(0)
    P[:] = zero
    X[:] = zero
    TH = P.shape[2] // TW - 1
    H = min(src.shape[0], 4 * TH + 2 - pt)
    W = min(src.shape[1], 4 * TW + 2 - pl)
    t0 = (pl + 3) // 4  # whole tiles t0 .. t1 - 1 take four columns of src each
    t1 = max(t0, min(TW, (W + pl) // 4))
    for i in range(H):
        s = src[i]
        row = pt + i
        ri, o = row & 3, (row >> 2) * TW
        sv = s[4 * t0 - pl:]
        p0, p1 = P[ri, 0, o + t0:o + t1], P[ri, 1, o + t0:o + t1]
        p2, p3 = P[ri, 2, o + t0:o + t1], P[ri, 3, o + t0:o + t1]
        for t in range(t1 - t0):
            p0[t], p1[t], p2[t], p3[t] = sv[4 * t], sv[4 * t + 1], sv[4 * t + 2], sv[4 * t + 3]
        for c in range(pl, min(4 * t0, pl + W)):
            P[ri, c & 3, o + (c >> 2)] = s[c - pl]
        for c in range(4 * t1, pl + W):
            if c < 4 * TW:
                P[ri, c & 3, o + (c >> 2)] = s[c - pl]
            else:
                X[ri, c - 4 * TW, row >> 2] = s[c - pl]


@helper
def _tiles_in(P, X, V, o0, TH, TW, u, ux):
    """V[:, o0 + z] = B^T d B for the 6x6 tile d of every z = ty * TW + tx of the plane."""
    T = TH * TW
    for f in range(4):  # B^T down the columns: six rows -> six lines
        d0, d1, d2, d3 = P[0, f, :T], P[1, f, :T], P[2, f, :T], P[3, f, :T]
        d4, d5 = P[0, f, TW:TW + T], P[1, f, TW:TW + T]
        w0, w1, w2, w3, w4, w5 = u[0, f], u[1, f], u[2, f], u[3, f], u[4, f], u[5, f]
        for z in range(T):
            w0[z], w1[z], w2[z], w3[z], w4[z], w5[z] = _bt(d0[z], d1[z], d2[z], d3[z], d4[z],
                                                           d5[z])
    for f in range(2):  # the same for the columns past the last whole tile
        for ty in range(TH):
            a0, a1, a2, a3, a4, a5 = _bt(X[0, f, ty], X[1, f, ty], X[2, f, ty], X[3, f, ty],
                                         X[0, f, ty + 1], X[1, f, ty + 1])
            ux[0, f, ty], ux[1, f, ty], ux[2, f, ty] = a0, a1, a2
            ux[3, f, ty], ux[4, f, ty], ux[5, f, ty] = a3, a4, a5
    for i in range(6):  # B along each line: columns 4tx .. 4tx + 5
        h0, h1, h2, h3 = u[i, 0, :T], u[i, 1, :T], u[i, 2, :T], u[i, 3, :T]
        h4, h5 = u[i, 0, 1:T + 1], u[i, 1, 1:T + 1]
        v0, v1, v2 = V[6 * i, o0:o0 + T], V[6 * i + 1, o0:o0 + T], V[6 * i + 2, o0:o0 + T]
        v3, v4, v5 = V[6 * i + 3, o0:o0 + T], V[6 * i + 4, o0:o0 + T], V[6 * i + 5, o0:o0 + T]
        for z in range(T):
            v0[z], v1[z], v2[z], v3[z], v4[z], v5[z] = _bt(h0[z], h1[z], h2[z], h3[z], h4[z],
                                                           h5[z])
        for ty in range(TH):  # a row's last tile reads its columns 4TW, 4TW + 1 from ux
            z = ty * TW + TW - 1
            v0[z], v1[z], v2[z], v3[z], v4[z], v5[z] = _bt(h0[z], h1[z], h2[z], h3[z],
                                                           ux[i, 0, ty], ux[i, 1, ty])


@helper
def _tiles_gy(P, E, o0, T, u):
    """E[:, o0 + z] = A e A^T for the 4x4 block e of every tile z of the gy plane P."""
    for f in range(4):
        g0, g1, g2, g3 = P[0, f, :T], P[1, f, :T], P[2, f, :T], P[3, f, :T]
        w0, w1, w2, w3, w4, w5 = u[0, f], u[1, f], u[2, f], u[3, f], u[4, f], u[5, f]
        for z in range(T):
            w0[z], w1[z], w2[z], w3[z], w4[z], w5[z] = _a(g0[z], g1[z], g2[z], g3[z])
    for i in range(6):
        h0, h1, h2, h3 = u[i, 0], u[i, 1], u[i, 2], u[i, 3]
        e0, e1, e2 = E[6 * i, o0:o0 + T], E[6 * i + 1, o0:o0 + T], E[6 * i + 2, o0:o0 + T]
        e3, e4, e5 = E[6 * i + 3, o0:o0 + T], E[6 * i + 4, o0:o0 + T], E[6 * i + 5, o0:o0 + T]
        for z in range(T):
            e0[z], e1[z], e2[z], e3[z], e4[z], e5[z] = _a(h0[z], h1[z], h2[z], h3[z])


@helper
def _tiles_out(M, o0, TW, o, b, n, y):
    """o[4ty:4ty+4, 4tx:4tx+4] = A^T m A + b for the 6x6 tiles m = M[:, o0 + ty*TW + tx]
    (rows and columns past o's edge dropped); n (4, 6, T) and y (4, 4, T) are scratch."""
    OH, OW = o.shape
    T = n.shape[2]
    for j in range(6):  # n[a, j] = sum over i of A^T[a, i] m[i, j]
        m0, m1, m2 = M[j, o0:o0 + T], M[6 + j, o0:o0 + T], M[12 + j, o0:o0 + T]
        m3, m4, m5 = M[18 + j, o0:o0 + T], M[24 + j, o0:o0 + T], M[30 + j, o0:o0 + T]
        n0, n1, n2, n3 = n[0, j], n[1, j], n[2, j], n[3, j]
        for z in range(T):
            n0[z], n1[z], n2[z], n3[z] = _at(m0[z], m1[z], m2[z], m3[z], m4[z], m5[z])
    for a in range(4):
        c0, c1, c2, c3, c4, c5 = n[a, 0], n[a, 1], n[a, 2], n[a, 3], n[a, 4], n[a, 5]
        y0, y1, y2, y3 = y[a, 0], y[a, 1], y[a, 2], y[a, 3]
        for z in range(T):
            y0[z], y1[z], y2[z], y3[z] = _at(c0[z], c1[z], c2[z], c3[z], c4[z], c5[z])
    for r in range(OH):
        dst = o[r]
        a, z0 = r & 3, (r >> 2) * TW
        ya = y[a]
        for c in range(OW):
            dst[c] = ya[c & 3, z0 + (c >> 2)] + b


@helper
def input_tiles(x, s0, m, pm, T, TH, TW, pt, pl, Pf, uf, V):
    """V[:, c * pm + j * T + tile] = B^T d B for images s0 .. s0 + m of x (padded by pt, pl)."""
    P, X = _planes(Pf, TH, TW)
    u = uf[:24 * (T + 1)].reshape(6, 4, T + 1)
    ux = uf[24 * (T + 1):24 * (T + 1) + 12 * TH].reshape(6, 2, TH)
    for j in range(m):
        for c in range(x.shape[1]):
            _plane(x[s0 + j, c], P, X, pt, pl, TW)
            _tiles_in(P, X, V, c * pm + j * T, TH, TW, u, ux)


@helper
def gy_tiles(gy, s0, m, pm, T, TH, TW, Pf, uf, E):
    """E[:, k * pm + j * T + tile] = A e A^T for the 4x4 blocks e of images s0 .. s0 + m
    (gy's planes laid out as x's, unpadded)."""
    P, X = _planes(Pf, TH, TW)
    u = uf[:24 * T].reshape(6, 4, T)
    for j in range(m):
        for k in range(gy.shape[1]):
            _plane(gy[s0 + j, k], P, X, 0, 0, TW)
            _tiles_gy(P, E, k * pm + j * T, T, u)


@helper
def output_tiles(M, s0, m, pm, T, TH, TW, out, bias, ybf):
    """out[s0 + j, k] = A^T m A + bias[k] for the tiles of images s0 .. s0 + m."""
    n = ybf[:24 * T].reshape(4, 6, T)
    y = ybf[24 * T:40 * T].reshape(4, 4, T)
    for j in range(m):
        for k in range(out.shape[1]):
            _tiles_out(M, k * pm + j * T, TW, out[s0 + j, k], bias[k], n, y)


@helper
def weight_rows(w, r, flip, t, U):
    """U[6i + j, r, c] = (G g G^T)[i, j] for the tap sets g = w[r, c] of row r (w[c, r]
    turned by 180 degrees with ``flip``), every c; t is a (6, 3, Q) scratch. Both passes run
    along c, so U's rows are written whole (vectorised)."""
    dt = U.dtype.type
    c4, c6, c12, c24 = dt(0.25), dt(1.0 / 6.0), dt(1.0 / 12.0), dt(1.0 / 24.0)
    Q = t.shape[2]
    for j in range(3):  # G down each column of taps
        t0, t1, t2, t3, t4, t5 = t[0, j], t[1, j], t[2, j], t[3, j], t[4, j], t[5, j]
        if flip:
            jj = 2 - j
            for c in range(Q):
                t0[c], t1[c], t2[c], t3[c], t4[c], t5[c] = _g(
                    w[c, r, 2, jj], w[c, r, 1, jj], w[c, r, 0, jj], c4, c6, c12, c24)
        else:
            for c in range(Q):
                t0[c], t1[c], t2[c], t3[c], t4[c], t5[c] = _g(
                    w[r, c, 0, j], w[r, c, 1, j], w[r, c, 2, j], c4, c6, c12, c24)
    for i in range(6):  # G along each row
        a0, a1, a2 = t[i, 0], t[i, 1], t[i, 2]
        b0, b1, b2 = U[6 * i, r], U[6 * i + 1, r], U[6 * i + 2, r]
        b3, b4, b5 = U[6 * i + 3, r], U[6 * i + 4, r], U[6 * i + 5, r]
        for c in range(Q):
            b0[c], b1[c], b2[c], b3[c], b4[c], b5[c] = _g(a0[c], a1[c], a2[c], c4, c6, c12,
                                                          c24)


@helper
def weight_back_rows(buf, t, o):
    """o[c] (3x3) = G^T M G for M[i, j] = buf[6i + j, c], every c; t is a (3, 6, C)
    scratch."""
    dt = buf.dtype.type
    c4, c6, c12, c24 = dt(0.25), dt(1.0 / 6.0), dt(1.0 / 12.0), dt(1.0 / 24.0)
    C = t.shape[2]
    for j in range(6):
        m0, m1, m2 = buf[j, :C], buf[6 + j, :C], buf[12 + j, :C]
        m3, m4, m5 = buf[18 + j, :C], buf[24 + j, :C], buf[30 + j, :C]
        t0, t1, t2 = t[0, j], t[1, j], t[2, j]
        for c in range(C):
            t0[c], t1[c], t2[c] = _gt(m0[c], m1[c], m2[c], m3[c], m4[c], m5[c], c4, c6, c12,
                                      c24)
    for i in range(3):
        s0, s1, s2, s3, s4, s5 = t[i, 0], t[i, 1], t[i, 2], t[i, 3], t[i, 4], t[i, 5]
        for c in range(C):
            o[c, i, 0], o[c, i, 1], o[c, i, 2] = _gt(s0[c], s1[c], s2[c], s3[c], s4[c], s5[c],
                                                     c4, c6, c12, c24)
