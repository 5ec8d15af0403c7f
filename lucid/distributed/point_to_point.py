"""Point-to-point messages (``send``/``recv`` and their nonblocking forms), with
``torch.distributed``'s signatures; ``dst``/``src`` are world ranks, ``group_dst`` /
``group_src`` ranks within ``group``."""

from __future__ import annotations

from typing import Any

from ._buffers import stage
from .collectives import Work, _bytes, _finisher, _root, _run
from .process_group import ProcessGroup, resolve_group

__all__ = ["send", "recv", "isend", "irecv"]


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
