"""Optimizer updates of the "cpu" backend: the fused kernel (``lucid/kernels/optim.py``)
where it takes the arrays (``fits``: float32/float64, one dtype and shape), else the numpy
rule (``_optim_ref.py``: float16, a gradient of another dtype). Same signatures as both.

Each function names its arguments once more instead of forwarding ``**kwargs``: forwarding
cost ~1.7 us per call here, against ~0.7 us for the explicit call (a few us per step).
"""

from __future__ import annotations

import numpy as np

from ..kernels import optim as K
from ..kernels.optim import fits
from . import _optim_ref as R

Array = np.ndarray


def sgd(p: Array, g: Array, buf: Array | None, *, lr: float, momentum: float = 0.0,
        dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
        maximize: bool = False, first: bool = False) -> tuple[Array, Array | None]:
    """SGD step; see ``lucid.kernels.optim.sgd``."""
    rule = K.sgd if fits(p, g, (buf,)) else R.sgd
    return rule(p, g, buf, lr=lr, momentum=momentum, dampening=dampening,
                weight_decay=weight_decay, nesterov=nesterov, maximize=maximize, first=first)


def adam(p: Array, g: Array, m: Array, v: Array, vmax: Array | None = None, *, beta1: float,
         beta2: float, eps: float, weight_decay: float = 0.0, decay: float = 1.0,
         step_size: float, bc2_sqrt: float, maximize: bool = False
         ) -> tuple[Array, Array, Array, Array | None]:
    """Adam / AdamW / AMSGrad step; see ``lucid.kernels.optim.adam``."""
    rule = K.adam if fits(p, g, (m, v, vmax)) else R.adam
    return rule(p, g, m, v, vmax, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
                decay=decay, step_size=step_size, bc2_sqrt=bc2_sqrt, maximize=maximize)


def adamax(p: Array, g: Array, m: Array, u: Array, *, beta1: float, beta2: float, eps: float,
           weight_decay: float = 0.0, clr: float, maximize: bool = False
           ) -> tuple[Array, Array, Array]:
    """Adamax step; see ``lucid.kernels.optim.adamax``."""
    rule = K.adamax if fits(p, g, (m, u)) else R.adamax
    return rule(p, g, m, u, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
                clr=clr, maximize=maximize)


def adagrad(p: Array, g: Array, s: Array, *, eps: float, weight_decay: float = 0.0, clr: float,
            maximize: bool = False) -> tuple[Array, Array]:
    """Adagrad step; see ``lucid.kernels.optim.adagrad``."""
    rule = K.adagrad if fits(p, g, (s,)) else R.adagrad
    return rule(p, g, s, eps=eps, weight_decay=weight_decay, clr=clr, maximize=maximize)


def rmsprop(p: Array, g: Array, sq: Array, ga: Array | None = None, buf: Array | None = None,
            *, lr: float, alpha: float, eps: float, weight_decay: float = 0.0,
            momentum: float = 0.0, maximize: bool = False
            ) -> tuple[Array, Array, Array | None, Array | None]:
    """RMSprop step; see ``lucid.kernels.optim.rmsprop``."""
    rule = K.rmsprop if fits(p, g, (sq, ga, buf)) else R.rmsprop
    return rule(p, g, sq, ga, buf, lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                momentum=momentum, maximize=maximize)


def nadam(p: Array, g: Array, m: Array, v: Array, *, beta1: float, beta2: float, eps: float,
          weight_decay: float = 0.0, decay: float = 1.0, bc2: float, c_grad: float,
          c_avg: float, maximize: bool = False) -> tuple[Array, Array, Array]:
    """NAdam step; see ``lucid.kernels.optim.nadam``."""
    rule = K.nadam if fits(p, g, (m, v)) else R.nadam
    return rule(p, g, m, v, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
                decay=decay, bc2=bc2, c_grad=c_grad, c_avg=c_avg, maximize=maximize)


def radam(p: Array, g: Array, m: Array, v: Array, *, beta1: float, beta2: float, eps: float,
          weight_decay: float = 0.0, decay: float = 1.0, lr: float, bc1: float,
          bc2_sqrt: float, rect: float | None, maximize: bool = False
          ) -> tuple[Array, Array, Array]:
    """RAdam step; see ``lucid.kernels.optim.radam``."""
    rule = K.radam if fits(p, g, (m, v)) else R.radam
    return rule(p, g, m, v, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
                decay=decay, lr=lr, bc1=bc1, bc2_sqrt=bc2_sqrt, rect=rect, maximize=maximize)
