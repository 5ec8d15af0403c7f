"""The transforms of Winograd F(2x2, 2x2), compiled into ``winograd.py``'s kernels: the 4x4,
stride-2 convolutions of DCGAN-style networks.

A 4x4 window at stride 2 over x is a 2x2 window at stride 1 over x's four phases: with xp the
padded input and S[(c, ph, pw)][q, r] = xp[c, 2q + ph, 2r + pw],

    out[k, oh, ow] = sum over (c, ph, pw), a, b of S[(c, ph, pw)][oh + a, ow + b]
                     * w[k, c, 2a + ph, 2b + pw]

a 2x2 correlation over 4C phase channels. F(2x2, 2x2) takes 9 products of transformed 3x3
tiles per 2x2 block of outputs, against 16 multiply-adds per output (4 taps x 4 phases) for
the direct sum (Lavin & Gray 2015, on the points 0, 1 and infinity):

    B^T = [[1, -1, 0], [0, 1, 0], [0, -1, 1]]    G = [[1, 0], [1, 1], [0, 1]]
    A^T = [[1, 1, 0], [0, 1, 1]]

Plane 3i + j holds entry (i, j) of a transformed tile. Every coefficient is 0 or +-1, so the
results round as the direct sum does. The phases are read from x's padded plane as the
tiles are built: no phase copy of the input is made. The weight gradient is the transposed
algorithm, G^T [(A e A^T) . (B^T d B)] G, as in ``winograd.py``.
"""

from __future__ import annotations

from ._jit import helper
from ._winograd_f23 import plane


@helper
def sizes(TH, TW):
    """Floats of the scratch buffers: padded plane (x's, then gy's), row lines, output rows."""
    return (4 * TH + 2) * (4 * TW + 2), 3 * (4 * TW + 2), 4 * TW


@helper
def input_tiles(x, s0, m, pm, T, TH, TW, pt, pl, Pf, uf, V):
    """V[:, c * pm + j * T + tile] = B^T d B for images s0 .. s0 + m of x padded by pt, pl,
    over the 4C phase channels c = 4c' + 2ph + pw: d = P[4ty + ph + (0, 2, 4), 4tx + pw +
    (0, 2, 4)] of the padded plane P of x[c']. B^T runs down the rows first, once per row
    phase and tile row over the plane's whole width."""
    Hp, Wp = 4 * TH + 2, 4 * TW + 2
    P = Pf[:Hp * Wp].reshape(Hp, Wp)
    u = uf[:3 * Wp].reshape(3, Wp)
    u0, u2 = u[0], u[2]
    for j in range(m):
        xi = x[s0 + j]
        for c in range(xi.shape[0]):
            plane(xi[c], P, pt, pl)
            for ph in range(2):
                for ty in range(TH):
                    r0, r1, r2 = P[4 * ty + ph], P[4 * ty + ph + 2], P[4 * ty + ph + 4]
                    for k in range(Wp):
                        u0[k] = r0[k] - r1[k]
                        u2[k] = r2[k] - r1[k]
                    for pw in range(2):
                        q = (4 * c + 2 * ph + pw) * pm + j * T + ty * TW
                        for i in range(3):
                            rr = r1 if i == 1 else u[i]
                            v0 = V[3 * i, q:q + TW]
                            v1 = V[3 * i + 1, q:q + TW]
                            v2 = V[3 * i + 2, q:q + TW]
                            for tx in range(TW):
                                b = 4 * tx + pw
                                a0, a1, a2 = rr[b], rr[b + 2], rr[b + 4]
                                v0[tx] = a0 - a1
                                v1[tx] = a1
                                v2[tx] = a2 - a1


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
def _tiles_gy(P, E, o0, TW):
    """E[:, o0 + ty * TW + tx] = A e A^T for every 2x2 block e = P[2ty:2ty+2, 2tx:2tx+2]."""
    TH = P.shape[0] // 2
    for ty in range(TH):
        g0, g1 = P[2 * ty], P[2 * ty + 1]
        q = o0 + ty * TW
        for i in range(3):
            e0 = E[3 * i, q:q + TW]
            e1 = E[3 * i + 1, q:q + TW]
            e2 = E[3 * i + 2, q:q + TW]
            for tx in range(TW):
                x0, x1 = g0[2 * tx], g0[2 * tx + 1]
                y0, y1 = g1[2 * tx], g1[2 * tx + 1]
                if i == 0:
                    a0, a1 = x0, x1
                elif i == 1:
                    a0, a1 = x0 + y0, x1 + y1
                else:
                    a0, a1 = y0, y1
                e0[tx] = a0
                e1[tx] = a0 + a1
                e2[tx] = a1


@helper
def _tiles_out(M, o0, TW, o, b, yb):
    """o[2ty:2ty+2, 2tx:2tx+2] = A^T m A + b for the 3x3 tiles m = M[:, o0 + ty*TW + tx]
    (rows and columns past o's edge dropped)."""
    OH, OW = o.shape
    TH = (OH + 1) // 2
    y0, y1 = yb[0], yb[1]
    for ty in range(TH):
        q = o0 + ty * TW
        for tx in range(TW):
            p = q + tx
            a0 = M[0, p] + M[3, p]
            a1 = M[1, p] + M[4, p]
            a2 = M[2, p] + M[5, p]
            c0 = M[3, p] + M[6, p]
            c1 = M[4, p] + M[7, p]
            c2 = M[5, p] + M[8, p]
            y0[2 * tx] = a0 + a1 + b
            y0[2 * tx + 1] = a1 + a2 + b
            y1[2 * tx] = c0 + c1 + b
            y1[2 * tx + 1] = c1 + c2 + b
        r0 = o[2 * ty]
        for j in range(OW):
            r0[j] = y0[j]
        if 2 * ty + 1 < OH:
            r1 = o[2 * ty + 1]
            for j in range(OW):
                r1[j] = y1[j]


@helper
def weight_rows(w, r, t, U):
    """U[3i + j, r, q] = (G g G^T)[i, j] for g[a, b] = w[r, c, 2a + ph, 2b + pw], every phase
    channel q = 4c + 2ph + pw; t is a (3+, 2+, Q) scratch."""
    Q = U.shape[2]
    for b in range(2):  # G down each column of taps
        t0, t1, t2 = t[0, b], t[1, b], t[2, b]
        for q in range(Q):
            c, ph, pw = q // 4, (q // 2) % 2, q % 2
            g0, g1 = w[r, c, ph, 2 * b + pw], w[r, c, 2 + ph, 2 * b + pw]
            t0[q] = g0
            t1[q] = g0 + g1
            t2[q] = g1
    for i in range(3):  # G along each row
        a0, a1 = t[i, 0], t[i, 1]
        b0, b1, b2 = U[3 * i, r], U[3 * i + 1, r], U[3 * i + 2, r]
        for q in range(Q):
            b0[q] = a0[q]
            b1[q] = a0[q] + a1[q]
            b2[q] = a1[q]


@helper
def weight_back_rows(buf, t, o):
    """o[c, 2a + ph, 2b + pw] = (G^T M G)[a, b] for M[i, j] = buf[3i + j, q] and every phase
    channel q = 4c + 2ph + pw; t is a (2+, 3+, 4C) scratch."""
    C4 = 4 * o.shape[0]
    for j in range(3):
        m0, m1, m2 = buf[j, :C4], buf[3 + j, :C4], buf[6 + j, :C4]
        t0, t1 = t[0, j], t[1, j]
        for q in range(C4):
            t0[q] = m0[q] + m1[q]
            t1[q] = m1[q] + m2[q]
    for a in range(2):
        s0, s1, s2 = t[a, 0], t[a, 1], t[a, 2]
        for q in range(C4):
            c, ph, pw = q // 4, (q // 2) % 2, q % 2
            o[c, 2 * a + ph, pw] = s0[q] + s1[q]
            o[c, 2 * a + ph, 2 + pw] = s1[q] + s2[q]
