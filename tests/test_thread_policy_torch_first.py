"""lucid imported after a library that already loaded OpenMP (torch) keeps its kernels off
that runtime's spinning pool."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def test_torch_imported_first_switches_numba_to_workqueue():
    pytest.importorskip("torch")
    code = (
        "import torch, lucid, numba\n"
        "from lucid.kernels import _threads\n"
        "x = lucid.randn(1 << 20); x.sum()\n"
        "y = lucid.randn(1 << 20, requires_grad=True); (y.relu() * 2).sum().backward()\n"
        "print(_threads.state()['gomp_preloaded'], numba.config.THREADING_LAYER)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split()[-2:] == ["True", "workqueue"]


def test_lucid_alone_keeps_numba_default():
    code = ("import lucid, numba\nfrom lucid.kernels import _threads\n"
            "print(_threads.state()['gomp_preloaded'], _threads.state().get('threading_layer'))")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split()[-2:] == ["False", "None"]
