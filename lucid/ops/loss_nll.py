"""Likelihood losses for regression and counts: ``gaussian_nll_loss`` and
``poisson_nll_loss``, composed from elementwise ops."""

from __future__ import annotations

import math

from .._tensor import Tensor
from . import elementwise as _e
from . import reduce as _r
from . import select as _sel
from . import shape as _s
from ._util import loss_reduction, reduce_loss

__all__ = ["gaussian_nll_loss", "poisson_nll_loss"]


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of ``target`` under N(``input``, ``var``):
    ``0.5 * (log(var) + (input - target)**2 / var)`` (+ ``0.5 * log(2 pi)`` if ``full``);
    ``var`` is clamped to ``eps`` (the clamp passes the gradient through, as torch's).

    Example::

        F.gaussian_nll_loss(lucid.randn(5, 2), lucid.randn(5, 2), lucid.ones(5, 2))
    """
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _e.add(_e.mul(input.detach(), 0.0), float(var))  # type: ignore[attr-defined]
    elif bool(_r.any(var < 0).item()):  # type: ignore[attr-defined]
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = _s.unsqueeze(var, -1)
        elif not (input.ndim == var.ndim and sum(
                v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    # NOTE: torch clamps under no_grad, so the gradient flows as if unclamped
    lifted = _e.sub(_sel.clamp(var.detach(), eps, None), var.detach())  # type: ignore
    v = _e.add(var, lifted)
    d = _e.sub(input, target)
    loss = _e.mul(_e.add(_e.log(v), _e.div(_e.mul(d, d), v)), 0.5)
    if full:
        loss = _e.add(loss, 0.5 * math.log(2 * math.pi))
    return reduce_loss(loss, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of counts ``target`` under Poisson(rate): ``exp(input) -
    target * input`` with ``log_input``, else ``input - target * log(input + eps)``; ``full``
    adds the Stirling term ``t log t - t + 0.5 log(2 pi t)`` where ``target > 1``.

    Example::

        F.poisson_nll_loss(lucid.randn(5), lucid.tensor([0., 1., 2., 3., 4.]))
    """
    reduction = loss_reduction(reduction, size_average, reduce)
    if log_input:
        loss = _e.sub(_e.exp(input), _e.mul(target, input))
    else:
        loss = _e.sub(input, _e.mul(target, _e.log(_e.add(input, eps))))
    if full:
        big = target > 1
        t = _sel.where(big, target, 2.0)
        stirling = _e.add(_e.sub(_e.mul(t, _e.log(t)), t), _e.mul(_e.log(_e.mul(t, 2 * math.pi)),
                                                                  0.5))
        loss = _e.add(loss, _sel.where(big, stirling, 0.0))
    return reduce_loss(loss, reduction)
