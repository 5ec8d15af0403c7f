"""The numpy reference of one recurrent time step (the same contract as the numba kernels of
``lucid.kernels.rnn``: arrays in, results written into the given outputs).

Layouts (n rows, H hidden units; gate blocks in torch's order):
    LSTM   gx, gh, acts, dpre [n, 4H] (i, f, g, o)   c_prev, c, h, dh, dc [n, H]
    GRU    gx, gh, dgx, dgh [n, 3H] (r, z, n)        acts [n, 4H] (r, z, n, W_hn h + b_hn)
    RNN    gx, gh, h, dh, dpre [n, H]
"""

from __future__ import annotations

import numpy as np

__all__ = ["lstm_fwd", "lstm_bwd", "gru_fwd", "gru_bwd", "rnn_fwd", "rnn_bwd"]

Array = np.ndarray


def _sig(x: Array) -> Array:
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def lstm_fwd(gx: Array, gh: Array, b: Array, c_prev: Array, acts: Array, c: Array,
             h: Array) -> None:
    """One LSTM step: gates into ``acts``, the cell into ``c``, ``o * tanh(c)`` into ``h``."""
    hs = c.shape[1]
    a = gx + gh + b
    acts[:, :2 * hs] = _sig(a[:, :2 * hs])
    acts[:, 2 * hs:3 * hs] = np.tanh(a[:, 2 * hs:3 * hs])
    acts[:, 3 * hs:] = _sig(a[:, 3 * hs:])
    i, f, g, o = (acts[:, k * hs:(k + 1) * hs] for k in range(4))
    c[...] = f * c_prev + i * g
    h[...] = o * np.tanh(c)


def lstm_bwd(dh: Array, dc: Array, acts: Array, c_prev: Array, c: Array, dpre: Array) -> None:
    """Backward of one LSTM step: gate pre-activation gradients into ``dpre``; ``dc`` becomes
    the gradient of the previous cell in place."""
    hs = c.shape[1]
    i, f, g, o = (acts[:, k * hs:(k + 1) * hs] for k in range(4))
    tc = np.tanh(c)
    dct = dc + dh * o * (1 - tc * tc)
    dpre[:, :hs] = dct * g * i * (1 - i)
    dpre[:, hs:2 * hs] = dct * c_prev * f * (1 - f)
    dpre[:, 2 * hs:3 * hs] = dct * i * (1 - g * g)
    dpre[:, 3 * hs:] = dh * tc * o * (1 - o)
    dc[...] = dct * f


def gru_fwd(gx: Array, gh: Array, b: Array, h_prev: Array, acts: Array, h: Array) -> None:
    """One GRU step: ``(r, z, n, W_hn h + b_hn)`` into ``acts``, the new state into ``h``."""
    hs = h.shape[1]
    a = gx[:, :2 * hs] + gh[:, :2 * hs] + b[:2 * hs]
    rz = _sig(a)
    hn = gh[:, 2 * hs:] + b[2 * hs:]
    n = np.tanh(gx[:, 2 * hs:] + rz[:, :hs] * hn)
    z = rz[:, hs:]
    h[...] = (1 - z) * n + z * h_prev
    acts[:, :2 * hs] = rz
    acts[:, 2 * hs:3 * hs] = n
    acts[:, 3 * hs:] = hn


def gru_bwd(dh: Array, acts: Array, h_prev: Array, dgx: Array, dgh: Array) -> None:
    """Backward of one GRU step into ``dgx`` / ``dgh``; ``dh`` becomes ``dh * z`` in place."""
    hs = dh.shape[1]
    r, z, n, hn = (acts[:, k * hs:(k + 1) * hs] for k in range(4))
    dn = dh * (1 - z) * (1 - n * n)
    dz = dh * (h_prev - n) * z * (1 - z)
    dr = dn * hn * r * (1 - r)
    dgx[:, :hs] = dr
    dgx[:, hs:2 * hs] = dz
    dgx[:, 2 * hs:] = dn
    dgh[:, :2 * hs] = dgx[:, :2 * hs]
    dgh[:, 2 * hs:] = dn * r
    dh *= z


def rnn_fwd(gx: Array, gh: Array, b: Array, h: Array, relu: bool) -> None:
    """One Elman step: ``h = act(gx + gh + b)``, act = relu or tanh."""
    a = gx + gh + b
    h[...] = np.maximum(a, 0) if relu else np.tanh(a)


def rnn_bwd(dh: Array, h: Array, dpre: Array, relu: bool) -> None:
    """Backward of one Elman step into ``dpre``."""
    dpre[...] = np.where(h > 0, dh, 0) if relu else dh * (1 - h * h)
