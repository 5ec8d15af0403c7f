"""Winograd F(2x2, 3x3) kernels for 3x3, stride-1, undilated, ungrouped convolutions.

A 3x3 correlation over a 2x2 block of outputs takes 16 products of transformed 4x4 input
tiles with transformed weights instead of 36 multiply-adds (Lavin & Gray, "Fast Algorithms
for Convolutional Neural Networks", 2015):

    forward       y = A^T [ (G w G^T) . (B^T d B) ] A           (d: a 4x4 tile at stride 2)
    grad weight   dw = G^T [ sum over tiles (A e A^T) . (B^T d B) ] G     (e: a 2x2 block of gy)
    grad input    the forward of gy with the weights flipped and their channels swapped,
                  padded by 2 - p

    B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]
    G   = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]
    A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]

The weight gradient is the transposed algorithm F(3x3, 2x2): the roles of A and G swap and
the input transform stays. All three passes share the input transform, and the sum over
tiles of every one of the 16 tile positions is one GEMM: (K x C) @ (C x tiles) forward,
(K x tiles) @ (tiles x C) for the weight gradient. Blocks of images (>= ``BLOCK_TILES`` tiles
per GEMM) go to numba's threads, each calling single-threaded BLAS, as the im2col kernels do.

The transforms' coefficients are 0, +-1 and +-1/2, so float32 results stay within a few ulps
of the direct sum's rounding (tested against float64 references).
"""

from __future__ import annotations

import numpy as np
from numba import prange
from numba.core import types as nbt

from ._chunks import launch
from ._chunks import split as _split
from ._gemm import gemm
from ._jit import dual, helper
from ._threads import use_parallel

__all__ = ["applies", "forward", "grad_input", "grad_weight"]

# Tiles per GEMM: blocks of images are grouped until they hold at least this many 2x2 tiles
# (a 4x4 map has 4 tiles per image; a 32x32 map 256).
BLOCK_TILES = 256

# When this path is taken, from paired runs against the im2col kernels (float32, batch 32,
# 2 cores, padding 1; ms im2col -> Winograd, forward / grad input / grad weight):
#     64 ch 32x32    27.2 -> 18.7 / 23.5 -> 18.8 / 27.1 -> 18.9
#    128 ch 16x16    23.6 -> 16.9 / 24.7 -> 17.7 / 22.7 -> 19.5
#    256 ch  8x8     21.5 -> 14.9 / 21.8 -> 14.6 / 22.3 -> 17.1
#    512 ch  4x4     20.2 -> 15.9 / 19.8 -> 16.7 / 22.5 -> 18.8
#    256 ch  4x4      5.8 ->  4.9 /  5.5 ->  4.9 /  6.2 ->  5.6
#    128 ch  4x4      1.8 ->  1.7 /  1.7 ->  1.7 /  1.9 ->  1.9   (no)
#     64 ch  4x4      0.7 ->  0.8 /  0.6 ->  0.8 /  0.7 ->  0.9   (no)
#    512 ch  2x2 (batch 8: one tile per image)  2.3 -> 6.1 / 3.2 -> 6.8 / 5.5 -> 8.4   (no)
#     16 -> 32 ch 14x14 (batch 64)  2.6 -> 2.6 / 2.8 -> 3.2 / 3.0 -> 3.0
#     16 ch 32x32     4.1 -> 4.1 / 3.3 -> 4.1 / 4.1 -> 4.1   (grad input: no)
# Maps of 8x8 outputs and more pay from 16 channels (grad input from 64); 4x4 maps give 4
# tiles per image and pay only with wide layers.
MIN_CHANNELS = 16
MIN_CHANNELS_GRAD_INPUT = 64
MIN_OUTPUTS = 64
MIN_OUTPUTS_WIDE = 16
WIDE = 256

# Floats between the 16 tile-position planes of a block's buffers: planes a power of two
# apart put the transforms' 16 streams in one cache set (measured 2-3x slower transforms).
PAD = 32

Pads = tuple[tuple[int, int], tuple[int, int]]


def applies(w_shape: tuple[int, ...], stride: tuple[int, int], padding: Pads,
            dilation: tuple[int, int], groups: int, out_hw: tuple[int, int],
            in_hw: tuple[int, int], grad_input: bool = False) -> bool:
    """True when these kernels compute (and pay for) this convolution: 3x3 taps, stride 1, no
    dilation, one group, every padding in 0..2 (grad input pads by 2 - p), the output size a
    stride-1 window gives, and enough channels and output positions (figures above)."""
    (pt, pb), (pl, pr) = padding
    least = MIN_CHANNELS_GRAD_INPUT if grad_input else MIN_CHANNELS
    return (tuple(w_shape[2:]) == (3, 3) and tuple(stride) == (1, 1)
            and tuple(dilation) == (1, 1) and groups == 1
            and min(w_shape[0], w_shape[1]) >= least
            and all(0 <= p <= 2 for p in (pt, pb, pl, pr))
            and out_hw[0] == in_hw[0] + pt + pb - 2 and out_hw[1] == in_hw[1] + pl + pr - 2
            and out_hw[0] * out_hw[1] >= (MIN_OUTPUTS_WIDE if min(w_shape[:2]) >= WIDE
                                          else MIN_OUTPUTS))


# --------------------------------------------------------------------------- transforms


@helper
def _plane(src, buf, pt, pl):
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


# --------------------------------------------------------------------------- kernels


@helper
def _block_planes(flat, rows, pm):
    """A (16, rows * pm + PAD) view of ``flat``: one padded plane per tile position."""
    return flat[:16 * (rows * pm + PAD)].reshape(16, rows * pm + PAD)


@helper
def _input_tiles(x, s0, m, pm, T, TW, pt, pl, P, u, V):
    """V[:, c * pm + j * T + tile] = B^T d B for images s0 .. s0 + m of x (padded by pt, pl)."""
    for j in range(m):
        for c in range(x.shape[1]):
            _plane(x[s0 + j, c], P, pt, pl)
            _tiles_in(P, V, c * pm + j * T, TW, u)


def _forward(x, U, bias, out, pt, pl, nb, nt):
    """out[n, k] = sum over c of x[n, c] (padded by pt, pl) correlated with w[k, c] + bias[k]

    for t in prange(nt):                                  # a contiguous range of images each
        for each block of nb images:
            V[s, c, tiles] = B^T d B     (every 4x4 input tile, s = its 16 positions)
            M[s] = U[s] @ V[s]           (BLAS: (K x C) @ (C x tiles), 16 per block)
            out[n, k] = A^T M[:, k, tile] A + bias[k]
    """
    N, C = x.shape[0], x.shape[1]
    K = U.shape[1]
    OH, OW = out.shape[2], out.shape[3]
    TH, TW = (OH + 1) // 2, (OW + 1) // 2
    T = TH * TW
    for t in prange(nt):
        n0, n1 = t * N // nt, (t + 1) * N // nt
        P = np.empty((2 * TH + 2, 2 * TW + 2), x.dtype)
        u = np.empty((4, 2 * TW + 2), x.dtype)
        yb = np.empty((2, 2 * TW), x.dtype)
        vf = np.empty(16 * (C * nb * T + PAD), x.dtype)
        mf = np.empty(16 * (K * nb * T + PAD), x.dtype)
        for s0 in range(n0, n1, nb):
            m = min(nb, n1 - s0)
            Pm = m * T
            V = _block_planes(vf, C, Pm)
            M = _block_planes(mf, K, Pm)
            _input_tiles(x, s0, m, Pm, T, TW, pt, pl, P, u, V)
            for s in range(16):
                gemm(U[s], V[s, :C * Pm].reshape(C, Pm), M[s, :K * Pm].reshape(K, Pm))
            for j in range(m):
                for k in range(K):
                    _tiles_out(M, k * Pm + j * T, TW, out[s0 + j, k], bias[k], yb)


def _grad_weight(x, gy, acc, pt, pl, nb, nt):
    """acc[t, s] = sum over the images of chunk t and their tiles of E[s] @ V[s]^T

    for t in prange(nt):
        for each block of nb images:
            V[s, c, tiles] = B^T d B;  E[s, k, tiles] = A e A^T   (e: 2x2 blocks of gy)
            acc[t, s] (+)= E[s] @ V[s]^T           (BLAS: (K x tiles) @ (tiles x C))
    The caller sums over t and applies G^T . G.
    """
    N, C = x.shape[0], x.shape[1]
    K = gy.shape[1]
    OH, OW = gy.shape[2], gy.shape[3]
    TH, TW = (OH + 1) // 2, (OW + 1) // 2
    T = TH * TW
    zero = x.dtype.type(0)
    for t in prange(nt):
        n0, n1 = t * N // nt, (t + 1) * N // nt
        P = np.empty((2 * TH + 2, 2 * TW + 2), x.dtype)
        Pg = np.empty((2 * TH, 2 * TW), x.dtype)
        u = np.empty((4, 2 * TW + 2), x.dtype)
        vf = np.empty(16 * (C * nb * T + PAD), x.dtype)
        ef = np.empty(16 * (K * nb * T + PAD), x.dtype)
        tmp = np.empty((K, C), x.dtype)
        a = acc[t]
        if n1 <= n0:
            a[:] = zero
        for s0 in range(n0, n1, nb):
            m = min(nb, n1 - s0)
            Pm = m * T
            V = _block_planes(vf, C, Pm)
            E = _block_planes(ef, K, Pm)
            _input_tiles(x, s0, m, Pm, T, TW, pt, pl, P, u, V)
            for j in range(m):
                for k in range(K):
                    _plane(gy[s0 + j, k], Pg, 0, 0)
                    _tiles_gy(Pg, E, k * Pm + j * T, TW)
            for s in range(16):
                es = E[s, :K * Pm].reshape(K, Pm)
                vs = V[s, :C * Pm].reshape(C, Pm)
                if s0 == n0:
                    gemm(es, vs.T, a[s])
                else:
                    gemm(es, vs.T, tmp)
                    d = a[s]
                    for i in range(K):
                        di, ti = d[i], tmp[i]
                        for j in range(C):
                            di[j] += ti[j]


@helper
def _col(g0, g1, g2, h):
    """(G g): the 4 rows of one column (g0, g1, g2) of a 3x3 tile."""
    return g0, h * (g0 + g1 + g2), h * (g0 - g1 + g2), g2


def _weights(w, U, flip):
    """U[4i + j, k, c] = (G w[k, c] G^T)[i, j];  with ``flip``, U[4i + j, c, k] from w[k, c]
    turned by 180 degrees (grad input's weights: channels swapped, taps reversed).

    Each row r of U's 16 planes is built in a padded buffer and copied out whole: writing the
    16 planes element by element (16 streams a power of two apart) took 7 ms of a 512 x 512
    layer's forward."""
    R, S = U.shape[1], U.shape[2]
    h = w.dtype.type(0.5)
    for r in prange(R):
        buf = np.empty((16, S + PAD), w.dtype)
        t = np.empty((4, 3), w.dtype)
        for c in range(S):
            g = w[c, r] if flip else w[r, c]
            for j in range(3):
                jj = 2 - j if flip else j
                if flip:
                    a0, a1, a2, a3 = _col(g[2, jj], g[1, jj], g[0, jj], h)
                else:
                    a0, a1, a2, a3 = _col(g[0, jj], g[1, jj], g[2, jj], h)
                t[0, j], t[1, j], t[2, j], t[3, j] = a0, a1, a2, a3
            for i in range(4):
                b0, b1, b2, b3 = _col(t[i, 0], t[i, 1], t[i, 2], h)
                buf[4 * i, c] = b0
                buf[4 * i + 1, c] = b1
                buf[4 * i + 2, c] = b2
                buf[4 * i + 3, c] = b3
        for q in range(16):
            U[q, r, :] = buf[q, :S]


def _weights_back(acc, dw):
    """dw[k, c] = G^T M G with M = sum over t of acc[t, :, k, c] (16 positions as 4x4);
    row k of the 16 planes is summed into a padded buffer first (see ``_weights``)."""
    K, C = dw.shape[0], dw.shape[1]
    h = dw.dtype.type(0.5)
    for k in prange(K):
        t = np.empty((3, 4), dw.dtype)
        buf = np.empty((16, C + PAD), dw.dtype)
        for q in range(16):
            row = buf[q, :C]
            row[:] = acc[0, q, k]
            for p in range(1, acc.shape[0]):
                src = acc[p, q, k]
                for c in range(C):
                    row[c] += src[c]
        for c in range(C):
            for j in range(4):
                m0, m1, m2, m3 = buf[j, c], buf[4 + j, c], buf[8 + j, c], buf[12 + j, c]
                t[0, j] = m0 + h * (m1 + m2)
                t[1, j] = h * (m1 - m2)
                t[2, j] = h * (m1 + m2) + m3
            o = dw[k, c]
            for i in range(3):
                o[i, 0] = t[i, 0] + h * (t[i, 1] + t[i, 2])
                o[i, 1] = h * (t[i, 1] - t[i, 2])
                o[i, 2] = h * (t[i, 1] + t[i, 2]) + t[i, 3]


def _sig_fwd(T):
    i = nbt.int64
    return (T[:, :, :, ::1], T[:, :, ::1], T[::1], T[:, :, :, ::1]) + (i,) * 4


def _sig_gw(T):
    i = nbt.int64
    return (T[:, :, :, ::1], T[:, :, :, ::1], T[:, :, :, ::1]) + (i,) * 4


def _sig_weights(T):
    return (T[:, :, :, ::1], T[:, :, ::1], nbt.boolean)


def _sig_weights_back(T):
    return (T[:, :, :, ::1], T[:, :, :, ::1])


FORWARD = dual(_forward, signatures=[_sig_fwd])
GRAD_WEIGHT = dual(_grad_weight, signatures=[_sig_gw])
WEIGHTS = dual(_weights, signatures=[_sig_weights])
WEIGHTS_BACK = dual(_weights_back, signatures=[_sig_weights_back])


# --------------------------------------------------------------------------- wrappers


def _block(n: int, nt: int, tiles: int) -> int:
    """Images per GEMM block: enough for BLOCK_TILES tiles, at most a chunk's count."""
    return max(1, min(-(-BLOCK_TILES // max(tiles, 1)), -(-n // nt)))


def _run_sized(pair: tuple, n: int, *args: object) -> None:
    """The parallel build of an elementwise-sized kernel over n items when it pays."""
    ser, par = pair
    (par if use_parallel(n, "elementwise") else ser)(*args)


def _transform_weights(w: np.ndarray, flip: bool = False) -> np.ndarray:
    """(16, K, C) transformed weights; (16, C, K) of the turned weights with ``flip``."""
    K, C = w.shape[0], w.shape[1]
    U = np.empty((16, C, K) if flip else (16, K, C), w.dtype)
    _run_sized(WEIGHTS, 16 * K * C, np.ascontiguousarray(w), U, flip)
    return U


def _tiles(oh: int, ow: int) -> int:
    return ((oh + 1) // 2) * ((ow + 1) // 2)


def _conv(x: np.ndarray, U: np.ndarray, bias: np.ndarray, pt: int, pl: int,
          oh: int, ow: int) -> np.ndarray:
    n, c = x.shape[0], x.shape[1]
    k = U.shape[1]
    out = np.empty((n, k, oh, ow), x.dtype)
    if out.size == 0:
        return out
    tiles = _tiles(oh, ow)
    nt = _split(n, n * tiles * 16 * c * k // 8)
    launch(FORWARD, nt, np.ascontiguousarray(x), U, bias, out, pt, pl,
           _block(n, nt, tiles))
    return out


def forward(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, padding: Pads
            ) -> np.ndarray:
    """conv2d of x (N, C, H, W) with 3x3 weights w (K, C, 3, 3), stride 1, plus bias (K,)."""
    (pt, pb), (pl, pr) = padding
    oh, ow = x.shape[2] + pt + pb - 2, x.shape[3] + pl + pr - 2
    b = np.zeros(w.shape[0], x.dtype) if bias is None else np.ascontiguousarray(bias)
    return _conv(x, _transform_weights(w), b, pt, pl, oh, ow)


def grad_input(gy: np.ndarray, w: np.ndarray, input_shape: tuple[int, ...], padding: Pads
               ) -> np.ndarray:
    """Gradient of ``forward`` w.r.t. x: gy correlated with the flipped, channel-swapped
    weights, padded by 2 - p."""
    (pt, _), (pl, _) = padding
    b = np.zeros(w.shape[1], gy.dtype)
    return _conv(gy, _transform_weights(w, flip=True), b, 2 - pt, 2 - pl,
                 input_shape[2], input_shape[3])


def grad_weight(x: np.ndarray, gy: np.ndarray, padding: Pads) -> np.ndarray:
    """Gradient of ``forward`` w.r.t. its weights, (K, C, 3, 3)."""
    (pt, _), (pl, _) = padding
    n, c = x.shape[0], x.shape[1]
    k, oh, ow = gy.shape[1], gy.shape[2], gy.shape[3]
    if n == 0 or gy.size == 0 or x.size == 0:
        return np.zeros((k, c, 3, 3), x.dtype)
    tiles = _tiles(oh, ow)
    nt = _split(n, n * tiles * 16 * c * k // 8)
    acc = np.empty((nt, 16, k, c), x.dtype)
    launch(GRAD_WEIGHT, nt, np.ascontiguousarray(x), np.ascontiguousarray(gy), acc, pt, pl,
           _block(n, nt, tiles))
    dw = np.empty((k, c, 3, 3), x.dtype)
    _run_sized(WEIGHTS_BACK, 16 * k * c * nt, acc, dw)
    return dw
