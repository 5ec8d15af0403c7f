"""Tensors as MPI buffers, and reduction operators.

A contiguous, writable CPU tensor goes to MPI as the numpy array behind it: no copy, and a
collective writes straight into the tensor. Anything else (a strided view, a "gpu" tensor,
a dtype MPI cannot reduce, such as float16 or bfloat16) is staged through a host array and
written back afterwards, which bumps the tensor's version like any in-place write.
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from ._mpi import mpi

__all__ = ["ReduceOp", "Staged", "stage", "mpi_op", "bool_op", "check_tensor",
           "supports_complex"]


class ReduceOp:
    """Reduction operators of ``all_reduce``, ``reduce`` and ``reduce_scatter``, as
    ``torch.distributed.ReduceOp``: SUM, PRODUCT, MIN, MAX, AVG, BAND, BOR, BXOR.

    Example::

        dist.all_reduce(t, op=dist.ReduceOp.MAX)
    """

    class RedOpType(enum.IntEnum):
        """The operator values (``ReduceOp.SUM`` is ``ReduceOp.RedOpType.SUM``)."""

        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8
        UNUSED = 9

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


_NATIVE = {np.dtype(t) for t in (np.float32, np.float64, np.int8, np.int16, np.int32,
                                 np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                                 np.complex64, np.complex128)}


def check_tensor(t: Any, name: str = "tensor") -> None:
    """TypeError unless ``t`` is a lucid tensor (torch's check of collective arguments)."""
    if not getattr(type(t), "_lucid_tensor", False):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"lucid.Tensor but got {type(t).__name__} instead.")


def _wire_dtype(dt: np.dtype, reducing: bool) -> np.dtype:
    if not reducing or dt in _NATIVE:
        return dt
    if dt == np.bool_:
        return np.dtype(np.uint8)
    if dt.kind == "c":
        return np.dtype(np.complex128)
    return np.dtype(np.float32) if dt.itemsize <= 4 else np.dtype(np.float64)


class Staged:
    """The host array a collective reads and writes for tensor ``t``; ``finish()`` writes
    results back when the array is not the tensor's own memory."""

    __slots__ = ("t", "array", "own", "out")

    def __init__(self, t: Any, reducing: bool = False, out: bool = True) -> None:
        self.t = t
        self.out = out
        data = t._data
        dt = _wire_dtype(np.dtype(data.dtype) if isinstance(data, np.ndarray)
                         else np.dtype(t.dtype.np), reducing)
        if isinstance(data, np.ndarray) and data.flags.c_contiguous and \
                data.flags.writeable and data.dtype == dt:
            self.array, self.own = data, True
        else:
            host = data if isinstance(data, np.ndarray) else t._be.to_numpy(data)
            self.array, self.own = np.array(host, dtype=dt, order="C", copy=True), False

    def buf(self) -> Any:
        """The array for MPI: itself, or its raw bytes when MPI has no such type (a move of
        data, never a reduction, may see those)."""
        a = self.array
        if a.dtype in _NATIVE:
            return a
        return [a.reshape(-1).view(np.uint8), mpi().BYTE]

    def finish(self) -> None:
        """Write the array back into the tensor when it was staged, and bump its version."""
        if not self.out:
            return
        t = self.t
        if not self.own:
            data = t._data
            if isinstance(data, np.ndarray):
                data[...] = self.array.astype(data.dtype, copy=False)
            else:
                t._data = t._be.from_numpy(
                    np.ascontiguousarray(self.array.astype(t.dtype.np, copy=False)))
        t._vc[0] += 1


def stage(t: Any, reducing: bool = False, out: bool = True) -> Staged:
    """``Staged(t, ...)`` after checking that ``t`` is a tensor."""
    check_tensor(t)
    return Staged(t, reducing, out)


def mpi_op(op: Any, dtype: np.dtype) -> tuple[Any, bool]:
    """The MPI operator for ``op`` on arrays of ``dtype``, and whether the result must be
    divided by the group size afterwards (AVG)."""
    MPI = mpi()
    try:
        op = ReduceOp.RedOpType(int(op))
    except (TypeError, ValueError):
        raise ValueError(f"Invalid reduce op {op!r}; use dist.ReduceOp.SUM, PRODUCT, MIN, "
                         "MAX, AVG, BAND, BOR or BXOR") from None
    if op == ReduceOp.AVG:
        if dtype.kind not in "fc":
            raise ValueError(f"ReduceOp.AVG needs a floating point or complex tensor, got "
                             f"numpy dtype {dtype}")
        return MPI.SUM, True
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and dtype.kind not in "iub":
        raise ValueError(f"{op.name} needs an integer or bool tensor, got numpy dtype {dtype}")
    if op in (ReduceOp.PREMUL_SUM, ReduceOp.RedOpType.UNUSED):
        raise ValueError(f"ReduceOp.{op.name} is not supported by the MPI backend")
    table = {ReduceOp.SUM: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD, ReduceOp.MIN: MPI.MIN,
             ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND, ReduceOp.BOR: MPI.BOR,
             ReduceOp.BXOR: MPI.BXOR}
    return table[op], False


def bool_op(op: Any) -> Any:
    """On bool tensors (sent as uint8) SUM is logical or and PRODUCT logical and, as torch."""
    if int(op) == ReduceOp.SUM:
        return ReduceOp.MAX
    if int(op) == ReduceOp.PRODUCT:
        return ReduceOp.MIN
    return op


_NOT_COMPLEX = (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND, ReduceOp.BOR,
                ReduceOp.BXOR)


def supports_complex(reduceOp: Any) -> bool:
    """Whether ``reduceOp`` can reduce complex tensors: False for MAX, MIN, PRODUCT and the
    bitwise ops, True otherwise (as ``torch.distributed.supports_complex``).

    Example::

        dist.supports_complex(dist.ReduceOp.SUM)     # True
        dist.supports_complex(dist.ReduceOp.MAX)     # False
    """
    return reduceOp not in _NOT_COMPLEX
