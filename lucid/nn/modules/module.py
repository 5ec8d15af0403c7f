"""``Module`` under PyTorch's path (``torch.nn.modules.module``)."""

from ..module import Module
from ..module_state_dict_load import _IncompatibleKeys

__all__ = ["Module", "_IncompatibleKeys"]
