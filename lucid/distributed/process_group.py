"""Process groups on MPI, with torch.distributed's names (``distributed_c10d`` there).

One backend, ``"mpi"``: ``"gloo"`` and ``"nccl"`` are accepted as names of it (one warning),
so torch scripts run unchanged. The world is whatever the launcher started (``mpiexec -n N``,
``srun``, ``python -m lucid.distributed.run``); a script run without one is a world of one.
Each group owns a duplicate of its MPI communicator, so lucid's collectives never mix with
a user's own mpi4py traffic.
"""

from __future__ import annotations

import os
import warnings
from datetime import timedelta
from typing import Any

from . import _mpi, _watchdog

__all__ = ["Backend", "ProcessGroup", "GroupMember", "group", "init_process_group",
           "destroy_process_group", "is_initialized", "is_available", "is_mpi_available",
           "is_gloo_available", "is_nccl_available", "is_torchelastic_launched", "get_rank",
           "get_world_size", "get_backend", "new_group", "get_global_rank", "get_group_rank",
           "get_process_group_ranks", "default_pg", "resolve_group", "DEFAULT_TIMEOUT",
           "default_pg_timeout", "is_backend_available", "get_node_local_rank", "live_groups"]

DEFAULT_TIMEOUT = timedelta(minutes=30)  # torch's default for CPU backends
default_pg_timeout: timedelta = DEFAULT_TIMEOUT


class Backend(str):
    """A backend name, lower-cased, as ``torch.distributed.Backend``: lucid has ``"mpi"``
    and takes ``"gloo"``/``"nccl"`` as names of it.

    Example::

        dist.Backend("GLOO") == "gloo"      # True
        dist.get_backend()                   # "mpi"
    """

    UNDEFINED = "undefined"
    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"

    def __new__(cls, name: str) -> Backend:
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, got {name!r}")
        return str.__new__(cls, name.lower())


class ProcessGroup:
    """A set of ranks sharing an MPI communicator (``torch.distributed.ProcessGroup``).

    Build one with ``init_process_group`` (the world) or ``new_group(ranks)``.

    Example::

        pg = dist.new_group([0, 1])
        pg.rank(), pg.size()
    """

    def __init__(self, comm: Any, ranks: list[int], timeout: timedelta,
                 name: str = "") -> None:
        self.comm = comm
        self.ranks = ranks
        self.timeout = timeout
        self.group_name = name
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        self._global_rank = ranks[self._rank]

    def rank(self) -> int:
        """This process's rank within the group.

        Example::

            pg.rank()      # 0 .. pg.size() - 1
        """
        return self._rank

    def size(self) -> int:
        """The number of processes in the group.

        Example::

            pg.size()
        """
        return self._size

    def name(self) -> str:
        """The backend's name, ``"mpi"``.

        Example::

            pg.name()      # 'mpi'
        """
        return Backend.MPI

    def watched(self, what: str) -> _watchdog.Watched:
        """A context that aborts the job if ``what`` outlives the group's timeout.

        Example::

            with pg.watched("my exchange"):
                pg.comm.Barrier()
        """
        return _watchdog.Watched(f"{what} on rank {self._global_rank}",
                                 self.timeout.total_seconds(), self._global_rank)

    def __repr__(self) -> str:
        return f"ProcessGroup(backend=mpi, ranks={self.ranks}, rank={self._rank})"


class GroupMember:
    """``WORLD``: the default group once initialised; ``NON_GROUP_MEMBER``: what
    ``new_group`` returns on ranks outside the group.

    Example::

        if sub is dist.GroupMember.NON_GROUP_MEMBER: ...
    """

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER: Any = object()


class group:  # noqa: N801  (torch's name)
    """``group.WORLD``: the default process group (None before ``init_process_group``).

    Example::

        dist.all_reduce(t, group=dist.group.WORLD)
    """

    WORLD: ProcessGroup | None = None


_warned_backend: set[str] = set()
_groups: list[ProcessGroup] = []
_env_set: list[str] = []  # torchrun variables init_process_group set (destroy removes them)


def is_available() -> bool:
    """Whether the distributed package can run: True iff mpi4py imports.

    Example::

        if dist.is_available(): dist.init_process_group()
    """
    return _mpi.available()


def is_mpi_available() -> bool:
    """Whether the MPI backend is available (mpi4py imports).

    Example::

        dist.is_mpi_available()
    """
    return _mpi.available()


def is_gloo_available() -> bool:
    """Whether ``"gloo"`` can be asked for: it names lucid's MPI backend.

    Example::

        dist.is_gloo_available()
    """
    return _mpi.available()


def is_nccl_available() -> bool:
    """False: lucid has no NCCL (``"nccl"`` still names the MPI backend).

    Example::

        dist.is_nccl_available()
    """
    return False


def is_backend_available(backend: str) -> bool:
    """Whether ``backend`` can be used, as its ``is_<name>_available()`` says (``"mpi"`` and
    ``"gloo"``: mpi4py imports; ``"nccl"``: False); False for names lucid does not know.
    A composite name (``"cpu:gloo,cuda:nccl"``) is available when each of its parts is.

    Example::

        dist.is_backend_available("gloo")     # True with mpi4py installed
    """
    name = backend.lower()
    parts = [p.split(":")[-1].strip() for p in name.split(",")] if ":" in name else [name]
    checks = {Backend.MPI: is_mpi_available, Backend.GLOO: is_gloo_available,
              Backend.NCCL: is_nccl_available}
    return all(p in checks and checks[p]() for p in parts)


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """This process's rank on its machine, from ``LOCAL_RANK`` (which lucid's launchers
    set); without it, ``fallback_rank``, else RuntimeError (torch's message).

    Example::

        local = dist.get_node_local_rank(fallback_rank=0)
    """
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
        "`get_node_local_rank` to work, assuming you are not running in a multi-device "
        "context and want the code to run locally instead.")


def is_torchelastic_launched() -> bool:
    """False: lucid's jobs are started by MPI launchers.

    Example::

        dist.is_torchelastic_launched()
    """
    return False


def is_initialized() -> bool:
    """Whether ``init_process_group`` has run (and ``destroy_process_group`` has not).

    Example::

        if not dist.is_initialized(): dist.init_process_group()
    """
    return GroupMember.WORLD is not None


def _backend_name(backend: Any) -> str:
    if backend is None:
        return Backend.MPI
    name = str(backend).lower()
    if name == Backend.MPI:
        return name
    parts = [p.split(":")[-1] for p in name.split(",")]
    if all(p in ("gloo", "nccl", "mpi") for p in parts):
        if name not in _warned_backend:
            _warned_backend.add(name)
            warnings.warn(f"lucid.distributed runs every process group on MPI; backend "
                          f"{backend!r} is taken as 'mpi'", stacklevel=3)
        return Backend.MPI
    raise ValueError(f"Invalid backend: '{backend}'; lucid.distributed has 'mpi' (and accepts "
                     "'gloo' and 'nccl' as names of it)")


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1,
                       rank: int = -1, store: Any = None, group_name: str = "",
                       pg_options: Any = None, device_id: Any = None) -> None:
    """Join the job's default process group, as ``torch.distributed.init_process_group``.

    The ranks and world size come from MPI (the launcher): ``world_size``/``rank`` may be
    given but must agree with it; ``init_method``/``store`` are accepted and unused (MPI
    needs no rendezvous). Sets the torchrun variables (RANK, WORLD_SIZE, LOCAL_RANK,
    LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) that are absent. ``timeout`` (default
    30 minutes) bounds every collective: one that waits longer aborts the job with a
    message naming the rank and the operation. In a job of several processes an uncaught
    exception in one rank aborts the job, so the others do not hang.

    Example::

        # launch with: python -m lucid.distributed.run --nproc-per-node 2 train.py
        dist.init_process_group("gloo")
        print(dist.get_rank(), dist.get_world_size())
    """
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    _backend_name(backend)
    if timeout is not None and not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout).__name__}")
    MPI = _mpi.mpi()
    world = MPI.COMM_WORLD
    size, me = world.Get_size(), world.Get_rank()
    _mpi.check_world_size(size, world_size)
    if rank not in (-1, None) and rank != me:
        raise ValueError(f"init_process_group got rank={rank} but MPI gave this process rank "
                         f"{me}; leave rank out (MPI assigns ranks)")
    comm = world.Dup()
    local = comm.Split_type(MPI.COMM_TYPE_SHARED, key=me)
    local_rank, local_size = local.Get_rank(), local.Get_size()
    local.Free()
    master = comm.bcast(_mpi.hostname() if size > 1 else "127.0.0.1", root=0)
    _env_set.extend(_mpi.fill_torchrun_env(me, size, local_rank, local_size, master))
    pg = ProcessGroup(comm, list(range(size)), timeout or DEFAULT_TIMEOUT, group_name or "0")
    GroupMember.WORLD = group.WORLD = pg
    _groups.append(pg)
    if size > 1:
        _watchdog.install_excepthook(me)


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Free ``group`` (default: every group, after which ``is_initialized()`` is False, and
    the torchrun variables that ``init_process_group`` had set are removed again).

    Example::

        dist.destroy_process_group()
    """
    if group is None or group is GroupMember.WORLD:
        for g in _groups:
            _free(g)
        _groups.clear()
        GroupMember.WORLD = globals()["group"].WORLD = None
        for key in _env_set:
            os.environ.pop(key, None)
        _env_set.clear()
    elif isinstance(group, ProcessGroup):
        _free(group)
        if group in _groups:
            _groups.remove(group)


def _free(g: ProcessGroup) -> None:
    try:
        if g.comm is not None:
            g.comm.Free()
    except Exception:  # noqa: BLE001 - freeing at teardown is best effort
        pass
    g.comm = None


def default_pg() -> ProcessGroup:
    """The default group; ValueError (torch's message) before ``init_process_group``."""
    pg = GroupMember.WORLD
    if pg is None:
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return pg


def live_groups() -> list[ProcessGroup]:
    """Every process group of this process not yet destroyed (the world first)."""
    return list(_groups)


def resolve_group(grp: Any) -> ProcessGroup | None:
    """The group a collective runs on, or None (after a warning) on a non-member rank."""
    if grp is None or grp is GroupMember.WORLD:
        return default_pg()
    if grp is GroupMember.NON_GROUP_MEMBER:
        default_pg()
        warnings.warn("Running a collective on a group this rank is not a member of; it is "
                      "skipped on this rank", stacklevel=3)
        return None
    if not isinstance(grp, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(grp).__name__}")
    if grp.comm is None:
        raise ValueError("the process group was destroyed")
    return grp


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (default: the world); -1 on a non-member.

    Example::

        if dist.get_rank() == 0: print("I am the first")
    """
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return (group or default_pg()).rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of processes in ``group`` (default: the world); -1 on a non-member.

    Example::

        per_rank = batch_size // dist.get_world_size()
    """
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return (group or default_pg()).size()


def get_backend(group: ProcessGroup | None = None) -> Backend:
    """The backend of ``group``: always ``"mpi"``.

    Example::

        dist.get_backend()     # 'mpi'
    """
    if group is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    default_pg()
    return Backend(Backend.MPI)


def new_group(ranks: list[int] | None = None, timeout: timedelta | None = None,
              backend: str | None = None, pg_options: Any = None,
              use_local_synchronization: bool = False, group_desc: str | None = None,
              device_id: Any = None, sort_ranks: bool = True) -> Any:
    """A group of the given world ranks (default: all). Every rank of the world must call
    it, as in torch; ranks outside get ``GroupMember.NON_GROUP_MEMBER``.

    Example::

        evens = dist.new_group([r for r in range(dist.get_world_size()) if r % 2 == 0])
        if dist.get_rank() % 2 == 0:
            dist.all_reduce(t, group=evens)
    """
    world = default_pg()
    _backend_name(backend)
    ranks = list(range(world.size())) if ranks is None else [int(r) for r in ranks]
    if sort_ranks:
        ranks = sorted(ranks)
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group got duplicate ranks {ranks}")
    bad = [r for r in ranks if not 0 <= r < world.size()]
    if bad:
        raise ValueError(f"The new group's rank should be within the world_size set by "
                         f"init_process_group, got ranks {bad} for a world of {world.size()}")
    mpi_group = world.comm.Get_group().Incl(ranks)
    comm = world.comm.Create(mpi_group)
    mpi_group.Free()
    if comm == _mpi.mpi().COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, ranks, timeout or world.timeout, group_desc or str(len(_groups)))
    _groups.append(pg)
    return pg


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """The world ranks of ``group``'s members, in group-rank order.

    Example::

        dist.get_process_group_ranks(dist.group.WORLD)    # [0, 1, ...]
    """
    return list((group or default_pg()).ranks)


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    """The world rank of ``group``'s member ``group_rank``.

    Example::

        dist.get_global_rank(pg, 0)
    """
    g = group or default_pg()
    if not 0 <= group_rank < g.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {g}")
    return g.ranks[group_rank]


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    """The rank within ``group`` of the world rank ``global_rank``.

    Example::

        dist.get_group_rank(pg, dist.get_rank())
    """
    g = group or default_pg()
    if global_rank not in g.ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {g}")
    return g.ranks.index(global_rank)
