"""Neural-network building blocks, as ``torch.nn``.

Example::

    import lucid
    import lucid.nn as nn

    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    loss = net(lucid.randn(16, 4)).sum()
    loss.backward()
"""

from . import functional, init
from .module import Module
from .modules import (
    Flatten,
    Identity,
    Linear,
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    ReLU,
    Sequential,
    Sigmoid,
    Tanh,
    Unflatten,
)
from .parameter import Buffer, Parameter

__all__ = [
    "Module", "Parameter", "Buffer", "Identity", "Linear", "Flatten", "Unflatten", "ReLU",
    "Sigmoid", "Tanh", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
    "ParameterDict", "functional", "init",
]
