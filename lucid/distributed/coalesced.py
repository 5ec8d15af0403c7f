"""Collectives over a list of tensors in one MPI call (``all_reduce_coalesced``,
``all_gather_coalesced``): torch 2.13 still has them and warns that they will be
deprecated; lucid does the same. The tensors of one call share a dtype; their shapes are
not compared across ranks (as torch: equal shapes on every rank are the caller's duty).
With ``async_op=True`` they return a ``Future`` (torch returns ``work.get_future()``)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ._buffers import ReduceOp, Staged, bool_op, check_tensor, mpi_op, supports_complex
from ._mpi import mpi
from .collectives import Work, _bytes, _flat_out, _run
from .process_group import ProcessGroup, resolve_group

__all__ = ["Future", "all_reduce_coalesced", "all_gather_coalesced"]

_REAL = {np.dtype(np.complex64): np.dtype(np.float32),
         np.dtype(np.complex128): np.dtype(np.float64)}
_DOCS = "https://pytorch.org/docs/main/distributed.html#collective-functions"


class Future:
    """The pending result of a coalesced collective started with ``async_op=True``:
    ``wait()`` completes it and returns the output tensors (``all_gather_coalesced``: one
    list per rank).

    Example::

        fut = dist.all_reduce_coalesced([a, b], async_op=True)
        a, b = fut.wait()
    """

    def __init__(self, work: Work) -> None:
        self._work = work

    def wait(self) -> list:
        """Block until the collective finished; the output tensors.

        Example::

            outs = fut.wait()
        """
        return self._work.result()

    def done(self) -> bool:
        """Whether the collective finished (tests it without blocking).

        Example::

            while not fut.done(): do_something_else()
        """
        return self._work.is_completed()

    def value(self) -> list:
        """The output tensors of a finished collective (waits if it is still running).

        Example::

            fut.wait(); outs = fut.value()
        """
        return self._work.result()


def _check_list(tensors: Any, name: str) -> None:
    if not isinstance(tensors, list):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[lucid.Tensor] but got {type(tensors)} instead.")
    if not all(getattr(type(t), "_lucid_tensor", False) for t in tensors):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[lucid.Tensor] but got {type(tensors)} with elements of type "
                        f"{[type(t) for t in tensors]}.")


def _same_dtype(tensors: list) -> None:
    last = None
    for t in tensors:
        dt = t.dtype
        if dt.is_complex:  # a complex tensor may be mixed with its element type, as torch
            dt = "lucid.float32" if str(dt) == "lucid.complex64" else "lucid.complex128"
        if last is None:
            last = dt
        elif str(last) != str(dt):
            raise ValueError(f"Invalid usage of tensors with different dtypes Found {last} "
                             f"and  {t.dtype}")


def _future(work: Work | None) -> Future | None:
    return None if work is None else Future(work)


def all_reduce_coalesced(tensors: Any, op: Any = ReduceOp.SUM,
                         group: ProcessGroup | None = None,
                         async_op: bool = False) -> Future | None:
    """Reduce each tensor of ``tensors`` (a list, or one tensor) over the group, in place,
    with one MPI all-reduce for the whole list. Warns with torch's FutureWarning.

    Example::

        grads = [lucid.ones(3), lucid.ones(2, 2)]
        dist.all_reduce_coalesced(grads)           # each holds world size now
    """
    warnings.warn("`lucid.distributed.all_reduce_coalesced` will be deprecated. If you must "
                  f"use it, please revisit our documentation later at {_DOCS}",
                  FutureWarning, stacklevel=2)
    if getattr(type(tensors), "_lucid_tensor", False):
        tensors = [tensors]
    _check_list(tensors, "tensor")
    _same_dtype(tensors)
    pg = resolve_group(group)
    if pg is None:
        return None
    if any(t.dtype.is_complex for t in tensors) and not supports_complex(op):
        raise ValueError(f"all_reduce does not support {op} on complex tensors")
    staged = [Staged(t, reducing=True) for t in tensors]
    # complex tensors reduce as their real and imaginary parts (torch's view_as_real)
    parts = [s.array.reshape(-1).view(_REAL.get(s.array.dtype, s.array.dtype)) for s in staged]
    wire = parts[0].dtype if parts else np.dtype(np.float32)
    if tensors and str(tensors[0].dtype) == "lucid.bool":
        op = bool_op(op)
    mop, avg = mpi_op(op, wire)
    flat = np.concatenate(parts) if parts else np.empty(0, wire)

    def finish() -> None:
        if avg:
            flat[...] /= pg.size()
        off = 0
        for s, part in zip(staged, parts):
            part[...] = flat[off:off + part.size]
            s.finish()
            off += part.size

    return _future(_run(pg, "all_reduce_coalesced", "Allreduce", (mpi().IN_PLACE, flat, mop),
                        finish, async_op, list(tensors)))


def all_gather_coalesced(output_tensor_lists: list[list], input_tensor_list: list,
                         group: ProcessGroup | None = None,
                         async_op: bool = False) -> Future | None:
    """Every rank's ``input_tensor_list`` into ``output_tensor_lists[rank]`` (one list per
    rank, shaped like the inputs), with one MPI all-gather. Warns with torch's
    FutureWarning.

    Example::

        outs = [[lucid.empty(2), lucid.empty(3)] for _ in range(world)]
        dist.all_gather_coalesced(outs, [lucid.ones(2), lucid.zeros(3)])
    """
    warnings.warn("`lucid.distributed.all_gather_coalesced` will be deprecated. If you must "
                  f"use it, please revisit our documentation later at {_DOCS}",
                  FutureWarning, stacklevel=2)
    pg = resolve_group(group)
    if pg is None:
        return None
    _check_list(input_tensor_list, "input_tensor_list")
    _same_dtype(input_tensor_list)
    if not isinstance(output_tensor_lists, list):
        raise TypeError("Invalid function argument: output_tensor_lists should be a list")
    for out in output_tensor_lists:
        _check_list(out, "output_tensor_lists")
        _same_dtype(out)
    if len(output_tensor_lists) != pg.size():
        raise ValueError(f"all_gather_coalesced: output_tensor_lists must hold one list per "
                         f"rank ({pg.size()}), got {len(output_tensor_lists)}")
    outs = [t for out in output_tensor_lists for t in out]
    if not outs:
        return _future(_run(pg, "all_gather_coalesced", "Barrier", (), lambda: None,
                            async_op, [[] for _ in output_tensor_lists]))
    for t in input_tensor_list:
        check_tensor(t, "input_tensor_list")
    flat_out, copy_out = _flat_out(outs, "output_tensor_lists")
    send = np.concatenate([Staged(t, out=False).array.reshape(-1).astype(
        flat_out.dtype, copy=False) for t in input_tensor_list]) if input_tensor_list \
        else np.empty(0, flat_out.dtype)
    counts = [sum(int(t.numel()) for t in out) for out in output_tensor_lists]
    if counts[pg.rank()] != send.size:
        raise ValueError(f"all_gather_coalesced: this rank's input_tensor_list has {send.size} "
                         f"elements but output_tensor_lists[{pg.rank()}] has "
                         f"{counts[pg.rank()]}")
    return _future(_run(pg, "all_gather_coalesced", "Allgatherv",
                        (_bytes(send), _bytes(flat_out, counts)), copy_out, async_op,
                        [list(out) for out in output_tensor_lists]))
