"""Collectives of picklable Python objects (``torch.distributed``'s ``*_object*`` family).

Objects travel pickled (mpi4py's lower-case calls), so, as in torch, only exchange objects
from ranks you trust. Results are written into the lists given, as torch does.
"""

from __future__ import annotations

from typing import Any

from .collectives import _root
from .point_to_point import canonical_peer
from .process_group import ProcessGroup, resolve_group

__all__ = ["broadcast_object_list", "all_gather_object", "gather_object",
           "scatter_object_list", "send_object_list", "recv_object_list"]


def broadcast_object_list(object_list: list, src: int | None = None,
                          group: ProcessGroup | None = None, device: Any = None,
                          group_src: int | None = None) -> None:
    """Replace every rank's ``object_list`` entries with rank ``src``'s.

    Example::

        cfg = [{"lr": 0.1}] if dist.get_rank() == 0 else [None]
        dist.broadcast_object_list(cfg, src=0)
    """
    pg = resolve_group(group)
    if pg is None:
        return
    root = _root(pg, src, group_src, "broadcast_object_list")
    with pg.watched("broadcast_object_list"):
        got = pg.comm.bcast(list(object_list) if pg.rank() == root else None, root=root)
    if pg.rank() != root:
        if len(got) != len(object_list):
            raise ValueError(f"broadcast_object_list: rank {pg.ranks[root]} sent "
                             f"{len(got)} objects into a list of {len(object_list)}")
        object_list[:] = got


def all_gather_object(object_list: list, obj: Any, group: ProcessGroup | None = None) -> None:
    """Every rank's ``obj`` into ``object_list`` (one slot per rank, in rank order).

    Example::

        out = [None] * dist.get_world_size()
        dist.all_gather_object(out, {"rank": dist.get_rank()})
    """
    pg = resolve_group(group)
    if pg is None:
        return
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list must have one slot per rank "
                         f"({pg.size()}), got {len(object_list)}")
    with pg.watched("all_gather_object"):
        object_list[:] = pg.comm.allgather(obj)


def gather_object(obj: Any, object_gather_list: list | None = None, dst: int | None = None,
                  group: ProcessGroup | None = None, group_dst: int | None = None) -> None:
    """Every rank's ``obj`` into ``object_gather_list`` on rank ``dst``.

    Example::

        out = [None] * world if dist.get_rank() == 0 else None
        dist.gather_object(metrics, out, dst=0)
    """
    pg = resolve_group(group)
    if pg is None:
        return
    root = _root(pg, dst, group_dst, "gather_object")
    if pg.rank() == root:
        if object_gather_list is None:
            raise ValueError("Argument ``object_gather_list`` must be specified on "
                             "destination rank.")
        if len(object_gather_list) != pg.size():
            raise ValueError(f"gather_object: object_gather_list must have one slot per rank "
                             f"({pg.size()}), got {len(object_gather_list)}")
    elif object_gather_list:
        raise ValueError("Argument ``object_gather_list`` must NOT be specified on "
                         "non-destination ranks.")
    with pg.watched("gather_object"):
        got = pg.comm.gather(obj, root=root)
    if pg.rank() == root:
        object_gather_list[:] = got


def scatter_object_list(scatter_object_output_list: list,
                        scatter_object_input_list: list | None = None, src: int | None = None,
                        group: ProcessGroup | None = None,
                        group_src: int | None = None) -> None:
    """Rank ``src``'s ``scatter_object_input_list[i]`` into rank i's
    ``scatter_object_output_list[0]``.

    Example::

        out = [None]
        dist.scatter_object_list(out, [f"shard{i}" for i in range(world)], src=0)
    """
    pg = resolve_group(group)
    if pg is None:
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size "
                         "at least 1.")
    root = _root(pg, src, group_src, "scatter_object_list")
    send = None
    if pg.rank() == root:
        if scatter_object_input_list is None or \
                len(scatter_object_input_list) != pg.size():
            raise ValueError(f"scatter_object_list: the source rank needs "
                             f"scatter_object_input_list with one object per rank "
                             f"({pg.size()})")
        send = list(scatter_object_input_list)
    with pg.watched("scatter_object_list"):
        scatter_object_output_list[0] = pg.comm.scatter(send, root=root)


def _peer(pg: ProcessGroup, rank: int | None, group_rank: int | None, kind: str) -> int:
    peer = canonical_peer(pg, rank, group_rank)
    if peer == pg.rank():
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the rank "
                         "of the current process.")
    return peer


def send_object_list(object_list: list, dst: int | None = None,
                     group: ProcessGroup | None = None, device: Any = None,
                     group_dst: int | None = None, use_batch: bool = False) -> None:
    """Send the picklable objects of ``object_list`` to rank ``dst`` (a world rank; or
    ``group_dst``, a rank in ``group``), which receives them with ``recv_object_list`` into
    a list of the same length. ``device`` and ``use_batch`` are accepted for torch's
    signature: objects travel pickled either way.

    Example::

        if dist.get_rank() == 0:
            dist.send_object_list(["foo", 12, {1: 2}], dst=1)
        else:
            objs = [None, None, None]
            dist.recv_object_list(objs, src=0)     # objs == ["foo", 12, {1: 2}]
    """
    pg = resolve_group(group)
    if pg is None:
        return
    peer = _peer(pg, dst, group_dst, "destination")
    with pg.watched(f"send_object_list (peer {pg.ranks[peer]})"):
        pg.comm.send(list(object_list), dest=peer, tag=0)


def recv_object_list(object_list: list, src: int | None = None,
                     group: ProcessGroup | None = None, device: Any = None,
                     group_src: int | None = None, use_batch: bool = False) -> int:
    """Receive the objects rank ``src`` (or ``group_src`` in ``group``) sent with
    ``send_object_list`` into ``object_list``, which must be as long as the sent list.
    Returns the sender's world rank (-1 on a rank outside ``group``).

    Example::

        objs = [None, None, None]
        dist.recv_object_list(objs, src=0)         # 0
    """
    pg = resolve_group(group)
    if pg is None:
        return -1
    peer = _peer(pg, src, group_src, "source")
    with pg.watched(f"recv_object_list (peer {pg.ranks[peer]})"):
        got = pg.comm.recv(source=peer, tag=0)
    if len(got) != len(object_list):
        raise ValueError(f"recv_object_list: rank {pg.ranks[peer]} sent {len(got)} objects "
                         f"into a list of {len(object_list)}")
    object_list[:] = got
    return pg.ranks[peer]
