"""Shared fixtures for the benchmark suites: lucid, plain numpy and (when installed) torch
run the same work side by side, grouped by op and size."""

from __future__ import annotations

import pytest


@pytest.fixture
def torch_or_skip():
    """torch, imported only by the tests that ask for it (skips when torch is absent)."""
    # NOTE: imported here, not at collection: torch's OpenMP pool in a lucid-only run would be
    # shared with numba's parallel kernels and slow both (see benchmarks/README.md)
    torch = pytest.importorskip("torch")
    return torch
