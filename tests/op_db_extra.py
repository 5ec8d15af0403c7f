"""op_db entries for the rest of the public op set: more math functions, cumprod, flips and
rolls, scatter, sort/topk and friends (see ``op_db.py``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from opinfo import NZ, OFFINT, OpInfo, P, Sample, T, U, binary_samples, unary_samples


def _u(name: str, ref: Any, gen: Any = U) -> OpInfo:
    return OpInfo(name, name, ref, unary_samples(gen), method=True)


def _one(items: list, **kw: Any) -> Any:
    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        for shape, layout, *rest in items:
            yield Sample(T(U(rng, shape), layout), *rest, **kw)

    return samples


def _distinct(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    """Distinct values (sort/topk gradients are only defined without ties)."""
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) + U(rng, shape, 0.1, 0.4)) / 4


def _sort_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(_distinct(rng, (3, 4))))
    yield Sample(T(_distinct(rng, (3, 4))), 0, True)
    yield Sample(T(_distinct(rng, (4, 3)), "t"), -1, False)
    yield Sample(T(_distinct(rng, (5,))), 0, True)


def _sort_ref(x: np.ndarray, dim: int = -1, descending: bool = False) -> tuple:
    idx = np.argsort(-x if descending else x, axis=dim, kind="stable")
    return np.take_along_axis(x, idx, dim), idx


def _topk_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(_distinct(rng, (3, 5))), 2)
    yield Sample(T(_distinct(rng, (3, 5))), 3, 0, False)
    yield Sample(T(_distinct(rng, (5, 3)), "t"), 1, -1, True)


def _topk_ref(x: np.ndarray, k: int, dim: int = -1, largest: bool = True) -> tuple:
    v, i = _sort_ref(x, dim, largest)
    sl = (slice(None),) * (dim % x.ndim) + (slice(0, k),)
    return v[sl], i[sl]


def _scatter_samples(rng: np.random.Generator) -> Iterable[Sample]:
    # unique targets per column so scatter's result does not depend on write order
    idx = np.array([[2, 0, 1, 3], [0, 3, 2, 1]])
    yield Sample(T(U(rng, (4, 4))), 0, T(idx), T(U(rng, (2, 4))))
    yield Sample(T(U(rng, (3, 5))), 1, T(np.array([[4, 0], [1, 3], [2, 2]])[:, :1]),
                 T(U(rng, (3, 1))))


def _scatter_ref(x: np.ndarray, dim: int, idx: np.ndarray, src: np.ndarray) -> np.ndarray:
    out = x.copy()
    np.put_along_axis(out, idx, src[tuple(slice(0, s) for s in idx.shape)], axis=dim)
    return out


def _scatter_add_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3, 4))), 0, T(np.array([[0, 1, 2, 0], [0, 0, 2, 2]])),
                 T(U(rng, (2, 4))))
    yield Sample(T(U(rng, (3, 4))), -1, T(np.array([[3, 3], [0, 1], [2, 2]])), T(U(rng, (3, 2))))


def _scatter_add_ref(x: np.ndarray, dim: int, idx: np.ndarray, src: np.ndarray) -> np.ndarray:
    out = x.copy()
    full = list(np.indices(idx.shape, sparse=True))
    full[dim % x.ndim] = idx
    np.add.at(out, tuple(full), src[tuple(slice(0, s) for s in idx.shape)])
    return out


def _roll_ref(x: np.ndarray, shifts: Any, dims: Any = None) -> np.ndarray:
    return np.roll(x, shifts, axis=dims)


def _round_trip(x: Any) -> Any:
    """To the other backend, compute there, and back (the transfer is differentiable)."""
    other = "numpy" if x.device.type == "cpu" else "cpu"
    return (x.to(other) * 2).exp().to(x.device)


EXTRA = [
    OpInfo("to_device", _round_trip, lambda x: np.exp(x * 2), unary_samples(),
           torch_op=lambda x: (x * 2).exp()),
    _u("log10", np.log10, P),
    _u("trunc", np.trunc, OFFINT),
    _u("asin", np.arcsin, lambda r, s: U(r, s, -0.9, 0.9)),
    _u("acos", np.arccos, lambda r, s: U(r, s, -0.9, 0.9)),
    _u("atan", np.arctan),
    _u("sinh", np.sinh),
    _u("cosh", np.cosh),
    OpInfo("fmod", "fmod", np.fmod, binary_samples(U, NZ), method=True),
    OpInfo("clamp_min", "clamp_min", lambda x, v: np.maximum(x, v), _one([
        ((3, 4), "c", 0.2), ((4, 3), "t", -0.5)]), method=True),
    OpInfo("cumprod", "cumprod", lambda x, d: np.cumprod(x, axis=d), _one([
        ((3, 4), "c", 1), ((3, 4), "c", 0), ((4, 3), "t", -1)]), method=True),
    OpInfo("flip", "flip", lambda x, d: np.flip(x, d), _one([
        ((3, 4), "c", (0,)), ((2, 3, 4), "c", (0, 2)), ((4, 3), "t", (-1,))]), method=True),
    OpInfo("roll", "roll", _roll_ref, _one([
        ((3, 4), "c", 1, 0), ((3, 4), "c", (1, -2), (0, 1)), ((5,), "s", 2),
        ((3, 4), "c", 5)]), method=True),
    OpInfo("movedim", "movedim", np.moveaxis, _one([
        ((2, 3, 4), "c", 0, 2), ((2, 3, 4), "c", (0, 1), (2, 0))]), method=True),
    OpInfo("narrow", "narrow", lambda x, d, s, n: np.take(x, range(s, s + n), axis=d), _one([
        ((4, 3), "c", 0, 1, 2), ((3, 5), "t", -1, 2, 3)]), method=True),
    OpInfo("tile", "tile", np.tile, _one([((2, 3), "c", (2, 1)), ((3,), "c", (2, 2))]),
           method=True),
    OpInfo("repeat_interleave", "repeat_interleave",
           lambda x, r, dim=None: np.repeat(x, r, axis=dim), _one([
               ((3,), "c", 2), ((2, 3), "c", 3, 1), ((2, 3), "c", 2)]), method=True),
    OpInfo("scatter", "scatter", _scatter_ref, _scatter_samples, method=True),
    OpInfo("scatter_add", "scatter_add", _scatter_add_ref, _scatter_add_samples, method=True),
    OpInfo("masked_select", "masked_select", lambda x, m: x[np.broadcast_to(m, x.shape)],
           lambda r: [Sample(T(U(r, (3, 4))), T(r.random((3, 4)) > 0.5)),
                      Sample(T(U(r, (3, 4)), "t"), T(r.random((4,)) > 0.5))], method=True),
    OpInfo("take", "take", lambda x, i: x.reshape(-1)[i],
           lambda r: [Sample(T(U(r, (3, 4))), T(np.array([[0, 11], [5, 5]])))], method=True),
    OpInfo("sort", "sort", _sort_ref, _sort_samples, method=True),
    OpInfo("topk", "topk", _topk_ref, _topk_samples, method=True),
]
