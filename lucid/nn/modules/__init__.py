"""Layer classes, one family per file; new families (conv, pooling, normalization,
dropout, embedding, losses, attention) add a file here and a line below."""

from .activation import ReLU, Sigmoid, Tanh
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear
from .module import Module

__all__ = [
    "Module", "Identity", "Linear", "Flatten", "Unflatten", "ReLU", "Sigmoid", "Tanh",
    "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
]
