"""Shared fixtures: the backend parametrization, seeding and global-state hygiene."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))  # op_db / opinfo helpers

import lucid  # noqa: E402

BACKENDS = ("cpu", "numpy")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Every backend test runs on "cpu" and on the plain-numpy reference backend."""
    return request.param


@pytest.fixture(autouse=True)
def _lucid_state() -> object:
    """Seed every test and restore global state a test may have changed."""
    lucid.manual_seed(0)
    np.random.seed(0)
    dtype = lucid.get_default_dtype()
    yield
    lucid.set_grad_enabled(True)
    lucid.set_default_dtype(dtype)


@pytest.fixture
def torch() -> object:
    """The torch module, or a skip when it is not installed."""
    return pytest.importorskip("torch")
