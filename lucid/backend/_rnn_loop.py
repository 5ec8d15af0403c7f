"""The time loop of one recurrent layer and direction, forward and backward through time, over
numpy arrays. Each step runs the hidden-to-hidden GEMM in BLAS and one fused pointwise step
from ``steps`` (the numba kernels on "cpu", the numpy reference otherwise).

Shapes: ``gx`` (T, B, G) is the input projection with ``b_ih`` (G = 4H LSTM, 3H GRU, H RNN);
``h0`` (B, P) with P = proj_size or H; ``c0`` (B, H) (LSTM only); ``w_hh`` (G, P); ``b_hh``
(G,) or None; ``w_hr`` (P, H) or None. ``batch_sizes`` (T,) non-increasing, or None: at step
t only the first ``batch_sizes[t]`` rows advance and the others carry their state, so a
packed batch runs as a padded one (a reversed direction then starts each row from ``h0`` at
its own last step). The output is ``Y`` (T, B, P); for LSTM the flat concatenation of the
states (T, B, P) and the cells (T, B, H), so that both come out as contiguous views.

The per-step GEMMs are small (20 x 200 @ 200 x 800 in the word-language-model benchmark), and
a multithreaded BLAS loses badly on them whenever another process holds a core: measured on
2 busy cores, float32, numpy's 2-thread OpenBLAS 440-1940 us per call, scipy's OpenBLAS held
at one thread (``ONE_BLAS_THREAD``) 217-233 us; the benchmark's training step took 682 ms
with numpy's threads and 290 ms this way (torch: 156-572 ms over the same minutes). So
below ``STEP_GEMM_MAX`` multiply-adds the steps call scipy's gemm on one thread; larger ones
and the once-per-sequence weight-gradient GEMMs stay with numpy's threads.

On "cpu", LSTM, GRU and RNN layers without projection and with every row active skip this loop:
``kernels.rnn_seq`` runs the whole sequence in one call with the hidden units split over
numba's threads (this loop remains the reference it is tested against).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from ..kernels import blas
from ..kernels import reduce as _reduce
from ..kernels._threads import ONE_BLAS_THREAD

__all__ = ["Saved", "forward", "backward", "STEP_GEMM_MAX"]

Array = np.ndarray
MODES = ("LSTM", "GRU", "RNN_TANH", "RNN_RELU")
STEP_GEMM_MAX = 1 << 24  # multiply-adds of one step's GEMM up to which it runs on one thread
_GEMM: dict[Any, Any] = {}


class _Gemm:
    """The per-step products ``a @ w.T`` (``nt``) and ``a @ w`` (``nn``) for C-contiguous
    ``a`` and ``w``: scipy's single-threaded gemm when ``single``, numpy otherwise."""

    def __init__(self, dt: np.dtype, macs: int, single: bool) -> None:
        self.f = None
        if single and macs <= STEP_GEMM_MAX and dt in (np.float32, np.float64) and \
                ONE_BLAS_THREAD.available():
            if not _GEMM:
                from scipy.linalg import blas  # NOTE: loaded by available(); lazy like it

                _GEMM[np.dtype(np.float32)] = blas.sgemm
                _GEMM[np.dtype(np.float64)] = blas.dgemm
            self.f = _GEMM[np.dtype(dt)]

    def __enter__(self) -> _Gemm:
        if self.f is not None:
            ONE_BLAS_THREAD.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.f is not None:
            ONE_BLAS_THREAD.__exit__(*exc)

    def nt(self, a: Array, w: Array) -> Array:
        if self.f is None or not a.shape[0]:
            return a @ w.T
        return self.f(1.0, w.T, a.T, trans_a=1).T

    def nn(self, a: Array, w: Array, out: Array | None = None) -> Array:
        if self.f is None or not a.shape[0]:
            return np.matmul(a, w, out=out)
        r = self.f(1.0, w.T, a.T).T
        if out is None:
            return r
        out[...] = r
        return out


@dataclass
class Saved:
    """What the backward through time reads (all numpy, C-contiguous)."""

    mode: str
    reverse: bool
    sizes: list[int]
    h0: Array
    c0: Array | None
    w_hh: Array
    w_hr: Array | None
    hs: Array  # (T, B, P) states after each step (carried rows included)
    cs: Array | None  # (T, B, H) LSTM cells
    acts: Array | None  # (T, B, A) gate activations
    hraw: Array | None  # (T, B, H) LSTM states before the projection
    has_bias: bool
    single_blas: bool = True
    seq: ModuleType | None = None  # the fused sequence kernels that ran (acts permuted)


def _c(a: Any) -> Array:
    return np.ascontiguousarray(a)


def forward(steps: ModuleType, mode: str, gx: Array, h0: Array, c0: Array | None, w_hh: Array,
            b_hh: Array | None, w_hr: Array | None, batch_sizes: Any, reverse: bool,
            single_blas: bool = True, seq: ModuleType | None = None) -> tuple[Array, Saved]:
    """Run the recurrence; returns ``Y`` and what the backward needs. ``single_blas`` lets
    small per-step GEMMs run on scipy's BLAS held at one thread (else numpy's matmul).
    ``seq`` (``kernels.rnn_seq``) runs a whole LSTM, GRU or RNN sequence without projection
    and with every row active in one kernel call, its hidden units split over threads."""
    t_len, b_len, g = gx.shape
    full = batch_sizes is None or all(int(s) == b_len for s in batch_sizes)
    if seq is not None and mode in seq.GATES and w_hr is None and full and t_len and b_len:
        gates = seq.GATES[mode]
        nt = seq.split(b_len, g // gates, h0.shape[1], gates)
        bias = np.zeros(g, gx.dtype) if b_hh is None else b_hh
        hs, cs, acts = seq.sequence_forward(mode, gx, h0, c0, w_hh, bias, reverse, nt)
        saved = Saved(mode, reverse, [b_len] * t_len, _c(h0), None if c0 is None else _c(c0),
                      _c(w_hh), None, hs, cs, acts, None, b_hh is not None, single_blas, seq)
        y = hs if cs is None else np.concatenate([hs.reshape(-1), cs.reshape(-1)])
        return y, saved
    macs = int(np.prod(gx.shape[1:])) * h0.shape[1]
    with _Gemm(gx.dtype, macs, single_blas) as mm:
        y, s = _forward(mm, steps, mode, gx, h0, c0, w_hh, b_hh, w_hr, batch_sizes, reverse)
    s.single_blas = single_blas
    return y, s


def backward(steps: ModuleType, s: Saved, dy: Array) -> tuple[Array, Array, Array | None,
                                                              Array, Array | None, Array | None]:
    """Backward through time: ``(dgx, dh0, dc0, dw_hh, db_hh, dw_hr)`` (None where absent)."""
    if s.seq is not None:
        return _sequence_backward(s, _c(dy))
    macs = s.hs.shape[1] * s.hs.shape[2] * s.w_hh.shape[0]
    with _Gemm(s.hs.dtype, macs, s.single_blas) as mm:
        return _backward(mm, steps, s, dy)


def _sequence_backward(s: Saved, dy: Array) -> tuple:
    k = s.hs.size
    dyh = dy[:k].reshape(s.hs.shape)
    dyc = None if s.cs is None else dy[k:].reshape(s.cs.shape)
    dgx, dgh, dh, dc = s.seq.sequence_backward(  # type: ignore[union-attr]
        s.mode, dyh, dyc, s.h0, s.c0, s.w_hh, s.hs, s.cs, s.acts, s.reverse)
    dw_hh, db_hh = _hidden_weight_grads(s, dgh)
    return dgx, dh, dc, dw_hh, db_hh, None


def _hidden_weight_grads(s: Saved, dgh: Array) -> tuple[Array, Array | None]:
    """dW_hh = sum_t dgh_t^T h_{t-1}: one GEMM over the shifted state sequence plus h0's
    step; db_hh = sum of dgh (None without bias)."""
    hs = s.hs
    t_len, _, p = hs.shape
    g = s.w_hh.shape[0]
    # on the kernel path the products use lucid's BLAS (MKL where it runs: kernels/blas.py);
    # the reference path (the numpy device, or kernels still compiling) calls no kernel
    mm = blas.gemm if s.single_blas else np.matmul
    if t_len:
        first_t = t_len - 1 if s.reverse else 0
        if s.reverse:
            dw_hh = mm(dgh[:-1].reshape(-1, g).T, hs[1:].reshape(-1, p))
        else:
            dw_hh = mm(dgh[1:].reshape(-1, g).T, hs[:-1].reshape(-1, p))
        dw_hh += mm(dgh[first_t].T, s.h0)
    else:
        dw_hh = np.zeros_like(s.w_hh)
    if not s.has_bias:
        return dw_hh, None
    # the column sums on both cores (1024 x 1024 float32: numpy 148 us, the kernel 61)
    rows = dgh.reshape(-1, g)
    return dw_hh, (_reduce.sum(rows, (0,)) if s.single_blas else rows.sum(0))


def _forward(mm: _Gemm, steps: ModuleType, mode: str, gx: Array, h0: Array, c0: Array | None,
             w_hh: Array, b_hh: Array | None, w_hr: Array | None, batch_sizes: Any,
             reverse: bool) -> tuple[Array, Saved]:
    gx, h0, w_hh = _c(gx), _c(h0), _c(w_hh)
    t_len, b_len, g = gx.shape
    p = h0.shape[1]
    dt = gx.dtype
    sizes = [b_len] * t_len if batch_sizes is None else [int(s) for s in batch_sizes]
    b = np.zeros(g, dt) if b_hh is None else _c(b_hh)
    hs = np.empty((t_len, b_len, p), dt)
    order = range(t_len - 1, -1, -1) if reverse else range(t_len)
    cs = acts = hraw = None
    h_prev = h0
    if mode == "LSTM":
        hsz = g // 4
        c_prev = _c(c0)
        cs = np.empty((t_len, b_len, hsz), dt)
        acts = np.empty((t_len, b_len, g), dt)
        if w_hr is not None:
            w_hr = _c(w_hr)
            hraw = np.empty((t_len, b_len, hsz), dt)
        for t in order:
            n = sizes[t]
            gh = mm.nt(h_prev[:n], w_hh)
            out_h = hs[t, :n] if hraw is None else hraw[t, :n]
            steps.lstm_fwd(gx[t, :n], gh, b, c_prev[:n], acts[t, :n], cs[t, :n], out_h)
            if hraw is not None:
                hs[t, :n] = mm.nt(out_h, w_hr)
            if n < b_len:
                hs[t, n:] = h_prev[n:]
                cs[t, n:] = c_prev[n:]
                if hraw is not None:  # read by the dW_hr GEMM (times zero gradients)
                    hraw[t, n:] = 0
            h_prev, c_prev = hs[t], cs[t]
        y = np.concatenate([hs.reshape(-1), cs.reshape(-1)])
    elif mode == "GRU":
        acts = np.empty((t_len, b_len, g // 3 * 4), dt)
        for t in order:
            n = sizes[t]
            gh = mm.nt(h_prev[:n], w_hh)
            steps.gru_fwd(gx[t, :n], gh, b, h_prev[:n], acts[t, :n], hs[t, :n])
            if n < b_len:
                hs[t, n:] = h_prev[n:]
            h_prev = hs[t]
        y = hs
    else:
        relu = mode == "RNN_RELU"
        for t in order:
            n = sizes[t]
            gh = mm.nt(h_prev[:n], w_hh)
            steps.rnn_fwd(gx[t, :n], gh, b, hs[t, :n], relu)
            if n < b_len:
                hs[t, n:] = h_prev[n:]
            h_prev = hs[t]
        y = hs
    saved = Saved(mode, reverse, sizes, h0, None if c0 is None else _c(c0), w_hh, w_hr, hs, cs,
                  acts, hraw, b_hh is not None)
    return y, saved


def _backward(mm: _Gemm, steps: ModuleType, s: Saved, dy: Array) -> tuple:
    hs = s.hs
    t_len, b_len, p = hs.shape
    g = s.w_hh.shape[0]
    dt = hs.dtype
    lstm = s.mode == "LSTM"
    gru = s.mode == "GRU"
    dy = _c(dy)
    if lstm:
        k = t_len * b_len * p
        dyh = dy[:k].reshape(t_len, b_len, p)
        dyc = dy[k:].reshape(t_len, b_len, g // 4)
    else:
        dyh, dyc = dy, None
    dgx = np.empty((t_len, b_len, g), dt)
    dgh = np.empty((t_len, b_len, g), dt) if gru else dgx
    dht = np.zeros((t_len, b_len, p), dt) if s.hraw is not None else None
    dh = np.zeros((b_len, p), dt)
    dc = np.zeros((b_len, g // 4), dt) if lstm else None
    w_hh, w_hr = s.w_hh, s.w_hr
    relu = s.mode == "RNN_RELU"
    order = range(t_len) if s.reverse else range(t_len - 1, -1, -1)
    for t in order:
        n = s.sizes[t]
        tp = t + 1 if s.reverse else t - 1  # t's predecessor in processing order
        first = tp < 0 or tp >= t_len
        dh += dyh[t]
        if lstm:
            dc += dyc[t]
            c_prev = s.c0 if first else s.cs[tp]
            if dht is not None:
                dht[t, :n] = dh[:n]
                dhr = _c(mm.nn(dh[:n], w_hr))
            else:
                dhr = _c(dh[:n])
            dcn = dc[:n]
            steps.lstm_bwd(dhr, dcn, s.acts[t, :n], c_prev[:n], s.cs[t, :n], dgx[t, :n])
            mm.nn(dgx[t, :n], w_hh, dh[:n])
        elif gru:
            h_prev = s.h0 if first else hs[tp]
            dhn = dh[:n]
            steps.gru_bwd(dhn, s.acts[t, :n], h_prev[:n], dgx[t, :n], dgh[t, :n])
            dhn += mm.nn(dgh[t, :n], w_hh)
        else:
            steps.rnn_bwd(_c(dh[:n]), hs[t, :n], dgx[t, :n], relu)
            mm.nn(dgx[t, :n], w_hh, dh[:n])
        if n < b_len:
            dgx[t, n:] = 0
            if gru:
                dgh[t, n:] = 0
    dw_hh, db_hh = _hidden_weight_grads(s, dgh)
    dw_hr = None
    if dht is not None:
        dw_hr = (blas.gemm if s.single_blas else np.matmul)(
            dht.reshape(-1, p).T, s.hraw.reshape(-1, s.hraw.shape[2]))
    return dgx, dh, dc, dw_hh, db_hh, dw_hr
