"""Adamax: Adam with the infinity norm."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .optimizer import Optimizer, bump, check_flags, check_range, scalar_tensor, store, zeros_state

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

    @staticmethod
    def _new_state(state: dict[str, Any], p: Any, group: dict[str, Any]) -> None:
        state["step"] = scalar_tensor(0.0)
        state["exp_avg"] = zeros_state(p)
        state["exp_inf"] = zeros_state(p)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; returns the closure's loss, if any.

        Example::

            opt.step()
        """
        loss = self._run_closure(closure)
        for group in self.param_groups:
            lr = float(group["lr"])
            beta1, beta2 = (float(b) for b in group["betas"])
            for p, g, state in self._with_grads(group, self._new_state):
                t = bump(state["step"])
                m = state["exp_avg"]
                u = state["exp_inf"]
                out = p._be.adamax_update(
                    p._data, g._data, m._data, u._data, beta1=beta1, beta2=beta2,
                    eps=group["eps"], weight_decay=group["weight_decay"],
                    clr=lr / (1 - beta1**t), maximize=group["maximize"])
                store((p, m, u), out)
        self._after_step()
        return loss
