"""Backends by device name: "cpu" (numpy + lucid.kernels) and, on request, "gpu" (mlx).

Backends load lazily and are cached; ``import lucid`` never imports mlx. ``transfer`` (from
``lucid._convert``) moves an array from one backend to another.
"""

from __future__ import annotations

import importlib
from typing import Any

from .._convert import transfer
from .._device import device_name

__all__ = ["get_backend", "register_backend", "available_backends", "transfer"]

_FACTORIES: dict[str, str | Any] = {
    "cpu": "lucid.backend.cpu:CpuBackend",
    "numpy": "lucid.backend.numpy_ref:NumpyBackend",
    "gpu": "lucid.backend.gpu:GpuBackend",
}
_CACHE: dict[str, Any] = {}


def register_backend(name: str, factory: Any) -> None:
    """Register a backend class (or ``"module:Class"`` path) under a device name."""
    _FACTORIES[name] = factory
    _CACHE.pop(name, None)


def available_backends() -> list[str]:
    return list(_FACTORIES)


def get_backend(dev: object = None) -> Any:
    """The backend object for a device spec (cached)."""
    if dev.__class__ is str:
        be = _CACHE.get(dev)  # type: ignore[arg-type]
        if be is not None:
            return be
    elif hasattr(dev, "dtype_of"):  # already a backend
        return dev
    name = device_name(dev)
    be = _CACHE.get(name)  # type: ignore[arg-type]
    if be is not None:
        return be
    factory = _FACTORIES.get(name)  # type: ignore[arg-type]
    if factory is None:
        raise RuntimeError(
            f"unknown device '{dev}'; expected one of: {', '.join(sorted(_FACTORIES))}"
        )
    if isinstance(factory, str):
        mod, _, cls = factory.partition(":")
        factory = getattr(importlib.import_module(mod), cls)
    be = factory()
    _CACHE[name] = be  # type: ignore[index]
    return be
