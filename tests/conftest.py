"""Shared fixtures: the backend parametrization, seeding and global-state hygiene."""

from __future__ import annotations

import os
import re
import sys
import types

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))  # op_db / opinfo helpers
# NOTE: kernels compile where they are called, as a test expects of the path it checks (a
# cold cache would otherwise run early tests on the numpy reference); test_cold_start.py
# turns the background compile on in its own processes
os.environ.setdefault("LUCID_BACKGROUND_COMPILE", "0")

from devices import BACKENDS, float64_need, gpu_backend, gpu_float64, source  # noqa: E402

import lucid  # noqa: E402

TESTS = os.path.dirname(os.path.abspath(__file__)) + os.sep
FLOAT64_DATA = (os.path.join(TESTS, "nn_ops") + os.sep,)  # float64 data against numpy


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Every backend test runs on "cpu" and on the plain-numpy reference backend; the op table
    and ``tests/nn_ops`` widen this to ``devices.DEVICES`` (with "gpu" where MLX is installed)."""
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
def wide_float(request: pytest.FixtureRequest) -> type:
    """The widest float dtype of the device under test: float64, or float32 on a gpu stream
    without float64."""
    if "backend" in request.fixturenames and request.getfixturevalue("backend") == "gpu" \
            and not gpu_float64():
        return np.float32
    return np.float64


@pytest.fixture
def torch() -> object:
    """The torch module, or a skip when it is not installed."""
    return pytest.importorskip("torch")


_TORCH_IN_BODY = re.compile(
    r"""importorskip\(\s*["'](?:torch|safetensors\.torch)["']|^\s*import torch\b""", re.MULTILINE)


def _uses_torch(item: pytest.Item) -> bool:
    """Whether a test compares against torch: through a fixture that is (or depends on) the
    ``torch`` fixture, a module that imported torch at import time, or a body that imports it."""
    if "torch" in getattr(item, "fixturenames", ()):  # the closure: fixtures using it count
        return True
    module = getattr(item, "module", None)
    if isinstance(getattr(module, "torch", None), types.ModuleType):
        return True
    fn = getattr(item, "function", None)
    return fn is not None and _TORCH_IN_BODY.search(source(fn)) is not None


def pytest_configure(config: pytest.Config) -> None:
    # NOTE: lucid installs its filter for numpy's floating-point warnings at import; pytest
    # imported it inside a warnings context that dropped the filter on exit, so install it
    # again where every test's context inherits it
    lucid._quiet.configure()
    config.addinivalue_line(
        "markers", "float64: the test needs float64 (a gradcheck, say); on a gpu stream "
        "without float64 it is skipped, where every other gpu test runs in float32")


def _on_gpu(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    return callspec is not None and callspec.params.get("backend") == "gpu"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test that needs torch is a parity test, wherever it lives, so ``-m parity`` runs
    exactly the tests a torch-free run skips. On a gpu stream without float64, the "gpu"
    cases that need float64 are skipped; every other gpu case runs (in float32)."""
    gpu = [item for item in items if _on_gpu(item)]
    no_f64 = bool(gpu) and not gpu_float64()
    for item in items:
        if _uses_torch(item):
            item.add_marker(pytest.mark.parity)
    for item in gpu if no_f64 else ():
        need = float64_need(item, FLOAT64_DATA)
        if need is not None:
            kind = gpu_backend().kind  # type: ignore[attr-defined]
            item.add_marker(pytest.mark.skip(
                reason=f"needs float64 ({need}), which the MLX {kind} stream lacks"))
