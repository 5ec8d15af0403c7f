"""ASGD: averaged stochastic gradient descent."""

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
    set_scalar,
    zeros_state,
)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD (``torch.optim.ASGD``: same options, defaults, state layout and numbers).

    Per step ``t``: ``g += wd*p``; ``p *= 1 - lambd*eta``; ``p -= eta*g``; the running
    average ``ax += mu*(p - ax)`` (``ax = p`` while ``mu == 1``); then
    ``eta = lr / (1 + lambd*lr*t)**alpha`` and ``mu = 1 / max(1, t - t0)``, so averaging
    starts after ``t0`` steps. State per parameter: ``step``, ``eta``, ``mu`` (0-d host
    tensors of the optimizer scalar dtype) and ``ax`` (the averaged parameter). The rule is
    written with the backend's elementwise operations, so it runs on every device.

    Example::

        opt = lucid.optim.ASGD(net.parameters(), lr=0.01, t0=100)
        opt.step()
        averaged = [opt.state[p]["ax"] for p in net.parameters()]
    """

    _scalar_state = ("step", "eta", "mu")

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        check_lr_tensor(lr)
        check_range(lr, weight_decay=weight_decay)
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        check_flags(defaults)
        super().__init__(params, defaults)

    def init_state(self, state: dict[str, Any], param: Tensor, group: dict[str, Any]) -> None:
        state["step"] = scalar_tensor(0.0)
        state["eta"] = scalar_tensor(float(group["lr"]))
        state["mu"] = scalar_tensor(1.0)
        state["ax"] = zeros_state(param)

    def prepare_group(self, group: dict[str, Any]) -> tuple:
        return (float(group["lr"]), float(group["lambd"]), float(group["alpha"]),
                float(group["t0"]), group["weight_decay"], group["maximize"])

    def apply_single(self, grad: Tensor, param: Tensor, state: dict[str, Any],
                     hyper: tuple) -> tuple[tuple, tuple]:
        lr, lambd, alpha, t0, wd, maximize = hyper
        be = param._be
        p, g = param._data, grad._data
        ax = state["ax"]
        if maximize:
            g = be.neg(g)
        t = bump(state["step"])
        if wd != 0:
            g = be.add(g, be.mul(p, wd))
        eta = float(state["eta"]._data)
        p = be.add(be.mul(p, 1 - lambd * eta), be.mul(g, -eta))
        mu = float(state["mu"]._data)
        if mu != 1:
            a = be.add(ax._data, be.mul(be.sub(p, ax._data), mu))
        else:
            a = be.copy(p)
        set_scalar(state["eta"], lr / ((1 + lambd * lr * t) ** alpha))
        set_scalar(state["mu"], 1 / max(1, t - t0))
        return (param, ax), (p, a)
