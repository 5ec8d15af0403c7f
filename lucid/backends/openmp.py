"""``lucid.backends.openmp``: whether lucid's parallel CPU kernels can use OpenMP threads.

Example::

    lucid.backends.openmp.is_available()
"""

from __future__ import annotations

import importlib.util

__all__ = ["is_available"]


def is_available() -> bool:
    """Whether numba's OpenMP threading layer (one of the layers lucid's parallel kernels can
    run on) is present."""
    try:
        return importlib.util.find_spec("numba.np.ufunc.omppool") is not None
    except (ImportError, ValueError):
        return False
