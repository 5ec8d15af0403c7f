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

__all__ = ["linear", "pad", "relu_"]
# (importlib: some family names, e.g. ``norm``, are also op names in ``lucid.ops``)
for _fam in ("activation", "norm", "loss", "nn_misc", "conv", "pool"):
    _mod = importlib.import_module(f"lucid.ops.{_fam}")
    for _name in _mod.__all__:
        globals()[_name] = getattr(_mod, _name)
        __all__.append(_name)
del _fam, _mod, _name


def relu_(input):  # type: ignore[no-untyped-def]
    """In-place ``relu``.

    Example::

        F.relu_(x)
    """
    return input.relu_()

