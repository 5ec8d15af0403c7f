"""lucid.distributed's process groups and collectives: two ranks under mpiexec (every
collective against numpy, in scripts/collective_checks.py) and a world of one in-process."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from mpi_harness import ROOT, env, run

import lucid
import lucid.distributed as dist
from lucid.distributed import _mpi


def test_every_collective_on_two_ranks() -> None:
    out = run("collective_checks.py")
    assert "COLLECTIVES OK on 2 ranks" in out


@pytest.fixture
def world1():
    """A process group of one (this process, no launcher)."""
    pytest.importorskip("mpi4py")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dist.init_process_group("gloo")
    yield
    dist.destroy_process_group()


def test_world_of_one(world1) -> None:
    assert dist.is_available() and dist.is_initialized()
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "mpi")
    assert dist.group.WORLD is dist.GroupMember.WORLD is not None
    t = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX, dist.ReduceOp.PRODUCT):
        dist.all_reduce(t, op=op)
    np.testing.assert_array_equal(t.numpy(), [[1.0, 2.0], [3.0, 4.0]])
    outs = [lucid.empty(2, 2)]
    dist.all_gather(outs, t)
    np.testing.assert_array_equal(outs[0].numpy(), t.numpy())
    g = [lucid.empty(2, 2)]
    dist.gather(t * 2, g, dst=0)
    np.testing.assert_array_equal(g[0].numpy(), 2 * t.numpy())
    s = lucid.empty(2, 2)
    dist.scatter(s, [t + 1], src=0)
    np.testing.assert_array_equal(s.numpy(), t.numpy() + 1)
    w = dist.broadcast(t, src=0, async_op=True)
    assert w.wait() and w.is_completed()
    objs = [None]
    dist.all_gather_object(objs, {"a": 1})
    assert objs == [{"a": 1}]
    dist.barrier()


def test_env_and_errors(world1) -> None:
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                "MASTER_PORT"):
        assert key in os.environ
    with pytest.raises(ValueError, match="twice"):
        dist.init_process_group()
    with pytest.raises(ValueError, match="Invalid reduce op"):
        dist.all_reduce(lucid.ones(2), op="sum")
    with pytest.raises(ValueError, match="gather_list"):
        dist.gather(lucid.ones(2), None, dst=0)
    with pytest.raises(TypeError, match="Expected parameter `tensor`"):
        dist.broadcast(np.ones(2), src=0)


def test_before_init_and_bad_backend() -> None:
    pytest.importorskip("mpi4py")
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.all_reduce(lucid.ones(1))
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group("ucc")
    assert dist.Backend("GLOO") == "gloo" and not dist.is_nccl_available()


def test_launcher_mismatch_is_reported(monkeypatch) -> None:
    pytest.importorskip("mpi4py")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "4")
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "2")
    with pytest.raises(RuntimeError, match="announced 4 processes .* MPI sees a world of 1"):
        dist.init_process_group()
    assert not dist.is_initialized()
    monkeypatch.delenv("OMPI_COMM_WORLD_SIZE")
    with pytest.raises(ValueError, match="world_size=3"):
        dist.init_process_group(world_size=3)


def test_without_mpi4py(monkeypatch) -> None:
    monkeypatch.setattr(_mpi, "_MPI", None)
    monkeypatch.setattr(_mpi, "_IMPORT_ERROR", ImportError("No module named 'mpi4py'"))
    assert not dist.is_available()
    with pytest.raises(RuntimeError, match=r'pip install "lucid-jit\[distributed\]"'):
        dist.init_process_group()


def test_import_lucid_does_not_load_mpi() -> None:
    code = "import sys, lucid, lucid.distributed; print('mpi4py' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env(), cwd=ROOT, timeout=120)
    assert out.stdout.strip() == "False", out.stderr


def test_world_of_one_on_each_backend(world1, backend) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = lucid.tensor(x, device=backend)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    dist.broadcast(t, src=0)
    out = lucid.empty(1, 2, 3, device=backend)
    dist.all_gather_single(out, t)
    np.testing.assert_array_equal(out.numpy()[0], x)
    view = lucid.tensor(x, device=backend).t()           # strided: staged and written back
    dist.all_reduce(view, op=dist.ReduceOp.MAX)
    np.testing.assert_array_equal(view.numpy(), x.T)
    assert t.device.type == backend
