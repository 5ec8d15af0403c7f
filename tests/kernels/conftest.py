"""Fixtures for kernel tests: seeded data, and a switch that forces the serial or parallel build."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lucid.kernels import elementwise, pointwise, reduce

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


@pytest.fixture(params=["serial", "parallel"])
def build(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test once with every kernel's serial build and once with its parallel build."""
    par = request.param == "parallel"
    monkeypatch.setattr(reduce, "use_parallel", lambda n, kind="reduce": par)
    monkeypatch.setattr(elementwise, "use_parallel", lambda n, kind="reduce": par)
    monkeypatch.setattr(pointwise, "use_parallel", lambda n, kind="reduce": par)
    return request.param


# Makes ``lucid`` a bare namespace so that ``lucid.kernels`` loads without lucid/__init__.py:
# proves the kernels depend on nothing else in lucid and keeps subprocesses light.
ISOLATE = (
    "import sys, types; _m = types.ModuleType('lucid'); _m.__path__ = [{root!r}]; "
    "sys.modules['lucid'] = _m\n"
)


# Set by lucid's thread policy inside this test process; subprocesses start without them.
POLICY_VARS = ("OPENBLAS_THREAD_TIMEOUT", "GOMP_SPINCOUNT")


def run_python(
    code: str, env: dict[str, str] | None = None, timeout: float = 300, isolated: bool = True
) -> str:
    """Run ``code`` in a fresh interpreter at the repository root; return stdout, fail on error."""
    if isolated:
        code = ISOLATE.format(root=str(REPO / "lucid")) + code
    full_env = {k: v for k, v in os.environ.items() if k not in POLICY_VARS}
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout


@pytest.fixture
def run_py():
    """``run_py(code, env=None, isolated=True)``: run code in a fresh interpreter, return stdout."""
    return run_python


@pytest.fixture
def repo() -> Path:
    return REPO
