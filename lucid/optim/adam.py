"""Adam and AdamW (decoupled weight decay), with the AMSGrad variant."""

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
    zeros_state,
)

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam (``torch.optim.Adam``: same options, defaults, state layout and numbers).

    ``m = lerp(m, g, 1-beta1)``, ``v = beta2*v + (1-beta2)*g*g`` (``vmax = max(vmax, v)`` with
    ``amsgrad``), ``p -= lr/(1-beta1**t) * m / (sqrt(v)/sqrt(1-beta2**t) + eps)``.
    ``weight_decay`` adds ``wd*p`` to the gradient, or with ``decoupled_weight_decay=True``
    (AdamW) scales ``p`` by ``1 - lr*wd`` first. State per parameter: ``step`` (a float32
    0-d tensor, float64 when that is the default dtype), ``exp_avg``, ``exp_avg_sq`` and
    ``max_exp_avg_sq`` (amsgrad). ``foreach``/``fused`` are accepted for compatibility:
    every update is one fused kernel per parameter.

    Example::

        opt = lucid.optim.Adam(net.parameters(), lr=1e-3, betas=(0.9, 0.999))
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        check_range(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        check_flags(defaults)
        super().__init__(params, defaults)

    def init_state(self, state: dict[str, Any], param: Tensor, group: dict[str, Any]) -> None:
        init_moments(state, param)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = zeros_state(param)

    def prepare_group(self, group: dict[str, Any]) -> tuple:
        lr, beta1, beta2, decay, l2 = moment_group(group)
        return lr, beta1, beta2, group["eps"], l2, decay, group["amsgrad"], group["maximize"]

    def apply_single(self, grad: Tensor, param: Tensor, state: dict[str, Any],
                     hyper: tuple) -> tuple[tuple, tuple]:
        lr, beta1, beta2, eps, l2, decay, amsgrad, maximize = hyper
        t = bump(state["step"])
        m = state["exp_avg"]
        v = state["exp_avg_sq"]
        vm = state["max_exp_avg_sq"] if amsgrad else None
        return (param, m, v, vm), param._be.adam_update(
            param._data, grad._data, m._data, v._data, None if vm is None else vm._data,
            beta1=beta1, beta2=beta2, eps=eps, weight_decay=l2, decay=decay,
            step_size=lr / (1 - beta1**t), bc2_sqrt=(1 - beta2**t) ** 0.5, maximize=maximize)


class AdamW(Adam):
    """Adam with decoupled weight decay (``torch.optim.AdamW``; default weight_decay 1e-2):
    each step first scales ``p`` by ``1 - lr*weight_decay``.

    Example::

        opt = lucid.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=0.01)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
