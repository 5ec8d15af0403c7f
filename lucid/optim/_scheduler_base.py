"""``LRScheduler``: the base of the learning-rate schedules (``torch.optim.lr_scheduler``).

The schedules use PyTorch's chainable formulas (each lr from the group's current lr), so
several schedulers may drive one optimizer, and the numbers equal PyTorch's.
"""

from __future__ import annotations

import warnings
from functools import wraps
from typing import Any
from weakref import ref

from .optimizer import Optimizer

__all__ = ["LRScheduler"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
    "where possible. Please use `scheduler.step()` to step the scheduler. During the "
    "deprecation, if epoch is different from None, the closed form is used instead of the new "
    "chainable form, where available."
)


def format_param(name: str, optimizer: Optimizer, param: Any) -> list[Any]:
    """One value per param group (a list or tuple must have exactly one per group)."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. {name} has "
                f"{len(param)} values, param_groups has {len(optimizer.param_groups)}."
            )
        return list(param)
    return [param] * len(optimizer.param_groups)


def uses_beta1(optimizer: Optimizer) -> bool:
    """Whether a cycled momentum is the optimizer's beta1 (True) or its ``momentum``."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with "
                         "`cycle_momentum` option enabled")
    return "betas" in optimizer.defaults


def set_momentum(group: dict[str, Any], use_beta1: bool, value: float) -> None:
    """Set a param group's momentum (its beta1 when ``use_beta1``)."""
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def start_momentum(optimizer: Optimizer, use_beta1: bool, base: list[Any],
                   maxm: list[Any]) -> None:
    """A cycle starts each group's momentum at its max and records both bounds."""
    for mm, bm, group in zip(maxm, base, optimizer.param_groups):
        set_momentum(group, use_beta1, mm)
        group["max_momentum"] = mm
        group["base_momentum"] = bm


def group_values(optimizer: Optimizer, key: str) -> list[Any]:
    return [group[key] for group in optimizer.param_groups]


class _Flag:
    """Context manager setting a boolean attribute for its duration."""

    def __init__(self, obj: Any, name: str) -> None:
        self.obj, self.name = obj, name

    def __enter__(self) -> None:
        setattr(self.obj, self.name, True)

    def __exit__(self, *exc: object) -> None:
        setattr(self.obj, self.name, False)


def _patch_step(opt: Optimizer) -> None:
    """Wrap ``opt.step`` once so a scheduler can tell whether the optimizer stepped."""
    if hasattr(opt.step, "_wrapped_by_lr_sched"):
        return
    opt_ref = ref(opt)
    func = opt.step.__func__  # type: ignore[attr-defined]

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        o = opt_ref()
        o._opt_called = True  # type: ignore[union-attr]
        return func.__get__(o, o.__class__)(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True  # type: ignore[attr-defined]
    opt.step = wrapper  # type: ignore[method-assign]


class LRScheduler:
    """Base class of learning-rate schedules, as ``torch.optim.lr_scheduler.LRScheduler``.

    Construction records each group's ``initial_lr`` (when ``last_epoch == -1``) and takes
    the first step, which sets the epoch-0 learning rates. Subclasses implement ``get_lr``.
    ``state_dict`` holds every attribute but the optimizer.

    Example::

        sched = lucid.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
        for epoch in range(30):
            train_one_epoch()       # calls opt.step()
            sched.step()
        sched.get_last_lr()         # [lr * 0.125]
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0."
                    )
        self.base_lrs: list[float] = group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _patch_step(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        with _Flag(self, "_is_initial"):
            self.step()

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer (a plain dict: ``lucid.save`` stores it).

        Example::

            lucid.save(sched.state_dict(), "sched.lucid")
        """
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned.

        Example::

            sched.load_state_dict(lucid.load("sched.lucid"))
        """
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[float]:
        """The learning rates the last ``step`` set, one per param group.

        Example::

            sched.get_last_lr()     # [0.1]
        """
        return self._last_lr

    def get_lr(self) -> list[float]:
        """The learning rates for ``last_epoch`` (called by ``step``)."""
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to ``epoch``, deprecated) and set the groups' lr.

        Example::

            sched.step()
        """
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate "
                    "scheduler initialization. Please, make sure to call `optimizer.step()` "
                    "before `lr_scheduler.step()`.", UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. You "
                    "should call them in the opposite order: `optimizer.step()` before "
                    "`lr_scheduler.step()`. Failure to do this will result in skipping the "
                    "first value of the learning rate schedule.", UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        with _Flag(self, "_get_lr_called_within_step"):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = group_values(self.optimizer, "lr")


def warn_get_lr(sched: LRScheduler) -> None:
    if not sched._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, please use "
                      "`get_last_lr()`.", UserWarning, stacklevel=3)
