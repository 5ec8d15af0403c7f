"""``lucid.accelerator``: PyTorch's device-generic ``torch.accelerator`` API for lucid's "gpu"
device (MLX).

lucid has one accelerator, the "gpu" device, with one index (0). It can be used wherever MLX
is installed: on Metal, on CUDA or, without either, on MLX's CPU stream.
``current_accelerator()`` therefore returns ``lucid.device("gpu")`` whenever MLX is installed
(PyTorch's "built with an accelerator"), while ``is_available()`` and ``device_count()`` say
whether MLX has real accelerator hardware here, exactly as ``lucid.cuda.is_available()``.

Example::

    import lucid
    acc = lucid.accelerator.current_accelerator(check_available=True)
    device = acc if acc is not None else lucid.device("cpu")
    model.to(device)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from . import gpu
from ._device import device

__all__ = [
    "is_available", "current_accelerator", "device_count", "current_device_index",
    "current_device_idx", "set_device_index", "set_device_idx", "synchronize", "device_index",
    "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "reset_peak_memory_stats",
]

_NONE = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    """Whether the accelerator has real hardware here (MLX on Metal or CUDA); the same answer
    as ``lucid.cuda.is_available()``.

    Example::

        lucid.accelerator.is_available()    # False where "gpu" runs on MLX's CPU stream
    """
    return gpu.is_available()


def current_accelerator(check_available: bool = False) -> device | None:
    """``lucid.device("gpu")`` when MLX is installed (so the "gpu" device can be used), else
    None. With ``check_available=True`` also None unless ``is_available()``.

    Example::

        acc = lucid.accelerator.current_accelerator()
        print(acc)    # gpu
    """
    if not gpu.is_installed():
        return None
    if check_available and not is_available():
        return None
    return device("gpu")


def device_count() -> int:
    """Number of accelerator devices: 1 with Metal or CUDA under MLX, else 0."""
    return gpu.device_count()


def _check() -> None:
    if not gpu.is_installed():
        raise RuntimeError(_NONE)


def current_device_index() -> int:
    """The selected device index: always 0 (lucid drives one "gpu" device).

    Raises RuntimeError when MLX is not installed (no accelerator at all).
    """
    _check()
    return 0


current_device_idx = current_device_index


def _index(dev: Any) -> int | None:
    """The index named by ``dev`` (an int, a device, a string or None), checked against the
    accelerator's type."""
    if dev is None:
        return None
    if isinstance(dev, bool) or not isinstance(dev, (int, str, device)) and not hasattr(
            dev, "type"):
        raise TypeError(f"expected a device index, a device or a device string, got {dev!r}")
    if isinstance(dev, int):
        return dev
    d = device(dev if isinstance(dev, (str, device)) else str(dev))
    if d.type != "gpu":
        raise ValueError(f"{d.type} doesn't match the current accelerator gpu.")
    return d.index if d.index is not None else 0


def set_device_index(device: Any, /) -> None:  # noqa: A002 - PyTorch's name
    """Select the accelerator device; only index 0 exists (a negative index is a no-op).

    Example::

        lucid.accelerator.set_device_index(0)
    """
    _check()
    idx = _index(device)
    if idx is None or idx < 0 or idx == 0:
        return
    raise RuntimeError(f"Invalid device index {idx}: lucid drives one \"gpu\" device (index 0)")


set_device_idx = set_device_index


def synchronize(device: Any = None, /) -> None:  # noqa: A002 - PyTorch's name
    """Wait for every scheduled computation on the "gpu" device (a no-op without MLX)."""
    _index(device)
    if gpu.is_installed():
        gpu.synchronize()


@contextmanager
def device_index(device: int | None, /) -> Iterator[None]:  # noqa: A002 - PyTorch's name
    """Context manager selecting a device index for its body (None: no switch).

    Example::

        with lucid.accelerator.device_index(0):
            y = model(x.to("gpu"))
    """
    if device is not None:
        set_device_index(device)
    yield


def empty_cache() -> None:
    """Release MLX's cached, unused buffers (a no-op without MLX)."""
    if gpu.is_installed():
        gpu.empty_cache()


def memory_allocated(device_index: Any = None, /) -> int:
    """Bytes held by live arrays on the "gpu" device."""
    _check()
    _index(device_index)
    return gpu.memory_allocated()


def max_memory_allocated(device_index: Any = None, /) -> int:
    """The peak of ``memory_allocated``."""
    _check()
    _index(device_index)
    return gpu.max_memory_allocated()


def memory_reserved(device_index: Any = None, /) -> int:
    """Bytes MLX holds for the "gpu" device: live arrays plus its cache."""
    _check()
    _index(device_index)
    return gpu.memory_reserved()


def reset_peak_memory_stats(device_index: Any = None, /) -> None:
    """Restart the peak that ``max_memory_allocated`` reports."""
    _check()
    _index(device_index)
    gpu.reset_peak_memory_stats()
