"""Rprop: resilient backpropagation (sign-based steps with per-element step sizes)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    bump,
    check_flags,
    check_lr_tensor,
    check_range,
    scalar_tensor,
    zeros_state,
)

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop (``torch.optim.Rprop``: same options, defaults, state layout and numbers).

    Per element, with ``s = sign(g * prev)``: the step size is multiplied by ``etaplus``
    where ``s > 0``, by ``etaminus`` where ``s < 0`` (and the gradient there is taken as 0),
    kept where ``s == 0``, then clamped to ``step_sizes``; ``p -= sign(g) * step_size`` and
    ``prev = g``. State per parameter: ``step``, ``prev`` and ``step_size`` (starting at
    ``lr``). The rule is written with the backend's elementwise operations, so it runs on
    every device.

    Example::

        opt = lucid.optim.Rprop(net.parameters(), lr=0.01, etas=(0.5, 1.2))
        opt.step()
    """

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_lr_tensor(lr)
        check_range(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        check_flags(defaults)
        super().__init__(params, defaults)

    def init_state(self, state: dict[str, Any], param: Tensor, group: dict[str, Any]) -> None:
        state["step"] = scalar_tensor(0.0)
        state["prev"] = zeros_state(param)
        state["step_size"] = zeros_state(param, float(group["lr"]))

    def prepare_group(self, group: dict[str, Any]) -> tuple:
        etaminus, etaplus = (float(e) for e in group["etas"])
        lo, hi = (float(s) for s in group["step_sizes"])
        return etaminus, etaplus, lo, hi, group["maximize"]

    def apply_single(self, grad: Tensor, param: Tensor, state: dict[str, Any],
                     hyper: tuple) -> tuple[tuple, tuple]:
        etaminus, etaplus, lo, hi, maximize = hyper
        be = param._be
        p, g = param._data, grad._data
        prev, ss = state["prev"], state["step_size"]
        if maximize:
            g = be.neg(g)
        bump(state["step"])
        s = be.sign(be.mul(g, prev._data))
        flip = be.lt(s, 0)
        factor = be.where(be.gt(s, 0), etaplus, be.where(flip, etaminus, 1.0))
        factor = be.astype(factor, be.dtype_of(p))
        size = be.clip(be.mul(ss._data, factor), lo, hi)
        g = be.where(flip, be.zeros_like(g), g)
        new_p = be.sub(p, be.mul(be.sign(g), size))
        return (param, prev, ss), (new_p, g, size)
