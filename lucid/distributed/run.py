"""``python -m lucid.distributed.run`` (console script ``lucid-run``): torchrun's command line
on top of ``mpiexec``.

    python -m lucid.distributed.run --nproc-per-node 4 train.py --epochs 10
    lucid-run --nnodes 2 --nproc-per-node 8 --hostfile hosts train.py

It runs the environment's ``mpiexec`` (the one next to ``sys.executable`` first, so the
launcher matches mpi4py's MPI; then ``PATH``) with the flags the detected MPI needs
(MPICH: none; Open MPI: ``--bind-to none`` so a rank's threads are not pinned to one core,
``--oversubscribe``, and ``--allow-run-as-root`` when run as root), and gives each local
rank ``cores // nproc_per_node`` numba/OpenMP/BLAS threads (NUMBA_NUM_THREADS,
OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS; variables already set are kept).
Every rank starts through ``lucid.distributed._bootstrap``, which sets the torchrun
variables (RANK, LOCAL_RANK, WORLD_SIZE, ...) before the script runs. With MPI one
``mpiexec`` starts the ranks of every node: on a multi-node job run the command on the
first node (``--node-rank 0``) with a ``--hostfile`` (or inside a Slurm allocation); the
other node ranks return at once.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence

__all__ = ["main", "build_command", "find_mpiexec", "mpi_flavor", "parse_args"]

THREAD_VARS = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
               "MKL_NUM_THREADS")


def find_mpiexec() -> str:
    """The ``mpiexec`` of this Python environment, else the first on PATH.

    Example::

        find_mpiexec()      # e.g. '.venv/bin/mpiexec'
    """
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    for name in ("mpiexec", "mpirun"):
        found = shutil.which(name)
        if found:
            return found
    raise RuntimeError('no mpiexec found next to the Python interpreter or on PATH; install '
                       'an MPI with: pip install "lucid-jit[distributed]"')


def mpi_flavor(mpiexec: str) -> str:
    """``"openmpi"``, ``"mpich"`` (MPICH, Intel MPI, MVAPICH: hydra) or ``"unknown"``.

    Example::

        mpi_flavor(find_mpiexec())     # 'mpich' with the mpich wheel
    """
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True,
                             timeout=30)
        text = out.stdout + out.stderr
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    if "Open MPI" in text or "OpenRTE" in text or "open-mpi" in text:
        return "openmpi"
    if "HYDRA" in text or "MPICH" in text or "Intel(R) MPI" in text:
        return "mpich"
    return "unknown"


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - macOS
        return os.cpu_count() or 1


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The launcher's options (torchrun's names, with ``-`` or ``_``).

    Example::

        parse_args(["--nproc-per-node", "2", "train.py"]).nproc_per_node   # '2'
    """
    p = argparse.ArgumentParser(
        prog="python -m lucid.distributed.run",
        description="Launch a lucid data-parallel script on N processes with mpiexec.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", default="1",
                   help="processes per node: a number, or 'cpu'/'auto' for one per core")
    p.add_argument("--nnodes", default="1", help="number of nodes (N or N:N)")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--hostfile", default=None, help="the MPI hostfile listing the nodes")
    p.add_argument("--standalone", action="store_true", help="accepted (single node)")
    p.add_argument("--threads-per-proc", type=int, default=None,
                   help="numba/BLAS threads per process (default: cores // nproc-per-node)")
    p.add_argument("--mpiexec", default=None, help="the mpiexec to use")
    p.add_argument("--mpi-args", default="", help="extra arguments for mpiexec")
    p.add_argument("--dry-run", action="store_true", help="print the command, run nothing")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the script argument as a module (python -m)")
    p.add_argument("--no-python", "--no_python", action="store_true",
                   help="run the script argument as an executable, not with Python")
    p.add_argument("script", help="the training script (or module / executable)")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    return p.parse_args(argv)


def _nproc(value: str) -> int:
    if value in ("auto", "cpu"):
        return _cores()
    try:
        n = int(value)
    except ValueError:
        raise SystemExit(f"--nproc-per-node must be a number, 'auto' or 'cpu', got "
                         f"{value!r}") from None
    if n < 1:
        raise SystemExit(f"--nproc-per-node must be at least 1, got {n}")
    return n


def _nnodes(value: str) -> int:
    lo, _, hi = value.partition(":")
    if hi and hi != lo:
        raise SystemExit(f"--nnodes {value}: elastic node ranges are not supported; give a "
                         "fixed number of nodes")
    return int(lo)


def build_command(args: argparse.Namespace, env: dict[str, str]) -> list[str]:
    """The ``mpiexec`` command line for ``args``; fills ``env`` with what the ranks need.

    Example::

        env = dict(os.environ)
        build_command(parse_args(["--nproc-per-node", "2", "t.py"]), env)
    """
    mpiexec = args.mpiexec or find_mpiexec()
    flavor = mpi_flavor(mpiexec)
    nproc, nnodes = _nproc(args.nproc_per_node), _nnodes(args.nnodes)
    threads = args.threads_per_proc or max(1, _cores() // nproc)
    exported = {"MASTER_ADDR": args.master_addr, "MASTER_PORT": str(args.master_port),
                "LUCID_NPROC_PER_NODE": str(nproc)}
    for var in THREAD_VARS:
        exported[var] = env.get(var) or str(threads)
    env.update(exported)
    cmd = [mpiexec]
    if flavor == "openmpi":
        cmd += ["--bind-to", "none", "--oversubscribe"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        for var in exported:
            cmd += ["-x", var]
    cmd += ["-n", str(nproc * nnodes)]
    if nnodes > 1 or args.hostfile:
        if args.hostfile:
            cmd += ["--hostfile" if flavor == "openmpi" else "-f", args.hostfile]
        cmd += ["--map-by", f"ppr:{nproc}:node"] if flavor == "openmpi" else ["-ppn", str(nproc)]
    cmd += args.mpi_args.split()
    if args.no_python:
        cmd.append(args.script)
    else:
        cmd += [sys.executable, "-u", "-m", "lucid.distributed._bootstrap"]
        cmd += ["-m", args.script] if args.module else [args.script]
    return cmd + list(args.script_args)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the launcher; returns mpiexec's exit status.

    Example::

        python -m lucid.distributed.run --nproc-per-node 2 train.py --lr 0.1
    """
    args = parse_args(argv)
    if _nnodes(args.nnodes) > 1 and args.node_rank != 0:
        print(f"lucid.distributed.run: node rank {args.node_rank}: with MPI the launcher on "
              "node rank 0 starts the processes of every node; nothing to do here",
              file=sys.stderr)
        return 0
    env = dict(os.environ)
    cmd = build_command(args, env)
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main())
