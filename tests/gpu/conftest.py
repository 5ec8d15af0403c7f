"""Fixtures for the "gpu" device tests: ``backend`` is "gpu" here, so backend-parametrized
tests of other folders re-run on the gpu device (``reuse.py``); everything skips without MLX."""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
import warnings

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)

if importlib.util.find_spec("mlx") is None:  # pragma: no cover - machines without the extra
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(params=["gpu"])
def backend(request: pytest.FixtureRequest) -> str:
    """Backend-parametrized tests imported into this folder run on the "gpu" device."""
    return request.param


def _gpu() -> object:
    """The gpu backend; the one-time "MLX's CPU stream" warning is expected here.
    ``LUCID_TEST_GPU_NO_FLOAT64=1`` makes it refuse float64 as Metal and CUDA do, so the
    float32 path of this suite can be exercised on MLX's CPU stream too."""
    from lucid.backend import get_backend

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        be = get_backend("gpu")
    if os.environ.get("LUCID_TEST_GPU_NO_FLOAT64") == "1":
        be.float64 = False
    return be


def _float64_need(item: pytest.Item) -> str | None:
    """Why the test needs float64, or None: its ``float64`` mark's reason, or a gradcheck
    in its body (gradchecks are float64 by definition)."""
    mark = item.get_closest_marker("float64")
    if mark is not None:
        return str(mark.args[0]) if mark.args else "float64 data"
    fn = getattr(item, "function", None)
    try:
        src = inspect.getsource(fn) if fn is not None else ""
    except (OSError, TypeError):
        src = ""
    return "a float64 gradcheck" if "gradcheck(" in src else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that explicitly need float64 (marked ``float64``, or running a gradcheck, which
    is float64 by definition) skip on a stream without it; no other test is excused."""
    if importlib.util.find_spec("mlx") is None:  # pragma: no cover
        return
    here = HERE + os.sep
    be = _gpu()
    if be.float64:  # type: ignore[attr-defined]
        return
    kind = be.kind  # type: ignore[attr-defined]
    for item in items:
        need = _float64_need(item) if str(item.path).startswith(here) else None
        if need is not None:
            item.add_marker(pytest.mark.skip(
                reason=f"needs float64 ({need}), which the MLX {kind} stream lacks"))


@pytest.fixture
def gpu_be() -> object:
    from lucid.backend import get_backend

    return get_backend("gpu")


def f64_ok() -> bool:
    """Whether the gpu stream has float64 (MLX's CPU stream does; Metal and CUDA do not)."""
    return bool(_gpu().float64)  # type: ignore[attr-defined]


@pytest.fixture
def wide_float() -> object:
    """The widest float dtype the gpu stream has: float64 on MLX's CPU stream, float32 on
    Metal and CUDA (overrides the root fixture of the same name)."""
    return np.float64 if f64_ok() else np.float32
