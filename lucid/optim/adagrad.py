"""Adagrad."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._tensor import Tensor
from .optimizer import Optimizer, bump, check_flags, check_range, scalar_tensor, zeros_state

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
        for group in self.param_groups:  # as in PyTorch, the state exists from the start
            for p in group["params"]:
                self.init_state(self.state[p], p, group)

    def init_state(self, state: dict[str, Any], param: Tensor, group: dict[str, Any]) -> None:
        # NOTE: the constructor's initial_accumulator_value, also for a group that sets its
        # own (as PyTorch's constructor does)
        state["step"] = scalar_tensor(0.0)
        state["sum"] = zeros_state(param, self.defaults["initial_accumulator_value"])

    def prepare_group(self, group: dict[str, Any]) -> tuple:
        return (float(group["lr"]), group["lr_decay"], group["eps"], group["weight_decay"],
                group["maximize"])

    def apply_single(self, grad: Tensor, param: Tensor, state: dict[str, Any],
                     hyper: tuple) -> tuple[tuple, tuple]:
        lr, lr_decay, eps, wd, maximize = hyper
        t = bump(state["step"])
        s = state["sum"]
        return (param, s), param._be.adagrad_update(
            param._data, grad._data, s._data, eps=eps, weight_decay=wd,
            clr=lr / (1 + (t - 1) * lr_decay), maximize=maximize)
