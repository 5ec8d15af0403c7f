"""RMSprop, optionally centered and with momentum."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._tensor import Tensor
from .optimizer import Optimizer, bump, check_flags, check_range, scalar_tensor, zeros_state

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop (``torch.optim.RMSprop``: same options, defaults, state layout and numbers).

    ``s = alpha*s + (1-alpha)*g*g``; the denominator is ``sqrt(s) + eps``, or with
    ``centered`` ``sqrt(s - a*a) + eps`` where ``a = lerp(a, g, 1-alpha)``; then
    ``p -= lr * g / denom``, or with momentum ``b = momentum*b + g/denom; p -= lr*b``.
    State per parameter: ``step``, ``square_avg``, ``momentum_buffer`` (momentum > 0) and
    ``grad_avg`` (centered).

    Example::

        opt = lucid.optim.RMSprop(net.parameters(), lr=1e-2, alpha=0.99, momentum=0.9)
        opt.step()
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_range(lr, eps)
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        check_range(lr, weight_decay=weight_decay)
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        check_flags(defaults)
        super().__init__(params, defaults)

    def init_state(self, state: dict[str, Any], param: Tensor, group: dict[str, Any]) -> None:
        state["step"] = scalar_tensor(0.0)
        state["square_avg"] = zeros_state(param)
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_state(param)
        if group["centered"]:
            state["grad_avg"] = zeros_state(param)

    def prepare_group(self, group: dict[str, Any]) -> tuple:
        return (float(group["lr"]), group["alpha"], group["eps"], group["weight_decay"],
                group["momentum"], group["centered"], group["maximize"])

    def apply_single(self, grad: Tensor, param: Tensor, state: dict[str, Any],
                     hyper: tuple) -> tuple[tuple, tuple]:
        lr, alpha, eps, wd, momentum, centered, maximize = hyper
        bump(state["step"])
        sq = state["square_avg"]
        ga = state["grad_avg"] if centered else None
        buf = state["momentum_buffer"] if momentum > 0 else None
        return (param, sq, ga, buf), param._be.rmsprop_update(
            param._data, grad._data, sq._data, None if ga is None else ga._data,
            None if buf is None else buf._data, lr=lr, alpha=alpha, eps=eps, weight_decay=wd,
            momentum=momentum, maximize=maximize)
