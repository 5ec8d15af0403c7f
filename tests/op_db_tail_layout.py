"""op_db entries for the layout and BLAS-style tail: take_along_dim, tensor_split, diagflat,
vdot, addmv, addr, baddbmm, addbmm, scatter_reduce (sum / mean) and index_put; they join
``OP_DB`` through ``op_db_tail.py``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from opinfo import ErrorInput, OpInfo, Sample, T, U, exact, lib


def _err(make: Any, msg: str, exc: type[BaseException] = RuntimeError) -> ErrorInput:
    """``make(m, mod)``: the failing call, with ``mod`` the library (lucid or torch) under test."""
    return ErrorInput(lambda m: make(m, lib(m.zeros(1))), exc, exact(msg))


def _idx(m: Any, values: list) -> Any:
    return m.tensor(np.array(values, np.int64))


# ---- gathering and splitting ----------------------------------------------------------------


def _take_ref(x: np.ndarray, idx: np.ndarray, dim: Any = None) -> np.ndarray:
    if dim is None:
        return np.take_along_axis(x.reshape(-1), idx.reshape(-1), 0)
    shape = list(np.broadcast_shapes(
        tuple(1 if i == dim % x.ndim else s for i, s in enumerate(x.shape)),
        tuple(1 if i == dim % x.ndim else s for i, s in enumerate(idx.shape))))
    sx, si = list(shape), list(shape)
    sx[dim], si[dim] = x.shape[dim], idx.shape[dim]
    return np.take_along_axis(np.broadcast_to(x, sx), np.broadcast_to(idx, si), dim)


def _take_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3, 4))), T(rng.integers(0, 4, (3, 2))), 1)
    yield Sample(T(U(rng, (3, 4))), T(rng.integers(0, 3, (5, 4))), 0)
    yield Sample(T(U(rng, (3, 4)), "t"), T(rng.integers(0, 3, (1, 3))), -1, name="bcast")
    yield Sample(T(U(rng, (2, 3))), T(rng.integers(0, 6, (4,))), name="flat")
    yield Sample(T(U(rng, (2, 3, 4))), T(rng.integers(0, 3, (2, 1, 4))), 1)
    yield Sample(T(U(rng, (3, 4))), T(np.zeros((3, 0), np.int64)), 1, name="empty")


def _split_ref(x: np.ndarray, ios: Any, dim: int = 0) -> tuple:
    if isinstance(ios, int):
        return tuple(np.array_split(x, ios, axis=dim))
    return tuple(np.split(x, list(ios), axis=dim))


def _split_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (7, 3))), 3)
    yield Sample(T(U(rng, (3, 4))), 2, 1)
    yield Sample(T(U(rng, (4, 3)), "t"), [1, 3], -1)
    yield Sample(T(U(rng, (2, 5, 2))), [1, 1, 4], 1, name="empty_part")
    yield Sample(T(U(rng, (2,))), 4, name="more_parts")
    yield Sample(T(U(rng, (6,))), [-2, 10], name="out_of_range")


def _diagflat_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3,))))
    yield Sample(T(U(rng, (2, 2))), 1)
    yield Sample(T(U(rng, (2, 3)), "t"), -2)
    yield Sample(T(U(rng, ())))
    yield Sample(T(U(rng, (0,))), 1)


GATHER = [
    OpInfo("take_along_dim", "take_along_dim", _take_ref, _take_samples, method=True,
           error_inputs=[_err(lambda m, mod: mod.take_along_dim(
               m.rand(3, 4), m.zeros(3, dtype=mod.int64), dim=1),
               "torch.take_along_dim(): input and indices should have the same number of "
               "dimensions, but got 2 dimensions for input, and 1 dimensions for indices")]),
    OpInfo("tensor_split", "tensor_split", _split_ref, _split_samples, method=True,
           error_inputs=[
               _err(lambda m, mod: mod.tensor_split(m.rand(3), 0),
                    "number of sections must be larger than 0, got 0"),
               _err(lambda m, mod: mod.tensor_split(m.tensor(1.0), 2),
                    "tensor_split expected at least a 1-dimensional tensor, but got a tensor "
                    "with 0 dims")]),
    OpInfo("diagflat", "diagflat", lambda x, offset=0: np.diagflat(x, offset), _diagflat_samples,
           method=True, error_inputs=[_err(
               lambda m, mod: mod.diagflat(m.rand(2, 2), 1.5),
               "diagflat(): argument 'offset' (position 2) must be int, not float", TypeError)]),
]

# ---- products -----------------------------------------------------------------------------


def _addmm_like(prod: Any) -> Any:
    def ref(inp: np.ndarray, a: np.ndarray, b: np.ndarray, *, beta: Any = 1,
            alpha: Any = 1) -> np.ndarray:
        p = alpha * prod(a, b)
        return p if beta == 0 else beta * inp + p

    return ref


def _product_samples(inp: tuple, a: tuple, b: tuple, bcast: tuple) -> Any:
    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        yield Sample(T(U(rng, inp)), T(U(rng, a)), T(U(rng, b)))
        yield Sample(T(U(rng, bcast)), T(U(rng, a)), T(U(rng, b)), beta=0.5, alpha=-2.0)
        if len(a) >= 2:
            yield Sample(T(U(rng, inp)), T(U(rng, a), "t"), T(U(rng, b)), beta=2, alpha=3)
        else:
            yield Sample(T(U(rng, inp)), T(U(rng, a), "s"), T(U(rng, b)), beta=2, alpha=3)
        nan = np.full(inp, np.nan)
        yield Sample(T(nan, grad=False), T(U(rng, a)), T(U(rng, b)), beta=0, name="beta0_nan")

    return samples


_VDOT_SIZE = ("inconsistent tensor size, expected tensor [3] and src [4] to have the same "
              "number of elements, but got 3 and 4 elements respectively")

PRODUCTS = [
    OpInfo("vdot", "vdot", np.vdot, lambda r: [
        Sample(T(U(r, (4,))), T(U(r, (4,)))), Sample(T(U(r, (3,)), "s"), T(U(r, (3,)))),
        Sample(T(U(r, (0,))), T(U(r, (0,))))], method=True, error_inputs=[
        _err(lambda m, mod: mod.vdot(m.rand(3, 1), m.rand(3)),
             "1D tensors expected, but got 2D and 1D tensors"),
        _err(lambda m, mod: mod.vdot(m.rand(3), m.rand(4)), _VDOT_SIZE)]),
    OpInfo("addmv", "addmv", _addmm_like(np.matmul), _product_samples((2,), (2, 3), (3,), (1,)),
           method=True, error_inputs=[_err(
               lambda m, mod: mod.addmv(m.rand(2), m.rand(2, 3), m.rand(4)),
               "size mismatch, got input (2), mat (2x3), vec (4)")]),
    OpInfo("addr", "addr", _addmm_like(np.outer), _product_samples((2, 3), (2,), (3,), (3,)),
           method=True, error_inputs=[_err(
               lambda m, mod: mod.addr(m.rand(2, 3), m.rand(2, 1), m.rand(3)),
               "addr: Expected 1-D argument vec1, but got 2-D")]),
    OpInfo("baddbmm", "baddbmm", _addmm_like(np.matmul),
           _product_samples((2, 3, 2), (2, 3, 4), (2, 4, 2), (3, 1)), method=True,
           error_inputs=[_err(
               lambda m, mod: mod.baddbmm(m.rand(2, 3, 5), m.rand(2, 3, 4), m.rand(2, 5, 5)),
               "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: "
               "[2, 5].")]),
    OpInfo("addbmm", "addbmm", _addmm_like(lambda a, b: np.matmul(a, b).sum(0)),
           _product_samples((3, 2), (2, 3, 4), (2, 4, 2), (2,)), method=True,
           error_inputs=[_err(
               lambda m, mod: mod.addbmm(m.rand(3, 5), m.rand(2, 3, 4), m.rand(3, 4, 5)),
               "batch1 and batch2 must have same number of batches, got 2 and 3")]),
]

# ---- index writes -------------------------------------------------------------------------


def _scatter_reduce_ref(x: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray,
                        reduce: str, *, include_self: bool = True) -> np.ndarray:
    out = x.copy()
    total = x.copy() if include_self else np.zeros_like(x)
    count = np.ones(x.shape) if include_self else np.zeros(x.shape)
    for pos in np.ndindex(*index.shape):
        tgt = list(pos)
        tgt[dim] = index[pos]
        total[tuple(tgt)] += src[pos]
        count[tuple(tgt)] += 1
    hit = count > 0
    if reduce == "sum":
        out[hit] = total[hit]
    else:
        out[hit] = total[hit] / count[hit]
    return out


def _scatter_samples(reduce: str) -> Any:
    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        idx = np.array([[0, 2, 0, 1], [2, 2, 1, 0]])
        # torch differentiates src only where index has its shape: the same shapes here
        yield Sample(T(U(rng, (3, 4))), 0, T(idx[:, :3]), T(U(rng, (2, 3))), reduce)
        yield Sample(T(U(rng, (3, 4))), 0, T(idx), T(U(rng, (2, 4))), reduce,
                     include_self=False)
        yield Sample(T(U(rng, (2, 5))), 1, T(np.array([[4, 4, 0], [1, 3, 1]])),
                     T(U(rng, (2, 3))), reduce, include_self=False)
        yield Sample(T(U(rng, (4, 3)), "t"), -1, T(idx[:, :2]), T(U(rng, (2, 2)), "t"), reduce)
        yield Sample(T(U(rng, (5,))), 0, T(np.array([1, 1, 3])), T(U(rng, (3,))), reduce)
        yield Sample(T(U(rng, (3,))), 0, T(np.zeros(0, np.int64)), T(U(rng, (0,))), reduce)

    return samples


def _index_put(x: Any, *rest: Any, accumulate: bool = False) -> Any:
    *idx, values = rest
    return lib(x).index_put(x, tuple(idx), values, accumulate)


def _index_put_ref(x: np.ndarray, *rest: Any, accumulate: bool = False) -> np.ndarray:
    *idx, values = rest
    out = x.copy()
    if accumulate:
        np.add.at(out, tuple(idx), values)
    else:
        out[tuple(idx)] = values
    return out


def _index_put_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (5,))), T(np.array([3, 0])), T(U(rng, (2,))))
    yield Sample(T(U(rng, (5,))), T(np.array([3, 0, 3])), T(U(rng, (3,))), accumulate=True)
    yield Sample(T(U(rng, (3, 4))), T(np.array([2, 0])), T(U(rng, (4,))), name="rows_bcast")
    yield Sample(T(U(rng, (3, 4))), T(np.array([0, 2, 0])), T(np.array([1, 3, 1])),
                 T(U(rng, (3,))), accumulate=True, name="points_dup")
    yield Sample(T(U(rng, (4, 3)), "t"), T(np.array([[1], [2]])), T(np.array([0, 2])),
                 T(U(rng, ())), name="grid_scalar")
    yield Sample(T(U(rng, (3, 2))), T(np.array([True, False, True])), T(U(rng, (2,))),
                 name="mask")


_SR_ERR = "reduce argument must be either sum, prod, mean, amax or amin, got foo"

INDEX_WRITES = [
    OpInfo(f"scatter_reduce_{r}", "scatter_reduce", _scatter_reduce_ref, _scatter_samples(r),
           torch_op="scatter_reduce", method=True, error_inputs=[_err(
               lambda m, mod: mod.scatter_reduce(m.rand(3), 0, m.zeros(2, dtype=mod.int64),
                                                 m.rand(2), "foo"), _SR_ERR)] if r == "sum"
           else []) for r in ("sum", "mean")
] + [
    OpInfo("index_put", _index_put, _index_put_ref, _index_put_samples, torch_op=_index_put,
           error_inputs=[_err(lambda m, mod: mod.index_put(m.rand(3), (_idx(m, [5]),),
                                                           m.tensor(1.0)),
                              "index 5 is out of bounds for dimension 0 with size 3",
                              IndexError)]),
]

LAYOUT: list[OpInfo] = GATHER + PRODUCTS + INDEX_WRITES
