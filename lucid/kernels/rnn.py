"""njit pointwise kernels of one recurrent time step (LSTM, GRU, Elman RNN), forward and
backward. The hidden-to-hidden GEMM stays in BLAS (the caller's ``h @ w_hh.T``); each kernel
fuses everything after it for the ``n`` active rows of one step.

Layouts (C-contiguous, n rows, H hidden units; gate blocks in torch's order):
    LSTM   gx, gh, acts, dpre [n, 4H] (i, f, g, o)   c_prev, c, h, dh, dc [n, H]
    GRU    gx, gh, dgx, dgh [n, 3H] (r, z, n)        acts [n, 4H] (r, z, n, W_hn h + b_hn)
    RNN    gx, gh, h, dh, dpre [n, H]
``gx`` holds the input projection with ``b_ih``; ``b`` is ``b_hh`` (zeros without bias).

Without SVML numba calls a scalar ``expf``/``exp``/``tanh`` per element, which lost to numpy's
SIMD ufuncs (LSTM forward step 666 us against numpy's 371, float32); sigmoid and tanh
therefore go through ``_vmath``'s polynomials, which LLVM vectorises (~1 ulp; float64 parity
with torch holds to 1e-11). Each kernel runs short passes over a row, each touching few arrays: one
loop over all of them needs more runtime alias checks than LLVM allows and stays scalar.
Two traps keep such a pass scalar, each measured on an AMD Zen 4 core, float32, n=20:
* a loop over ``range(2 * hs, 3 * hs)``, or indexing ``a[2 * hs + j]``: numba's negative-index
  wrap-around cannot be ruled out there. Each pass indexes a sliced gate block from zero
  (``ag = a[2 * hs:3 * hs]; ag[j]``): LSTM forward step 52 -> 10.6 us at H=200, 13 -> 5.9 us
  at H=100;
* a row of a column block (``c[:, lo:hi][r]``), which numba types as non-contiguous. The
  ``*_at`` cores take the whole state and a column offset, and slice ``c[r, lo:lo + hs]``,
  which stays C-contiguous: ``rnn_seq``'s per-thread step pointwise 25 -> 8 us.
The word-language-model layer's sequence on 2 threads went from 3.6-4.2 to 2.1-2.5 ms forward
and from 3.2 to 2.1-2.3 ms backward, and its training step from 1.04-1.15x torch's time to 0.92x.
Measured on 2 busy cores, one step of the word-language-model benchmark (n=20, H=200), us,
kernel vs the numpy reference (``_rnn_ref``), float32 / float64:

    lstm_fwd    36 vs  99  /   81 vs 296        gru_fwd    21 vs 117  /   54 vs 283
    lstm_bwd    35 vs 136  /   58 vs 202        gru_bwd    22 vs  84  /   19 vs 116
    rnn_fwd      8 vs  23  /   20 vs  91
"""

from __future__ import annotations

from numba.core import types as nbt

from ._jit import helper, kernel
from ._vmath import sigm, tanh

__all__ = ["lstm_fwd", "lstm_bwd", "gru_fwd", "gru_bwd", "rnn_fwd", "rnn_bwd"]


def _lstm_fwd_at(gx, gh, b, c_prev, acts, c, h, lo):
    """One LSTM step, in passes over each gate block of a row that LLVM vectorises; the
    state arrays c_prev, c, h are read and written at columns lo:lo+hs (hs = acts' width / 4:
    a thread's block of a wider state, which ``rnn_seq`` passes whole so that each row slice
    stays C-contiguous to numba; a column block ``c[:, lo:hi]`` would not, and its loops
    would run scalar).

    for r in range(n):
        acts[r, m] = act_k(gx[r, m] + gh[r, m] + b[m])   # sig on i, f, o; tanh on g
        c[r, j] = f * c_prev[r, j] + i * g
        h[r, j] = o * tanh(c[r, j])
    """
    n = acts.shape[0]
    hs = acts.shape[1] // 4
    bg, bo = b[2 * hs:3 * hs], b[3 * hs:]
    for r in range(n):
        a, x, y = acts[r], gx[r], gh[r]
        for m in range(2 * hs):
            a[m] = sigm(x[m] + y[m] + b[m])
        ai, af, ag, ao = a[:hs], a[hs:2 * hs], a[2 * hs:3 * hs], a[3 * hs:]
        xg, yg, xo, yo = x[2 * hs:3 * hs], y[2 * hs:3 * hs], x[3 * hs:], y[3 * hs:]
        for j in range(hs):
            ag[j] = tanh(xg[j] + yg[j] + bg[j])
        for j in range(hs):
            ao[j] = sigm(xo[j] + yo[j] + bo[j])
        cr, cp, hr = c[r, lo:lo + hs], c_prev[r, lo:lo + hs], h[r, lo:lo + hs]
        for j in range(hs):
            cr[j] = af[j] * cp[j] + ai[j] * ag[j]
        for j in range(hs):
            hr[j] = ao[j] * tanh(cr[j])


def _lstm_bwd_at(dh, dc, acts, c_prev, c, dpre, lo):
    """Backward of one LSTM step; ``dc`` (the gradient reaching c_t) becomes dc_{t-1} in place.
    dc, c_prev and c are read at columns lo:lo+hs (dh, acts, dpre whole), as in
    ``_lstm_fwd_at``.

    for r in range(n):
        tc = tanh(c);  dc = dc + dh * o * (1 - tc^2);  dpre_o = dh * tc * o(1-o)
        dpre_i, dpre_f, dpre_g = dc*g*i(1-i), dc*c_prev*f(1-f), dc*i*(1-g^2);  dc = dc * f
    """
    n = acts.shape[0]
    hs = acts.shape[1] // 4
    one = acts.dtype.type(1.0)
    for r in range(n):
        a, dp, dhr = acts[r], dpre[r], dh[r]
        dcr, cr, cp = dc[r, lo:lo + hs], c[r, lo:lo + hs], c_prev[r, lo:lo + hs]
        ai, af, ag, ao = a[:hs], a[hs:2 * hs], a[2 * hs:3 * hs], a[3 * hs:]
        di, df, dg, do = dp[:hs], dp[hs:2 * hs], dp[2 * hs:3 * hs], dp[3 * hs:]
        for j in range(hs):
            tc = tanh(cr[j])
            o = ao[j]
            do[j] = dhr[j] * tc * o * (one - o)
            dcr[j] += dhr[j] * o * (one - tc * tc)
        for j in range(hs):
            i = ai[j]
            f = af[j]
            g = ag[j]
            dct = dcr[j]
            di[j] = dct * g * i * (one - i)
            df[j] = dct * cp[j] * f * (one - f)
            dg[j] = dct * i * (one - g * g)
            dcr[j] = dct * f


def _gru_fwd_at(gx, gh, b, h_prev, acts, h, lo):
    """One GRU step, in vectorising passes over each gate block of a row; h_prev and h at
    columns lo:lo+hs (hs = acts' width / 4), as in ``_lstm_fwd_at``.

    for r in range(n):
        rr, z = sig(gx_rz + gh_rz + b_rz);  hn = gh_n + b_n;  nn = tanh(gx_n + rr * hn)
        h[r, j] = (1 - z) * nn + z * h_prev[r, j];  acts[r] = (rr, z, nn, hn)
    """
    n = acts.shape[0]
    hs = acts.shape[1] // 4
    one = acts.dtype.type(1.0)
    bn = b[2 * hs:3 * hs]
    for r in range(n):
        a, x, y = acts[r], gx[r], gh[r]
        for m in range(2 * hs):
            a[m] = sigm(x[m] + y[m] + b[m])
        ar, az, an, ahn = a[:hs], a[hs:2 * hs], a[2 * hs:3 * hs], a[3 * hs:]
        xn, yn = x[2 * hs:3 * hs], y[2 * hs:3 * hs]
        for j in range(hs):
            ahn[j] = yn[j] + bn[j]
        hr, hp = h[r, lo:lo + hs], h_prev[r, lo:lo + hs]
        for j in range(hs):  # nn into h's row first: a loop reading and writing acts ran scalar
            hr[j] = tanh(xn[j] + ar[j] * ahn[j])
        for j in range(hs):
            z = az[j]
            nn = hr[j]
            an[j] = nn
            hr[j] = (one - z) * nn + z * hp[j]


def _gru_bwd_at(dh, acts, h_prev, dgx, dgh, lo):
    """Backward of one GRU step; ``dh`` becomes the direct part dh * z of dh_{t-1} in place;
    h_prev at columns lo:lo+hs (dh, acts, dgx, dgh whole).

    for r in range(n): for j in range(H):
        dn = dh * (1 - z) * (1 - nn^2);  dz = dh * (h_prev - nn) * z(1-z);  dr = dn * hn * rr(1-rr)
        dgx[:, block] = (dr, dz, dn);  dgh[:, block] = (dr, dz, dn * rr);  dh = dh * z
    """
    n = acts.shape[0]
    hs = acts.shape[1] // 4
    one = acts.dtype.type(1.0)
    for r in range(n):
        a, hp, dhr = acts[r], h_prev[r, lo:lo + hs], dh[r]
        ar, az, an, ahn = a[:hs], a[hs:2 * hs], a[2 * hs:3 * hs], a[3 * hs:]
        x, y = dgx[r], dgh[r]
        xr, xz, xn = x[:hs], x[hs:2 * hs], x[2 * hs:3 * hs]
        yr, yz, yn = y[:hs], y[hs:2 * hs], y[2 * hs:3 * hs]
        for j in range(hs):
            rr = ar[j]
            z = az[j]
            nn = an[j]
            d = dhr[j]
            dn = d * (one - z) * (one - nn * nn)
            dz = d * (hp[j] - nn) * z * (one - z)
            dr = dn * ahn[j] * rr * (one - rr)
            xr[j] = dr
            xz[j] = dz
            xn[j] = dn
            yr[j] = dr
            yz[j] = dz
            yn[j] = dn * rr
            dhr[j] = d * z


lstm_fwd_at = helper(_lstm_fwd_at)
lstm_bwd_at = helper(_lstm_bwd_at)
gru_fwd_at = helper(_gru_fwd_at)
gru_bwd_at = helper(_gru_bwd_at)


def _lstm_fwd(gx, gh, b, c_prev, acts, c, h):
    lstm_fwd_at(gx, gh, b, c_prev, acts, c, h, 0)


def _lstm_bwd(dh, dc, acts, c_prev, c, dpre):
    lstm_bwd_at(dh, dc, acts, c_prev, c, dpre, 0)


def _gru_fwd(gx, gh, b, h_prev, acts, h):
    gru_fwd_at(gx, gh, b, h_prev, acts, h, 0)


def _gru_bwd(dh, acts, h_prev, dgx, dgh):
    gru_bwd_at(dh, acts, h_prev, dgx, dgh, 0)


def _rnn_fwd_at(gx, gh, b, h, lo, relu):
    """One Elman step, h written at columns lo:lo+hs (hs = gx's width, as ``_lstm_fwd_at``):

    h[r, lo + j] = act(gx[r, j] + gh[r, j] + b[j]), act = relu or tanh
    """
    n, hs = gx.shape
    zero = h.dtype.type(0.0)
    for r in range(n):
        x, y, hr = gx[r], gh[r], h[r, lo:lo + hs]
        if relu:
            for j in range(hs):
                a = x[j] + y[j] + b[j]
                hr[j] = a if a > zero else zero
        else:
            for j in range(hs):
                hr[j] = tanh(x[j] + y[j] + b[j])


def _rnn_bwd_at(dh, h, dpre, lo, relu):
    """Backward of one Elman step, h read at columns lo:lo+hs (hs = dpre's width):
    dpre = dh * (h > 0) (relu) or dh * (1 - h^2) (tanh)."""
    n, hs = dpre.shape
    one = h.dtype.type(1.0)
    zero = h.dtype.type(0.0)
    for r in range(n):
        d, hr, pr = dh[r], h[r, lo:lo + hs], dpre[r]
        if relu:
            for j in range(hs):
                pr[j] = d[j] if hr[j] > zero else zero
        else:
            for j in range(hs):
                pr[j] = d[j] * (one - hr[j] * hr[j])


rnn_fwd_at = helper(_rnn_fwd_at)
rnn_bwd_at = helper(_rnn_bwd_at)


def _rnn_fwd(gx, gh, b, h, relu):
    rnn_fwd_at(gx, gh, b, h, 0, relu)


def _rnn_bwd(dh, h, dpre, relu):
    rnn_bwd_at(dh, h, dpre, 0, relu)


def _m(T):
    return T[:, ::1]


def _sig_lstm_fwd(T):
    return (_m(T), _m(T), T[::1], _m(T), _m(T), _m(T), _m(T))


def _sig_lstm_bwd(T):
    return (_m(T),) * 6


def _sig_gru_fwd(T):
    return (_m(T), _m(T), T[::1], _m(T), _m(T), _m(T))


def _sig_gru_bwd(T):
    return (_m(T),) * 5


def _sig_rnn_fwd(T):
    return (_m(T), _m(T), T[::1], _m(T), nbt.boolean)


def _sig_rnn_bwd(T):
    return (_m(T), _m(T), _m(T), nbt.boolean)


lstm_fwd = kernel(_lstm_fwd, name="rnn.lstm_fwd", signatures=[_sig_lstm_fwd])
lstm_bwd = kernel(_lstm_bwd, name="rnn.lstm_bwd", signatures=[_sig_lstm_bwd])
gru_fwd = kernel(_gru_fwd, name="rnn.gru_fwd", signatures=[_sig_gru_fwd])
gru_bwd = kernel(_gru_bwd, name="rnn.gru_bwd", signatures=[_sig_gru_bwd])
rnn_fwd = kernel(_rnn_fwd, name="rnn.rnn_fwd", signatures=[_sig_rnn_fwd])
rnn_bwd = kernel(_rnn_bwd, name="rnn.rnn_bwd", signatures=[_sig_rnn_bwd])
