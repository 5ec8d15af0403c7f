"""A cold kernel cache: ops run on the numpy reference while their kernels compile in a helper
process (lucid/_background_compile.py), and nothing of that reaches the user's results
beyond float rounding, or at all in deterministic mode.

Each run is a fresh interpreter with its own ``LUCID_CACHE_DIR``; the test suite itself
compiles in the foreground (conftest.py), these children turn the background on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid import _background_compile as bg
from lucid import _first_run
from lucid._background_compile import KernelNotReady, catcher
from lucid.backend._fallback import falls_back_to
from lucid.backend.cpu import CpuBackend
from lucid.backend.numpy_ref import NumpyBackend

# a small classifier whose step runs kernels at these sizes: the GEMMs, layer norm, ReLU,
# log-softmax + NLL and Adam
TRAIN = r"""
import hashlib, json, os, sys
import lucid, lucid.nn as nn, lucid.nn.functional as F
from lucid import _background_compile as bg
if os.environ.get("DETERMINISTIC") == "1":
    lucid.use_deterministic_algorithms(True)
lucid.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.LayerNorm(128), nn.ReLU(), nn.Linear(128, 10))
opt = lucid.optim.Adam(model.parameters(), lr=1e-2)
x = lucid.randn(256, 64)
y = lucid.randint(0, 10, (256,))
losses = []
for _ in range(int(os.environ.get("STEPS", "4"))):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
h = hashlib.sha256()
for p in model.parameters():
    h.update(p.detach().numpy().tobytes())
server = bg._STATE["server"]
print(json.dumps({"losses": losses, "weights": h.hexdigest(), "deferred": bg.started(),
                  "helper": None if server is None else server.pid}), flush=True)
if os.environ.get("THEN") == "kill":
    os.kill(os.getpid(), 9)
"""


def _run(cache: Path, *, deterministic: bool = False, background: bool = True,
         then: str = "", steps: int = 4, timeout: float = 600) -> dict:
    env = dict(os.environ, LUCID_CACHE_DIR=str(cache), LUCID_COMPILE_NOTICE="0",
               LUCID_BACKGROUND_COMPILE="1" if background else "0",
               DETERMINISTIC="1" if deterministic else "0", THEN=then, STEPS=str(steps))
    r = subprocess.run([sys.executable, "-c", TRAIN], capture_output=True, text=True, env=env,
                       timeout=timeout)
    if then != "kill":
        assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _gone(pid: int, within: float = 20.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if Path(f"/proc/{pid}/stat").is_file() and \
                Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z"):
            return True  # a zombie: ended, waiting to be reaped by init
        time.sleep(0.1)
    return False


@pytest.mark.slow
def test_deterministic_mode_gives_the_same_bits_cold_and_warm(tmp_path: Path) -> None:
    # the cold run waits for each kernel from the helper, then runs the code it cached
    cold = _run(tmp_path, deterministic=True)
    warm = _run(tmp_path, deterministic=True)
    assert cold["deferred"] and not warm["deferred"]
    assert cold["losses"] == warm["losses"]
    assert cold["weights"] == warm["weights"]


@pytest.mark.slow
def test_default_cold_run_defers_and_agrees_with_a_warm_run_to_rounding(tmp_path: Path
                                                                       ) -> None:
    cold = _run(tmp_path)
    assert cold["deferred"]  # the kernels compiled in a helper while numpy ran the ops
    assert cold["helper"] is not None and _gone(cold["helper"])  # it ended with its parent
    _run(tmp_path, background=False)  # fill the cache with everything the step calls
    warm = _run(tmp_path)
    assert not warm["deferred"]
    np.testing.assert_allclose(cold["losses"], warm["losses"], rtol=2e-5)


@pytest.mark.slow
def test_a_killed_run_ends_its_helper_and_leaves_a_usable_cache(tmp_path: Path) -> None:
    # the parent dies by SIGKILL right after its steps, the helper mid-compile: the helper
    # sees its stdin close and exits; the next runs read or rebuild what was cut short
    first = _run(tmp_path, then="kill", steps=1)
    assert first["deferred"] and _gone(first["helper"])
    again = _run(tmp_path, background=False, steps=1)
    np.testing.assert_allclose(again["losses"], first["losses"], rtol=2e-5)
    # an index entry whose data file is gone (a kill between numba's two writes) rebuilds
    for f in tmp_path.rglob("*.nbc"):
        f.unlink()
    rebuilt = _run(tmp_path, background=False, steps=1)
    assert rebuilt["losses"] == again["losses"]


def test_every_kernel_method_of_the_cpu_backend_falls_back_to_the_reference() -> None:
    for name, attr in vars(CpuBackend).items():
        if name.startswith("_") or not hasattr(NumpyBackend, name):
            continue
        fn = attr.__func__ if isinstance(attr, staticmethod) else attr
        if callable(fn):
            assert hasattr(fn, "__wrapped__"), f"CpuBackend.{name} has no reference fallback"


def test_a_method_whose_kernel_is_not_ready_runs_the_reference_with_the_same_arguments(
) -> None:
    calls = []

    class Ref:
        @staticmethod
        def twice(x: np.ndarray) -> np.ndarray:
            calls.append("ref")
            return x * 2

    @falls_back_to(Ref)
    class Fast(Ref):
        @staticmethod
        def twice(x: np.ndarray) -> np.ndarray:
            calls.append("fast")
            raise KernelNotReady("k")

    out = Fast.twice(np.arange(3.0))
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])
    assert calls == ["fast", "ref"]


def test_a_catcher_mismatched_with_its_reference_is_refused() -> None:
    class Ref:
        def f(self) -> None: ...

    with pytest.raises(TypeError, match="both be static methods"):
        @falls_back_to(Ref)
        class Fast(Ref):
            @staticmethod
            def f() -> None: ...


def _probe() -> bool:
    # stands for the two frames between a kernel's cache miss and ``_caught``
    return (lambda: bg._caught())()  # noqa: SLF001


@catcher
def _catching() -> bool:
    return _probe()


@catcher
def _catching_then_reference() -> bool:
    return bg.compiling_here(_probe)


@catcher
def _reference_with_an_inner_catcher() -> bool:
    return bg.compiling_here(_catching)


def test_deferral_needs_a_catcher_nearer_than_any_reference_path() -> None:
    assert _probe() is False  # a kernel called directly compiles where it is called
    assert _catching() is True
    assert _catching_then_reference() is False  # a reference path has nothing to fall to
    assert _reference_with_an_inner_catcher() is True


def test_helper_exits_when_its_parent_closes_the_pipe() -> None:
    p = subprocess.Popen([sys.executable, "-m", "lucid._compile_server"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    p.stdin.close()  # type: ignore[union-attr]
    assert p.wait(60) == 0


def test_deterministic_mode_and_benchmarks_wait_for_the_helper_instead_of_deferring(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "pytest_benchmark", raising=False)
    was = bg._STATE["enabled"]  # noqa: SLF001
    bg.set_enabled(True)
    try:
        lucid.use_deterministic_algorithms(True)
        assert bg.mode() in ("wait", None)  # None: no helper can run here
        lucid.use_deterministic_algorithms(False)
        assert bg.mode() in ("defer", None)
        monkeypatch.setitem(sys.modules, "pytest_benchmark", types.ModuleType("pb"))
        assert bg.mode() in ("wait", None)  # a timed step never runs on numpy
    finally:
        bg.set_enabled(was)
        lucid.use_deterministic_algorithms(False)


def test_notice_says_the_ops_run_on_numpy_meanwhile() -> None:
    text = _first_run.message("/c", True, background=True)
    assert "background" in text and "numpy" in text and "python -m lucid.kernels warmup" in text
    assert "use_deterministic_algorithms(True)" in text
