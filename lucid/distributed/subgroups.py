"""Many process groups at once: ``new_subgroups`` (equal blocks of consecutive ranks) and
``new_subgroups_by_enumeration`` (given rank lists), as ``torch.distributed``'s. Every rank
of the world must call them, as ``new_group``; each returns ``(this rank's subgroup, every
subgroup)``, with ``GroupMember.NON_GROUP_MEMBER`` for groups this rank is not in."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ._mpi import mpi
from .process_group import (
    ProcessGroup,
    default_pg,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    new_group,
)

__all__ = ["new_subgroups", "new_subgroups_by_enumeration"]


def _ranks_per_node() -> int:
    """The number of ranks on this machine (every rank of the world must call it)."""
    world = default_pg().comm
    local = world.Split_type(mpi().COMM_TYPE_SHARED, key=world.Get_rank())
    try:
        return local.Get_size()
    finally:
        local.Free()


def new_subgroups(group_size: int | None = None, group: ProcessGroup | None = None,
                  timeout: timedelta | None = None, backend: str | None = None,
                  pg_options: Any = None,
                  group_desc: str | None = None) -> tuple[Any, list[Any]]:
    """Split ``group`` (default: the world) into subgroups of ``group_size`` consecutive
    ranks; returns ``(the subgroup of this rank, all subgroups)``.

    Without ``group_size`` torch takes the number of CUDA devices per machine; lucid takes
    the number of ranks on this machine, so the default is again one subgroup per machine
    (every machine must run as many ranks).

    Example::

        cur, subgroups = dist.new_subgroups(group_size=2)
        dist.all_reduce(t, group=cur)          # sums over this rank's pair
    """
    if group_size is None:
        group_size = _ranks_per_node()
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    world_size = get_world_size(group=group)
    if world_size < group_size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size "
                         f"({world_size})")
    if world_size % group_size != 0:
        raise ValueError(f"The world size ({world_size}) must be divisible by "
                         f"'{group_size=}'")
    ranks = get_process_group_ranks(group)
    blocks = [ranks[i:i + group_size] for i in range(0, len(ranks), group_size)]
    return new_subgroups_by_enumeration(blocks, timeout=timeout, backend=backend,
                                        pg_options=pg_options, group_desc=group_desc)


def new_subgroups_by_enumeration(ranks_per_subgroup_list: list[list[int]],
                                 timeout: timedelta | None = None,
                                 backend: str | None = None, pg_options: Any = None,
                                 group_desc: str | None = None) -> tuple[Any, list[Any]]:
    """One subgroup per rank list of ``ranks_per_subgroup_list`` (lists may not overlap;
    ranks in none are allowed); returns ``(the subgroup of this rank or None, all
    subgroups)``. The lists are checked before any group is made.

    Example::

        cur, subgroups = dist.new_subgroups_by_enumeration([[0, 2], [1, 3]])
        dist.all_reduce(t, group=cur)          # ranks 0 and 2 sum together, 1 and 3 too
    """
    if ranks_per_subgroup_list is None or len(ranks_per_subgroup_list) == 0:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    owner: dict[int, Any] = {}
    for ranks in ranks_per_subgroup_list:
        for rank in ranks:
            if rank in owner:
                raise ValueError(f"Rank {rank} has appeared in both subgroup {owner[rank]} "
                                 f"and {ranks}")
            owner[rank] = ranks
    me = get_rank()
    subgroups, current = [], None
    for ranks in ranks_per_subgroup_list:
        sub = new_group(ranks=ranks, timeout=timeout, backend=backend, pg_options=pg_options,
                        group_desc=group_desc)
        subgroups.append(sub)
        if me in ranks:
            current = sub
    return current, subgroups
