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

from .gpu import (
    current_device,
    device_count,
    empty_cache,
    get_device_name,
    is_available,
    manual_seed,
    manual_seed_all,
    max_memory_allocated,
    memory_allocated,
    reset_peak_memory_stats,
    synchronize,
)

__all__ = [
    "is_available", "device_count", "current_device", "get_device_name", "synchronize",
    "empty_cache", "memory_allocated", "max_memory_allocated", "reset_peak_memory_stats",
    "manual_seed", "manual_seed_all", "is_bf16_supported",
]


def is_bf16_supported() -> bool:
    """False: lucid has no bfloat16 dtype."""
    return False
