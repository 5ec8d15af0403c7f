"""Stochastic gradient descent, optionally with momentum and Nesterov momentum."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .optimizer import Optimizer, check_flags, store, zeros_state

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

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; returns the closure's loss, if any.

        Example::

            loss = opt.step(lambda: loss_fn(net(x), y))   # closure re-evaluates the loss
        """
        loss = self._run_closure(closure)
        for group in self.param_groups:
            lr = float(group["lr"])
            momentum = group["momentum"]
            dampening = group["dampening"]
            wd = group["weight_decay"]
            nesterov = group["nesterov"]
            maximize = group["maximize"]
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                buf_t = None
                first = False
                if momentum != 0:
                    state = self.state[p]
                    buf_t = state.get("momentum_buffer")
                    if buf_t is None:
                        buf_t = state["momentum_buffer"] = zeros_state(p)
                        first = True
                out = p._be.sgd_update(
                    p._data, g._data, None if buf_t is None else buf_t._data, lr=lr,
                    momentum=momentum, dampening=dampening, weight_decay=wd,
                    nesterov=nesterov, maximize=maximize, first=first)
                store((p, buf_t), out)
        self._after_step()
        return loss

