"""``lucid.backends.mps``: whether lucid's "gpu" device runs on Apple's Metal.

``"mps"`` is accepted as a name of lucid's "gpu" device, which MLX runs on Metal on Apple
silicon.

Example::

    device = "mps" if lucid.backends.mps.is_available() else "cpu"
"""

from __future__ import annotations

from ..gpu import backend, is_installed

__all__ = ["is_available", "is_built"]


def is_built() -> bool:
    """Whether MLX (which provides the Metal device) is installed."""
    return is_installed()


def is_available() -> bool:
    """Whether MLX runs lucid's "gpu" device on Metal here."""
    if not is_installed():
        return False
    try:
        return backend() == "metal"
    except (ImportError, RuntimeError):
        return False
