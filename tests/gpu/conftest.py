"""Fixtures for the "gpu" device tests: ``backend`` is "gpu" here, so backend-parametrized
tests of other folders re-run on the gpu device (``reuse.py``); everything skips without MLX."""

from __future__ import annotations

import importlib.util
import os
import sys
import warnings

import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)

if importlib.util.find_spec("mlx") is None:  # pragma: no cover - machines without the extra
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(params=["gpu"])
def backend(request: pytest.FixtureRequest) -> str:
    """Backend-parametrized tests imported into this folder run on the "gpu" device."""
    return request.param


@pytest.fixture(scope="session", autouse=True)
def _quiet_cpu_stream() -> None:
    """The one-time "MLX's CPU stream" warning is expected here; issue it up front."""
    from lucid.backend import get_backend

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        get_backend("gpu")


@pytest.fixture
def gpu_be() -> object:
    from lucid.backend import get_backend

    return get_backend("gpu")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    """On Metal and CUDA, which have no float64, a test that needs it is skipped (it runs on
    MLX's CPU stream, where float64 exists)."""
    outcome = yield
    rep = outcome.get_result()  # type: ignore[attr-defined]
    exc = call.excinfo
    if exc is not None and call.when == "call" and isinstance(exc.value, TypeError) \
            and "float64 is not supported on the MLX" in str(exc.value):
        rep.outcome = "skipped"
        rep.longrepr = (str(item.path), item.location[1] or 0,
                        "Skipped: float64 is not supported on this gpu stream")
    return rep


def f64_ok() -> bool:
    """Whether the gpu stream has float64 (MLX's CPU stream does; Metal and CUDA do not)."""
    from lucid.backend import get_backend

    return bool(get_backend("gpu").float64)
