"""One recurrent layer and direction as one differentiable op: the time loop runs forward with
the hidden-to-hidden GEMM in BLAS and the gate math fused per step, keeps the gate activations,
and runs backward through time in the same op (``lucid.backend._rnn_loop``).

The backend names the steps (``rnn_steps``): "cpu" numba kernels, "numpy" the numpy reference;
"gpu" converts to host arrays, runs the "cpu" kernels and converts back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._background_compile import KernelNotReady, catcher, compiling_here
from .._background_compile import started as background_started
from .._tensor import Tensor
from ..autograd.function import Op
from ..backend import _rnn_loop, get_backend
from . import matmul as _mm
from . import movement as _mv

__all__ = ["recurrence", "gather_rows"]


def _reference_steps(dt: Any) -> Any:
    return get_backend("numpy").rnn_steps(dt)[0]


class Recurrence(Op):
    """``Y = recurrence(gx, h0, c0, w_hh, b_hh, w_hr)`` over all time steps (see _rnn_loop)."""

    def forward(self, gx: Any, h0: Any, c0: Any, w_hh: Any, b_hh: Any,  # type: ignore[override]
                w_hr: Any, *, mode: str, reverse: bool, batch_sizes: Any) -> Any:
        be = self.be
        self.host = host = be.name not in ("cpu", "numpy")
        conv = be.to_numpy if host else _same
        arrs = [None if a is None else conv(a) for a in (gx, h0, c0, w_hh, b_hh, w_hr)]
        self.steps, seq = be.rnn_steps(arrs[0].dtype)
        self.how = (mode, batch_sizes, reverse)
        try:
            # the kernel backends also hold small per-step GEMMs to one BLAS thread
            y, self.st = _rnn_loop.forward(self.steps, mode, *arrs, batch_sizes, reverse,
                                           single_blas=seq is not None, seq=seq)
        except KernelNotReady:  # a step kernel still compiling: the reference steps run
            self.steps = _reference_steps(arrs[0].dtype)
            y, self.st = compiling_here(_rnn_loop.forward, self.steps, mode, *arrs, batch_sizes,
                                        reverse, single_blas=False)
        # NOTE: while kernels compile in the background, the inputs stay so that a backward
        # whose kernels are not ready yet can replay the reference forward
        self.replay = arrs if background_started() else None
        saved = tuple(a for a in (h0, c0, w_hh, b_hh, w_hr) if a is not None)
        out = be.from_numpy(y) if host else y
        # NOTE: without a cell, y is the state sequence the backward reads: cover it too
        self.saved = saved if mode == "LSTM" or host else saved + (out,)
        return out

    def backward(self, grad: Any) -> Any:
        be = self.be
        g = be.to_numpy(grad) if self.host else grad
        g = np.asarray(g, self.st.hs.dtype)
        if self.replay is None:
            grads = compiling_here(_rnn_loop.backward, self.steps, self.st, g)
        else:
            try:
                grads = _rnn_loop.backward(self.steps, self.st, g)
            except KernelNotReady:
                ref = _reference_steps(g.dtype)
                mode, batch_sizes, reverse = self.how
                _, st = compiling_here(_rnn_loop.forward, ref, mode, *self.replay, batch_sizes,
                                       reverse, single_blas=False)
                grads = compiling_here(_rnn_loop.backward, ref, st, g)
        need = self.needs_input_grad
        out = []
        for k, d in enumerate(grads):
            if d is None or not need[k]:
                out.append(None)
            else:
                out.append(be.from_numpy(np.ascontiguousarray(d)) if self.host else d)
        return tuple(out)

    def composite(self, ins: Any) -> Tensor:
        """The same recurrence step by step with differentiable ops (for create_graph)."""
        gx, h, c, w_hh, b_hh, w_hr = ins[:6]
        st = self.st
        t_len, b_len, g = gx.shape
        order = range(t_len - 1, -1, -1) if st.reverse else range(t_len)
        hs: list[Any] = [None] * t_len
        cs: list[Any] = [None] * t_len
        for t in order:
            n = st.sizes[t]
            hp = h[:n]
            gh = _mm.matmul(hp, w_hh.t())
            if b_hh is not None:
                gh = gh + b_hh
            a = gx[t, :n]
            if st.mode == "LSTM":
                k = g // 4
                gates = a + gh
                i, f = gates[:, :k].sigmoid(), gates[:, k:2 * k].sigmoid()
                cn = f * c[:n] + i * gates[:, 2 * k:3 * k].tanh()
                hn = gates[:, 3 * k:].sigmoid() * cn.tanh()
                if w_hr is not None:
                    hn = _mm.matmul(hn, w_hr.t())
                c = cn if n == b_len else _mv.cat([cn, c[n:]], 0)
                cs[t] = c
            elif st.mode == "GRU":
                k = g // 3
                rz = (a[:, :2 * k] + gh[:, :2 * k]).sigmoid()
                z = rz[:, k:]
                cand = (a[:, 2 * k:] + rz[:, :k] * gh[:, 2 * k:]).tanh()
                hn = (1 - z) * cand + z * hp
            else:
                hn = (a + gh).relu() if st.mode == "RNN_RELU" else (a + gh).tanh()
            h = hn if n == b_len else _mv.cat([hn, h[n:]], 0)
            hs[t] = h
        y = _mv.stack(hs, 0)
        if st.mode != "LSTM":
            return y
        return _mv.cat([y.reshape(-1), _mv.stack(cs, 0).reshape(-1)], 0)


catcher(Recurrence.forward)  # each falls back to the reference steps (see above)
catcher(Recurrence.backward)


def _same(a: Any) -> Any:
    return a



class RowGather(Op):
    """``out[m] = x[idx[m]]`` along the first axis, ``fill`` where ``idx[m] < 0``; each row
    of ``x`` is read at most once, so the backward is a plain assignment (no scatter-add)."""

    def forward(self, x: Any, *, idx: np.ndarray, fill: float) -> Any:  # type: ignore[override]
        be = self.be
        self.host = host = be.name not in ("cpu", "numpy")
        a = be.to_numpy(x) if host else x
        keep = idx >= 0
        self.dst = np.flatnonzero(keep)
        self.src = idx[keep]
        self.rows = a.shape[0]
        out = np.full((idx.size, *a.shape[1:]), fill, a.dtype)
        out[self.dst] = a[self.src]
        return be.from_numpy(out) if host else out

    def backward(self, grad: Any) -> Any:
        be = self.be
        g = be.to_numpy(grad) if self.host else grad
        gx = np.zeros((self.rows, *g.shape[1:]), g.dtype)
        gx[self.src] = g[self.dst]
        return be.from_numpy(gx) if self.host else gx

    def graph_backward(self, g: Tensor, saved: tuple) -> Tensor:
        gx = g.new_zeros((self.rows, *g.shape[1:]))
        gx[self.src] = g[self.dst]
        return gx


def gather_rows(x: Tensor, idx: np.ndarray, fill: float = 0.0) -> Tensor:
    """Rows of ``x`` picked by ``idx`` (int64, each row of ``x`` at most once; ``-1`` gives a
    row of ``fill``): the gather behind packing and unpacking a batch of sequences.

    Example::

        gather_rows(x, np.array([2, -1, 0]))     # x[2], a row of zeros, x[0]
    """
    return RowGather.apply(x, idx=np.asarray(idx, dtype=np.int64).reshape(-1), fill=fill)


def recurrence(gx: Tensor, h0: Tensor, c0: Tensor | None, w_hh: Tensor, b_hh: Tensor | None,
               w_hr: Tensor | None, mode: str, reverse: bool = False,
               batch_sizes: Any = None) -> Tensor | tuple[Tensor, Tensor]:
    """Run one recurrent layer in one direction over time-major ``gx`` (T, B, G), the input
    projection with ``b_ih`` already added. Returns the states after every step, ``(T, B, P)``
    (LSTM: ``(states, cells)``, the cells ``(T, B, H)``). ``mode`` is "LSTM", "GRU",
    "RNN_TANH" or "RNN_RELU"; ``batch_sizes`` (non-increasing, one per step) lets only the
    first rows of a step advance, as a packed batch needs.

    Example::

        y = recurrence(x @ w_ih.T + b_ih, h0, None, w_hh, b_hh, None, "GRU")
    """
    y = Recurrence.apply(gx, h0, c0, w_hh, b_hh, w_hr, mode=mode, reverse=reverse,
                         batch_sizes=batch_sizes)
    if mode != "LSTM":
        return y
    t, b, p = gx.shape[0], gx.shape[1], h0.shape[-1]
    k = t * b * p
    return y[:k].reshape(t, b, p), y[k:].reshape(t, b, w_hh.shape[0] // 4)
