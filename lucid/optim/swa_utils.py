"""Stochastic weight averaging and EMA of weights, as ``torch.optim.swa_utils``:
``AveragedModel``, ``SWALR``, ``update_bn`` and the averaging functions.

Example::

    from lucid.optim.swa_utils import SWALR, AveragedModel, update_bn

    swa_model = AveragedModel(net)
    swa_sched = SWALR(opt, swa_lr=0.05)
    for epoch in range(epochs):
        train_one_epoch()
        if epoch >= swa_start:
            swa_model.update_parameters(net)
            swa_sched.step()
    update_bn(loader, swa_model)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any, Literal

from .. import _dtype
from .._tensor import Tensor
from ..autograd import no_grad
from ..nn.module import Module
from ..nn.modules.batchnorm import _BatchNorm
from ..ops.creation import tensor as _tensor
from ._scheduler_base import LRScheduler, format_param, warn_get_lr
from .optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]

PARAM_LIST = tuple[Tensor, ...] | list[Tensor]


def _floating(t: Tensor) -> bool:
    return t.dtype.is_floating_point or t.dtype.is_complex


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """The in-place exponential moving average over lists of tensors:
    ``ema = decay * ema + (1 - decay) * current`` (a ``lerp`` for floating tensors).

    Example::

        ema = AveragedModel(net, multi_avg_fn=get_ema_multi_avg_fn(0.999))
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list: PARAM_LIST, current_param_list: PARAM_LIST, _: Any) -> None:
        if _floating(ema_param_list[0]):
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """The in-place equal-weight running average over lists of tensors:
    ``avg += (current - avg) / (num_averaged + 1)``.

    Example::

        swa = AveragedModel(net, multi_avg_fn=get_swa_multi_avg_fn())
    """

    @no_grad()
    def swa_update(averaged_param_list: PARAM_LIST, current_param_list: PARAM_LIST,
                   num_averaged: Tensor | int) -> None:
        if _floating(averaged_param_list[0]):
            # NOTE: with a tensor count the weight is a default-dtype tensor, as in torch
            w = float(1 / (num_averaged + 1))
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                p_avg.lerp_(p_model, w)
        else:
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                p_avg.add_((p_model - p_avg) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The exponential moving average of one tensor:
    ``decay * ema + (1 - decay) * current``.

    Example::

        ema = AveragedModel(net, avg_fn=get_ema_avg_fn(0.99))
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The equal-weight running average of one tensor:
    ``averaged + (current - averaged) / (num_averaged + 1)``.

    Example::

        swa = AveragedModel(net, avg_fn=get_swa_avg_fn())
    """

    @no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor,
                   num_averaged: Tensor | int) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` (moved to ``device`` when given) that keeps a running average of
    its parameters (SWA by default, EMA with ``get_ema_*``), as
    ``torch.optim.swa_utils.AveragedModel``.

    ``update_parameters(model)`` copies the parameters on its first call and averages them
    with ``avg_fn(avg, current, n_averaged)`` (per tensor) or
    ``multi_avg_fn(avg_list, current_list, n_averaged)`` (in place, per list) afterwards;
    with ``use_buffers=True`` buffers are averaged too, otherwise copied. ``n_averaged`` is
    an int64 buffer, so the state_dict holds ``n_averaged`` and ``module.*``.

    Example::

        ema = AveragedModel(net, multi_avg_fn=get_ema_multi_avg_fn(0.999), use_buffers=True)
        for x, y in batches:
            train_step(x, y)
            ema.update_parameters(net)
        ema(x_test)
    """

    n_averaged: Tensor

    def __init__(self, model: Module, device: Any = None,
                 avg_fn: Callable[[Tensor, Tensor, Tensor | int], Tensor] | None = None,
                 multi_avg_fn: Callable[[PARAM_LIST, PARAM_LIST, Tensor | int], None]
                 | None = None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _tensor(0, dtype=_dtype.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the averaged copy of the model."""
        return self.module(*args, **kwargs)

    @no_grad()
    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into the
        average, then count one more averaged model.

        Example::

            swa_model.update_parameters(net)
        """
        if self.use_buffers:
            self_param: Iterable[Tensor] = itertools.chain(self.module.parameters(),
                                                          self.module.buffers())
            model_param: Iterable[Tensor] = itertools.chain(model.parameters(),
                                                           model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        averaged: list[Tensor] = []
        current: list[Tensor] = []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param):
            p_model_ = p_model.detach().to(p_averaged.device)
            averaged.append(p_averaged)
            current.append(p_model_)
            if copy_param:
                p_averaged.copy_(p_model_)
        n = int(self.n_averaged.item())
        if n > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                for avg_group, cur_group in _group_by_device_and_dtype(averaged, current):
                    n_averaged = self.n_averaged.to(avg_group[0].device)
                    if self.multi_avg_fn is not None:
                        self.multi_avg_fn(avg_group, cur_group, n_averaged)
                    else:
                        avg_fn = get_swa_avg_fn()
                        for p_averaged, p_model in zip(avg_group, cur_group, strict=True):
                            p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))
            else:
                for p_averaged, p_model in zip(averaged, current, strict=True):
                    n_averaged = self.n_averaged.to(p_averaged.device)
                    p_averaged.copy_(self.avg_fn(p_averaged.detach(), p_model, n_averaged))
        if not self.use_buffers:
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.copy_(b_model.detach().to(b_swa.device))
        self.n_averaged.add_(1)


def _group_by_device_and_dtype(averaged: list[Tensor], current: list[Tensor]
                               ) -> list[tuple[list[Tensor], list[Tensor]]]:
    """The (averaged, current) pairs grouped by the averaged tensor's device and dtype, in
    first-seen order (the lists an in-place ``multi_avg_fn`` receives)."""
    groups: dict[tuple[str, Any], tuple[list[Tensor], list[Tensor]]] = {}
    for a, c in zip(averaged, current):
        key = (str(a.device), a.dtype)
        if key not in groups:
            groups[key] = ([], [])
        groups[key][0].append(a)
        groups[key][1].append(c)
    return list(groups.values())


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of every batch-norm layer of ``model`` with one pass
    over ``loader`` (a cumulative average: momentum None during the pass). A batch that is a
    list or tuple feeds its first element to the model; ``device`` moves each input first.

    Example::

        update_bn(train_loader, swa_model)
    """
    momenta: dict[Module, Any] = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for bn_module in momenta:
        bn_module.momentum = momenta[bn_module]
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` epochs, then
    hold it (``torch.optim.swa_utils.SWALR``: same formulas and numbers). ``swa_lr`` is one
    value or one per param group (stored as ``group["swa_lr"]``); ``anneal_strategy`` is
    ``"cos"`` or ``"linear"``.

    Example::

        swa_sched = SWALR(opt, swa_lr=0.05, anneal_epochs=5, anneal_strategy="linear")
        for epoch in range(10):
            train_one_epoch()
            swa_sched.step()
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float],
                 anneal_epochs: int = 10, anneal_strategy: Literal["cos", "linear"] = "cos",
                 last_epoch: int = -1) -> None:
        swa_lrs = format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', "
                             f"instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(
                f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        if anneal_strategy == "cos":
            self.anneal_func = self._cosine_anneal
        else:
            self.anneal_func = self._linear_anneal

    def get_lr(self) -> list[float]:
        """Interpolate from each group's current lr toward its ``swa_lr``."""
        warn_get_lr(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer and the annealing function.

        Example::

            lucid.save(swa_sched.state_dict(), "swalr.lucid")
        """
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned.

        Example::

            swa_sched.load_state_dict(lucid.load("swalr.lucid"))
        """
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
