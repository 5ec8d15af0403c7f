"""The "cpu" backend: numpy arrays, with numba kernels where they measure faster."""

from __future__ import annotations

from .numpy_ref import NumpyBackend


class CpuBackend(NumpyBackend):
    """numpy + lucid.kernels. Each override below names the figure that justifies it."""

    name = "cpu"
