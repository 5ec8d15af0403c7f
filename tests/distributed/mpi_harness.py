"""Run test scripts on several MPI processes (loopback), each job bounded by a timeout so a
hung rank fails the test instead of hanging the suite."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "scripts")
ROOT = os.path.dirname(os.path.dirname(HERE))


def mpiexec() -> str:
    """The mpiexec next to the interpreter (or on PATH); skips the test when there is none
    or mpi4py is missing."""
    pytest.importorskip("mpi4py")
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = here if os.path.isfile(here) else shutil.which("mpiexec")
    if not found:
        pytest.skip("no mpiexec")
    return found


def env() -> dict[str, str]:
    """The environment for the ranks: lucid importable, one numba/BLAS thread each."""
    e = dict(os.environ)
    e["PYTHONPATH"] = ROOT + os.pathsep + e.get("PYTHONPATH", "")
    for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        e[var] = "1"
    e["PYTHONWARNINGS"] = "ignore"
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
        e.pop(var, None)
    return e


def start(script: str, *args: str, n: int = 2) -> subprocess.Popen:
    """Start ``mpiexec -n n python scripts/<script> args`` in the background."""
    cmd = [mpiexec(), "-n", str(n), sys.executable, os.path.join(SCRIPTS, script), *args]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env(), cwd=ROOT)


def finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[int, str]:
    """Wait for a started job; a job past ``timeout`` is killed and fails the test."""
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"MPI job hung for {timeout} s and was killed; output:\n{out}")
    return proc.returncode, out


def run(script: str, *args: str, n: int = 2, timeout: float = 120) -> str:
    """Run a job that must succeed; returns its output."""
    code, out = finish(start(script, *args, n=n), timeout)
    assert code == 0, f"{script} failed with exit code {code}:\n{out}"
    return out
