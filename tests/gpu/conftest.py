"""Fixtures for the gpu-specific tests (device transfer, streams, zero-size work in child
processes, ...); everything here skips without MLX. The op table and ``tests/nn_ops`` run on
"gpu" through their own ``backend`` parametrization (``devices.DEVICES``)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from devices import HAS_MLX, float64_need, gpu_backend, gpu_float64

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)

if not HAS_MLX:  # pragma: no cover - machines without the extra
    collect_ignore_glob = ["test_*.py"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests of this folder that explicitly need float64 (marked ``float64``, or running a
    gradcheck, which is float64 by definition) skip on a stream without it; no other test is
    excused."""
    if not HAS_MLX or gpu_float64():  # pragma: no cover
        return
    here = HERE + os.sep
    kind = gpu_backend().kind  # type: ignore[attr-defined]
    for item in items:
        need = float64_need(item) if str(item.path).startswith(here) else None
        if need is not None:
            item.add_marker(pytest.mark.skip(
                reason=f"needs float64 ({need}), which the MLX {kind} stream lacks"))


@pytest.fixture
def gpu_be() -> object:
    return gpu_backend()


@pytest.fixture
def wide_float() -> object:
    """The widest float dtype the gpu stream has: float64 on MLX's CPU stream, float32 on
    Metal and CUDA."""
    return np.float64 if gpu_float64() else np.float32
