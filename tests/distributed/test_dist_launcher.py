"""The launcher (python -m lucid.distributed.run): a torch training script with only its
imports swapped runs on two processes; a rank that dies, raises or hangs ends the job with
an error instead of hanging it; the mpiexec command for each MPI."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from mpi_harness import ROOT, SCRIPTS, env, finish, mpiexec, start

from lucid.distributed import run as launcher

SWAPS = [(r"^import torch$", "import lucid as torch"), (r"^import torch\.", "import lucid."),
         (r"^from torch\.", "from lucid.")]


def test_torch_script_with_swapped_imports(tmp_path) -> None:
    mpiexec()
    src = open(os.path.join(SCRIPTS, "torch_style_train.py")).read()
    for pat, new in SWAPS:
        src = re.sub(pat, new, src, flags=re.MULTILINE)
    assert "torch." not in "".join(line for line in src.splitlines() if "import" in line
                                   and "lucid" not in line)
    script = tmp_path / "train.py"
    script.write_text(src)
    ckpt = tmp_path / "ckpt.pt"
    out = subprocess.run([sys.executable, "-m", "lucid.distributed.run", "--nproc-per-node",
                          "2", str(script), str(ckpt)], capture_output=True, text=True,
                         env=env(), cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "rank 0/2 local_rank 0 accuracy" in out.stdout
    assert "rank 1/2 local_rank 1 accuracy" in out.stdout
    assert ckpt.exists()


def test_failing_ranks_end_the_job() -> None:
    jobs = {mode: start("failure_modes.py", mode) for mode in ("exit", "raise", "ddp-timeout")}
    results = {mode: finish(p, timeout=90) for mode, p in jobs.items()}
    for mode, (code, out) in results.items():
        assert code != 0, (mode, out)
        assert "UNREACHABLE" not in out, (mode, out)
    assert "uncaught ValueError in this rank" in results["raise"][1]
    timeout_msg = results["ddp-timeout"][1]
    assert "all_reduce of DDP gradient bucket 0" in timeout_msg, timeout_msg
    assert "on rank 0 did not complete within the process group's timeout of 3 s" in timeout_msg


@pytest.mark.parametrize("flavor", ["mpich", "openmpi"])
def test_command_per_mpi(monkeypatch, flavor) -> None:
    monkeypatch.setattr(launcher, "mpi_flavor", lambda exe: flavor)
    monkeypatch.setattr(launcher, "_cores", lambda: 8)
    args = launcher.parse_args(["--nproc_per_node", "4", "--nnodes", "2", "--hostfile", "hosts",
                                "--mpiexec", "/x/mpiexec", "train.py", "--lr", "0.1"])
    env_ = {"OMP_NUM_THREADS": "3"}
    cmd = launcher.build_command(args, env_)
    assert cmd[0] == "/x/mpiexec" and cmd[-3:] == ["train.py", "--lr", "0.1"]
    assert cmd[cmd.index("-n") + 1] == "8"
    assert [sys.executable, "-u", "-m", "lucid.distributed._bootstrap"] == cmd[-7:-3]
    assert env_["NUMBA_NUM_THREADS"] == "2" and env_["OMP_NUM_THREADS"] == "3"
    if flavor == "openmpi":
        assert "--bind-to" in cmd and "--oversubscribe" in cmd and "-x" in cmd
        assert ("--allow-run-as-root" in cmd) == (os.geteuid() == 0)
        assert "ppr:4:node" in cmd and "--hostfile" in cmd
    else:
        assert "--bind-to" not in cmd and cmd[cmd.index("-ppn") + 1] == "4" and "-f" in cmd


def test_other_node_ranks_and_bad_flags(capsys) -> None:
    assert launcher.main(["--nnodes", "2", "--node-rank", "1", "t.py"]) == 0
    assert "node rank 0 starts the processes" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="elastic"):
        launcher.main(["--nnodes", "1:4", "--dry-run", "t.py"])
    with pytest.raises(SystemExit, match="at least 1"):
        launcher.main(["--nproc-per-node", "0", "--dry-run", "t.py"])


def test_finds_the_environments_mpiexec() -> None:
    exe = mpiexec()
    assert launcher.find_mpiexec() == exe
    assert launcher.mpi_flavor(exe) == "mpich"
