"""``lucid.gpu``: the "gpu" device, which runs on MLX.

MLX runs on Metal (Apple silicon), on CUDA (MLX's CUDA build on NVIDIA machines) or, where
neither is present, on its CPU stream, so code written for "gpu" runs on every machine with
MLX installed (``pip install "lucid-jit[gpu]"``). Importing this module never imports MLX;
the functions below do, when called.

Example::

    import lucid
    device = "gpu" if lucid.gpu.is_available() else "cpu"
    lucid.gpu.backend()        # "metal", "cuda" or "cpu"
"""

from __future__ import annotations

import importlib.util
from typing import Any

from ._device import device as _device
from .backend import get_backend

__all__ = [
    "is_available", "is_installed", "backend", "device_count", "current_device",
    "get_device_name", "synchronize", "empty_cache", "memory_allocated",
    "max_memory_allocated", "reset_peak_memory_stats", "manual_seed", "manual_seed_all",
    "memory_reserved", "set_device", "get_device_properties", "DeviceProperties",
]


def _be() -> Any:
    return get_backend("gpu")


def is_installed() -> bool:
    """Whether MLX is installed, so the "gpu" device can be used (at least on MLX's CPU stream).

    Example::

        lucid.gpu.is_installed()    # True after pip install "lucid-jit[gpu]"
    """
    try:
        return importlib.util.find_spec("mlx") is not None
    except (ImportError, ValueError):
        return False


def backend() -> str:
    """Where the "gpu" device runs: ``"metal"``, ``"cuda"`` or ``"cpu"`` (MLX's CPU stream).

    Raises a RuntimeError that says how to install MLX when it is missing.

    Example::

        lucid.gpu.backend()    # "cpu" on a Linux machine without a GPU
    """
    if not is_installed():
        get_backend("gpu")  # raises the install hint
    # NOTE: _gpu_common imports MLX, an optional dependency: only when the gpu is asked about
    from .backend._gpu_common import detect

    return detect()


def is_available() -> bool:
    """Whether MLX has an accelerator here (Metal or CUDA), as ``torch.cuda.is_available()``.

    False without MLX and on machines where "gpu" would run on MLX's CPU stream.

    Example::

        device = "cuda" if lucid.cuda.is_available() else "cpu"
    """
    if not is_installed():
        return False
    try:
        return backend() != "cpu"
    except (ImportError, RuntimeError):
        return False


def device_count() -> int:
    """1 where an MLX accelerator is present, else 0.

    Example::

        lucid.gpu.device_count()    # 0 on a machine without Metal or CUDA
    """
    return 1 if is_available() else 0


def current_device() -> int:
    """Always 0: lucid drives one "gpu" device."""
    return 0


def get_device_name(device: Any = None) -> str:
    """A readable name of the device MLX runs on, e.g. ``"MLX metal (Apple M2)"``."""
    return _be().device_name()


def synchronize(device: Any = None) -> None:
    """Wait for every scheduled computation on the "gpu" device (results are always correct
    without it; it matters for timing)."""
    _be().synchronize()


def empty_cache() -> None:
    """Release MLX's cached, unused buffers."""
    _be().empty_cache()


def memory_allocated(device: Any = None) -> int:
    """Bytes held by live arrays on the "gpu" device."""
    return _be().memory_allocated()


def max_memory_allocated(device: Any = None) -> int:
    """The peak of ``memory_allocated``."""
    return _be().max_memory_allocated()


def reset_peak_memory_stats(device: Any = None) -> None:
    """Restart the peak that ``max_memory_allocated`` reports."""
    _be().reset_peak_memory_stats()


def memory_reserved(device: Any = None) -> int:
    """Bytes MLX holds for the "gpu" device: live arrays plus its buffer cache (where the
    backend reports the cache), so never less than ``memory_allocated``."""
    be = _be()
    cache = getattr(be, "cache_memory", None)
    return be.memory_allocated() + (int(cache()) if cache is not None else 0)


def set_device(device: Any) -> None:
    """Select the "gpu" device: index 0 (or a "gpu"/"cuda" device without another index) is
    accepted; a negative index is a no-op, as in PyTorch; any other index is an error."""
    if device is None:
        return
    if isinstance(device, int) and not isinstance(device, bool):
        idx = device
    else:
        d = _device(device)
        if d.type != "gpu":
            raise ValueError(f"Expected a gpu device, but got: {d}")
        idx = d.index if d.index is not None else 0
    if idx > 0:
        raise RuntimeError(f"Invalid device ordinal {idx}: lucid drives one \"gpu\" device "
                           "(index 0)")


class DeviceProperties:
    """What ``get_device_properties`` returns (the fields PyTorch scripts read):
    ``name``, ``total_memory`` (bytes; 0 when MLX does not report it), ``major``/``minor``
    (0: no CUDA compute capability) and ``multi_processor_count`` (0)."""

    def __init__(self, name: str, total_memory: int) -> None:
        self.name = name
        self.total_memory = total_memory
        self.major = 0
        self.minor = 0
        self.multi_processor_count = 0

    def __repr__(self) -> str:
        return (f"_DeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device: Any = None) -> DeviceProperties:
    """The name and memory size of the device MLX runs on.

    Example::

        lucid.cuda.get_device_properties(0).name    # e.g. "MLX metal (Apple M2)"
    """
    set_device(device)  # validates the index
    be = _be()
    limit = getattr(be, "memory_limit", None)
    return DeviceProperties(be.device_name(), int(limit()) if limit is not None else 0)


def manual_seed(seed: int) -> None:
    """A no-op kept for PyTorch scripts: lucid draws random numbers for every device from one
    host generator, which ``lucid.manual_seed`` seeds."""


def manual_seed_all(seed: int) -> None:
    """A no-op kept for PyTorch scripts (see ``manual_seed``)."""
