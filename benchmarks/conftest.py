"""Shared fixtures for the benchmark suites: lucid, plain numpy and (when installed) torch
run the same work side by side, grouped by op and size."""

from __future__ import annotations

import pytest

try:
    import torch
except ImportError:  # torch is only an optional oracle
    torch = None


@pytest.fixture
def torch_or_skip():
    if torch is None:
        pytest.skip("torch is not installed")
    return torch
