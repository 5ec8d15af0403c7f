"""Helpers of ``torch.nn.modules.utils``: tuple expansion and state-dict prefix stripping."""

from __future__ import annotations

import collections.abc
from itertools import repeat
from typing import Any

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse") -> Any:
    def parse(x: Any) -> tuple:
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` from every key of ``state_dict`` that starts with it, in place (and
    from its ``_metadata``), as torch's function of the same name: the way to load a
    ``DistributedDataParallel`` checkpoint (keys ``module.*``) into the plain model.

    Example::

        sd = ddp_model.state_dict()                  # {"module.0.weight": ..., ...}
        consume_prefix_in_state_dict_if_present(sd, "module.")
        plain_model.load_state_dict(sd)
    """
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    meta = getattr(state_dict, "_metadata", None)
    if meta is not None:
        for key in list(meta.keys()):
            if len(key) == 0:
                continue
            if key == prefix.replace(".", "") or key.startswith(prefix):
                meta[key[len(prefix):]] = meta.pop(key)
