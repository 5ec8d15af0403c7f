"""RAdam: Adam with variance rectification."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    bump,
    check_flags,
    check_range,
    init_moments,
    moment_group,
)

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam (``torch.optim.RAdam``: same options, defaults, state layout and numbers).

    ``m`` and ``v`` as in Adam; with ``rho_inf = 2/(1-beta2) - 1`` and
    ``rho_t = rho_inf - 2t*beta2**t/(1-beta2**t)``, the step is the rectified adaptive one
    ``lr * m_hat * r_t * sqrt(1-beta2**t)/(sqrt(v) + eps)`` once ``rho_t > 5`` and
    ``lr * m_hat`` before. ``decoupled_weight_decay=True`` scales ``p`` by ``1 - lr*wd``.
    State per parameter: ``step``, ``exp_avg``, ``exp_avg_sq``.

    Example::

        opt = lucid.optim.RAdam(net.parameters(), lr=1e-3)
        opt.step()
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_range(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        check_flags(defaults)
        super().__init__(params, defaults)

    def init_state(self, state: dict[str, Any], param: Tensor, group: dict[str, Any]) -> None:
        init_moments(state, param)

    def prepare_group(self, group: dict[str, Any]) -> tuple:
        lr, beta1, beta2, decay, l2 = moment_group(group)
        rho_inf = 2 / (1 - beta2) - 1
        return lr, beta1, beta2, group["eps"], l2, decay, rho_inf, group["maximize"]

    def apply_single(self, grad: Tensor, param: Tensor, state: dict[str, Any],
                     hyper: tuple) -> tuple[tuple, tuple]:
        lr, beta1, beta2, eps, l2, decay, rho_inf, maximize = hyper
        t = bump(state["step"])
        bc2 = 1 - beta2**t
        rho_t = rho_inf - 2 * t * (beta2**t) / bc2
        rect = None
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        m = state["exp_avg"]
        v = state["exp_avg_sq"]
        return (param, m, v), param._be.radam_update(
            param._data, grad._data, m._data, v._data, beta1=beta1, beta2=beta2, eps=eps,
            weight_decay=l2, decay=decay, lr=lr, bc1=1 - beta1**t, bc2_sqrt=bc2**0.5,
            rect=rect, maximize=maximize)
