"""Adadelta."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._tensor import Tensor
from .optimizer import Optimizer, bump, check_flags, check_range, scalar_tensor, zeros_state

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (``torch.optim.Adadelta``: same options, defaults, state layout and numbers).

    ``g += wd*p``; ``v = rho*v + (1-rho)*g*g``; ``delta = sqrt(u + eps) / sqrt(v + eps) * g``;
    ``u = rho*u + (1-rho)*delta*delta``; ``p -= lr*delta``. State per parameter: ``step``,
    ``square_avg`` (v) and ``acc_delta`` (u). The rule is written with the backend's
    elementwise operations, so it runs on every device.

    Example::

        opt = lucid.optim.Adadelta(net.parameters(), lr=1.0, rho=0.9)
        opt.step()
    """

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_range(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_range(lr, eps, weight_decay=weight_decay)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        check_flags(defaults)
        super().__init__(params, defaults)

    def init_state(self, state: dict[str, Any], param: Tensor, group: dict[str, Any]) -> None:
        state["step"] = scalar_tensor(0.0)
        state["square_avg"] = zeros_state(param)
        state["acc_delta"] = zeros_state(param)

    def prepare_group(self, group: dict[str, Any]) -> tuple:
        return (float(group["lr"]), float(group["rho"]), float(group["eps"]),
                group["weight_decay"], group["maximize"])

    def apply_single(self, grad: Tensor, param: Tensor, state: dict[str, Any],
                     hyper: tuple) -> tuple[tuple, tuple]:
        lr, rho, eps, wd, maximize = hyper
        bump(state["step"])
        be = param._be
        p, g = param._data, grad._data
        v, u = state["square_avg"], state["acc_delta"]
        if maximize:
            g = be.neg(g)
        if wd != 0:
            g = be.add(g, be.mul(p, wd))
        # the order of PyTorch's operations (addcmul: value * t1 * t2), for the same rounding
        sq = be.add(be.mul(v._data, rho), be.mul(be.mul(g, 1 - rho), g))
        std = be.sqrt(be.add(sq, eps))
        delta = be.mul(be.div(be.sqrt(be.add(u._data, eps)), std), g)
        acc = be.add(be.mul(u._data, rho), be.mul(be.mul(delta, 1 - rho), delta))
        new_p = be.add(p, be.mul(delta, -lr))
        return (param, v, u), (new_p, sq, acc)
