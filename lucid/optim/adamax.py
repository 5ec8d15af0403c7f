"""Adamax: Adam with the infinity norm."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._tensor import Tensor
from .optimizer import Optimizer, bump, check_flags, check_range, scalar_tensor, zeros_state

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax (``torch.optim.Adamax``: same options, defaults, state layout and numbers).

    ``m = lerp(m, g, 1-beta1)``, ``u = max(beta2*u, |g| + eps)``,
    ``p -= lr/(1-beta1**t) * m / u``. State per parameter: ``step``, ``exp_avg``, ``exp_inf``.

    Example::

        opt = lucid.optim.Adamax(net.parameters(), lr=2e-3)
        opt.step()
    """

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        check_range(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        check_flags(defaults)
        super().__init__(params, defaults)

    def init_state(self, state: dict[str, Any], param: Tensor, group: dict[str, Any]) -> None:
        state["step"] = scalar_tensor(0.0)
        state["exp_avg"] = zeros_state(param)
        state["exp_inf"] = zeros_state(param)

    def prepare_group(self, group: dict[str, Any]) -> tuple:
        beta1, beta2 = (float(b) for b in group["betas"])
        return (float(group["lr"]), beta1, beta2, group["eps"], group["weight_decay"],
                group["maximize"])

    def apply_single(self, grad: Tensor, param: Tensor, state: dict[str, Any],
                     hyper: tuple) -> tuple[tuple, tuple]:
        lr, beta1, beta2, eps, wd, maximize = hyper
        t = bump(state["step"])
        m = state["exp_avg"]
        u = state["exp_inf"]
        return (param, m, u), param._be.adamax_update(
            param._data, grad._data, m._data, u._data, beta1=beta1, beta2=beta2, eps=eps,
            weight_decay=wd, clr=lr / (1 - beta1**t), maximize=maximize)
