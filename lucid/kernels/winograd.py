"""Winograd kernels for 3x3, stride-1, undilated, ungrouped convolutions: F(2x2, 3x3) and
F(4x4, 3x3) (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", 2015); and
for the forward and weight gradient of 4x4, stride-2 ones (DCGAN's), F(2x2, 2x2) over the
input's four phases (``_winograd_f22.py``: 36 products per 2x2 outputs and input channel,
9 for each phase, instead of 64).

A 3x3 correlation over an r x r block of outputs takes (r + 2)^2 products of transformed
input tiles with transformed weights: 16 per 2x2 block (``_winograd_f23.py``) or 36 per 4x4
block (``_winograd_f43.py``), against 9 multiply-adds per output for the direct sum:

    forward       y = A^T [ (G w G^T) . (B^T d B) ] A           (d: an input tile at stride r)
    grad weight   dw = G^T [ sum over tiles (A e A^T) . (B^T d B) ] G     (e: r x r of gy)
    grad input    the forward of gy with the weights flipped and their channels swapped,
                  padded by 2 - p

The weight gradient is the transposed algorithm F(3x3, r x r): the roles of A and G swap and
the input transform stays. All three passes share the input transform, and the sum over
tiles of every tile position s is one GEMM: (K x C) @ (C x tiles) forward, (K x tiles) @
(tiles x C) for the weight gradient. Blocks of images (``BLOCK_TILES``) go to numba's threads,
each calling single-threaded BLAS, as the im2col kernels do. Every kernel takes the algorithm
from its planes' count (16 or 36); ``planes`` chooses it by map size and width.

F(2x2, 3x3)'s coefficients are 0, +-1 and +-1/2: float32 results stay within a few ulps of
the direct sum's rounding. F(4x4, 3x3)'s reach 8 and 1/24: ~7e-6 of the largest output
(tested against float64 references, both).
"""

from __future__ import annotations

import numpy as np
from numba import prange
from numba.core import types as nbt

from . import _winograd_f22 as f22
from . import _winograd_f23 as f23
from . import _winograd_f43 as f43
from ._chunks import launch
from ._chunks import split as _split
from ._gemm import gemm
from ._jit import dual, helper
from ._threads import use_parallel

__all__ = ["applies", "applies_s2", "forward", "forward_s2", "grad_input", "grad_weight",
           "grad_weight_s2"]

# Tiles per GEMM: blocks of images are grouped until they hold at least this many 2x2 tiles
# (a 4x4 map has 4 tiles per image; a 32x32 map 256).
BLOCK_TILES = 256

# Output maps with at least this many rows and columns take F(4x4, 3x3) (``planes``): fewer
# products (36 per 16 outputs against 16 per 4), more transform work per product. Paired
# runs, 2-core Zen 4, float32, ms F(2x2) -> F(4x4), forward / grad input / grad weight:
#     batch 32,  64 ch 32x32    9.4 -> 6.9 (forward alone)
#     batch 32, 128 ch 16x16    9.2 -> 7.0 (forward alone)
#     batch 32, 256 ch  8x8    10.3 -> 7.2 (forward alone)
#     batch 32,  32 ch 32x32    3.28 -> 2.86 / 3.24 -> 2.82 / 3.54 -> 2.59
#     batch 32,  64 ch 16x16    2.82 -> 2.29 / 2.85 -> 2.29 / 3.19 -> 2.04
#     batch 64,  16 -> 32 14x14 1.12 -> 1.21 / 1.35 -> 1.32 / 1.34 -> 1.05
#     batch 32, 128 ch  8x8     2.70 -> 2.62 / 2.71 -> 2.60 / 2.98 -> 2.52
#     batch 64,  64 ch  8x8     1.92 -> 2.15 / 1.92 -> 2.14 / 2.19 -> 1.87
# float32 error against the float64 sum: ~7e-6 of the largest output, against ~4e-7.
F43_MIN_SIDE = 12
F43_WIDE = 128

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

# 4x4 stride-2 layers (F(2x2, 2x2) over the input's phases, ``applies_s2``). Paired runs
# against the im2col kernels, float32, batch 32, 2 cores, padding 1, ms im2col -> F(2x2, 2x2),
# forward / grad weight (two runs each; this machine's spread between runs is ~5%):
#     16 -> 32,   32x32 in    1.38 -> 1.12, 1.42 -> 1.11 / 1.42 -> 1.35, 1.49 -> 1.52
#     64 -> 64,   32x32 in    8.23 -> 7.20, 8.33 -> 7.00 / 8.59 -> 6.98, 8.62 -> 7.06
#     32 -> 64,   16x16 in    0.98 -> 0.94, 0.97 -> 0.92 / 1.04 -> 1.07, 1.04 -> 1.03
#    128 -> 256,  16x16 in (batch 64)  23.9 -> 21.6, 24.7 -> 25.8 / 25.4 -> 20.4, 26.6 -> 21.1
#     64 -> 128,  8x8 in      0.83 -> 0.75, 0.83 -> 0.87 / 0.89 -> 0.75, 0.89 -> 0.87
#    128 -> 256,  8x8 in      3.02 -> 4.27 / 3.60 -> 2.68, 3.74 -> 3.92
#    256 -> 512,  8x8 in (batch 8)  3.15 -> 12.2 / 6.55 -> 6.70
#     16 -> 16,   8x8 in      0.08 -> 0.15 / 0.09 -> 0.14
# The forward pays from 16 to 64 input channels (wider ones make blocks of few tiles and long
# rows: slower GEMMs), the weight gradient from 64, both on output maps of 8x8 and more (4x4
# ones went either way between runs).
S2_FORWARD_CHANNELS = (16, 64)
S2_FORWARD_MIN_OUT = 32
S2_GRAD_WEIGHT_CHANNELS = 64
S2_MIN_OUTPUTS = 64
# Images per block of the forward (its GEMMs ran fastest on blocks that stay in cache: 4 of
# 8x8 outputs, 0.86 ms against 0.94 for 16 at 32 -> 64) and floats of a block's transformed
# input for the weight gradient (a sum over tiles: long blocks).
S2_FORWARD_IMAGES = 4
S2_BLOCK_GRAD_WEIGHT = 300_000

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


# --------------------------------------------------------------------------- kernels


@helper
def _block_planes(flat, S, rows, pm):
    """A (S, rows * pm + PAD) view of ``flat``: one padded plane per tile position."""
    return flat[:S * (rows * pm + PAD)].reshape(S, rows * pm + PAD)


@helper
def _grid(S, OH, OW):
    """Tile rows and columns over an (OH, OW) output map: 2x2 tiles for 9 or 16 planes, 4x4
    for 36."""
    r = 4 if S == 36 else 2
    return (OH + r - 1) // r, (OW + r - 1) // r


@helper
def _scratch(S, TH, TW, dtype):
    """Flat scratch buffers of the algorithm (each module shapes its own): the padded plane
    (x's, then gy's), the transforms' lines, the output lines."""
    if S == 16:
        n = f23.sizes(TH, TW)
    elif S == 36:
        n = f43.sizes(TH, TW)
    else:
        n = f22.sizes(TH, TW)
    return np.empty(n[0], dtype), np.empty(n[1], dtype), np.empty(n[2], dtype)


@helper
def _input_tiles(S, x, s0, m, pm, T, TH, TW, pt, pl, P, u, V):
    """The input transform of the algorithm with S tile positions (9: over x's phases)."""
    if S == 16:
        f23.input_tiles(x, s0, m, pm, T, TH, TW, pt, pl, P, u, V)
    elif S == 36:
        f43.input_tiles(x, s0, m, pm, T, TH, TW, pt, pl, P, u, V)
    else:
        f22.input_tiles(x, s0, m, pm, T, TH, TW, pt, pl, P, u, V)


def _forward(x, U, bias, out, pt, pl, nb, nt):
    """out[n, k] = sum over c of x[n, c] (padded by pt, pl) correlated with w[k, c] + bias[k]

    for t in prange(nt):                                  # a contiguous range of images each
        for each block of nb images:
            V[s, c, tiles] = B^T d B     (every input tile, s = its 16 or 36 positions)
            M[s] = U[s] @ V[s]           (BLAS: (K x C) @ (C x tiles), one per position)
            out[n, k] = A^T M[:, k, tile] A + bias[k]
    """
    N = x.shape[0]
    S, K, C = U.shape[0], U.shape[1], U.shape[2]
    TH, TW = _grid(S, out.shape[2], out.shape[3])
    T = TH * TW
    for t in prange(nt):
        n0, n1 = t * N // nt, (t + 1) * N // nt
        P, u, yb = _scratch(S, TH, TW, x.dtype)
        vf = np.empty(S * (C * nb * T + PAD), x.dtype)
        mf = np.empty(S * (K * nb * T + PAD), x.dtype)
        for s0 in range(n0, n1, nb):
            m = min(nb, n1 - s0)
            Pm = m * T
            V = _block_planes(vf, S, C, Pm)
            M = _block_planes(mf, S, K, Pm)
            _input_tiles(S, x, s0, m, Pm, T, TH, TW, pt, pl, P, u, V)
            for s in range(S):
                gemm(U[s], V[s, :C * Pm].reshape(C, Pm), M[s, :K * Pm].reshape(K, Pm))
            if S == 16:
                f23.output_tiles(M, s0, m, Pm, T, TH, TW, out, bias, yb)
            elif S == 36:
                f43.output_tiles(M, s0, m, Pm, T, TH, TW, out, bias, yb)
            else:
                f22.output_tiles(M, s0, m, Pm, T, TH, TW, out, bias, yb)


def _grad_weight(x, gy, acc, pt, pl, nb, nt):
    """acc[t, s] = sum over the images of chunk t and their tiles of E[s] @ V[s]^T

    for t in prange(nt):
        for each block of nb images:
            V[s, c, tiles] = B^T d B;  E[s, k, tiles] = A e A^T   (e: blocks of gy)
            acc[t, s] (+)= E[s] @ V[s]^T           (BLAS: (K x tiles) @ (tiles x C))
    The caller sums over t and applies G^T . G.
    """
    N = x.shape[0]
    S, K, C = acc.shape[1], gy.shape[1], acc.shape[3]
    TH, TW = _grid(S, gy.shape[2], gy.shape[3])
    T = TH * TW
    zero = x.dtype.type(0)
    for t in prange(nt):
        n0, n1 = t * N // nt, (t + 1) * N // nt
        P, u, _ = _scratch(S, TH, TW, x.dtype)
        vf = np.empty(S * (C * nb * T + PAD), x.dtype)
        ef = np.empty(S * (K * nb * T + PAD), x.dtype)
        tmp = np.empty((K, C), x.dtype)
        a = acc[t]
        if n1 <= n0:
            a[:] = zero
        for s0 in range(n0, n1, nb):
            m = min(nb, n1 - s0)
            Pm = m * T
            V = _block_planes(vf, S, C, Pm)
            E = _block_planes(ef, S, K, Pm)
            _input_tiles(S, x, s0, m, Pm, T, TH, TW, pt, pl, P, u, V)
            if S == 16:
                f23.gy_tiles(gy, s0, m, Pm, T, TH, TW, P, u, E)
            elif S == 36:
                f43.gy_tiles(gy, s0, m, Pm, T, TH, TW, P, u, E)
            else:
                f22.gy_tiles(gy, s0, m, Pm, T, TH, TW, P, u, E)
            for s in range(S):
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


def _weights(w, U, mode):
    """U[s, k, c] = (G w[k, c] G^T) at tile position s (16 of F(2x2, 3x3) or 36 of
    F(4x4, 3x3), U's first axis); with mode 1, U[s, c, k] from w[k, c] turned by 180
    degrees (grad input's weights: channels swapped, taps reversed). F(2x2, 2x2) (9
    positions): U[s, k, c] over the phase channels of a 4x4 stride-2 weight.

    Each row r of U's planes is transformed along its columns at once, so every plane's row
    is written whole: writing the 16 planes element by element (16 streams a power of two
    apart) took 7 ms of a 512 x 512 layer's forward, and one tap set at a time ran scalar."""
    S, R, Q = U.shape[0], U.shape[1], U.shape[2]
    for r in prange(R):
        t = np.empty((6, 3, Q), w.dtype)
        if S == 16:
            f23.weight_rows(w, r, mode == 1, t, U)
        elif S == 36:
            f43.weight_rows(w, r, mode == 1, t, U)
        else:
            f22.weight_rows(w, r, t, U)


def _weights_back(acc, dw):
    """dw[k, c] = G^T M G with M = sum over t of acc[t, :, k, c] (the tile positions as a 4x4
    or 6x6 tile; F(2x2, 2x2): 3x3 over the phase channels); row k of the planes is summed
    into a padded buffer first (see ``_weights``)."""
    S, K, C = acc.shape[1], dw.shape[0], acc.shape[3]
    for k in prange(K):
        t = np.empty((3, 6, C), dw.dtype)
        buf = np.empty((S, C + PAD), dw.dtype)
        for q in range(S):
            row = buf[q, :C]
            row[:] = acc[0, q, k]
            for p in range(1, acc.shape[0]):
                src = acc[p, q, k]
                for c in range(C):
                    row[c] += src[c]
        if S == 16:
            f23.weight_back_rows(buf, t, dw[k])
        elif S == 36:
            f43.weight_back_rows(buf, t, dw[k])
        else:
            f22.weight_back_rows(buf, t, dw[k])


def _sig_fwd(T):
    i = nbt.int64
    return (T[:, :, :, ::1], T[:, :, ::1], T[::1], T[:, :, :, ::1]) + (i,) * 4


def _sig_gw(T):
    i = nbt.int64
    return (T[:, :, :, ::1], T[:, :, :, ::1], T[:, :, :, ::1]) + (i,) * 4


def _sig_weights(T):
    return (T[:, :, :, ::1], T[:, :, ::1], nbt.int64)


def _sig_weights_back(T):
    return (T[:, :, :, ::1], T[:, :, :, ::1])


FORWARD = dual(_forward, signatures=[_sig_fwd])
GRAD_WEIGHT = dual(_grad_weight, signatures=[_sig_gw])
WEIGHTS = dual(_weights, signatures=[_sig_weights])
WEIGHTS_BACK = dual(_weights_back, signatures=[_sig_weights_back])


# --------------------------------------------------------------------------- wrappers


def _block(n: int, nt: int, tiles: int, S: int, floats: int = 0, chans: int = 0) -> int:
    """Images per GEMM block: enough for BLOCK_TILES tiles (F(2x2, 3x3); F(4x4, 3x3) blocks
    hold as many floats), or with ``floats`` as many as keep the block's transformed input
    (S x chans x tiles per image) within that many floats; at most a chunk's count."""
    if floats:
        most = floats // max(S * chans * tiles, 1)
    else:
        most = -(-(BLOCK_TILES * 16 // S) // max(tiles, 1))
    return max(1, min(most, -(-n // nt)))


def _run_sized(pair: tuple, n: int, *args: object) -> None:
    """The parallel build of an elementwise-sized kernel over n items when it pays."""
    ser, par = pair
    (par if use_parallel(n, "elementwise") else ser)(*args)


def planes(oh: int, ow: int, k: int, c: int) -> int:
    """Tile positions of the algorithm for an (oh, ow) output map of k x c weights: 36
    (F(4x4, 3x3)) from ``F43_MIN_SIDE`` outputs a side (from 8 where both k and c reach
    ``F43_WIDE``), 16 (F(2x2, 3x3)) below."""
    side = min(oh, ow)
    wide = min(k, c) >= F43_WIDE
    return 36 if side >= F43_MIN_SIDE or (wide and side >= 8) else 16


def _transform_weights(w: np.ndarray, S: int, mode: int = 0) -> np.ndarray:
    """(S, K, C) transformed weights (F(2x2, 2x2): (9, K, 4C) over the phase channels);
    (S, C, K) of the turned weights for the input gradient (mode 1)."""
    K, C = w.shape[0], w.shape[1]
    shape = (S, K, 4 * C if S == 9 else C) if mode == 0 else (S, C, K)
    U = np.empty(shape, w.dtype)
    _run_sized(WEIGHTS, U.size, np.ascontiguousarray(w), U, mode)
    return U


def _tiles(oh: int, ow: int, S: int) -> int:
    r = 4 if S == 36 else 2
    return (-(-oh // r)) * (-(-ow // r))


def _conv(x: np.ndarray, U: np.ndarray, bias: np.ndarray, pt: int, pl: int,
          oh: int, ow: int, images: int = 0) -> np.ndarray:
    n, c = x.shape[0], x.shape[1]
    S, k = U.shape[0], U.shape[1]
    out = np.empty((n, k, oh, ow), x.dtype)
    if out.size == 0:
        return out
    tiles = _tiles(oh, ow, S)
    nt = _split(n, n * tiles * S * c * k // 8)
    nb = min(images, -(-n // nt)) if images else _block(n, nt, tiles, S)
    launch(FORWARD, nt, np.ascontiguousarray(x), U, bias, out, pt, pl, nb)
    return out


def forward(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, padding: Pads
            ) -> np.ndarray:
    """conv2d of x (N, C, H, W) with 3x3 weights w (K, C, 3, 3), stride 1, plus bias (K,)."""
    (pt, pb), (pl, pr) = padding
    oh, ow = x.shape[2] + pt + pb - 2, x.shape[3] + pl + pr - 2
    b = np.zeros(w.shape[0], x.dtype) if bias is None else np.ascontiguousarray(bias)
    S = planes(oh, ow, w.shape[0], w.shape[1])
    return _conv(x, _transform_weights(w, S), b, pt, pl, oh, ow)


def grad_input(gy: np.ndarray, w: np.ndarray, input_shape: tuple[int, ...], padding: Pads
               ) -> np.ndarray:
    """Gradient of ``forward`` w.r.t. x: gy correlated with the flipped, channel-swapped
    weights, padded by 2 - p."""
    (pt, _), (pl, _) = padding
    b = np.zeros(w.shape[1], gy.dtype)
    ih, iw = input_shape[2], input_shape[3]
    S = planes(ih, iw, w.shape[0], w.shape[1])
    return _conv(gy, _transform_weights(w, S, 1), b, 2 - pt, 2 - pl, ih, iw)


def grad_weight(x: np.ndarray, gy: np.ndarray, padding: Pads) -> np.ndarray:
    """Gradient of ``forward`` w.r.t. its weights, (K, C, 3, 3)."""
    (pt, _), (pl, _) = padding
    k, oh, ow = gy.shape[1], gy.shape[2], gy.shape[3]
    return _weight_grad(x, gy, pt, pl, planes(oh, ow, k, x.shape[1]), 3, 0)


def _weight_grad(x: np.ndarray, gy: np.ndarray, pt: int, pl: int, S: int, taps: int,
                 floats: int) -> np.ndarray:
    """(K, C, taps, taps) weight gradient by the algorithm with S tile positions."""
    n, c = x.shape[0], x.shape[1]
    k, oh, ow = gy.shape[1], gy.shape[2], gy.shape[3]
    if n == 0 or gy.size == 0 or x.size == 0:
        return np.zeros((k, c, taps, taps), x.dtype)
    cs = 4 * c if S == 9 else c  # F(2x2, 2x2): the phase channels
    tiles = _tiles(oh, ow, S)
    nt = _split(n, n * tiles * S * cs * k // 8)
    acc = np.empty((nt, S, k, cs), x.dtype)
    launch(GRAD_WEIGHT, nt, np.ascontiguousarray(x), np.ascontiguousarray(gy), acc, pt, pl,
           _block(n, nt, tiles, S, floats, cs))
    dw = np.empty((k, c, taps, taps), x.dtype)
    _run_sized(WEIGHTS_BACK, S * k * cs * nt, acc, dw)
    return dw


# ------------------------------------------------ 4x4, stride 2: F(2x2, 2x2) over the phases


def applies_s2(w_shape: tuple[int, ...], stride: tuple[int, int], padding: Pads,
               dilation: tuple[int, int], groups: int, out_hw: tuple[int, int],
               in_hw: tuple[int, int], grad_weight: bool = False) -> bool:
    """True when ``forward_s2`` (or ``grad_weight_s2``) computes and pays for this
    convolution: 4x4 taps, stride 2, no dilation, one group, every padding in 0..2, the
    output size that window gives, ``S2_MIN_OUTPUTS`` output positions, and the channel
    counts above."""
    (pt, pb), (pl, pr) = padding
    k, c = w_shape[0], w_shape[1]
    if grad_weight:
        wide = c >= S2_GRAD_WEIGHT_CHANNELS and k >= S2_FORWARD_CHANNELS[0]
    else:
        lo, hi = S2_FORWARD_CHANNELS
        wide = lo <= c <= hi and k >= S2_FORWARD_MIN_OUT
    return (wide and tuple(w_shape[2:]) == (4, 4) and tuple(stride) == (2, 2)
            and tuple(dilation) == (1, 1) and groups == 1
            and all(0 <= p <= 2 for p in (pt, pb, pl, pr))
            and out_hw[0] == (in_hw[0] + pt + pb - 4) // 2 + 1
            and out_hw[1] == (in_hw[1] + pl + pr - 4) // 2 + 1
            and out_hw[0] * out_hw[1] >= S2_MIN_OUTPUTS)


def forward_s2(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, padding: Pads
               ) -> np.ndarray:
    """conv2d of x (N, C, H, W) with 4x4 weights w (K, C, 4, 4), stride 2, plus bias (K,)."""
    (pt, pb), (pl, pr) = padding
    oh, ow = (x.shape[2] + pt + pb - 4) // 2 + 1, (x.shape[3] + pl + pr - 4) // 2 + 1
    b = np.zeros(w.shape[0], x.dtype) if bias is None else np.ascontiguousarray(bias)
    return _conv(x, _transform_weights(w, 9), b, pt, pl, oh, ow, S2_FORWARD_IMAGES)


def grad_weight_s2(x: np.ndarray, gy: np.ndarray, padding: Pads) -> np.ndarray:
    """Gradient of ``forward_s2`` w.r.t. its weights, (K, C, 4, 4)."""
    (pt, _), (pl, _) = padding
    return _weight_grad(x, gy, pt, pl, 9, 4, S2_BLOCK_GRAD_WEIGHT)
