"""Point-to-point messages (``send``/``recv`` and their nonblocking forms), with
``torch.distributed``'s signatures; ``dst``/``src`` are world ranks, ``group_dst`` /
``group_src`` ranks within ``group``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._buffers import check_tensor, stage
from .collectives import Work, _bytes, _finisher, _root, _run
from .process_group import GroupMember, ProcessGroup, default_pg, get_rank, resolve_group

__all__ = ["send", "recv", "isend", "irecv", "P2POp", "batch_isend_irecv",
           "canonical_peer"]


def _p2p(kind: str, tensor: Any, peer: int | None, group: Any, tag: int,
         group_peer: int | None, async_op: bool) -> Any:
    pg = resolve_group(group)
    if pg is None:
        return None
    if peer is None and group_peer is None:
        raise ValueError(f"{kind}: give the peer rank")
    other = _root(pg, peer, group_peer, kind)
    if other == pg.rank():
        raise ValueError(f"Invalid {'destination' if kind == 'send' else 'source'} rank: it "
                         "should not be the same as the rank of the current process.")
    s = stage(tensor, out=kind == "recv")
    return _run(pg, f"{kind} (peer {pg.ranks[other]}, tag {tag})",
                "Send" if kind == "send" else "Recv", (_bytes(s.array), other, tag),
                _finisher([s]), async_op, [tensor])


def send(tensor: Any, dst: int | None = None, group: ProcessGroup | None = None,
         tag: int = 0, group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` (blocks until it was taken).

    Example::

        if dist.get_rank() == 0: dist.send(t, dst=1)
        else: dist.recv(t, src=0)
    """
    _p2p("send", tensor, dst, group, tag, group_dst, False)


def recv(tensor: Any, src: int | None = None, group: ProcessGroup | None = None,
         tag: int = 0, group_src: int | None = None) -> int:
    """Receive into ``tensor`` from rank ``src``; returns ``src``.

    Example::

        dist.recv(t, src=0)
    """
    _p2p("recv", tensor, src, group, tag, group_src, False)
    return src if src is not None else resolve_group(group).ranks[group_src]


def isend(tensor: Any, dst: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0, group_dst: int | None = None) -> Work | None:
    """Nonblocking ``send``; returns a ``Work``.

    Example::

        w = dist.isend(t, dst=1); w.wait()
    """
    return _p2p("send", tensor, dst, group, tag, group_dst, True)


def irecv(tensor: Any, src: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0, group_src: int | None = None) -> Work | None:
    """Nonblocking ``recv``; returns a ``Work``.

    Example::

        w = dist.irecv(t, src=0); w.wait()
    """
    return _p2p("recv", tensor, src, group, tag, group_src, True)


def canonical_peer(group: Any, rank: int | None, group_rank: int | None) -> int:
    """The group rank of a peer named by a world ``rank`` or a ``group_rank`` (exactly one),
    with torch's ValueErrors."""
    if group_rank is not None:
        if rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        if not 0 <= group_rank < group.size():
            raise ValueError(f"Group rank {group_rank} is not part of group {group}")
        return int(group_rank)
    if rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    if rank not in group.ranks:
        raise ValueError(f"Global rank {rank} is not part of group {group}")
    return group.ranks.index(rank)


class P2POp:
    """One send or receive of ``batch_isend_irecv`` (``torch.distributed.P2POp``): ``op`` is
    ``isend`` or ``irecv``, ``peer`` a world rank (or ``group_peer`` a rank in ``group``).

    Example::

        right, left = (rank + 1) % world, (rank - 1) % world
        ops = [dist.P2POp(dist.isend, send_buf, right), dist.P2POp(dist.irecv, recv_buf, left)]
        for work in dist.batch_isend_irecv(ops):
            work.wait()
    """

    def __new__(cls, op: Callable, tensor: Any, peer: int | None = None,
                group: ProcessGroup | None = None, tag: int = 0,
                group_peer: int | None = None) -> P2POp:
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                             "``lucid.distributed.isend`` or ``lucid.distributed.irecv``.")
        check_tensor(tensor, "tensor")
        return object.__new__(cls)

    def __init__(self, op: Callable, tensor: Any, peer: int | None = None,
                 group: ProcessGroup | None = None, tag: int = 0,
                 group_peer: int | None = None) -> None:
        self.op = op
        self.tensor = tensor
        self.group = default_pg() if group is None or group is GroupMember.WORLD else group
        if not isinstance(self.group, ProcessGroup):
            raise ValueError(f"Group {self.group} is not registered, please create group with "
                             "lucid.distributed.new_group API")
        self.group_peer = canonical_peer(self.group, peer, group_peer)
        self.peer = self.group.ranks[self.group_peer]
        self.tag = tag

    def __repr__(self) -> str:
        me = get_rank(self.group)
        if self.op is isend:
            src, dst = me, self.group_peer
        else:
            src, dst = self.group_peer, me
        return (f"P2POp({self.op.__name__} pg={self.group.group_name}, group_src={src}, "
                f"group_dst={dst},  {tuple(self.tensor.shape)}, {self.tensor.dtype})")


def batch_isend_irecv(p2p_op_list: list[P2POp]) -> list[Work]:
    """Start every send and receive of ``p2p_op_list`` (all on one group) and return their
    ``Work`` handles; the order of sends and receives in the list cannot deadlock, since
    all start before any is waited on. Messages between the same pair of ranks in the same
    direction match in list order.

    Example::

        send_t = lucid.arange(2.0) + 2 * rank
        recv_t = lucid.empty(2)
        ops = [dist.P2POp(dist.isend, send_t, (rank + 1) % world),
               dist.P2POp(dist.irecv, recv_t, (rank - 1) % world)]
        for work in dist.batch_isend_irecv(ops):
            work.wait()
    """
    if not isinstance(p2p_op_list, list) or \
            not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``lucid.distributed.P2POp``.")
    group = p2p_op_list[0].group
    if not all(p.group is group for p in p2p_op_list):
        raise ValueError("All ops need to use the same group.")
    works = []
    for p in p2p_op_list:
        key = "group_dst" if p.op is isend else "group_src"
        work = p.op(p.tensor, group=p.group, tag=p.tag, **{key: p.group_peer})
        if work:
            works.append(work)
    return works
