"""numba kernels: pure functions over numpy arrays (no Tensor, no autograd).

Importing this package is cheap: numba and the kernel modules load on first attribute
access, and kernels compile on first call (or ahead of time with ``warmup``).
``lucid.kernels._threads.configure()`` must stay importable without numpy.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

__all__ = ["cache_dir", "cache_enabled", "clear_cache", "registry", "warmup"]


def __getattr__(name: str) -> Any:
    if name in ("cache_dir", "cache_enabled", "clear_cache"):
        return getattr(importlib.import_module(f"{__name__}._jit"), name)
    if name == "registry":
        return importlib.import_module(f"{__name__}.warmup").registry
    if name == "warmup":  # the module is callable: lucid.kernels.warmup(dtypes=...)
        return importlib.import_module(f"{__name__}.warmup")
    if not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")  # kernel modules load on first use
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
