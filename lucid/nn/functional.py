"""Functional forms of the layers, as ``torch.nn.functional`` (over ``lucid.ops``).

Example::

    import lucid.nn.functional as F
    y = F.relu(F.linear(x, w, b))
    loss = F.cross_entropy(logits, labels)
"""

from __future__ import annotations

import importlib

from ..ops.matmul import linear
from ..ops.movement import pad

_FAMILIES = ("activation", "norm", "loss", "nn_misc", "conv", "pool")

__all__ = ["linear", "pad"]
for _fam in _FAMILIES:
    try:
        _mod = importlib.import_module(f"lucid.ops.{_fam}")
    except ModuleNotFoundError as _e:  # a family still being added
        if _e.name != f"lucid.ops.{_fam}":
            raise
        continue
    for _name in _mod.__all__:
        globals()[_name] = getattr(_mod, _name)
        __all__.append(_name)
del _fam, _mod


def relu_(input):  # type: ignore[no-untyped-def]
    """In-place ``relu``.

    Example::

        F.relu_(x)
    """
    return input.relu_()


__all__.append("relu_")
