"""numba kernels: pure functions over numpy arrays (no Tensor, no autograd).

Importing this package is cheap: numba and the kernel modules load on first attribute
access, and kernels compile on first call (or ahead of time with ``warmup``).
``lucid.kernels._threads.configure()`` must stay importable without numpy.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "cache_dir",
    "cache_enabled",
    "clear_cache",
    "elementwise",
    "matmul",
    "reduce",
    "registry",
    "warmup",
]

_MODULES = {"elementwise", "matmul", "reduce", "warmup_mod"}


def __getattr__(name: str) -> Any:
    if name in ("elementwise", "matmul", "reduce"):
        return importlib.import_module(f"{__name__}.{name}")
    if name in ("cache_dir", "cache_enabled", "clear_cache"):
        return getattr(importlib.import_module(f"{__name__}._jit"), name)
    if name == "registry":
        from .warmup import registry

        return registry
    if name == "warmup":
        from .warmup import warmup

        return warmup
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
