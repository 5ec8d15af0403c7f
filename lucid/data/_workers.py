"""Loading batches in worker processes (``DataLoader(num_workers > 0)``), as PyTorch does.

Each worker gets a copy of the data set, seeds itself (``random``, numpy and lucid with
``base_seed + worker_id``, ``base_seed`` drawn from the loader's generator or lucid's global
one), sets ``get_worker_info()`` and runs ``worker_init_fn(worker_id)``. The main process
sends index lists round-robin, keeping ``prefetch_factor`` batches per worker in flight, and
yields the collated batches in sampler order (``in_order=True``) or as they arrive. A worker's
exception is re-raised in the main process with the worker's traceback; a worker that dies
raises a RuntimeError; ``timeout > 0`` bounds each wait for a batch.

Workers start as PyTorch's do: with Python's default start method ("fork" on Linux up to
Python 3.13, so a script without an ``if __name__ == "__main__":`` guard, with lambdas and
locally defined data sets, works; "spawn" on macOS and Windows, where those must be picklable
and the entry point guarded), or with ``multiprocessing_context``. A forked worker runs every
kernel's serial build and BLAS on one thread: lucid's parallel kernels run on OpenMP threads,
which a process forked after they started cannot use (numba's "omp" layer ends such a child;
``lucid/kernels/_threads.py``), and a data-loading worker has no cores to spare anyway.
"""

from __future__ import annotations

import itertools
import multiprocessing as mp
import pickle
import queue
import random
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ops.random import default_generator, manual_seed

__all__ = ["WorkerInfo", "get_worker_info", "MultiProcessIter", "worker_context"]

_STATUS_CHECK_INTERVAL = 1.0  # seconds between checks that the workers are alive


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: its ``id`` (0 to
    ``num_workers - 1``), ``num_workers``, the ``seed`` it was seeded with and its copy of
    the ``dataset``."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    worker_method: str = "multiprocessing"


_info: dict[str, WorkerInfo | None] = {"current": None}


def get_worker_info() -> WorkerInfo | None:
    """Inside a ``DataLoader`` worker, its ``WorkerInfo``; None in the main process.

    Example::

        class Shards(lucid.utils.data.IterableDataset):
            def __iter__(self):
                info = lucid.utils.data.get_worker_info()
                wid, n = (0, 1) if info is None else (info.id, info.num_workers)
                return iter(range(wid, 100, n))
    """
    return _info["current"]


class _ExceptionWrapper:
    """A worker's exception, sent to the main process with its formatted traceback."""

    def __init__(self, worker_id: int) -> None:
        exc_type, exc, tb = sys.exc_info()
        self.exc_type = exc_type
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc, tb))
        self.where = f"in DataLoader worker process {worker_id}"

    def reraise(self) -> None:
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exc


@dataclass
class _IterableEnd:
    """A worker's iterable data set is exhausted."""

    worker_id: int


@dataclass
class _Resume:
    """Start a new epoch (persistent workers)."""


def fetch(dataset: Any, auto_collation: bool, collate_fn: Any, indices: Any) -> Any:
    """One batch of a map-style data set: the samples at ``indices`` collated (or one
    sample converted, without auto-collation)."""
    if not auto_collation:
        return collate_fn(dataset[indices])
    getitems = getattr(dataset, "__getitems__", None)
    samples = getitems(indices) if getitems is not None else [dataset[i] for i in indices]
    return collate_fn(samples)


def _iterable_batch(it: Iterator[Any], batch_size: int | None, drop_last: bool,
                    collate_fn: Any) -> Any:
    if batch_size is None:
        return collate_fn(next(it))
    batch = list(itertools.islice(it, batch_size))
    if not batch or drop_last and len(batch) < batch_size:
        raise StopIteration
    return collate_fn(batch)


def _seed_worker(seed: int, worker_id: int) -> None:
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, seed]).generate_state(4))


def _worker_loop(worker_id: int, num_workers: int, seed: int, dataset: Any, iterable: bool,
                 spec: tuple, worker_init_fn: Any, index_queue: Any, data_queue: Any) -> None:
    """The body of a worker process: serve requests from ``index_queue`` until None."""
    try:
        _seed_worker(seed, worker_id)
        _info["current"] = WorkerInfo(worker_id, num_workers, seed, dataset)
        if worker_init_fn is not None:
            worker_init_fn(worker_id)
        init_error = None
    except Exception:
        init_error = _ExceptionWrapper(worker_id)
    auto_collation, collate_fn, batch_size, drop_last = spec
    it = iter(dataset) if iterable and init_error is None else None
    exhausted = False
    while True:
        try:
            task = index_queue.get(timeout=_STATUS_CHECK_INTERVAL)
        except queue.Empty:
            continue
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if task is None:
            return
        if isinstance(task, _Resume):
            exhausted = False
            it = iter(dataset) if iterable else None
            data_queue.put((None, task))
            continue
        idx, indices = task
        if init_error is not None:
            data_queue.put((idx, init_error))
            init_error = None
            exhausted = True
            continue
        if exhausted:
            data_queue.put((idx, _IterableEnd(worker_id)))
            continue
        try:
            if iterable:
                data = _iterable_batch(it, batch_size, drop_last, collate_fn)  # type: ignore
            else:
                data = fetch(dataset, auto_collation, collate_fn, indices)
        except StopIteration:
            exhausted = True
            data = _IterableEnd(worker_id)
        except Exception:
            data = _ExceptionWrapper(worker_id)
        data_queue.put((idx, data))


def worker_context(name: Any) -> Any:
    """The multiprocessing context workers start with (see this module's docstring)."""
    if name is None:
        ctx = mp.get_context()
        if ctx.get_start_method() == "forkserver":
            ctx.set_forkserver_preload(["lucid"])  # the server imports lucid once
        return ctx
    if isinstance(name, str):
        if name not in mp.get_all_start_methods():
            raise ValueError(f"multiprocessing_context option should specify a valid start "
                             f"method in {mp.get_all_start_methods()!r}, but got "
                             f"multiprocessing_context={name!r}")
        return mp.get_context(name)
    if not hasattr(name, "Process"):
        raise TypeError("multiprocessing_context option should be a valid context object or "
                        f"a string specifying the start method, but got "
                        f"multiprocessing_context={name!r}")
    return name


class MultiProcessIter:
    """One pass over a ``DataLoader`` with worker processes (reused across passes when the
    loader has ``persistent_workers=True``)."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader
        self._n = loader.num_workers
        self._iterable = loader._iterable
        self._timeout = loader.timeout
        self._prefetch = loader.prefetch_factor
        self._in_order = loader.in_order
        ctx = worker_context(loader.multiprocessing_context)
        # NOTE: the sampler draws its order first, so a seeded pass visits the same batches
        # whatever num_workers is
        self._sampler_iter = self._new_sampler_iter()
        rng = loader.generator.rng if loader.generator is not None else default_generator.rng
        base_seed = int(rng.integers(0, 2**63 - 1))
        spec = (loader.batch_sampler is not None, loader.collate_fn, loader.batch_size,
                loader.drop_last)
        self._data_queue = ctx.Queue()
        self._index_queues = []
        self._workers = []
        for i in range(self._n):
            iq = ctx.Queue()
            w = ctx.Process(target=_worker_loop, daemon=True, args=(
                i, self._n, base_seed + i, loader.dataset, self._iterable, spec,
                loader.worker_init_fn, iq, self._data_queue))
            self._index_queues.append(iq)
            try:
                w.start()
            except (pickle.PicklingError, AttributeError, TypeError) as e:
                self._shutdown = False
                self._stop(graceful=False)
                raise TypeError(
                    f"DataLoader workers start with {ctx.get_start_method()!r}, so the data "
                    "set, collate_fn and worker_init_fn must be picklable (module-level "
                    f"classes and functions, no lambdas): {e}. Use num_workers=0, or "
                    "multiprocessing_context='fork' where the platform has it.") from e
            self._workers.append(w)
        self._shutdown = False
        self._reset(first=True)

    # ---- one epoch ----------------------------------------------------------------------
    def _new_sampler_iter(self) -> Iterator[Any] | None:
        """The pass's index iterator, its first item already drawn."""
        loader = self._loader
        if self._iterable:
            return None
        it = iter(loader.batch_sampler if loader.batch_sampler is not None else loader.sampler)
        first = list(itertools.islice(it, 1))
        return itertools.chain(first, it)

    def _reset(self, first: bool = False) -> None:
        if not first:
            self._sampler_iter = self._new_sampler_iter()
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: dict[int, tuple] = {}  # idx -> (worker,) or (worker, data)
        self._active = [True] * self._n
        self._next_worker = itertools.cycle(range(self._n))
        if not first:
            for q in self._index_queues:
                q.put(_Resume())
            acks = 0
            while acks < self._n:
                idx, data = self._get()
                if idx is None and isinstance(data, _Resume):
                    acks += 1
        for _ in range(self._prefetch * self._n):
            self._try_put()

    def _try_put(self) -> None:
        if not any(self._active):
            return
        if self._iterable:
            indices = None
        else:
            try:
                indices = next(self._sampler_iter)  # type: ignore[arg-type]
            except StopIteration:
                return
        for _ in range(self._n):
            w = next(self._next_worker)
            if self._active[w]:
                break
        else:
            return
        self._index_queues[w].put((self._send_idx, indices))
        self._task_info[self._send_idx] = (w,)
        self._send_idx += 1

    def _get(self) -> tuple:
        """The next (index, data) from the workers, watching the timeout and the workers'
        health."""
        waited = 0.0
        while True:
            step = _STATUS_CHECK_INTERVAL
            if self._timeout > 0:
                step = min(step, self._timeout - waited)
            try:
                return self._data_queue.get(timeout=max(step, 0.0))
            except queue.Empty:
                waited += step
                dead = [w.pid for w in self._workers if not w.is_alive()]
                if dead:
                    self._stop(graceful=False)
                    pids = ", ".join(str(p) for p in dead)
                    raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited "
                                       "unexpectedly") from None
                if self._timeout > 0 and waited >= self._timeout:
                    self._stop(graceful=False)
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds"
                                       ) from None

    def __iter__(self) -> MultiProcessIter:
        return self

    def __next__(self) -> Any:
        while True:
            while self._rcvd_idx < self._send_idx:  # skip tasks of exhausted workers
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._active[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                self._end_epoch()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(info[1])
            idx, data = self._get()
            if idx is None:
                continue
            if isinstance(data, _IterableEnd):
                self._active[data.worker_id] = False
                self._task_info.pop(idx, None)
                self._try_put()
                continue
            if idx != self._rcvd_idx and self._in_order:
                self._task_info[idx] = (self._task_info[idx][0], data)
                continue
            self._task_info.pop(idx, None)
            if idx == self._rcvd_idx:
                self._rcvd_idx += 1
            return self._process(data)

    def _process(self, data: Any) -> Any:
        self._try_put()
        if isinstance(data, _ExceptionWrapper):
            self._stop()
            data.reraise()
        return data

    def _end_epoch(self) -> None:
        if not self._loader.persistent_workers:
            self._stop()

    def _stop(self, graceful: bool = True) -> None:
        """Ask the workers to exit, then make sure they did (at once when a worker hung or
        died: ``graceful=False``)."""
        if self._shutdown:
            return
        self._shutdown = True
        for q in self._index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        for w in self._workers:
            w.join(timeout=5.0 if graceful else 0.0)
            if w.is_alive():
                w.kill()
                w.join()
        for q in (*self._index_queues, self._data_queue):
            q.cancel_join_thread()
            q.close()

    def __del__(self) -> None:
        try:
            self._stop()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
