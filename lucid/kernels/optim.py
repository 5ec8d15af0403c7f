"""Fused optimizer updates: one kernel pass per parameter reads p, grad and state once.

Each function updates its arrays in place and returns them as ``(param, *state)`` (the
backend contract: a device whose arrays are immutable returns new ones instead). Arguments
are the per-element parts of PyTorch's single-tensor update rules; the scalar parts (bias
corrections, step sizes) are computed by the optimizer in Python, as PyTorch does. The
numbers match ``torch.optim`` on CPU to the last bit for most elements (see
``_optim_kernels``). The kernels take float32/float64 arrays of one dtype and shape (any
layout: ``fits``); the cpu backend (``backend/_cpu_optim.py``) gives everything else to
the numpy rules (float16, a gradient of another dtype).

Measured (2 shared cores, float32, minimum / median microseconds), one step over the
parameters of an MLP 784-512-256-10 (535,818 values in 6 tensors):

    step (optimizer.step(), Python included)     Adam           SGD(momentum)
    lucid, one serial kernel per tensor        429 / 482        275 / 312
    plain numpy (backend/_optim_ref.py)       1989 / 5158       705 / 749
    torch 2.13 for-loop (its CPU default)      982 / 1472+      328 / 380
    torch 2.13 foreach=True                    917 / 1379+      327 / 372
    torch 2.13 fused=True                      343 / 421        241 / 271

    kernels alone, Adam (back to back)          serial   parallel >= 2**16 elements
    one kernel call per tensor                  337      207
    one multi-tensor kernel (typed List)        414      330   (+33-48 us to build the List)

The multi-tensor kernel loses (the List costs more than five calls), so each tensor gets
its own call. Where BLAS runs threads of its own, the parallel build wins back to back but
not in a training loop: after a matmul numba's threads sleep, and waking them costs more
than it saves (Adam over the MLP, median: serial 631, parallel from 2**18 956, from 2**16
1194); it pays for large tensors (one Adam update of 2**20 elements 1083 -> 6531, noisy, of
2**22: 3079 -> 1745), hence 2**21 elements there. Where the products run on numba's own
pool its threads are awake after them, and updates go parallel from 2**16 elements
(``_threads.THRESHOLDS_ONE_POOL``: the MLP step's SGD 500 -> ~100 us in one machine state).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _optim_kernels as K
from ._threads import use_parallel

__all__ = ["sgd", "adam", "adamax", "adagrad", "rmsprop", "nadam", "radam", "fits"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

Array = np.ndarray


def _parallel(n: int) -> bool:
    """Whether an update of n elements runs its parallel build (``_threads`` decides:
    ``LUCID_PARALLEL_THRESHOLD``, the "optimizer" threshold, serial where BLAS is untamed)."""
    return use_parallel(n, "optimizer")


def fits(p: Array, g: Array, states: tuple) -> bool:
    """Whether the kernels take these arrays: a float32/float64 parameter, and a gradient and
    state arrays (None where unused) of its dtype and shape, in any layout."""
    dt = p.dtype
    shape = p.shape
    if dt not in _FLOATS or g.dtype != dt or g.shape != shape:
        return False
    for a in states:
        if a is not None and (a.dtype != dt or a.shape != shape):
            return False
    return True



def _run(pair: tuple, p: Array, g: Array, states: tuple, scalars: tuple, flags: int) -> None:
    """Call one kernel build on flat C-contiguous views (``ravel``: a view where the array is
    C-contiguous, else a copy); a parameter or state array that is not C-contiguous and
    writeable runs on a copy that is copied back."""
    back = None
    flat = []
    for a in (p, *states):
        if a is None:
            flat.append(None)
            continue
        f = a.flags
        if not (f.c_contiguous and f.writeable):
            c = np.array(a, order="C")
            back = [(a, c)] if back is None else [*back, (a, c)]
            a = c
        flat.append(a.ravel())
    fp = flat[0]
    args = [fp if w is None else w for w in flat[1:]]
    ser, par = pair
    (par if _parallel(fp.shape[0]) else ser)(fp, g.ravel(), *args, *scalars, flags)
    if back is not None:
        for a, c in back:
            a[...] = c


def sgd(p: Array, g: Array, buf: Array | None, *, lr: float, momentum: float = 0.0,
        dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
        maximize: bool = False, first: bool = False) -> tuple[Array, Array | None]:
    """SGD step; ``buf`` (momentum buffer, unused when momentum is 0) is overwritten with the
    gradient when ``first``. Example: ``p, buf = sgd(p, g, buf, lr=0.1, momentum=0.9)``."""
    flags = ((K.MAXIMIZE if maximize else 0) | (K.NESTEROV if nesterov else 0)
             | (K.FIRST if first else 0) | (K.MOMENTUM if momentum != 0 else 0))
    _run(K.SGD, p, g, (buf,), (float(lr), float(momentum), float(dampening),
                               float(weight_decay)), flags)
    return p, buf


def adam(p: Array, g: Array, m: Array, v: Array, vmax: Array | None = None, *, beta1: float,
         beta2: float, eps: float, weight_decay: float = 0.0, decay: float = 1.0,
         step_size: float, bc2_sqrt: float, maximize: bool = False
         ) -> tuple[Array, Array, Array, Array | None]:
    """Adam step (AMSGrad when ``vmax`` is given; AdamW via ``decay = 1 - lr*wd``).

    ``step_size = lr / (1 - beta1**t)``, ``bc2_sqrt = sqrt(1 - beta2**t)``.
    Example: ``adam(p, g, m, v, beta1=0.9, beta2=0.999, eps=1e-8, step_size=1e-2,
    bc2_sqrt=0.0316)``.
    """
    flags = (K.MAXIMIZE if maximize else 0) | (K.AMSGRAD if vmax is not None else 0)
    _run(K.ADAM, p, g, (m, v, vmax), (float(beta1), float(beta2), float(eps),
         float(weight_decay), float(decay), float(step_size), float(bc2_sqrt)), flags)
    return p, m, v, vmax


def adamax(p: Array, g: Array, m: Array, u: Array, *, beta1: float, beta2: float, eps: float,
           weight_decay: float = 0.0, clr: float, maximize: bool = False
           ) -> tuple[Array, Array, Array]:
    """Adamax step with ``clr = lr / (1 - beta1**t)``.

    Example: ``adamax(p, g, m, u, beta1=0.9, beta2=0.999, eps=1e-8, clr=0.02)``.
    """
    _run(K.ADAMAX, p, g, (m, u), (float(beta1), float(beta2), float(eps), float(weight_decay),
                                  float(clr)), K.MAXIMIZE if maximize else 0)
    return p, m, u


def adagrad(p: Array, g: Array, s: Array, *, eps: float, weight_decay: float = 0.0, clr: float,
            maximize: bool = False) -> tuple[Array, Array]:
    """Adagrad step with ``clr = lr / (1 + (t-1)*lr_decay)``.

    Example: ``adagrad(p, g, s, eps=1e-10, clr=0.01)``.
    """
    _run(K.ADAGRAD, p, g, (s,), (float(eps), float(weight_decay), float(clr)),
         K.MAXIMIZE if maximize else 0)
    return p, s


def rmsprop(p: Array, g: Array, sq: Array, ga: Array | None = None, buf: Array | None = None,
            *, lr: float, alpha: float, eps: float, weight_decay: float = 0.0,
            momentum: float = 0.0, maximize: bool = False
            ) -> tuple[Array, Array, Array | None, Array | None]:
    """RMSprop step; centered when ``ga`` is given, with momentum when ``buf`` is given.

    Example: ``rmsprop(p, g, sq, lr=0.01, alpha=0.99, eps=1e-8)``.
    """
    flags = ((K.MAXIMIZE if maximize else 0) | (K.CENTERED if ga is not None else 0)
             | (K.MOMENTUM if buf is not None else 0))
    _run(K.RMSPROP, p, g, (sq, ga, buf), (float(lr), float(alpha), float(eps),
                                          float(weight_decay), float(momentum)), flags)
    return p, sq, ga, buf


def nadam(p: Array, g: Array, m: Array, v: Array, *, beta1: float, beta2: float, eps: float,
          weight_decay: float = 0.0, decay: float = 1.0, bc2: float, c_grad: float,
          c_avg: float, maximize: bool = False) -> tuple[Array, Array, Array]:
    """NAdam step: ``p += c_grad*g/d + c_avg*m/d`` with ``d = sqrt(v/bc2) + eps``.

    Example: ``nadam(p, g, m, v, beta1=0.9, beta2=0.999, eps=1e-8, bc2=0.001,
    c_grad=-1e-3, c_avg=-1e-2)``.
    """
    _run(K.NADAM, p, g, (m, v), (float(beta1), float(beta2), float(eps), float(weight_decay),
         float(decay), float(bc2), float(c_grad), float(c_avg)), K.MAXIMIZE if maximize else 0)
    return p, m, v


def radam(p: Array, g: Array, m: Array, v: Array, *, beta1: float, beta2: float, eps: float,
          weight_decay: float = 0.0, decay: float = 1.0, lr: float, bc1: float,
          bc2_sqrt: float, rect: float | None, maximize: bool = False
          ) -> tuple[Array, Array, Array]:
    """RAdam step; ``rect`` is the variance rectification term, None while rho_t <= 5.

    Example: ``radam(p, g, m, v, beta1=0.9, beta2=0.999, eps=1e-8, lr=1e-3, bc1=0.1,
    bc2_sqrt=0.03, rect=None)``.
    """
    flags = (K.MAXIMIZE if maximize else 0) | (K.RECTIFY if rect is not None else 0)
    _run(K.RADAM, p, g, (m, v), (float(beta1), float(beta2), float(eps), float(weight_decay),
         float(decay), float(lr), float(bc1), float(bc2_sqrt),
         0.0 if rect is None else float(rect)), flags)
    return p, m, v


def kernels() -> dict[str, Any]:
    """The (serial, parallel) kernel pair of each update rule, by name."""
    return {"sgd": K.SGD, "adam": K.ADAM, "adamax": K.ADAMAX, "adagrad": K.ADAGRAD,
            "rmsprop": K.RMSPROP, "nadam": K.NADAM, "radam": K.RADAM}
