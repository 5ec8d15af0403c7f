"""Adafactor: Adam-like steps with a factored (row x column) second-moment estimate."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .. import _dtype
from .._tensor import Tensor, _make
from ._lerp import lerp
from .optimizer import Optimizer, bump, check_lr_tensor, scalar_tensor, zeros_state

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor (``torch.optim.Adafactor``: same options, defaults, state layout and numbers).

    At step ``t`` with ``beta2_t = t**beta2_decay``, ``rho = min(lr, 1/sqrt(t))`` and
    ``alpha = max(eps2, rms(p)) * rho``: ``p *= 1 - lr*wd``; for a parameter of two or more
    dimensions, the row and column means of ``g*g`` over the last two dimensions are
    averaged into ``row_var`` and ``col_var`` (``lerp`` by ``beta2_t``) and the variance is
    estimated as ``row_var @ col_var / max(mean(row_var), eps1)``; a vector keeps the full
    ``variance``. Then ``u = g / sqrt(max(v, eps1**2))`` and
    ``p -= alpha / max(1, rms(u)/d) * u``. ``eps1=None`` uses the parameter dtype's machine
    epsilon. State per parameter: ``step``, then ``row_var`` and ``col_var``, or ``variance``.

    Example::

        opt = lucid.optim.Adafactor(net.parameters(), lr=1e-2)
        opt.step()
    """

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1e-2,
                 beta2_decay: float = -0.8, eps: tuple[float | None, float] = (None, 1e-3),
                 d: float = 1.0, weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        check_lr_tensor(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def init_state(self, state: dict[str, Any], param: Tensor, group: dict[str, Any]) -> None:
        if param.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        state["step"] = scalar_tensor(0.0)
        shape = tuple(param._data.shape)
        if len(shape) > 1:
            be = param._be
            d = be.dtype_of(param._data)
            state["row_var"] = _make(be.zeros(shape[:-1] + (1,), d), be, False, None)
            state["col_var"] = _make(be.zeros(shape[:-2] + (1, shape[-1]), d), be, False, None)
        else:
            state["variance"] = zeros_state(param)

    def prepare_group(self, group: dict[str, Any]) -> tuple:
        eps1, eps2 = group["eps"]
        return (float(group["lr"]), float(group["beta2_decay"]), eps1, float(eps2),
                float(group["d"]), group["weight_decay"], group["maximize"])

    def apply_single(self, grad: Tensor, param: Tensor, state: dict[str, Any],
                     hyper: tuple) -> tuple[tuple, tuple]:
        lr, beta2_decay, eps1, eps2, d, wd, maximize = hyper
        be = param._be
        p, g = param._data, grad._data
        if maximize:
            g = be.neg(g)
        if eps1 is None:
            eps1 = _dtype.finfo(param.dtype).eps
        t = bump(state["step"])
        beta2_t = t**beta2_decay
        rho = min(lr, 1 / (t**0.5))
        numel = math.prod(p.shape)
        alpha = max(eps2, _norm(be, p) / (numel**0.5)) * rho
        if wd != 0:
            p = be.mul(p, 1 - lr * wd)
        if len(g.shape) > 1:
            row, col = state["row_var"], state["col_var"]
            row_mean = be.div(be.square(be.sqrt(be.sum(be.mul(g, g), -1, True))), g.shape[-1])
            new_row = lerp(be, row._data, row_mean, beta2_t)
            col_mean = be.div(be.square(be.sqrt(be.sum(be.mul(g, g), -2, True))), g.shape[-2])
            new_col = lerp(be, col._data, col_mean, beta2_t)
            var = be.div(be.matmul(new_row, new_col),
                         be.clip(be.mean(new_row, -2, True), eps1, None))
            tensors: tuple = (param, row, col)
            arrays: tuple = (new_row, new_col)
        else:
            v = state["variance"]
            var = new_v = lerp(be, v._data, be.mul(g, g), beta2_t)
            tensors, arrays = (param, v), (new_v,)
        update = be.mul(be.rsqrt(be.clip(var, eps1 * eps1, None)), g)
        denom = max(1.0, _norm(be, update) / ((numel**0.5) * d))
        return tensors, (be.add(p, be.mul(update, -alpha / denom)), *arrays)


def _norm(be: Any, x: Any) -> float:
    """The 2-norm of all of ``x`` as a Python float."""
    return float(be.item(be.sqrt(be.sum(be.mul(x, x)))))
