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

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam",
           "Adadelta", "LBFGS", "SparseAdam", "lr_scheduler"]
