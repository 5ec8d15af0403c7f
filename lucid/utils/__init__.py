"""``lucid.utils``: ``lucid.utils.data`` is ``lucid.data`` (as ``torch.utils.data``), with its
submodules importable under both names (``from lucid.utils.data.dataloader import ...``);
``lucid.utils.checkpoint`` is activation checkpointing (``torch.utils.checkpoint``)."""

import sys

from .. import data
from ..data import dataloader, dataset, distributed, sampler
from . import checkpoint

sys.modules[__name__ + ".data"] = data
for _m in (dataloader, dataset, distributed, sampler):
    sys.modules[f"{__name__}.data.{_m.__name__.rsplit('.', 1)[1]}"] = _m

__all__ = ["data", "checkpoint"]
