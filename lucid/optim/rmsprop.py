"""RMSprop, optionally centered and with momentum."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .optimizer import Optimizer, bump, check_flags, check_range, scalar_tensor, store, zeros_state

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

    @staticmethod
    def _new_state(state: dict[str, Any], p: Any, group: dict[str, Any]) -> None:
        state["step"] = scalar_tensor(0.0)
        state["square_avg"] = zeros_state(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_state(p)
        if group["centered"]:
            state["grad_avg"] = zeros_state(p)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; returns the closure's loss, if any.

        Example::

            opt.step()
        """
        loss = self._run_closure(closure)
        for group in self.param_groups:
            lr = float(group["lr"])
            momentum = group["momentum"]
            centered = group["centered"]
            for p, g, state in self._with_grads(group, self._new_state):
                bump(state["step"])
                sq = state["square_avg"]
                ga = state["grad_avg"] if centered else None
                buf = state["momentum_buffer"] if momentum > 0 else None
                out = p._be.rmsprop_update(
                    p._data, g._data, sq._data, None if ga is None else ga._data,
                    None if buf is None else buf._data, lr=lr, alpha=group["alpha"],
                    eps=group["eps"], weight_decay=group["weight_decay"], momentum=momentum,
                    maximize=group["maximize"])
                store((p, sq, ga, buf), out)
        self._after_step()
        return loss
