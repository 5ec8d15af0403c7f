"""numpy reference of the optimizer update rules (no numba, no lucid types).

The "numpy" backend runs these, the "cpu" backend falls back to them where its kernels
(``lucid/kernels/optim.py``) do not take the arrays (float16, a gradient of another dtype),
and the kernel tests use them as the oracle. Same signatures and in-place contract as the
kernels: arrays are updated in place and returned as ``(param, *state)``. Scalars are
rounded to the array dtype first, as PyTorch does; numpy rounds every product separately
(no FMA), so results may differ from the kernels in the last bit.
"""

from __future__ import annotations

import numpy as np

Array = np.ndarray


def _t(p: Array, x: float) -> np.generic:
    return p.dtype.type(x)


def _grad(p: Array, g: Array, maximize: bool, weight_decay: float) -> Array:
    g = np.asarray(g, dtype=p.dtype)
    g = np.negative(g) if maximize else g
    if weight_decay != 0:
        g = g + _t(p, weight_decay) * p
    return g


def _lerp_(s: Array, e: Array, w: float) -> None:
    """s <- torch.lerp(s, e, w) in place."""
    wt = _t(s, w)
    d = e - s
    if abs(wt) < 0.5:
        s += wt * d
    else:
        s[...] = e + (wt - _t(s, 1.0)) * d


def _moments(p: Array, g: Array, m: Array, v: Array, beta1: float, beta2: float, decay: float,
             weight_decay: float, maximize: bool) -> Array:
    """The Adam family's shared start: decoupled decay of ``p``, the effective gradient, and
    the first and second moments updated in place; returns the gradient."""
    if decay != 1.0:
        p *= _t(p, decay)
    g = _grad(p, g, maximize, weight_decay)
    _lerp_(m, g, 1.0 - beta1)
    v *= _t(p, beta2)
    v += _t(p, 1.0 - beta2) * g * g
    return g


def sgd(p: Array, g: Array, buf: Array | None, *, lr: float, momentum: float = 0.0,
        dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
        maximize: bool = False, first: bool = False) -> tuple[Array, Array | None]:
    """SGD step (PyTorch's rule); see ``lucid.kernels.optim.sgd``."""
    g = _grad(p, g, maximize, weight_decay)
    if momentum != 0:
        if first:
            buf[...] = g
        else:
            buf *= _t(p, momentum)
            buf += _t(p, 1.0 - dampening) * g
        g = g + _t(p, momentum) * buf if nesterov else buf
    p += _t(p, -lr) * g
    return p, buf


def adam(p: Array, g: Array, m: Array, v: Array, vmax: Array | None = None, *, beta1: float,
         beta2: float, eps: float, weight_decay: float = 0.0, decay: float = 1.0,
         step_size: float, bc2_sqrt: float, maximize: bool = False
         ) -> tuple[Array, Array, Array, Array | None]:
    """Adam / AdamW / AMSGrad step; see ``lucid.kernels.optim.adam``."""
    g = _moments(p, g, m, v, beta1, beta2, decay, weight_decay, maximize)
    vh = v
    if vmax is not None:
        np.maximum(vmax, v, out=vmax)
        vh = vmax
    d = np.sqrt(vh) / _t(p, bc2_sqrt)
    d += _t(p, eps)
    p += _t(p, -step_size) * m / d
    return p, m, v, vmax


def adamax(p: Array, g: Array, m: Array, u: Array, *, beta1: float, beta2: float, eps: float,
           weight_decay: float = 0.0, clr: float, maximize: bool = False
           ) -> tuple[Array, Array, Array]:
    """Adamax step; see ``lucid.kernels.optim.adamax``."""
    g = _grad(p, g, maximize, weight_decay)
    _lerp_(m, g, 1.0 - beta1)
    u *= _t(p, beta2)
    np.maximum(u, np.abs(g) + _t(p, eps), out=u)
    p += _t(p, -clr) * m / u
    return p, m, u


def adagrad(p: Array, g: Array, s: Array, *, eps: float, weight_decay: float = 0.0, clr: float,
            maximize: bool = False) -> tuple[Array, Array]:
    """Adagrad step; see ``lucid.kernels.optim.adagrad``."""
    g = _grad(p, g, maximize, weight_decay)
    s += g * g
    p += _t(p, -clr) * g / (np.sqrt(s) + _t(p, eps))
    return p, s


def rmsprop(p: Array, g: Array, sq: Array, ga: Array | None = None, buf: Array | None = None,
            *, lr: float, alpha: float, eps: float, weight_decay: float = 0.0,
            momentum: float = 0.0, maximize: bool = False
            ) -> tuple[Array, Array, Array | None, Array | None]:
    """RMSprop step; see ``lucid.kernels.optim.rmsprop``."""
    g = _grad(p, g, maximize, weight_decay)
    sq *= _t(p, alpha)
    sq += _t(p, 1.0 - alpha) * g * g
    if ga is not None:
        _lerp_(ga, g, 1.0 - alpha)
        avg = np.sqrt(sq - ga * ga)
    else:
        avg = np.sqrt(sq)
    avg += _t(p, eps)
    if buf is not None:
        buf *= _t(p, momentum)
        buf += g / avg
        p += _t(p, -lr) * buf
    else:
        p += _t(p, -lr) * g / avg
    return p, sq, ga, buf


def nadam(p: Array, g: Array, m: Array, v: Array, *, beta1: float, beta2: float, eps: float,
          weight_decay: float = 0.0, decay: float = 1.0, bc2: float, c_grad: float,
          c_avg: float, maximize: bool = False) -> tuple[Array, Array, Array]:
    """NAdam step; see ``lucid.kernels.optim.nadam``."""
    g = _moments(p, g, m, v, beta1, beta2, decay, weight_decay, maximize)
    d = np.sqrt(v / _t(p, bc2))
    d += _t(p, eps)
    p += _t(p, c_grad) * g / d
    p += _t(p, c_avg) * m / d
    return p, m, v


def radam(p: Array, g: Array, m: Array, v: Array, *, beta1: float, beta2: float, eps: float,
          weight_decay: float = 0.0, decay: float = 1.0, lr: float, bc1: float,
          bc2_sqrt: float, rect: float | None, maximize: bool = False
          ) -> tuple[Array, Array, Array]:
    """RAdam step; see ``lucid.kernels.optim.radam``."""
    g = _moments(p, g, m, v, beta1, beta2, decay, weight_decay, maximize)
    u = m / _t(p, bc1) * _t(p, lr)
    if rect is not None:
        u *= _t(p, 1.0) / (np.sqrt(v) + _t(p, eps)) * _t(p, bc2_sqrt)
        u *= _t(p, rect)
    p -= u
    return p, m, v
