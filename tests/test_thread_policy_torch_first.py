"""lucid imported after a library that already loaded OpenMP (torch): kernels share that
runtime's pool and stay correct; parallel kernels never run concurrently on numba's
workqueue layer (which would abort the process)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CHECK = (
    "import numpy as np, lucid, numba\n"
    "from concurrent.futures import ThreadPoolExecutor\n"
    "from lucid.kernels import _threads\n"
    "x = lucid.randn(1 << 20)\n"
    "y = lucid.randn(1 << 20, requires_grad=True)\n"
    "def work(_):\n"
    "    (y.relu() * 2).sum().backward()\n"
    "    return round(x.sum().item(), 1)\n"
    "with ThreadPoolExecutor(4) as ex:\n"
    "    sums = list(ex.map(work, range(8)))\n"
    "assert len(set(sums)) == 1 and abs(sums[0] - float(x.numpy().astype('f8').sum())) < 1\n"
    "print(_threads.state()['gomp_preloaded'], numba.threading_layer())\n"
)


def _run(code: str, **env: str) -> list[str]:
    e = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    e.update(env)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300, env=e)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.split()


def test_torch_imported_first_shares_its_openmp_pool():
    pytest.importorskip("torch")
    assert _run("import torch\n" + CHECK)[-2:] == ["True", "omp"]


def test_workqueue_layer_is_safe_from_several_threads():
    assert _run(CHECK, NUMBA_THREADING_LAYER="workqueue")[-1] == "workqueue"
