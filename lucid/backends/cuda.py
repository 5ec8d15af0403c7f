"""``lucid.backends.cuda``: PyTorch's ``torch.backends.cuda`` switches, kept so scripts that set
them run unchanged. lucid's "gpu" device computes float32 in float32 whatever they say.

Example::

    lucid.backends.cuda.matmul.allow_tf32 = True     # same as set_float32_matmul_precision("high")
"""

from __future__ import annotations

from typing import Any

from .. import gpu
from ._precision import get_float32_matmul_precision, set_float32_matmul_precision

__all__ = ["matmul", "is_built", "preferred_linalg_library", "enable_flash_sdp",
           "flash_sdp_enabled", "enable_math_sdp", "math_sdp_enabled",
           "enable_mem_efficient_sdp", "mem_efficient_sdp_enabled"]


class _Matmul:
    """``lucid.backends.cuda.matmul``: ``allow_tf32`` mirrors the float32 matmul precision
    (True unless it is "highest"); the reduced-precision-reduction flags are kept as set.
    Unknown attributes raise AttributeError, as in PyTorch."""

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {"allow_fp16_reduced_precision_reduction": True,
                                            "allow_bf16_reduced_precision_reduction": True})

    @property
    def allow_tf32(self) -> bool:
        return get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        set_float32_matmul_precision("high" if value else "highest")

    def __getattr__(self, name: str) -> Any:
        flags = object.__getattribute__(self, "_flags")
        if name in flags:
            return flags[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "allow_tf32":
            object.__setattr__(self, name, value)
        elif name in self._flags:
            self._flags[name] = bool(value)
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = _Matmul()
_sdp = {"flash": True, "math": True, "mem_efficient": True}


def is_built() -> bool:
    """Whether MLX (which provides the "gpu" device, also under the name "cuda") is
    installed."""
    return gpu.is_installed()


def preferred_linalg_library(backend: Any = None) -> str:
    """Accepted for PyTorch scripts; lucid has one linear-algebra path. Returns "default"."""
    return "default"


def enable_flash_sdp(enabled: bool) -> None:
    """Accepted for PyTorch scripts: lucid's scaled_dot_product_attention has one path."""
    _sdp["flash"] = bool(enabled)


def flash_sdp_enabled() -> bool:
    """The flag last given to ``enable_flash_sdp`` (True by default)."""
    return _sdp["flash"]


def enable_math_sdp(enabled: bool) -> None:
    """Accepted for PyTorch scripts: lucid's scaled_dot_product_attention has one path."""
    _sdp["math"] = bool(enabled)


def math_sdp_enabled() -> bool:
    """The flag last given to ``enable_math_sdp`` (True by default)."""
    return _sdp["math"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Accepted for PyTorch scripts: lucid's scaled_dot_product_attention has one path."""
    _sdp["mem_efficient"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    """The flag last given to ``enable_mem_efficient_sdp`` (True by default)."""
    return _sdp["mem_efficient"]
