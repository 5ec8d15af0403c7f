"""op_db entries for shape, movement and indexing ops (see ``op_db.py``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from opinfo import OpInfo, Sample, T, U, lib

import lucid


def _clone(x: Any) -> Any:
    return x.copy() if isinstance(x, np.ndarray) else x.clone()


def _ints(*values: Any) -> T:
    return T(np.array(values, dtype=np.int64))


def _one(shape_args: list, **kw: Any) -> Any:
    """Samples of one float tensor followed by fixed extra arguments."""

    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        for item in shape_args:
            shape, layout, *rest = item
            yield Sample(T(U(rng, shape), layout), *rest, **kw)

    return samples


def _same(fn: Any, name: str, samples: Any, ref: Any = None, **kw: Any) -> OpInfo:
    """An op written once for lucid, torch and numpy (methods/operators they share)."""
    return OpInfo(name, fn, ref if ref is not None else fn, samples, torch_op=fn, **kw)


# ---- reshape and axes ---------------------------------------------------------------------------


def _squeeze_ref(x: np.ndarray, dim: Any = None) -> np.ndarray:
    if dim is None:
        return np.squeeze(x)
    dims = (dim,) if isinstance(dim, int) else dim
    axes = tuple(d % max(x.ndim, 1) for d in dims if x.ndim and x.shape[d] == 1)
    return np.squeeze(x, axes) if x.ndim else x


def _flatten_ref(x: np.ndarray, start_dim: int = 0, end_dim: int = -1) -> np.ndarray:
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_dim % x.ndim, end_dim % x.ndim
    return x.reshape(x.shape[:s] + (int(np.prod(x.shape[s:e + 1])),) + x.shape[e + 1:])


def _expand_ref(x: np.ndarray, *sizes: int) -> np.ndarray:
    lead = len(sizes) - x.ndim
    shape = tuple(x.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    return np.broadcast_to(x, shape)


MOVEMENT = [
    OpInfo("reshape", "reshape", np.reshape, _one([
        ((3, 4), "c", (2, 6)), ((3, 4), "c", (-1,)), ((2, 3, 4), "c", (4, -1, 3)),
        ((4, 3), "t", (12,)), ((), "c", (1, 1)), ((0, 3), "c", (3, 0)),
        ((6,), "s", (2, 3))]), method=True),
    _same(lambda x, s: x.view(s), "view", _one([
        ((3, 4), "c", (4, 3)), ((2, 6), "c", (-1,)), ((2, 3, 4), "c", (6, 4)),
        ((), "c", (1,))]), ref=np.reshape),
    OpInfo("transpose", "transpose", np.swapaxes, _one([
        ((2, 3, 4), "c", 0, 2), ((2, 3, 4), "c", -1, -2), ((3, 4), "t", 0, 1),
        ((5,), "c", 0, -1)]), method=True),
    OpInfo("permute", "permute", np.transpose, _one([
        ((2, 3, 4), "c", (2, 0, 1)), ((2, 3, 4), "t", (1, 2, 0)), ((3, 4), "c", (-1, 0))]),
        method=True),
    OpInfo("squeeze", "squeeze", _squeeze_ref, _one([
        ((1, 3, 1, 2), "c"), ((1, 3, 1, 2), "c", 0), ((1, 3, 1, 2), "c", -2),
        ((1, 3, 1, 2), "c", 1), ((1, 3, 1, 2), "c", (0, 2)), ((), "c"), ((1, 2), "t", 1)]),
        method=True),
    OpInfo("unsqueeze", "unsqueeze", np.expand_dims, _one([
        ((3, 4), "c", 0), ((3, 4), "c", -1), ((3, 4), "t", 1), ((), "c", 0),
        ((2, 3), "c", -3)]), method=True),
    OpInfo("flatten", "flatten", _flatten_ref, lambda r: [
        Sample(T(U(r, (2, 3, 4)))), Sample(T(U(r, (2, 3, 4))), start_dim=1),
        Sample(T(U(r, (2, 3, 4))), start_dim=0, end_dim=-2), Sample(T(U(r, ()))),
        Sample(T(U(r, (3, 4)), "t")), Sample(T(U(r, (2, 0, 3))), start_dim=1)], method=True),
    _same(lambda x, *s: x.expand(*s), "expand", _one([
        ((3, 1), "c", 2, 3, 4), ((3, 1), "c", -1, 4), ((1,), "c", 3), ((), "c", 2, 2),
        ((3, 1), "t", 3, 2)]), ref=_expand_ref),
    OpInfo("broadcast_to", "broadcast_to", np.broadcast_to, _one([
        ((3, 1), "c", (2, 3, 4)), ((4,), "s", (3, 4)), ((), "c", (2,))])),
    _same(lambda x, *r: x.repeat(*r), "repeat", _one([
        ((2, 3), "c", 2, 1, 2), ((3,), "c", 2), ((3, 2), "t", 2, 3), ((2, 3), "c", 1, 1)]),
        ref=lambda x, *r: np.tile(x, r)),
]

# ---- join and split -----------------------------------------------------------------------------


def _tensors(*shapes: Any) -> Any:
    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        for group, kw in shapes:
            yield Sample(*[T(U(rng, s), lay) for s, lay in group], **kw)

    return samples


def _chunk_ref(x: np.ndarray, chunks: int, dim: int = 0) -> list:
    n = x.shape[dim]
    size = -(-n // chunks)
    return np.split(x, list(range(size, n, size)), axis=dim)


def _split_ref(x: np.ndarray, split: Any, dim: int = 0) -> list:
    n = x.shape[dim]
    if isinstance(split, int):
        return np.split(x, list(range(split, n, split)), axis=dim)
    return np.split(x, list(np.cumsum(split)[:-1]), axis=dim)


JOIN = [
    OpInfo("cat", lambda *xs, dim=0: lucid.cat(xs, dim),
           lambda *xs, dim=0: np.concatenate(xs, dim), _tensors(
               ([((2, 3), "c"), ((4, 3), "c")], {"dim": 0}),
               ([((2, 3), "c"), ((2, 1), "t")], {"dim": -1}),
               ([((0, 3), "c"), ((2, 3), "c")], {"dim": 0}),
               ([((2, 3), "c"), ((2, 3), "s"), ((2, 2), "c")], {"dim": 1})),
           torch_op=lambda *xs, dim=0: lib(xs[0]).cat(xs, dim)),
    OpInfo("stack", lambda *xs, dim=0: lucid.stack(xs, dim),
           lambda *xs, dim=0: np.stack(xs, dim), _tensors(
               ([((2, 3), "c")] * 3, {"dim": 0}), ([((2, 3), "c"), ((2, 3), "t")], {"dim": -1}),
               ([((2, 3), "c"), ((2, 3), "c")], {"dim": 1}), ([((), "c")] * 2, {"dim": 0})),
           torch_op=lambda *xs, dim=0: lib(xs[0]).stack(xs, dim)),
    OpInfo("split", "split", _split_ref, _one([
        ((5, 4), "c", 2, 0), ((5, 4), "c", [1, 3], 1), ((5, 4), "c", 4, -1),
        ((4, 5), "t", 3, 0)]), method=True),
    OpInfo("chunk", "chunk", _chunk_ref, _one([
        ((5, 4), "c", 3, 0), ((5, 4), "c", 2, -1), ((6,), "s", 3, 0)]), method=True),
    OpInfo("unbind", "unbind", lambda x, dim=0: [np.take(x, i, dim) for i in
                                                 range(x.shape[dim])], _one([
        ((3, 4), "c", 0), ((3, 4), "c", -1), ((2, 3, 2), "t", 1)]), method=True),
]

# ---- indexing -----------------------------------------------------------------------------------


def _gather_ref(x: np.ndarray, dim: int, idx: np.ndarray) -> np.ndarray:
    d = dim % x.ndim
    sl = tuple(slice(None) if k == d else slice(0, idx.shape[k]) for k in range(x.ndim))
    return np.take_along_axis(x[sl], idx, d)


def _gather_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3, 4))), 1, T(rng.integers(0, 4, (3, 2))))
    yield Sample(T(U(rng, (3, 4))), 0, T(np.array([[0, 1, 2, 0], [0, 0, 0, 0], [2, 2, 1, 0]])))
    yield Sample(T(U(rng, (3, 4))), -1, T(rng.integers(0, 4, (2, 5))))
    yield Sample(T(U(rng, (4, 3)), "t"), 0, T(rng.integers(0, 4, (2, 3))))
    yield Sample(T(U(rng, (2, 3, 4))), 1, T(rng.integers(0, 3, (2, 3, 4))))


def _masked_fill_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3, 4))), T(rng.random((3, 4)) > 0.5), 0.5)
    yield Sample(T(U(rng, (3, 4))), T(rng.random((4,)) > 0.5), -1.0)
    yield Sample(T(U(rng, (4, 3)), "t"), T(rng.random((4, 1)) > 0.5), 2.0)
    yield Sample(T(U(rng, (3, 4))), T(rng.random((3, 4)) > 0.5), T(np.array(1.5)),
                 name="tensor_value")


def _pad_ref(x: np.ndarray, pad: tuple, mode: str = "constant", value: Any = None
             ) -> np.ndarray:
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    x = x[tuple(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(widths, x.shape))]
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    if mode == "constant":
        return np.pad(x, widths, constant_values=0 if value is None else value)
    return np.pad(x, widths, mode={"reflect": "reflect", "replicate": "edge",
                                   "circular": "wrap"}[mode])


def _pad_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (2, 3))), (1, 2))
    yield Sample(T(U(rng, (2, 3, 4))), (1, 1, 2, 0), value=0.5)
    yield Sample(T(U(rng, (3, 4)), "t"), (0, 1, 1, 0))
    yield Sample(T(U(rng, (2, 5))), (-1, 2), name="negative_crop")
    for mode in ("reflect", "replicate", "circular"):
        yield Sample(T(U(rng, (2, 5))), (2, 1), mode=mode)
        yield Sample(T(U(rng, (1, 4, 5))), (1, 2, 2, 1), mode=mode)
        yield Sample(T(U(rng, (2, 4, 3)), "t"), (1, 0, 0, 2), mode=mode)


PAD_TORCH = "nn.functional.pad"

X = (4, 5, 3)


def _gi(name: str, fn: Any, *extra: Any, layout: str = "c", shape: tuple = X) -> OpInfo:
    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        yield Sample(T(U(rng, shape), layout), *[e(rng) if callable(e) else e for e in extra])

    return _same(fn, "getitem_" + name, samples)


def _bool_mask(shape: tuple) -> Any:
    return lambda rng: T(rng.random(shape) > 0.4)


INDEXING = [
    _gi("int", lambda x: x[1]),
    _gi("neg_int", lambda x: x[-1]),
    _gi("slice", lambda x: x[1:3]),
    _gi("step_int", lambda x: x[::2, 1]),
    _gi("ellipsis", lambda x: x[..., 1]),
    _gi("none", lambda x: x[None, 0]),
    _gi("mixed", lambda x: x[:, None, 1:, ..., -1]),
    _gi("empty_slice", lambda x: x[2:2]),
    _gi("all_ints", lambda x: x[1, 2, 0]),
    _gi("bool_mask", lambda x, m: x[m], _bool_mask((4,))),
    _gi("bool_mask2d", lambda x, m: x[m], _bool_mask((4, 5))),
    _gi("bool_mask_none", lambda x, m: x[m], T(np.zeros(4, bool))),
    _gi("bool_mask_then_int", lambda x, m: x[m, 1], _bool_mask((4,))),
    _gi("int_array_repeats", lambda x, i: x[i], _ints(0, 2, 0, 3, 0)),
    _gi("int_array_2d", lambda x, i: x[i], T(np.array([[0, 1], [1, 1]]))),
    _gi("int_array_neg", lambda x, i: x[:, i], _ints(-1, 0, -1)),
    _gi("int_arrays_pair", lambda x, i, j: x[i, :, j], _ints(0, 3, 3), _ints(2, 1, 2)),
    _gi("list", lambda x: x[[0, 2, 0]]),
    _gi("transposed", lambda x, i: x[1:, i], _ints(2, 0, 2), shape=(4, 5), layout="t"),
    _gi("strided", lambda x: x[::2, 1:], shape=(3, 6), layout="s"),
]


def _setter(name: str, assign: Any, *extra: Any, v_shape: tuple | None = None,
            layout: str = "c") -> OpInfo:
    """``y = x.clone(); assign(y, ...)``: gradients reach x (outside the region) and v."""

    def fn(x: Any, *rest: Any) -> Any:
        y = _clone(x)
        assign(y, *rest)
        return y

    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        args = [e(rng) if callable(e) else e for e in extra]
        if v_shape is not None:
            args.append(T(U(rng, v_shape)))
        yield Sample(T(U(rng, X), layout), *args)

    return _same(fn, "setitem_" + name, samples)


def _set(idx_fn: Any) -> Any:
    def assign(y: Any, *rest: Any) -> None:
        idx, v = idx_fn(*rest[:-1]), rest[-1]
        y[idx] = v

    return assign


SETITEM = [
    _setter("int", _set(lambda: 1), v_shape=(5, 3)),
    _setter("slice_bcast", _set(lambda: (slice(1, 3), 0)), v_shape=(3,)),
    _setter("scalar", lambda y: y.__setitem__((Ellipsis, 1), 0.5)),
    _setter("bool_mask", _set(lambda m: m), _bool_mask((4,)), v_shape=(3,)),
    _setter("int_array", _set(lambda i: i), _ints(0, 3), v_shape=(2, 5, 3)),
    _setter("zero_dim_value", _set(lambda i: (slice(None), i)), _ints(4, 1), v_shape=()),
    _setter("transposed", _set(lambda: (slice(None), 2)), v_shape=(4, 3), layout="t"),
]

SHAPE_OPS = MOVEMENT + JOIN + [
    OpInfo("gather", "gather", _gather_ref, _gather_samples, method=True),
    OpInfo("index_select", "index_select", lambda x, d, i: np.take(x, i, d), _one([
        ((4, 3), "c", 0, _ints(0, 2, 2)), ((4, 3), "c", -1, _ints(2, 0)),
        ((3, 4), "t", 1, _ints(3, 3, 0, 1))]), method=True),
    OpInfo("masked_fill", "masked_fill", lambda x, m, v: np.where(m, v, x),
           _masked_fill_samples, method=True),
    OpInfo("pad", lucid.ops.movement.pad, _pad_ref, _pad_samples, torch_op=PAD_TORCH),
] + INDEXING + SETITEM
