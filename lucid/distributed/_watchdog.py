"""Timeouts and failure handling: a hung or dead rank ends the job instead of hanging it.

MPI's blocking calls cannot be interrupted, so every collective registers itself here with
its deadline (the process group's ``timeout``); one daemon thread checks the deadlines and,
when one passes, prints which rank waited in which operation and calls ``MPI_Abort``, which
makes the launcher stop every process of the job. ``install_excepthook`` does the same for
an uncaught exception in a rank of a multi-process job (the other ranks would otherwise
wait for it forever in their next collective), as torchrun's agent does when one worker
fails.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import time
import traceback
from typing import Any

from ._mpi import mpi

__all__ = ["watch", "unwatch", "abort", "install_excepthook", "Watched"]

_lock = threading.Lock()
_wake = threading.Condition(_lock)
_inflight: dict[int, tuple[float, float, str, int]] = {}  # token -> deadline, timeout, what, rank
_ids = itertools.count()
_thread: threading.Thread | None = None
_DRAIN_S = 0.5  # time the launcher gets to forward the last output before the abort


def abort(message: str, rank: int, code: int = 1, before: str = "") -> None:
    """Print ``before`` and ``message`` for ``rank`` on stderr and abort the whole MPI job.

    The text goes out in one write, and the rank waits a moment before ``MPI_Abort``: the
    launcher forwards each rank's output asynchronously and drops what it has not read
    when the job is torn down, which used to cut a traceback off before its message."""
    try:
        sys.stderr.write(f"{before}[lucid.distributed rank {rank}] {message}\n")
        sys.stderr.flush()
        time.sleep(_DRAIN_S)
    finally:
        mpi().COMM_WORLD.Abort(code)
        os._exit(code)  # pragma: no cover - Abort does not return


def _loop() -> None:
    while True:
        with _wake:
            now = time.monotonic()
            late = [v for v in _inflight.values() if v[0] <= now]
            if not late:
                soonest = min((v[0] for v in _inflight.values()), default=now + 3600.0)
                _wake.wait(max(0.01, min(soonest - now, 5.0)))
                continue
        _, timeout, what, rank = late[0]
        abort(f"{what} did not complete within the process group's timeout of "
              f"{timeout:g} s: another rank may have died, hung, or not called the same "
              "collective (check that every rank runs the same collectives in the same "
              "order). Aborting the job.", rank)


def watch(what: str, timeout: float, rank: int) -> int:
    """Register an operation that must finish within ``timeout`` seconds; returns a token."""
    global _thread
    token = next(_ids)
    with _wake:
        _inflight[token] = (time.monotonic() + timeout, timeout, what, rank)
        if _thread is None:
            _thread = threading.Thread(target=_loop, name="lucid-dist-watchdog", daemon=True)
            _thread.start()
        elif timeout < 5.0:
            _wake.notify()
    return token


def unwatch(token: int) -> None:
    """The operation behind ``token`` finished."""
    with _lock:
        _inflight.pop(token, None)


class Watched:
    """``with Watched(what, timeout, rank):`` around a blocking MPI call."""

    __slots__ = ("token", "args")

    def __init__(self, what: str, timeout: float, rank: int) -> None:
        self.args = (what, timeout, rank)

    def __enter__(self) -> Watched:
        self.token = watch(*self.args)
        return self

    def __exit__(self, *exc: Any) -> None:
        unwatch(self.token)


_hook_installed = False


def install_excepthook(rank: int) -> None:
    """Make an uncaught exception in this rank print its traceback and abort the job."""
    global _hook_installed
    if _hook_installed:
        return
    _hook_installed = True
    previous = sys.excepthook

    def hook(tp: Any, value: Any, tb: Any) -> None:
        if issubclass(tp, (KeyboardInterrupt, SystemExit)):
            previous(tp, value, tb)
            return
        text = ""
        if previous is sys.__excepthook__:  # one write with the message; see abort
            text = "".join(traceback.format_exception(tp, value, tb))
        else:
            previous(tp, value, tb)
        abort(f"uncaught {tp.__name__} in this rank; aborting the job so the other ranks "
              "do not wait for it forever", rank, before=text)

    sys.excepthook = hook
