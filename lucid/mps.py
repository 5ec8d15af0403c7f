"""``lucid.mps``: PyTorch's ``torch.mps`` names for lucid's "gpu" device when MLX runs it on
Apple's Metal (``"mps"`` is accepted wherever a device is named and means "gpu").

Example::

    device = "mps" if lucid.mps.is_available() else "cpu"
"""

from __future__ import annotations

from . import gpu
from .backends.mps import is_available

__all__ = ["is_available", "device_count", "synchronize", "empty_cache",
           "current_allocated_memory", "driver_allocated_memory", "manual_seed", "seed"]


def device_count() -> int:
    """1 where MLX runs on Metal, else 0."""
    return 1 if is_available() else 0


def synchronize() -> None:
    """Wait for every scheduled computation on the "gpu" device (a no-op without MLX)."""
    if gpu.is_installed():
        gpu.synchronize()


def empty_cache() -> None:
    """Release MLX's cached, unused buffers (a no-op without MLX)."""
    if gpu.is_installed():
        gpu.empty_cache()


def current_allocated_memory() -> int:
    """Bytes held by live arrays on the "gpu" device."""
    return gpu.memory_allocated()


def driver_allocated_memory() -> int:
    """Bytes MLX holds for the "gpu" device (live arrays plus its cache)."""
    return gpu.memory_reserved()


def manual_seed(seed: int) -> None:
    """A no-op kept for PyTorch scripts: ``lucid.manual_seed`` seeds every device."""


def seed() -> None:
    """A no-op kept for PyTorch scripts: ``lucid.seed`` reseeds every device."""
