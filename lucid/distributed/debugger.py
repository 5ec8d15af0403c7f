"""``breakpoint``: pdb on one rank while the others wait, as ``torch.distributed``'s."""

from __future__ import annotations

import logging
import pdb
import sys
import traceback
from datetime import timedelta
from typing import Any

from .collectives import barrier
from .process_group import get_rank, live_groups

__all__ = ["breakpoint"]

log = logging.getLogger(__name__)
_breakpoint_cache: dict[int, int] = {}


class _DistributedPdb(pdb.Pdb):
    """A pdb that reads the terminal (``/dev/stdin``) even where the rank's ``sys.stdin``
    is not the terminal (a launcher's child process)."""

    def interaction(self, *args: Any, **kwargs: Any) -> None:
        stdin = sys.stdin
        try:
            with open("/dev/stdin") as sys.stdin:
                pdb.Pdb.interaction(self, *args, **kwargs)
        finally:
            sys.stdin = stdin


def _make_distributed_pdb() -> pdb.Pdb:
    return _DistributedPdb()


def breakpoint(rank: int = 0, skip: int = 0, timeout_s: float | None = 3600) -> None:
    """Stop in pdb on rank ``rank`` only; every other rank waits in a barrier until you
    continue. ``skip`` lets the first ``skip`` calls pass; ``timeout_s`` (default an
    hour; None keeps them) becomes the timeout of every process group, so the watchdog
    does not end the job while you debug.

    Example::

        loss = model(x).sum()
        dist.breakpoint(rank=1)        # rank 1 stops in pdb ('up' reaches this frame)
    """
    if skip > 0:
        key = hash(str(traceback.format_exc()))
        counter = _breakpoint_cache.get(key, 0) + 1
        _breakpoint_cache[key] = counter
        if counter <= skip:
            log.warning("Skip the breakpoint, counter=%d", counter)
            return
    if timeout_s is not None:
        for group in live_groups():
            group.timeout = timedelta(seconds=timeout_s)
    if get_rank() == rank:
        debugger = _make_distributed_pdb()
        debugger.message("\n!!! ATTENTION !!!\n\nType 'up' to get to the frame that called "
                         f"dist.breakpoint(rank={rank})\n")
        debugger.set_trace()
    barrier()
