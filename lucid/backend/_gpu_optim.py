"""Optimizer update rules of the "gpu" backend (torch.optim's, one parameter at a time).

Same signatures and numbers as the numpy reference (``lucid/backend/_optim_ref.py``). Each
rule computes the new arrays with MLX ops, writes them into the given array objects (so every
tensor holding them sees the step, as on "cpu") and schedules them with ``mx.async_eval``:
parameters and state never carry a graph from one step into the next.
"""

from __future__ import annotations

from typing import Any

from ._gpu_common import mx

Array = Any


def _grad(p: Array, g: Array, maximize: bool, weight_decay: float) -> Array:
    g = g if g.dtype == p.dtype else g.astype(p.dtype)
    g = -g if maximize else g
    if weight_decay != 0:
        g = g + weight_decay * p
    return g


def _lerp(s: Array, e: Array, w: float) -> Array:
    d = e - s
    return s + w * d if abs(w) < 0.5 else e + (w - 1.0) * d


def _store(*pairs: tuple[Array | None, Array | None]) -> None:
    outs = []
    for dst, new in pairs:
        if dst is not None:
            dst[...] = new
            outs.append(dst)
    mx.async_eval(*outs)


def sgd(p: Array, g: Array, buf: Array | None, *, lr: float, momentum: float = 0.0,
        dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
        maximize: bool = False, first: bool = False) -> tuple[Array, Array | None]:
    """SGD step (PyTorch's rule)."""
    g = _grad(p, g, maximize, weight_decay)
    nb = None
    if momentum != 0:
        nb = g if first else buf * momentum + (1.0 - dampening) * g
        g = g + momentum * nb if nesterov else nb
    _store((p, p + (-lr) * g), (buf, nb))
    return p, buf


def adam(p: Array, g: Array, m: Array, v: Array, vmax: Array | None = None, *, beta1: float,
         beta2: float, eps: float, weight_decay: float = 0.0, decay: float = 1.0,
         step_size: float, bc2_sqrt: float, maximize: bool = False
         ) -> tuple[Array, Array, Array, Array | None]:
    """Adam / AdamW / AMSGrad step."""
    q = p * decay if decay != 1.0 else p
    g = _grad(q, g, maximize, weight_decay)
    nm = _lerp(m, g, 1.0 - beta1)
    nv = v * beta2 + (1.0 - beta2) * g * g
    vh = nv
    nvm = None
    if vmax is not None:
        nvm = vh = mx.maximum(vmax, nv)
    d = mx.sqrt(vh) / bc2_sqrt + eps
    _store((p, q + (-step_size) * nm / d), (m, nm), (v, nv), (vmax, nvm))
    return p, m, v, vmax


def adamax(p: Array, g: Array, m: Array, u: Array, *, beta1: float, beta2: float, eps: float,
           weight_decay: float = 0.0, clr: float, maximize: bool = False
           ) -> tuple[Array, Array, Array]:
    """Adamax step."""
    g = _grad(p, g, maximize, weight_decay)
    nm = _lerp(m, g, 1.0 - beta1)
    nu = mx.maximum(u * beta2, mx.abs(g) + eps)
    _store((p, p + (-clr) * nm / nu), (m, nm), (u, nu))
    return p, m, u


def adagrad(p: Array, g: Array, s: Array, *, eps: float, weight_decay: float = 0.0, clr: float,
            maximize: bool = False) -> tuple[Array, Array]:
    """Adagrad step."""
    g = _grad(p, g, maximize, weight_decay)
    ns = s + g * g
    _store((p, p + (-clr) * g / (mx.sqrt(ns) + eps)), (s, ns))
    return p, s


def rmsprop(p: Array, g: Array, sq: Array, ga: Array | None = None, buf: Array | None = None,
            *, lr: float, alpha: float, eps: float, weight_decay: float = 0.0,
            momentum: float = 0.0, maximize: bool = False
            ) -> tuple[Array, Array, Array | None, Array | None]:
    """RMSprop step."""
    g = _grad(p, g, maximize, weight_decay)
    nsq = sq * alpha + (1.0 - alpha) * g * g
    nga = None
    if ga is not None:
        nga = _lerp(ga, g, 1.0 - alpha)
        avg = mx.sqrt(nsq - nga * nga)
    else:
        avg = mx.sqrt(nsq)
    avg = avg + eps
    nbuf = None
    if buf is not None:
        nbuf = buf * momentum + g / avg
        np_ = p + (-lr) * nbuf
    else:
        np_ = p + (-lr) * g / avg
    _store((p, np_), (sq, nsq), (ga, nga), (buf, nbuf))
    return p, sq, ga, buf


def nadam(p: Array, g: Array, m: Array, v: Array, *, beta1: float, beta2: float, eps: float,
          weight_decay: float = 0.0, decay: float = 1.0, bc2: float, c_grad: float,
          c_avg: float, maximize: bool = False) -> tuple[Array, Array, Array]:
    """NAdam step."""
    q = p * decay if decay != 1.0 else p
    g = _grad(q, g, maximize, weight_decay)
    nm = _lerp(m, g, 1.0 - beta1)
    nv = v * beta2 + (1.0 - beta2) * g * g
    d = mx.sqrt(nv / bc2) + eps
    q = q + c_grad * g / d
    q = q + c_avg * nm / d
    _store((p, q), (m, nm), (v, nv))
    return p, m, v


def radam(p: Array, g: Array, m: Array, v: Array, *, beta1: float, beta2: float, eps: float,
          weight_decay: float = 0.0, decay: float = 1.0, lr: float, bc1: float,
          bc2_sqrt: float, rect: float | None, maximize: bool = False
          ) -> tuple[Array, Array, Array]:
    """RAdam step."""
    q = p * decay if decay != 1.0 else p
    g = _grad(q, g, maximize, weight_decay)
    nm = _lerp(m, g, 1.0 - beta1)
    nv = v * beta2 + (1.0 - beta2) * g * g
    u = nm / bc1 * lr
    if rect is not None:
        u = u * (1.0 / (mx.sqrt(nv) + eps) * bc2_sqrt)
        u = u * rect
    _store((p, q - u), (m, nm), (v, nv))
    return p, m, v
