"""CyclicLR: the learning rate cycles between two bounds at a constant frequency (Smith,
"Cyclical Learning Rates for Training Neural Networks"), momentum cycling the other way."""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from typing import Any

from ._scheduler_base import (
    LRScheduler,
    format_param,
    set_momentum,
    start_momentum,
    uses_beta1,
    warn_get_lr,
)
from .optimizer import Optimizer

__all__ = ["CyclicLR"]


class CyclicLR(LRScheduler):
    """Cyclical learning rate, as ``torch.optim.lr_scheduler.CyclicLR`` (step it after every
    batch). The rate rises from ``base_lr`` to ``max_lr`` over ``step_size_up`` steps and
    falls back over ``step_size_down`` (default: the same), the amplitude scaled per cycle
    by ``mode``: ``"triangular"`` (constant), ``"triangular2"`` (halved each cycle) or
    ``"exp_range"`` (``gamma**iterations``), or by a custom ``scale_fn`` evaluated per
    ``scale_mode`` ("cycle" or "iterations"). With ``cycle_momentum`` the momentum (or
    Adam's beta1) cycles between ``max_momentum`` and ``base_momentum`` inversely.

    Example::

        opt = lucid.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        sched = CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=200)
        for x, y in batches:
            train_batch(x, y)
            sched.step()
    """

    def __init__(self, optimizer: Optimizer, base_lr: float | list[float],
                 max_lr: float | list[float], step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.8,
                 max_momentum: float | list[float] = 0.9, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = format_param("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = uses_beta1(optimizer)
            self.base_momentums = format_param("base_momentum", optimizer, base_momentum)
            self.max_momentums = format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                start_momentum(optimizer, self.use_beta1, self.base_momentums,
                               self.max_momentums)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is None:
            self.scale_mode = "iterations" if self.mode == "exp_range" else "cycle"

    def scale_fn(self, x: float) -> float:
        """The amplitude scale at cycle (or iteration) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self) -> list[float]:
        warn_get_lr(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [b + ((m - b) * scale_factor) * self.scale_fn(at)
               for b, m in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, bm, mm in zip(self.optimizer.param_groups, self.base_momentums,
                                     self.max_momentums):
                momentum = mm - ((mm - bm) * scale_factor) * self.scale_fn(at)
                set_momentum(group, self.use_beta1, momentum)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The state without the custom ``scale_fn`` itself (a plain function is dropped; a
        callable object keeps its ``__dict__``), as PyTorch."""
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned (keeping this scheduler's ``scale_fn``)."""
        state_dict = dict(state_dict)
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()
