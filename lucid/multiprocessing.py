"""``lucid.multiprocessing``: Python's ``multiprocessing`` under PyTorch's
``torch.multiprocessing`` name, plus PyTorch's ``spawn``.

lucid tensors, Parameters and modules pickle (their data is copied), so they pass through
``Queue``, ``Pipe`` and ``Pool`` like any Python object. Unlike PyTorch, tensors are not moved
to shared memory: a child's in-place changes do not reach the parent's tensor; send results
back through a queue instead.

Example::

    import lucid.multiprocessing as mp

    def work(rank, q):
        q.put(lucid.full((2,), float(rank)))

    if __name__ == "__main__":
        q = mp.get_context("spawn").SimpleQueue()
        mp.spawn(work, args=(q,), nprocs=2)
"""

from __future__ import annotations

import multiprocessing as _mp
import signal
import traceback
from collections.abc import Callable
from multiprocessing import (
    Array,
    Barrier,
    Condition,
    Event,
    JoinableQueue,
    Lock,
    Manager,
    Pipe,
    Pool,
    Process,
    Queue,
    RLock,
    Semaphore,
    SimpleQueue,
    Value,
    active_children,
    cpu_count,
    current_process,
    get_all_start_methods,
    get_context,
    get_start_method,
    set_start_method,
)
from typing import Any

__all__ = [
    "Process", "Queue", "SimpleQueue", "JoinableQueue", "Pool", "Pipe", "Lock", "RLock",
    "Event", "Condition", "Semaphore", "Barrier", "Value", "Array", "Manager", "cpu_count",
    "current_process", "active_children", "get_context", "get_start_method",
    "set_start_method", "get_all_start_methods", "spawn", "start_processes", "ProcessContext",
    "ProcessException", "ProcessRaisedException", "ProcessExitedException",
    "get_sharing_strategy", "set_sharing_strategy", "get_all_sharing_strategies",
]

_sharing = {"strategy": "file_system"}


def get_all_sharing_strategies() -> set[str]:
    """The strategies PyTorch names; lucid copies tensors through pickling under each."""
    return {"file_descriptor", "file_system"}


def get_sharing_strategy() -> str:
    """The strategy last set (lucid pickles tensor data whatever it is)."""
    return _sharing["strategy"]


def set_sharing_strategy(new_strategy: str) -> None:
    """Record a sharing strategy, as PyTorch (no effect: lucid pickles tensor data)."""
    if new_strategy not in get_all_sharing_strategies():
        raise AssertionError(f"Unknown sharing strategy {new_strategy}")
    _sharing["strategy"] = new_strategy


class ProcessException(Exception):
    """A process started by ``spawn`` failed; ``error_index`` is its rank and ``pid`` its id."""

    def __init__(self, msg: str, error_index: int, pid: int | None) -> None:
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self) -> tuple:
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """The function run by ``spawn`` raised in the child; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A child exited with a non-zero code (or a signal) without raising in Python."""

    def __init__(self, msg: str, error_index: int, pid: int | None, exit_code: int,
                 signal_name: str | None = None) -> None:
        super().__init__(msg, error_index, pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self) -> tuple:
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn: Callable[..., Any], i: int, args: tuple, error_queue: Any) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        raise SystemExit(1) from None


class ProcessContext:
    """The processes ``spawn`` started; ``join()`` waits and re-raises the first failure."""

    def __init__(self, processes: list[Any], error_queues: list[Any]) -> None:
        self.processes = processes
        self.error_queues = error_queues

    def pids(self) -> list[int | None]:
        """The children's process ids."""
        return [p.pid for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """Wait for every child (at most ``timeout`` seconds each); True when all ended.
        A failed child makes the others terminate and raises ``ProcessRaisedException``
        (with the child's traceback) or ``ProcessExitedException``."""
        for p in self.processes:
            p.join(timeout)
        failed = [i for i, p in enumerate(self.processes)
                  if p.exitcode is not None and p.exitcode != 0]
        if not failed:
            return all(p.exitcode is not None for p in self.processes)
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join()
        i = failed[0]
        p = self.processes[i]
        if not self.error_queues[i].empty():
            tb = self.error_queues[i].get()
            raise ProcessRaisedException(
                f"\n\n-- Process {i} terminated with the following error:\n{tb}", i, p.pid)
        code = p.exitcode
        if code < 0:
            name = signal.Signals(-code).name
            raise ProcessExitedException(f"process {i} terminated with signal {name}", i,
                                         p.pid, code, name)
        raise ProcessExitedException(f"process {i} terminated with exit code {code}", i,
                                     p.pid, code)


def start_processes(fn: Callable[..., Any], args: tuple = (), nprocs: int = 1,
                    join: bool = True, daemon: bool = False,
                    start_method: str = "spawn") -> ProcessContext | None:
    """Run ``fn(i, *args)`` for ``i`` in ``range(nprocs)``, each in its own process started
    with ``start_method``; with ``join`` wait for all and re-raise a failure, else return
    the ``ProcessContext``."""
    ctx = _mp.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, tuple(args), q), daemon=daemon)
        p.start()
        processes.append(p)
        queues.append(q)
    context = ProcessContext(processes, queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn: Callable[..., Any], args: tuple = (), nprocs: int = 1, join: bool = True,
          daemon: bool = False, start_method: str = "spawn") -> ProcessContext | None:
    """PyTorch's ``torch.multiprocessing.spawn``: run ``fn(rank, *args)`` in ``nprocs``
    fresh processes (``fn`` must be importable: defined at module level).

    Example::

        lucid.multiprocessing.spawn(train, args=(config,), nprocs=2)
    """
    return start_processes(fn, args, nprocs, join, daemon, start_method)
