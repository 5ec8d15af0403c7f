"""Neural-network building blocks, as ``torch.nn``.

Example::

    import lucid
    import lucid.nn as nn

    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    loss = net(lucid.randn(16, 4)).sum()
    loss.backward()
"""

from . import attention, functional, grad, init, parallel, utils
from .module import Module
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parallel import DataParallel, DistributedDataParallel
from .parameter import Buffer, Parameter

__all__ = ["Module", "Parameter", "Buffer", "functional", "init", "utils", "parallel",
           "attention", "grad",
           "DataParallel", "DistributedDataParallel",
           *(name for name in _modules_all if name != "Module")]
