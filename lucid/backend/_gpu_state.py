"""State the "gpu" backend keeps beside the interface: the views of each array object (views
are copies under MLX, so ``lucid.ops.inplace.sync_views`` keeps them in step with their base)
and the device utilities behind ``lucid.gpu`` / ``lucid.cuda``."""

from __future__ import annotations

import weakref
from typing import Any

from ._gpu_common import mx

Array = Any


class GpuState:
    """Mixed into ``GpuBackend``."""

    kind = "cpu"

    def __init__(self) -> None:
        self._views: dict[int, tuple[Any, list]] = {}
        self._owners: dict[int, tuple[Any, Any]] = {}

    # ---- views (copies here) ----------------------------------------------------------
    def track_view(self, root: Array, view: Any) -> None:
        """Remember a view tensor of the array object ``root`` (weakly), so in-place writes
        to the root, to any tensor holding it, or to a sibling view reach it."""
        key = id(root)
        ent = self._views.get(key)
        if ent is None or ent[0]() is not root:
            ent = (weakref.ref(root, lambda _r, k=key: self._views.pop(k, None)), [])
            self._views[key] = ent
        refs = ent[1]
        refs.append(weakref.ref(view))
        arr = view._data
        k = id(arr)
        self._owners[k] = (weakref.ref(arr, lambda _r, k=k: self._owners.pop(k, None)),
                           weakref.ref(view))
        n = len(refs)
        if n >= 32 and not n & (n - 1):  # drop dead views as the list doubles
            refs[:] = [r for r in refs if r() is not None]

    def view_owner(self, arr: Array) -> Any:
        """The view tensor whose array object is ``arr`` (None if there is none)."""
        ent = self._owners.get(id(arr))
        if ent is None or ent[0]() is not arr:
            return None
        return ent[1]()

    def views_of(self, root: Array) -> list:
        """The live view tensors of the array object ``root``."""
        ent = self._views.get(id(root))
        if ent is None or ent[0]() is not root:
            return []
        return [v for v in (r() for r in ent[1]) if v is not None]

    # ---- device utilities (lucid.gpu / lucid.cuda) -------------------------------------
    @staticmethod
    def synchronize() -> None:
        """Wait until every scheduled MLX computation has finished."""
        mx.synchronize()

    @staticmethod
    def empty_cache() -> None:
        """Return MLX's cached, unused buffers to the system."""
        mx.clear_cache()

    @staticmethod
    def memory_allocated() -> int:
        """Bytes held by live MLX arrays."""
        return int(mx.get_active_memory())

    @staticmethod
    def max_memory_allocated() -> int:
        """Peak of ``memory_allocated`` since start or ``reset_peak_memory_stats``."""
        return int(mx.get_peak_memory())

    @staticmethod
    def reset_peak_memory_stats() -> None:
        mx.reset_peak_memory()

    def device_name(self) -> str:
        info: dict = {}
        try:
            info = dict(mx.device_info()) if self.kind != "cpu" else {}
        except (AttributeError, RuntimeError, ValueError):
            pass
        name = info.get("device_name") or info.get("architecture")
        return f"MLX {self.kind}" + (f" ({name})" if name else "")
