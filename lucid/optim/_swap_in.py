"""``swap_in_optimizer_params_and_state``: run an optimizer on other parameters and state for
the length of a ``with`` block (``torch.optim.swap_in_optimizer_params_and_state``)."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from .._tensor import Tensor
from .optimizer import Optimizer

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer: Optimizer,
                                       swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]) -> Iterator[None]:
    """Inside the block, ``optimizer`` works on ``swapin_parameters`` (taken in the order of
    its param groups, as ``model.named_parameters()`` gives them) with the state and group
    options of ``swapin_optim_state`` (an ``optimizer.state_dict()``-shaped dict); on exit
    its own parameters, options and state come back. Per-parameter state dicts are copied
    shallowly: updates the step makes to their tensors reach ``swapin_optim_state``,
    entries it adds or replaces do not. The optimizer must have state already.

    Example::

        shadow = {n: p.detach().clone() for n, p in net.named_parameters()}
        shadow_state = copy.deepcopy(opt.state_dict())
        with lucid.optim.swap_in_optimizer_params_and_state(opt, shadow, shadow_state):
            opt.step()          # moves the shadow copies; net and opt are untouched
    """
    state, infos = _prepare_swap_in(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped: defaultdict[Tensor, Any] = defaultdict(dict)
        for live, saved, params in infos:
            live["params"] = params
            for key, value in saved.items():
                if key != "params":
                    live[key] = value
            for p, pid in zip(params, saved["params"], strict=True):
                swapped[p] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots, strict=True):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state


def _prepare_swap_in(optimizer: Optimizer, swapin_parameters: dict[str, Tensor],
                     swapin_optim_state: dict[str, Any]
                     ) -> tuple[dict[Any, Any], list[tuple[dict, dict, list[Tensor]]]]:
    """Check the swap-in dict against the optimizer (PyTorch's checks and messages) and pair
    each live group with its saved options and its slice of ``swapin_parameters``."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = swapin_optim_state.get("state")
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping "
                           "packed parameter ids to per-param state dicts, got "
                           f"{type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by "
                           "packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be "
                           "dictionaries.")
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list "
                           f"of param-group dicts, got {type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups "
                           "than the live optimizer.")
    flat = list(swapin_parameters.values())
    offset = 0
    seen: set[int] = set()
    infos = []
    for idx, (group, saved) in enumerate(zip(optimizer.param_groups, groups, strict=True)):
        ids = _group_ids(idx, group, saved)
        seen.update(ids)
        end = offset + len(ids)
        if end > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match "
                               "optimizer.param_groups ordering.")
        infos.append((group, saved, flat[offset:end]))
        offset = end
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by "
                           "packed parameter ids from param_groups[*]['params']; got extra "
                           f"keys {extra!r}.")
    return state, infos


def _group_ids(idx: int, group: dict[str, Any], saved: Any) -> list[int]:
    if not isinstance(saved, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = saved.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style "
                           "param_groups[*]['params'] entries keyed by packed parameter ids.")
    if len(group["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of "
                           "params than the live optimizer param group.")
    swapin_only = [k for k in saved if k not in group]
    live_only = [k for k in group if k not in saved]
    if swapin_only or live_only:
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys "
                           "to exactly match the live optimizer group keys for group "
                           f"{idx}. Keys only in swap-in: {swapin_only}. Keys only in live: "
                           f"{live_only}.")
    return ids
