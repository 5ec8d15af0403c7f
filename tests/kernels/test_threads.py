"""Thread policy: environment defaults, respecting the user's, and taming an already loaded BLAS."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lucid.kernels import _threads

# Loads _threads.py by path so that nothing (numpy included) is imported before configure().
_LOAD = f"""
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("lt", {_threads.__file__!r})
T = importlib.util.module_from_spec(spec); spec.loader.exec_module(T)
"""
assert Path(_threads.__file__).name == "_threads.py"

_TIMEOUTS = """
import ctypes
def timeouts():
    return [ctypes.CDLL(p).openblas_thread_timeout() for p in T._loaded_libraries("openblas")]
"""


def test_policy_before_numpy(run_py) -> None:
    code = (
        _LOAD
        + _TIMEOUTS
        + """
assert "numpy" not in sys.modules
st = T.configure()
import numpy as np
a = np.ones((300, 300)); (a @ a).sum()
print(json.dumps({"env": [os.environ["OPENBLAS_THREAD_TIMEOUT"], os.environ["GOMP_SPINCOUNT"]],
                  "reinit": st["openblas"], "timeouts": timeouts()}))
"""
    )
    out = json.loads(run_py(code, isolated=False))
    one_pool = _threads.blas_choice() != "numpy"  # products on numba's libgomp pool
    spin = _threads.GOMP_SPINCOUNT_ONE_POOL if one_pool else _threads.GOMP_SPINCOUNT
    assert out["env"] == [_threads.OPENBLAS_THREAD_TIMEOUT, spin]
    assert out["reinit"] == []  # nothing loaded yet, nothing to patch
    assert out["timeouts"] and set(out["timeouts"]) == {4}


def test_policy_after_numpy_was_imported(run_py) -> None:
    code = (
        _LOAD
        + _TIMEOUTS
        + """
import numpy as np
a = np.random.default_rng(0).standard_normal((300, 300)); ref = a @ a
before = timeouts()
st = T.configure()
print(json.dumps({"before": before, "after": timeouts(), "state": st,
                  "same": bool(((a @ a) == ref).all())}))
"""
    )
    out = json.loads(run_py(code, isolated=False))
    if not out["state"]["openblas"]:
        pytest.skip("numpy is not linked against OpenBLAS here")
    assert set(out["before"]) == {0} and set(out["after"]) == {4}
    assert out["state"]["openblas_protected"] and out["same"]


def test_user_settings_win(run_py) -> None:
    code = (
        _LOAD
        + """
st = T.configure()
print(json.dumps([os.environ["OPENBLAS_THREAD_TIMEOUT"], os.environ["GOMP_SPINCOUNT"]]))
"""
    )
    env = {"OPENBLAS_THREAD_TIMEOUT": "7", "GOMP_SPINCOUNT": "123"}
    assert json.loads(run_py(code, env, isolated=False)) == ["7", "123"]


def test_threshold_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LUCID_PARALLEL_THRESHOLD", "10")
    _threads.reset_threshold()
    try:
        assert _threads.use_parallel(10) and not _threads.use_parallel(9)
        assert _threads.use_parallel(10, "elementwise")
    finally:
        monkeypatch.delenv("LUCID_PARALLEL_THRESHOLD")
        _threads.reset_threshold()
    table = _threads.THRESHOLDS if _threads.blas_choice() == "numpy" else \
        _threads.THRESHOLDS_ONE_POOL
    assert _threads.parallel_threshold("reduce") == table["reduce"]
    assert not _threads.use_parallel(1000, "elementwise")


@pytest.mark.parametrize("blas, table", [("numpy", "THRESHOLDS"), ("pool", "THRESHOLDS_ONE_POOL")])
def test_thresholds_follow_where_products_run(monkeypatch: pytest.MonkeyPatch, blas: str,
                                              table: str) -> None:
    """BLAS with threads of its own: the long thresholds (numba's workers sleep after its
    products); products on numba's pool: 2**16 for every kind."""
    monkeypatch.delenv("LUCID_PARALLEL_THRESHOLD", raising=False)
    monkeypatch.setenv("LUCID_BLAS", blas)
    monkeypatch.setitem(_threads._STATE, "openblas_protected", True)
    want = getattr(_threads, table)
    for kind in ("elementwise", "reduce", "optimizer"):
        assert _threads.parallel_threshold(kind) == want[kind]
    assert _threads.THRESHOLDS["optimizer"] == 1 << 21
    assert set(_threads.THRESHOLDS_ONE_POOL.values()) == {1 << 16}


def test_unprotected_blas_forces_serial(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_threads._STATE, "openblas_protected", False)
    monkeypatch.delenv("LUCID_PARALLEL_THRESHOLD", raising=False)
    assert _threads.parallel_threshold() == float("inf")


def test_one_blas_thread_nests_and_restores() -> None:
    """``BlasThreads`` sets every controlled BLAS to one thread on the outermost entry and
    restores the previous counts on the outermost exit, across Python threads."""
    counts = [4, 2]

    def lib(i: int) -> tuple:
        return (lambda n: counts.__setitem__(i, n)), (lambda: counts[i])

    bt = _threads.BlasThreads()
    bt.ready, bt.ok, bt.libs = True, True, [lib(0), lib(1)]
    assert bt.available()
    with bt:
        assert counts == [1, 1]
        with bt:
            assert counts == [1, 1] and bt.depth == 2
        assert counts == [1, 1]
    assert counts == [4, 2] and bt.depth == 0

    def work(_: int) -> list[int]:
        with bt:
            return list(counts)

    with ThreadPoolExecutor(3) as pool:
        assert all(c == [1, 1] for c in pool.map(work, range(20)))
    assert counts == [4, 2] and bt.depth == 0
