"""``lucid.__config__``: a readable summary of how lucid runs here, as ``torch.__config__``.

Example::

    print(lucid.__config__.show())
"""

from __future__ import annotations

import platform
from importlib.metadata import version

import numpy as np

from . import gpu
from ._version import __version__
from .kernels import _threads

__all__ = ["show", "parallel_info"]


def show() -> str:
    """The lucid, Python, numpy and numba versions and the "gpu" device's MLX status."""
    mlx = "not installed"
    if gpu.is_installed():
        try:
            mlx = f"installed, runs on {gpu.backend()}"
        except (ImportError, RuntimeError) as e:
            mlx = f"installed, unusable ({e})"
    return (f"lucid {__version__}:\n"
            f"  - Python {platform.python_version()} on {platform.platform()}\n"
            f"  - numpy {np.__version__} (CPU arrays, BLAS)\n"
            f"  - numba {version('numba')} (CPU kernels)\n"
            f"  - MLX: {mlx} (the \"gpu\" device)\n")


def parallel_info() -> str:
    """The thread counts lucid's CPU kernels use."""
    import numba  # NOTE: importing numba costs ~0.4 s; ``import lucid`` does not pay it

    return (f"lucid {__version__} parallel info:\n"
            f"numba threads: {_threads.get_num_threads()}\n"
            f"numba threading layer: {numba.config.THREADING_LAYER}\n"
            f"thread policy: {_threads.state()}\n")
