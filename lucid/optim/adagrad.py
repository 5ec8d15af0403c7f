"""Adagrad."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .optimizer import Optimizer, bump, check_flags, check_range, scalar_tensor, store, zeros_state

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (``torch.optim.Adagrad``: same options, defaults, state layout and numbers).

    ``s += g*g``; ``p -= clr * g / (sqrt(s) + eps)`` with ``clr = lr / (1 + (t-1)*lr_decay)``.
    As in PyTorch the state (``step``, ``sum`` filled with ``initial_accumulator_value``)
    is created in the constructor for every parameter.

    Example::

        opt = lucid.optim.Adagrad(net.parameters(), lr=1e-2, initial_accumulator_value=0.1)
        opt.step()
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        check_range(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        check_range(lr, weight_decay=weight_decay)
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        check_range(lr, eps)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        check_flags(defaults)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, initial_accumulator_value)

    def _init_state(self, p: Any, init: float) -> dict[str, Any]:
        state = self.state[p]
        state["step"] = scalar_tensor(0.0)
        state["sum"] = zeros_state(p, init)
        return state

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; returns the closure's loss, if any.

        Example::

            opt.step()
        """
        loss = self._run_closure(closure)
        for group in self.param_groups:
            lr = float(group["lr"])
            lr_decay = group["lr_decay"]
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state = self._init_state(p, self.defaults["initial_accumulator_value"])
                t = bump(state["step"])
                s = state["sum"]
                out = p._be.adagrad_update(
                    p._data, g._data, s._data, eps=group["eps"],
                    weight_decay=group["weight_decay"], clr=lr / (1 + (t - 1) * lr_decay),
                    maximize=group["maximize"])
                store((p, s), out)
        self._after_step()
        return loss
