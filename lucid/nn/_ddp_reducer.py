"""DistributedDataParallel's gradient reducer: buckets, all-reduced while backward runs.

Parameters go into buckets in reverse registration order (roughly the order backward
produces their gradients), each bucket one flat host array of at most ``bucket_cap_mb``
(the first one smaller, 1 MiB by default, as torch, so communication starts early). A
post-accumulate-grad hook on every parameter copies its finished gradient into its slot;
when a bucket is full it is handed to a communication thread, which all-reduces buckets
strictly in index order (every rank must run the same MPI calls in the same order) with a
blocking ``MPI_Allreduce`` on the reducer's own communicator and divides by the world size.
A nonblocking ``MPI_Iallreduce`` would not progress while Python computes the rest of
backward; the thread does (figures in DESIGN.md). The thread also writes each bucket's
averages into the parameters' ``.grad`` as soon as it has them (as torch's reducer does
when a bucket's all-reduce completes); the end-of-backward callback waits for the last
bucket, so ``backward()`` returns with synced gradients. With ``find_unused_parameters``
the callback writes the gradients (it first learns which parameters some rank used).
Without ``MPI_THREAD_MULTIPLE`` the buckets are reduced in that callback.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

import numpy as np

from .. import distributed as dist
from .._tensor import _make
from ..autograd.engine import queue_callback
from ..distributed import _mpi
from ..distributed._buffers import Staged

__all__ = ["Reducer", "broadcast_coalesced", "FIRST_BUCKET_BYTES"]

FIRST_BUCKET_BYTES = 1024 * 1024
GAP_CUT_BYTES = 256 * 1024   # a bucket this big may close early at a pause in backward
GAP_CUT_S = 5e-4             # ... of at least this long (or 5% of the backward pass)
_FLOATS = {np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64),
           np.dtype(np.complex128)}


def broadcast_coalesced(tensors: list, pg: Any, src: int = 0) -> None:
    """Overwrite ``tensors`` with group rank ``src``'s values: one broadcast per dtype."""
    groups: dict[Any, list] = {}
    for t in tensors:
        groups.setdefault(str(t.dtype), []).append(Staged(t))
    for staged in groups.values():
        flat = np.concatenate([s.array.reshape(-1).view(np.uint8) for s in staged])
        with pg.watched("DDP broadcast of parameters and buffers"):
            pg.comm.Bcast([flat, _mpi.mpi().BYTE], root=src)
        if pg.rank() != src:
            off = 0
            for s in staged:
                n = s.array.nbytes
                s.array.reshape(-1).view(np.uint8)[...] = flat[off:off + n]
                s.finish()
                off += n


class _Bucket:
    __slots__ = ("index", "names", "params", "slots", "array", "pending", "done", "ready")

    def __init__(self, index: int, dtype: np.dtype) -> None:
        self.index, self.names, self.params, self.slots = index, [], [], []
        self.array = np.empty(0, dtype)
        self.pending = 0
        self.done = threading.Event()
        self.ready = False


class Reducer:
    """Buckets of ``params`` (``(name, Parameter)`` pairs) all-reduced over ``pg``.

    The first layout follows reverse registration order. After the first synced backward,
    rank 0 lays the buckets out again in the order gradients actually became ready, also
    closing a bucket (of at least ``GAP_CUT_BYTES``) where backward computed for a while
    before the next gradient arrived, so that bucket is all-reduced during that computation
    (torch rebuilds its buckets after the first iteration too). Every rank receives rank
    0's layout, so all ranks reduce the same buckets in the same order.
    """

    def __init__(self, named_params: list, pg: Any, bucket_bytes: int, first_bytes: int,
                 find_unused: bool, as_view: bool) -> None:
        self.pg, self.world = pg, pg.size()
        self.comm = pg.comm.Dup()
        self.find_unused, self.as_view = find_unused, as_view
        self.named = named_params
        self.caps = (first_bytes, bucket_bytes)
        self._layout(list(range(len(named_params)))[::-1], set())
        self.threaded = _mpi.thread_multiple()
        self.armed = False
        self.started = False
        self.rebuilt = False
        self.ready_log: list[tuple[int, float]] = []
        self.index = {id(p): i for i, (_, p) in enumerate(named_params)}
        self.next = 0
        self.error: BaseException | None = None
        self.last_exposed_s = 0.0
        self.used: set[int] = set()
        self.reachable: set[int] | None = None
        self.q: queue.SimpleQueue = queue.SimpleQueue()
        self.thread: threading.Thread | None = None
        self.handles = [p.register_post_accumulate_grad_hook(self._hook)
                        for _, p in named_params]

    def _layout(self, order: list[int], cuts: set[int]) -> None:
        """Buckets over the parameters ``order`` (indices), also closing one before each
        index in ``cuts``; dtype changes and the size caps close buckets too."""
        self.buckets: list[_Bucket] = []
        self.where: dict[int, tuple[_Bucket, int, int]] = {}
        cap, cur, size = self.caps[0], None, 0
        for i in order:
            name, p = self.named[i]
            dt = np.dtype(p.dtype.np)
            dt = dt if dt in _FLOATS else np.dtype(np.float32)
            n = int(p.numel())
            if cur is None or cur.array.dtype != dt or i in cuts or \
                    (size and size + n * dt.itemsize > cap):
                if cur is not None:
                    cap = self.caps[1]
                cur = _Bucket(len(self.buckets), dt)
                self.buckets.append(cur)
                size = 0
            cur.names.append(name)
            cur.params.append(p)
            cur.slots.append((size // dt.itemsize, n))
            size += n * dt.itemsize
            cur.array = np.zeros(size // dt.itemsize, dt)
        for b in self.buckets:
            for p, (off, n) in zip(b.params, b.slots):
                self.where[id(p)] = (b, off, n)

    def _rebuild(self) -> None:
        """Rank 0's layout from this backward's ready order, on every rank."""
        plan = None
        if self.pg.rank() == 0:
            log = self.ready_log
            seen = {i for i, _ in log}
            order = [i for i, _ in log] + [i for i in range(len(self.named)) if i not in seen]
            span = (log[-1][1] - log[0][1]) if log else 0.0
            gap = max(GAP_CUT_S, 0.05 * span)
            cuts, size = set(), 0
            for k, (i, t) in enumerate(log):
                if k and t - log[k - 1][1] > gap and size >= GAP_CUT_BYTES:
                    cuts.add(i)
                    size = 0
                size += self.named[i][1].nbytes
            plan = (order, cuts)
        with self.pg.watched("DDP bucket rebuild"):
            order, cuts = self.comm.bcast(plan, root=0)
        self._layout(order, cuts)
        self.rebuilt = True

    # ---- forward side ------------------------------------------------------------------
    def prepare(self, outputs: Any) -> None:
        """Arm the reducer for the backward of this forward's ``outputs``."""
        self.armed, self.started, self.next, self.error = True, False, 0, None
        self.used = set()
        for b in self.buckets:
            b.pending, b.ready = len(b.params), False
            b.done.clear()
        self.reachable = _reachable_leaves(outputs) if self.find_unused else None

    # ---- backward side -----------------------------------------------------------------
    def _hook(self, p: Any) -> None:
        if not self.armed:
            return
        if not self.started:
            self.started = True
            queue_callback(self._finalize)
            if self.reachable is not None:  # unused parameters count as ready, with zeros
                for b in self.buckets:
                    for q, (off, n) in zip(b.params, b.slots):
                        if id(q) not in self.reachable:
                            b.array[off:off + n] = 0
                            self._mark(b)
        b, off, n = self.where[id(p)]
        if id(p) in self.used:
            raise RuntimeError(
                f"Expected to mark a variable ready only once. Parameter "
                f"{self.named[self.index[id(p)]][0]!r} got its gradient twice in one backward pass "
                "of DistributedDataParallel (a reentrant backward, or the same output used "
                "in several backward calls without a forward in between).")
        self.used.add(id(p))
        if not self.rebuilt:
            self.ready_log.append((self.index[id(p)], time.perf_counter()))
        g = p.grad._data
        if not (isinstance(g, np.ndarray) and g.base is b.array):
            host = g if isinstance(g, np.ndarray) else p._be.to_numpy(g)
            b.array[off:off + n] = host.reshape(-1)
        if self.reachable is not None and id(p) not in self.reachable:
            return  # already counted as unused
        self._mark(b)

    def _mark(self, b: _Bucket) -> None:
        b.pending -= 1
        if b.pending:
            return
        b.ready = True
        while self.next < len(self.buckets) and self.buckets[self.next].ready:
            k = self.next
            self.next += 1
            if self.threaded:
                self._ensure_thread()
                self.q.put(k)

    def _ensure_thread(self) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._loop, name="lucid-ddp-allreduce",
                                           daemon=True)
            self.thread.start()

    def _loop(self) -> None:
        while True:
            k = self.q.get()
            if k is None:
                return
            b = self.buckets[k]
            try:
                self._allreduce(b)
                if self.reachable is None:  # as torch: results go to .grad as they arrive
                    self._write_bucket(b)
            except BaseException as e:  # noqa: BLE001 - handed to the main thread
                self.error = e
            finally:
                b.done.set()

    def _allreduce(self, b: _Bucket) -> None:
        MPI = _mpi.mpi()
        what = (f"all_reduce of DDP gradient bucket {b.index} ({len(b.params)} parameters, "
                f"{b.array.nbytes / 2**20:.2f} MiB, from {b.names[0]!r})")
        with self.pg.watched(what):
            self.comm.Allreduce(MPI.IN_PLACE, b.array, MPI.SUM)
        b.array *= 1.0 / self.world

    def _finalize(self) -> None:
        start = time.perf_counter()
        try:
            self._sync()
        finally:
            # the part of the sync that backward's computation did not hide
            self.last_exposed_s = time.perf_counter() - start

    def _sync(self) -> None:
        self.armed = False
        late = [name for b in self.buckets for name, p in zip(b.names, b.params)
                if id(p) not in self.used and (self.reachable is None
                                               or id(p) in self.reachable)]
        if late:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting "
                "a new one. This error indicates that your module has parameters that were "
                "not used in producing loss. You can enable unused parameter detection by "
                "passing the keyword argument `find_unused_parameters=True` to "
                "`lucid.nn.parallel.DistributedDataParallel`, and by making sure all "
                "`forward` function outputs participate in calculating loss. Parameters "
                f"that did not receive a gradient on rank {dist.get_rank()}: {late}")
        for b in self.buckets:
            if self.threaded:
                b.done.wait()
            else:
                self._allreduce(b)
                if self.reachable is None:
                    self._write_bucket(b)
        if self.error is not None:
            raise RuntimeError(f"DDP gradient all-reduce failed: {self.error}") from self.error
        if self.reachable is not None:
            used_somewhere = self._globally_used()
            for b in self.buckets:
                self._write_bucket(b, used_somewhere)
        if not self.rebuilt:
            self._rebuild()

    def _write_bucket(self, b: _Bucket, only: set[int] | None = None) -> None:
        for p, (off, n) in zip(b.params, b.slots):
            if only is None or id(p) in only:
                self._write_grad(p, b, off, n)

    def _globally_used(self) -> set[int]:
        params = [p for b in self.buckets for p in b.params]
        flags = np.array([1 if id(p) in self.reachable else 0 for p in params], np.int32)
        MPI = _mpi.mpi()
        with self.pg.watched("DDP all_reduce of the used-parameter map"):
            self.comm.Allreduce(MPI.IN_PLACE, flags, MPI.MAX)
        return {id(p) for p, f in zip(params, flags) if f}

    def _write_grad(self, p: Any, b: _Bucket, off: int, n: int) -> None:
        view = b.array[off:off + n].reshape(p.shape)
        g = p.grad
        if g is None:
            p.grad = _make(p._be.from_numpy(view.astype(p.dtype.np)), p._be, False, None)
            return
        data = g._data
        if isinstance(data, np.ndarray) and data.base is b.array:
            return
        if self.as_view and isinstance(data, np.ndarray) and data.dtype == view.dtype:
            g._data = view
        elif isinstance(data, np.ndarray) and data.flags.writeable:
            data[...] = view
        else:
            g._data = p._be.from_numpy(np.array(view, dtype=p.dtype.np))
        g._vc[0] += 1

    def close(self) -> None:
        """Unhook the parameters and stop the thread."""
        for h in self.handles:
            h.remove()
        if self.thread is not None:
            self.q.put(None)
            self.thread = None


def _reachable_leaves(outputs: Any) -> set[int]:
    """Ids of the leaf tensors that the autograd graph of ``outputs`` reaches."""
    roots, seen, leaves = [], set(), set()
    stack = [outputs]
    while stack:
        o = stack.pop()
        if isinstance(o, (list, tuple)):
            stack.extend(o)
        elif isinstance(o, dict):
            stack.extend(o.values())
        elif getattr(type(o), "_lucid_tensor", False):
            if o.grad_fn is not None:
                roots.append(o.grad_fn)
            elif o.requires_grad:
                leaves.add(id(o))
    while roots:
        f = roots.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        for p in getattr(f, "parents", ()):
            if p is None:
                continue
            if getattr(type(p), "_lucid_tensor", False):
                leaves.add(id(p))
            else:
                roots.append(p)
    return leaves
