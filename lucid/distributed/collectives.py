"""Tensor collectives on MPI, with ``torch.distributed``'s signatures and in-place results.

Each call writes into the tensors it is given, as torch does. ``async_op=True`` starts the
nonblocking MPI call and returns a ``Work`` whose ``wait()`` completes it (MPI makes progress
inside ``wait``/``is_completed``). Ranks (``src``/``dst``) are world ranks; ``group_src`` /
``group_dst`` name a rank within ``group`` instead. Every blocking call is bounded by the
group's timeout (see ``init_process_group``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._buffers import ReduceOp, Staged, bool_op, check_tensor, mpi_op, stage
from ._mpi import mpi
from ._watchdog import Watched
from .process_group import ProcessGroup, resolve_group

__all__ = ["Work", "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_single",
           "gather", "scatter", "reduce_scatter", "reduce_scatter_single", "barrier",
           "all_to_all_single", "all_to_all", "monitored_barrier"]


class Work:
    """A collective started with ``async_op=True`` (``torch.distributed.Work``).

    Example::

        work = dist.all_reduce(t, async_op=True)
        ...                    # other work
        work.wait()            # t now holds the sum
    """

    def __init__(self, pg: ProcessGroup, what: str, request: Any, finish: Any,
                 result: list | None = None) -> None:
        self._pg, self._what, self._req, self._finish = pg, what, request, finish
        self._done = False
        self._result = result or []

    def _complete(self) -> None:
        self._done = True
        self._finish()

    def wait(self, timeout: Any = None) -> bool:
        """Block until the operation finished (bounded by the group's timeout); True.

        Example::

            dist.all_reduce(t, async_op=True).wait()
        """
        if not self._done:
            with self._pg.watched(self._what):
                self._req.Wait()
            self._complete()
        return True

    def is_completed(self) -> bool:
        """Whether the operation finished (tests it without blocking).

        Example::

            while not work.is_completed(): do_something_else()
        """
        if not self._done and self._req.Test():
            self._complete()
        return self._done

    def is_success(self) -> bool:
        """Whether the operation finished without error."""
        return self.is_completed()

    def exception(self) -> None:
        """None: a failed MPI operation aborts the job."""
        return None

    def result(self) -> list:
        """The output tensors."""
        self.wait()
        return self._result

    def synchronize(self) -> None:
        """The same as ``wait()``."""
        self.wait()


def _run(pg: ProcessGroup, what: str, name: str, args: tuple, finish: Any,
         async_op: bool, result: list | None = None) -> Work | None:
    comm = pg.comm
    if async_op:
        req = getattr(comm, "I" + name.lower())(*args)
        return Work(pg, what, req, finish, result)
    with pg.watched(what):
        getattr(comm, name)(*args)
    finish()
    return None


def _root(pg: ProcessGroup, rank: int | None, group_rank: int | None, what: str) -> int:
    """The group rank of a collective's root, from a world rank or a group rank."""
    if group_rank is not None:
        if rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
        return group_rank
    rank = 0 if rank is None else rank
    if rank not in pg.ranks:
        raise ValueError(f"{what}: rank {rank} is not part of group {pg}")
    return pg.ranks.index(rank)


def _reduce_args(tensor: Any, op: Any) -> tuple[Staged, Any, bool]:
    s = stage(tensor, reducing=True)
    if str(tensor.dtype) == "lucid.bool":
        op = bool_op(op)
    mop, avg = mpi_op(op, s.array.dtype)
    return s, mop, avg


def _finisher(staged: list[Staged], avg_by: int = 0, then: Any = None) -> Any:
    def finish() -> None:
        if avg_by:
            for s in staged:
                s.array /= avg_by
        if then is not None:
            then()
        for s in staged:
            s.finish()
    return finish


def all_reduce(tensor: Any, op: Any = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Reduce ``tensor`` over the group; every rank gets the result in ``tensor``.

    Example::

        t = lucid.tensor([float(dist.get_rank())])
        dist.all_reduce(t)                        # t == 0 + 1 + ... + (world - 1)
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
    """
    pg = resolve_group(group)
    if pg is None:
        return None
    s, mop, avg = _reduce_args(tensor, op)
    return _run(pg, "all_reduce", "Allreduce", (mpi().IN_PLACE, s.buf(), mop),
                _finisher([s], pg.size() if avg else 0), async_op, [tensor])


def reduce(tensor: Any, dst: int | None = None, op: Any = ReduceOp.SUM,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """Reduce ``tensor`` over the group into rank ``dst``'s ``tensor``; the others keep
    theirs.

    Example::

        dist.reduce(t, dst=0)       # rank 0's t is the sum
    """
    pg = resolve_group(group)
    if pg is None:
        return None
    root = _root(pg, dst, group_dst, "reduce")
    s, mop, avg = _reduce_args(tensor, op)
    if pg.rank() == root:
        args = (mpi().IN_PLACE, s.buf(), mop, root)
        fin = _finisher([s], pg.size() if avg else 0)
    else:
        args = (s.buf(), None, mop, root)
        fin = _finisher([])
    return _run(pg, "reduce", "Reduce", args, fin, async_op, [tensor])


def broadcast(tensor: Any, src: int | None = None, group: ProcessGroup | None = None,
              async_op: bool = False, group_src: int | None = None) -> Work | None:
    """Copy rank ``src``'s ``tensor`` into every rank's ``tensor``.

    Example::

        dist.broadcast(weights, src=0)
    """
    pg = resolve_group(group)
    if pg is None:
        return None
    root = _root(pg, src, group_src, "broadcast")
    s = stage(tensor, out=pg.rank() != root)
    return _run(pg, "broadcast", "Bcast", (s.buf(), root), _finisher([s]), async_op, [tensor])


def _flat_out(tensors: list, what: str) -> tuple[np.ndarray, Any]:
    """One receive array for a list of output tensors, and a copier into them."""
    for t in tensors:
        check_tensor(t, what)
    dt = np.dtype(tensors[0].dtype.np)
    if any(np.dtype(t.dtype.np) != dt for t in tensors):
        raise ValueError(f"{what}: all tensors must have the same dtype")
    sizes = [int(t.numel()) for t in tensors]
    flat = np.empty(sum(sizes), dtype=dt)

    def copy_out() -> None:
        off = 0
        for t, n in zip(tensors, sizes):
            s = Staged(t)
            s.array[...] = flat[off:off + n].reshape(s.array.shape)
            s.finish()
            off += n
    return flat, copy_out


def _bytes(a: np.ndarray, counts: list[int] | None = None) -> Any:
    """``a`` as an MPI buffer (raw bytes for dtypes MPI lacks); with ``counts``
    (elements per rank), the vector form ``[a, counts, displacements, type]``."""
    MPI = mpi()
    item = a.dtype.itemsize
    raw = a.reshape(-1).view(np.uint8)
    if counts is None:
        return [raw, MPI.BYTE]
    c = [n * item for n in counts]
    return [raw, (c, list(np.cumsum([0] + c[:-1]).tolist())), MPI.BYTE]


def all_gather(tensor_list: list, tensor: Any, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Every rank's ``tensor`` into ``tensor_list`` (one entry per rank, in rank order).

    Example::

        out = [lucid.empty(3) for _ in range(dist.get_world_size())]
        dist.all_gather(out, t)
    """
    pg = resolve_group(group)
    if pg is None:
        return None
    if not isinstance(tensor_list, (list, tuple)):
        raise TypeError(f"all_gather: tensor_list must be a list of tensors, got "
                        f"{type(tensor_list).__name__}")
    if len(tensor_list) != pg.size():
        raise ValueError(f"all_gather: tensor_list must hold one tensor per rank "
                         f"({pg.size()}), got {len(tensor_list)}")
    s = stage(tensor, out=False)
    flat, copy_out = _flat_out(list(tensor_list), "tensor_list")
    args = (_bytes(s.array), _bytes(flat, [int(t.numel()) for t in tensor_list]))
    return _run(pg, "all_gather", "Allgatherv", args, copy_out, async_op, list(tensor_list))


def all_gather_single(output_tensor: Any, input_tensor: Any,
                      group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Every rank's ``input_tensor`` into ``output_tensor``, concatenated along dim 0 (or
    stacked: shape ``(world, *input.shape)``).

    Example::

        out = lucid.empty(dist.get_world_size() * 4)
        dist.all_gather_single(out, lucid.ones(4))
    """
    pg = resolve_group(group)
    if pg is None:
        return None
    s_in = stage(input_tensor, out=False)
    s_out = stage(output_tensor)
    if s_out.array.size != s_in.array.size * pg.size():
        raise ValueError(f"all_gather_single: output tensor has {s_out.array.size} "
                         f"elements; expected world size ({pg.size()}) x input numel "
                         f"({s_in.array.size})")
    if s_in.array.dtype != s_out.array.dtype:
        raise ValueError("all_gather_single: input and output must have the same dtype")
    args = (_bytes(s_in.array), _bytes(s_out.array))
    return _run(pg, "all_gather_single", "Allgather", args, _finisher([s_out]), async_op,
                [output_tensor])


def gather(tensor: Any, gather_list: list | None = None, dst: int | None = None,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (None elsewhere).

    Example::

        out = [lucid.empty(3) for _ in range(world)] if dist.get_rank() == 0 else None
        dist.gather(t, out, dst=0)
    """
    pg = resolve_group(group)
    if pg is None:
        return None
    root = _root(pg, dst, group_dst, "gather")
    s = stage(tensor, out=False)
    if pg.rank() == root:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        if len(gather_list) != pg.size():
            raise ValueError(f"gather: gather_list must hold one tensor per rank "
                             f"({pg.size()}), got {len(gather_list)}")
        flat, copy_out = _flat_out(list(gather_list), "gather_list")
        recv = _bytes(flat, [int(t.numel()) for t in gather_list])
    else:
        if gather_list:
            raise ValueError("Argument ``gather_list`` must NOT be specified on "
                             "non-destination ranks.")
        recv, copy_out = None, _finisher([])
    return _run(pg, "gather", "Gatherv", (_bytes(s.array), recv, root), copy_out, async_op,
                list(gather_list or []))


def scatter(tensor: Any, scatter_list: list | None = None, src: int | None = None,
            group: ProcessGroup | None = None, async_op: bool = False,
            group_src: int | None = None) -> Work | None:
    """Rank ``src``'s ``scatter_list[i]`` into rank i's ``tensor``.

    Example::

        parts = list(lucid.arange(8.0).chunk(world)) if dist.get_rank() == 0 else None
        dist.scatter(t, parts, src=0)
    """
    pg = resolve_group(group)
    if pg is None:
        return None
    root = _root(pg, src, group_src, "scatter")
    s = stage(tensor)
    if pg.rank() == root:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        if len(scatter_list) != pg.size():
            raise ValueError(f"scatter: scatter_list must hold one tensor per rank "
                             f"({pg.size()}), got {len(scatter_list)}")
        for t in scatter_list:
            check_tensor(t, "scatter_list")
        flat = np.concatenate([Staged(t, out=False).array.reshape(-1).astype(
            s.array.dtype, copy=False) for t in scatter_list])
        send = _bytes(flat, [int(t.numel()) for t in scatter_list])
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source "
                             "ranks.")
        send = None
    return _run(pg, "scatter", "Scatterv", (send, _bytes(s.array), root), _finisher([s]),
                async_op, [tensor])


def reduce_scatter(output: Any, input_list: list, op: Any = ReduceOp.SUM,
                   group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Reduce ``input_list[i]`` over the group into rank i's ``output``.

    Example::

        dist.reduce_scatter(out, [lucid.ones(2) for _ in range(world)])   # out == world
    """
    pg = resolve_group(group)
    if pg is None:
        return None
    if len(input_list) != pg.size():
        raise ValueError(f"reduce_scatter: input_list must hold one tensor per rank "
                         f"({pg.size()}), got {len(input_list)}")
    s, mop, avg = _reduce_args(output, op)
    for t in input_list:
        check_tensor(t, "input_list")
    send = np.concatenate([Staged(t, reducing=True, out=False).array.reshape(-1).astype(
        s.array.dtype, copy=False) for t in input_list])
    counts = [int(t.numel()) for t in input_list]
    if counts[pg.rank()] != s.array.size:
        raise ValueError(f"reduce_scatter: output has {s.array.size} elements but this rank's "
                         f"input has {counts[pg.rank()]}")
    return _run(pg, "reduce_scatter", "Reduce_scatter", (send, s.buf(), counts, mop),
                _finisher([s], pg.size() if avg else 0), async_op, [output])


def reduce_scatter_single(output: Any, input: Any, op: Any = ReduceOp.SUM,
                          group: ProcessGroup | None = None,
                          async_op: bool = False) -> Work | None:
    """Reduce ``input`` (world x ``output.numel()`` elements, rank-major) over the group;
    rank i gets the reduced i-th block in ``output``.

    Example::

        dist.reduce_scatter_single(out, lucid.ones(world * 2))     # out == [world, world]
    """
    pg = resolve_group(group)
    if pg is None:
        return None
    s, mop, avg = _reduce_args(output, op)
    check_tensor(input, "input")
    send = Staged(input, reducing=True, out=False).array.astype(s.array.dtype, copy=False)
    if send.size != s.array.size * pg.size():
        raise ValueError(f"reduce_scatter_single: input has {send.size} elements; expected "
                         f"world size ({pg.size()}) x output numel ({s.array.size})")
    return _run(pg, "reduce_scatter_single", "Reduce_scatter_block", (send, s.buf(), mop),
                _finisher([s], pg.size() if avg else 0), async_op, [output])


def all_to_all_single(output: Any, input: Any, output_split_sizes: list | None = None,
                      input_split_sizes: list | None = None,
                      group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Split ``input`` along dim 0, send block i to rank i, and concatenate what arrives
    into ``output`` (equal blocks unless split sizes are given).

    Example::

        dist.all_to_all_single(out, lucid.arange(float(world)))
    """
    pg = resolve_group(group)
    if pg is None:
        return None
    s_in, s_out = stage(input, out=False), stage(output)
    n = pg.size()

    def counts(t: Any, a: np.ndarray, split: list | None) -> list[int]:
        row = a.size // max(t.shape[0], 1) if t.dim() else 1
        if split is None:
            return [a.size // n] * n
        return [int(k) * row for k in split]

    args = (_bytes(s_in.array, counts(input, s_in.array, input_split_sizes)),
            _bytes(s_out.array, counts(output, s_out.array, output_split_sizes)))
    return _run(pg, "all_to_all_single", "Alltoallv", args, _finisher([s_out]), async_op,
                [output])


def barrier(group: ProcessGroup | None = None, async_op: bool = False,
            device_ids: Any = None, timeout: Any = None) -> Work | None:
    """Wait until every rank of the group reached this call.

    Example::

        if dist.get_rank() == 0:
            lucid.save(model.state_dict(), "ckpt.pt")
        dist.barrier()          # nobody reads the checkpoint before it is written
    """
    pg = resolve_group(group)
    if pg is None:
        return None
    return _run(pg, "barrier", "Barrier", (), _finisher([]), async_op)


def all_to_all(output_tensor_list: list, input_tensor_list: list,
               group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Send ``input_tensor_list[i]`` to rank i; rank j's ``input_tensor_list[me]`` arrives
    in ``output_tensor_list[j]``.

    Example::

        outs = [lucid.empty(2) for _ in range(world)]
        dist.all_to_all(outs, [lucid.full((2,), float(i)) for i in range(world)])
    """
    pg = resolve_group(group)
    if pg is None:
        return None
    if len(input_tensor_list) != pg.size() or len(output_tensor_list) != pg.size():
        raise ValueError(f"all_to_all: both lists must hold one tensor per rank ({pg.size()})")
    for t in input_tensor_list:
        check_tensor(t, "input_tensor_list")
    flat_out, copy_out = _flat_out(list(output_tensor_list), "output_tensor_list")
    send = np.concatenate([Staged(t, out=False).array.reshape(-1).astype(
        flat_out.dtype, copy=False) for t in input_tensor_list])
    args = (_bytes(send, [int(t.numel()) for t in input_tensor_list]),
            _bytes(flat_out, [int(t.numel()) for t in output_tensor_list]))
    return _run(pg, "all_to_all", "Alltoallv", args, copy_out, async_op,
                list(output_tensor_list))


def monitored_barrier(group: ProcessGroup | None = None, timeout: Any = None,
                      wait_all_ranks: bool = False) -> None:
    """A barrier bounded by ``timeout`` (a ``timedelta``; default: the group's): a rank
    that does not arrive in time makes the job abort with a message naming this rank.

    Example::

        dist.monitored_barrier(timeout=timedelta(seconds=30))
    """
    pg = resolve_group(group)
    if pg is None:
        return
    seconds = pg.timeout.total_seconds() if timeout is None else timeout.total_seconds()
    with Watched(f"monitored_barrier on rank {pg.ranks[pg.rank()]}", seconds,
                 pg.ranks[pg.rank()]):
        pg.comm.Barrier()
