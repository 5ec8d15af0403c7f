"""Stochastic gradient descent, optionally with momentum and Nesterov momentum."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._tensor import Tensor
from .optimizer import Optimizer, check_flags, zeros_state

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (``torch.optim.SGD``: same options, defaults and numbers).

    With momentum ``mu``: ``b = mu*b + (1-dampening)*g`` (``b = g`` on the first step), then
    ``p -= lr * (g + mu*b if nesterov else b)``; ``weight_decay`` adds ``wd*p`` to ``g``.
    State per parameter: ``momentum_buffer`` (only when momentum != 0). ``foreach`` and
    ``fused`` are accepted for compatibility: every update is one fused kernel per parameter.

    Example::

        opt = lucid.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, nesterov=True)
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_flags(defaults)
        super().__init__(params, defaults)

    def has_state(self, group: dict[str, Any]) -> bool:
        return group["momentum"] != 0

    def prepare_group(self, group: dict[str, Any]) -> tuple:
        return (float(group["lr"]), group["momentum"], group["dampening"],
                group["weight_decay"], group["nesterov"], group["maximize"])

    def apply_single(self, grad: Tensor, param: Tensor, state: dict[str, Any] | None,
                     hyper: tuple) -> tuple[tuple, tuple]:
        lr, momentum, dampening, wd, nesterov, maximize = hyper
        buf = None
        first = False
        if state is not None:
            # the buffer starts as a copy of the first gradient (the kernel's ``first``)
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = zeros_state(param)
                first = True
        return (param, buf), param._be.sgd_update(
            param._data, grad._data, None if buf is None else buf._data, lr=lr,
            momentum=momentum, dampening=dampening, weight_decay=wd, nesterov=nesterov,
            maximize=maximize, first=first)

