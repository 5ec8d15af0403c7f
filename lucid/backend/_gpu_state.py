"""The device utilities of the "gpu" backend behind ``lucid.gpu`` / ``lucid.cuda``."""

from __future__ import annotations

from typing import Any

from ._gpu_common import mx

Array = Any


class GpuState:
    """Mixed into ``GpuBackend``."""

    kind = "cpu"

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
