"""The one place that imports mpi4py, lazily, and reads what a launcher says about the job.

``import lucid`` never imports mpi4py: ``mpi()`` does, the first time a process group or a
collective needs it. MPI is initialised with ``MPI_THREAD_MULTIPLE`` because
DistributedDataParallel all-reduces gradient buckets on a communication thread while the
main thread may run collectives of its own (SyncBatchNorm) on another communicator; an MPI
that grants less makes DDP reduce on the main thread at the end of backward instead.

Launchers announce the job in environment variables before MPI starts: MPICH's hydra
(``PMI_RANK``/``PMI_SIZE``, ``MPI_LOCALRANKID``/``MPI_LOCALNRANKS``), Open MPI
(``OMPI_COMM_WORLD_*``), Slurm's srun (``SLURM_PROCID``/``SLURM_STEP_NUM_TASKS``) and
torchrun-style ones (``RANK``/``WORLD_SIZE``). ``launcher_env()`` reads them without
touching MPI, so a script can read ``LOCAL_RANK`` before ``init_process_group``.
"""

from __future__ import annotations

import os
import socket
from typing import Any

__all__ = ["mpi", "available", "INSTALL_HINT", "launcher_env", "fill_torchrun_env",
           "check_world_size", "thread_multiple", "hostname"]

INSTALL_HINT = 'pip install "lucid-jit[distributed]"'
_MPI: Any = None
_IMPORT_ERROR: BaseException | None = None

# (rank, size, local rank, local size) variables of each launcher, most specific first
_LAUNCHERS = (
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),          # MPICH hydra
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"),                                          # Open MPI
    ("PMIX_RANK", "PMIX_SIZE", None, None),                                  # PMIx
    ("SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", None),         # srun
    ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"),                # torchrun-style
)


def _import() -> Any:
    global _MPI, _IMPORT_ERROR
    if _MPI is None and _IMPORT_ERROR is None:
        try:
            import mpi4py  # NOTE: optional dependency, imported only when distributed is used

            mpi4py.rc.thread_level = "multiple"
            from mpi4py import MPI  # NOTE: optional dependency (initialises MPI)

            _MPI = MPI
        except ImportError as e:  # pragma: no cover - depends on the environment
            _IMPORT_ERROR = e
    return _MPI


def available() -> bool:
    """Whether mpi4py (and so an MPI library) can be imported."""
    return _import() is not None


def mpi() -> Any:
    """The ``mpi4py.MPI`` module; a RuntimeError that says how to install it if absent."""
    m = _import()
    if m is None:
        raise RuntimeError(
            "lucid.distributed needs mpi4py and an MPI library, which are not installed "
            f"({_IMPORT_ERROR}). Install them with: {INSTALL_HINT}")
    return m


def thread_multiple() -> bool:
    """Whether the initialised MPI lets several threads call it at once."""
    m = mpi()
    return m.Query_thread() >= m.THREAD_MULTIPLE


def _int_env(name: str | None) -> int | None:
    if name is None:
        return None
    v = os.environ.get(name)
    try:
        return int(v) if v not in (None, "") else None
    except ValueError:
        return None


def launcher_env() -> tuple[int, int, int | None, int | None, str] | None:
    """``(rank, world size, local rank, local world size, variable name)`` as the first
    launcher found in the environment announces them, or None without a launcher."""
    for r, s, lr, ls in _LAUNCHERS:
        rank, size = _int_env(r), _int_env(s)
        if rank is not None and size is not None:
            return rank, size, _int_env(lr), _int_env(ls), s
    return None


def fill_torchrun_env(rank: int | None = None, size: int | None = None,
                      local_rank: int | None = None, local_size: int | None = None,
                      master_addr: str | None = None, overwrite: bool = False) -> list[str]:
    """Set the torchrun variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
    MASTER_ADDR, MASTER_PORT) from the arguments or the launcher's variables: the absent
    ones, or with ``overwrite`` the rank variables too (an MPI launcher knows better than
    values inherited from a parent process). Returns the names it set."""
    found = launcher_env()
    if found is not None:
        rank = found[0] if rank is None else rank
        size = found[1] if size is None else size
        local_rank = found[2] if local_rank is None else local_rank
        local_size = found[3] if local_size is None else local_size
    if rank is None or size is None:
        rank, size = 0, 1
    if local_rank is None:  # assume one node, as a launcher that names no local rank
        local_rank = rank
    if local_size is None:
        local_size = size
    done = []
    for key, value in (("RANK", rank), ("WORLD_SIZE", size), ("LOCAL_RANK", local_rank),
                       ("LOCAL_WORLD_SIZE", local_size),
                       ("MASTER_ADDR", master_addr or "127.0.0.1"), ("MASTER_PORT", 29500)):
        if key not in os.environ or (overwrite and key not in ("MASTER_ADDR", "MASTER_PORT")):
            os.environ[key] = str(value)
            done.append(key)
    return done


def check_world_size(mpi_size: int, requested: int = -1) -> None:
    """Raise if a launcher (or ``world_size=``) announced a different number of processes
    than MPI sees: the launcher's MPI and mpi4py's libmpi do not match, and every process
    would otherwise train alone as a world of one."""
    found = launcher_env()
    if found is not None and found[1] != mpi_size:
        lib = mpi().Get_library_version().splitlines()[0].strip()
        raise RuntimeError(
            f"the launcher announced {found[1]} processes ({found[4]}={found[1]}) but MPI sees "
            f"a world of {mpi_size}: the mpiexec that started this job belongs to a different "
            f"MPI library than the one mpi4py was built against ({lib}). Launch with the "
            "mpiexec of the same environment (python -m lucid.distributed.run finds it), or "
            "unset the stale variable.")
    if requested not in (-1, None) and requested != mpi_size:
        raise ValueError(f"init_process_group got world_size={requested} but MPI started "
                         f"{mpi_size} processes; launch {requested} processes with mpiexec "
                         "(or python -m lucid.distributed.run), or leave world_size out")


def hostname() -> str:
    """This machine's name (for MASTER_ADDR and error messages)."""
    return socket.gethostname()
