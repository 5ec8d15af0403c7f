"""Optimizers and learning-rate schedules, as ``torch.optim``.

Example::

    import lucid.optim as optim

    opt = optim.AdamW(net.parameters(), lr=1e-3)
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100)
    for x, y in batches:
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
    sched.step()
"""

from . import lr_scheduler, swa_utils
from ._swap_in import swap_in_optimizer_params_and_state
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam",
           "Adadelta", "LBFGS", "SparseAdam", "ASGD", "Rprop", "Adafactor", "Muon",
           "lr_scheduler", "swa_utils", "swap_in_optimizer_params_and_state"]
