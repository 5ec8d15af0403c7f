"""``lucid.cuda``: PyTorch's ``torch.cuda`` names for lucid's "gpu" device (MLX).

``"cuda"`` is accepted wherever a device is named and means lucid's "gpu" device, so scripts
such as ``device = "cuda" if lucid.cuda.is_available() else "cpu"`` run unchanged: on an
NVIDIA machine with MLX's CUDA build and on Apple silicon (Metal) they train on the GPU.

Example::

    import lucid
    if lucid.cuda.is_available():
        lucid.cuda.manual_seed(0)          # accepted; lucid.manual_seed seeds every device
        model.to("cuda")
"""

from __future__ import annotations

import sys

from . import _cuda_amp as amp
from .gpu import (
    DeviceProperties,
    current_device,
    device_count,
    empty_cache,
    get_device_name,
    get_device_properties,
    is_available,
    manual_seed,
    manual_seed_all,
    max_memory_allocated,
    memory_allocated,
    memory_reserved,
    reset_peak_memory_stats,
    set_device,
    synchronize,
)


class OutOfMemoryError(RuntimeError):
    """Raised when a device runs out of memory (``torch.OutOfMemoryError``, also
    ``torch.cuda.OutOfMemoryError``)."""


__all__ = [
    "OutOfMemoryError", "is_available", "device_count", "current_device", "get_device_name",
    "synchronize",
    "empty_cache", "memory_allocated", "max_memory_allocated", "reset_peak_memory_stats",
    "manual_seed", "manual_seed_all", "is_bf16_supported", "memory_reserved", "set_device",
    "get_device_properties", "DeviceProperties", "is_initialized", "init", "amp",
]

sys.modules[__name__ + ".amp"] = amp  # ``import lucid.cuda.amp`` / ``from lucid.cuda.amp``


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the gpu device can hold ``lucid.bfloat16`` tensors: MLX has bfloat16 natively,
    so this is ``is_available()``."""
    return is_available()


def is_initialized() -> bool:
    """Whether the accelerator is ready: the same answer as ``is_available()`` (MLX sets
    itself up on first use)."""
    return is_available()


def init() -> None:
    """A no-op kept for PyTorch scripts: MLX initialises itself on first use."""
