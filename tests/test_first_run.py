"""The first run: the one-time compile notice, the multi-process warmup and the demo's log lines.

The notice hooks numba's "numba:compile" event, raised only after the disk cache missed;
the warmup splits kernels among processes by cache file, and a fresh process then loads every
kernel they compiled from the shared cache.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

import lucid.demo
from lucid import _first_run, _warmup_pool

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def notice(monkeypatch):
    """A fresh notice state writing to a buffer; restored afterwards."""
    buf = io.StringIO()
    monkeypatch.delenv(_first_run.ENV, raising=False)
    for key, value in {"said": False, "stream": buf, "cache_dir": lambda: "/cache/here",
                       "cache_enabled": lambda: True}.items():
        monkeypatch.setitem(_first_run._STATE, key, value)
    _first_run.install(lambda: "/cache/here", lambda: True, stream=buf)
    yield buf
    os.environ.pop(_first_run.ENV, None)


def _fresh_kernel(module: str):
    def f(x):
        return x + 1.0

    f.__module__ = module
    return numba.njit(cache=False)(f)


def test_message_names_cache_time_and_warmup():
    text = _first_run.message("/c/d", True)
    assert "compiling numba kernels" in text and "10-60 s" in text
    assert "/c/d" in text and "python -m lucid.kernels warmup" in text
    off = _first_run.message("/ro", False)
    assert "cannot be written" in off and "LUCID_CACHE_DIR" in off
    assert "warmup" not in off


def test_notice_once_on_first_lucid_compile(notice):
    _fresh_kernel("user_script")(np.float64(1.0))  # not lucid's: no notice
    assert notice.getvalue() == ""
    _fresh_kernel("lucid._probe")(np.float64(1.0))
    first = notice.getvalue()
    assert first.count("compiling numba kernels") == 1 and "/cache/here" in first
    assert os.environ[_first_run.ENV] == "0"  # processes started from now on stay quiet
    _fresh_kernel("lucid._probe2")(np.float64(1.0))
    assert notice.getvalue() == first


def test_notice_off_by_environment(notice, monkeypatch):
    monkeypatch.setenv(_first_run.ENV, "0")
    _fresh_kernel("lucid._probe3")(np.float64(2.0))
    assert notice.getvalue() == ""
    assert _first_run.announce("/x", True) is False


def test_announce_prints_once(notice):
    assert _first_run.announce("/x", True) is True
    assert _first_run.announce("/x", True) is False
    assert notice.getvalue().count("lucid:") == 1


def test_groups_put_the_demo_first_and_match_exact_names():
    order = [n for g in _warmup_pool.groups() for n in g]
    k = len(_warmup_pool.DEMO_KERNELS)
    assert set(order[:k]) == set(_warmup_pool.DEMO_KERNELS)
    assert len(order) == len(set(order))
    # "[par]" is a name, not an fnmatch character class
    assert _warmup_pool.groups(["elementwise.relu[par]"]) == [["elementwise.relu[par]"]]
    relu = _warmup_pool.groups(["elementwise.relu*"])
    assert relu[-1] == ["elementwise.relu_backward[par]"]  # the one the demo does not use
    assert sorted(g[0] for g in relu) == ["elementwise.relu", "elementwise.relu[par]",
                                          "elementwise.relu_backward",
                                          "elementwise.relu_backward[par]"]


def test_warmup_parallel_rejects_bad_arguments():
    with pytest.raises(ValueError, match="jobs must be at least 1, got 0"):
        _warmup_pool.warmup_parallel(kernels=["elementwise.relu"], jobs=0)
    with pytest.raises(ValueError, match="dtype 'int8' not in"):
        _warmup_pool.warmup_parallel(dtypes=["int8"])


SMALL = ["elementwise.sigmoid_backward", "elementwise.tanh_backward"]
CHILD = """
import json, sys
from lucid import _warmup_pool as W
if sys.argv[1] == "fill":
    rows = W.warmup_parallel(kernels=W_SMALL, jobs=2, progress=False)
else:
    from lucid.kernels import warmup
    rows = warmup.warmup(kernels=W_SMALL, progress=False)
    rows.append({"missing": W.missing(W_SMALL)})
print(json.dumps(rows))
"""


def _child(mode: str, cache: Path) -> list[dict]:
    env = {**os.environ, "LUCID_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    code = CHILD.replace("W_SMALL", repr(SMALL))
    res = subprocess.run([sys.executable, "-c", code, mode], env=env, capture_output=True,
                         text=True, timeout=300, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_two_processes_fill_one_cache_that_a_third_loads(tmp_path):
    filled = _child("fill", tmp_path)
    assert sorted(r["kernel"] for r in filled) == sorted(SMALL)
    assert {r["source"] for r in filled} == {"compiled"}
    loaded = _child("load", tmp_path)
    assert loaded.pop() == {"missing": []}
    assert {r["kernel"]: r["source"] for r in loaded} == dict.fromkeys(SMALL, "cache")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("tty", [False, True])
def test_demo_bar_one_line_per_epoch_unless_terminal(tmp_path, tty):
    out = _Tty() if tty else io.StringIO()
    lucid.demo.train(epochs=1, checkpoint=str(tmp_path / "d.lucid"), out=out)
    text = out.getvalue()
    epochs = [ln for ln in text.split("\n") if "epoch " in ln]
    assert len(epochs) == 1 and "test loss" in epochs[0]
    if tty:  # redrawn once per step
        assert epochs[0].count("\r") == epochs[0].count("epoch ") > 10
    else:
        assert "\r" not in text and epochs[0].count("epoch ") == 1
        assert epochs[0].startswith("epoch  1/1 [########################] loss")


# The tests below need the small edits to lucid/kernels that wire these modules in
# (``_jit`` installs the notice, ``warmup`` stays quiet, ``python -m lucid.kernels warmup``
# runs ``warmup_parallel`` with ``--jobs``).
_WIRED = "--jobs" in (ROOT / "lucid" / "kernels" / "__main__.py").read_text(encoding="utf-8")
wired = pytest.mark.skipif(not _WIRED, reason="lucid/kernels does not call lucid._first_run yet")


@wired
def test_kernels_install_the_notice():
    from lucid.kernels import _jit  # noqa: F401  (NOTE: importing it installs the listener)

    assert _first_run._STATE["installed"]


@wired
@pytest.mark.slow
def test_cli_warmup_jobs_fills_the_cache_quietly(tmp_path):
    env = {**os.environ, "LUCID_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop(_first_run.ENV, None)
    res = subprocess.run([sys.executable, "-m", "lucid.kernels", "warmup", "--jobs", "2",
                          "--kernel", "elementwise.sigmoid_backward[par]",
                          "--kernel", "elementwise.tanh_backward"],
                         env=env, capture_output=True, text=True, timeout=300, check=True)
    assert "compiling numba kernels" not in res.stderr  # the warmup says what it does itself
    assert "2 kernel builds" in res.stderr and "on 2 process(es)" in res.stderr
    assert res.stderr.count(" compiled") == 2
