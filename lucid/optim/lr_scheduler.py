"""Learning-rate schedules, as ``torch.optim.lr_scheduler`` (same formulas, same numbers).

Example::

    from lucid.optim.lr_scheduler import CosineAnnealingLR

    sched = CosineAnnealingLR(opt, T_max=50, eta_min=1e-5)
    for epoch in range(50):
        train_one_epoch()
        sched.step()
"""

from __future__ import annotations

from ._scheduler_base import LRScheduler
from ._scheduler_cyclic_lr import CyclicLR
from ._scheduler_plateau import ReduceLROnPlateau
from ._schedulers_basic import (
    ConstantLR,
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiplicativeLR,
    MultiStepLR,
    PolynomialLR,
    StepLR,
)
from ._schedulers_compound import ChainedScheduler, SequentialLR
from ._schedulers_cyclic import CosineAnnealingWarmRestarts, OneCycleLR

__all__ = [
    "LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
    "LinearLR", "ExponentialLR", "PolynomialLR", "CosineAnnealingLR", "SequentialLR",
    "ChainedScheduler", "ReduceLROnPlateau", "CosineAnnealingWarmRestarts", "OneCycleLR",
    "CyclicLR",
]
