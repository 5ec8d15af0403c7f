"""Storing convolution weights in a memory format, as ``torch.nn.utils.memory_format``:
``convert_conv2d_weight_memory_format`` (``Conv2d`` / ``ConvTranspose2d``) and
``convert_conv3d_weight_memory_format`` (``Conv3d`` / ``ConvTranspose3d``).

Only the layout changes (``stride()``), never a shape or a value; on the "gpu" device (MLX),
whose arrays are always row-major, the weights stay as they are.

Example::

    net = nn.utils.convert_conv2d_weight_memory_format(net, lucid.channels_last)
"""

from __future__ import annotations

from typing import Any, TypeVar

from ..._memory_format import preserve_format
from ..module import Module
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]

M = TypeVar("M", bound=Module)


def _convert(module: Module, kinds: tuple[type, ...], memory_format: Any) -> None:
    if isinstance(module, kinds):
        if memory_format is preserve_format:
            raise RuntimeError("Unsupported memory format preserve_format")
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, kinds, memory_format)


def convert_conv2d_weight_memory_format(module: M, memory_format: Any) -> M:
    """Store the weight of every ``Conv2d`` and ``ConvTranspose2d`` in ``module`` (itself
    included, recursively) in ``memory_format`` (``lucid.channels_last`` or
    ``lucid.contiguous_format``); returns ``module``. Parameters keep their identity.

    Example::

        net = convert_conv2d_weight_memory_format(net, lucid.channels_last)
        net[0].weight.is_contiguous(memory_format=lucid.channels_last)    # True
    """
    _convert(module, (Conv2d, ConvTranspose2d), memory_format)
    return module


def convert_conv3d_weight_memory_format(module: M, memory_format: Any) -> M:
    """Store the weight of every ``Conv3d`` and ``ConvTranspose3d`` in ``module`` (itself
    included, recursively) in ``memory_format`` (``lucid.channels_last_3d`` or
    ``lucid.contiguous_format``); returns ``module``.

    Example::

        net = convert_conv3d_weight_memory_format(net, lucid.channels_last_3d)
    """
    _convert(module, (Conv3d, ConvTranspose3d), memory_format)
    return module
