"""Property tests: broadcasting and reductions over random shapes, against numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import lucid

SETTINGS = settings(max_examples=40, deadline=None, database=None)
BACKEND = st.sampled_from(["cpu", "numpy"])
SEED = st.integers(0, 2**32 - 1)


def unbroadcast(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``g`` down to ``shape`` (the reference for broadcast gradients)."""
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


BINARY = {
    "add": (lambda a, b: a + b, lambda a, b, g: (g, g)),
    "sub": (lambda a, b: a - b, lambda a, b, g: (g, -g)),
    "mul": (lambda a, b: a * b, lambda a, b, g: (g * b, g * a)),
    "div": (lambda a, b: a / b, lambda a, b, g: (g / b, -g * a / (b * b))),
    "maximum": (None, lambda a, b, g: (g * (a > b), g * (b > a))),
}


@SETTINGS
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=4, min_side=0, max_side=4),
       op=st.sampled_from(sorted(BINARY)), seed=SEED, backend=BACKEND)
def test_broadcasting_binary_ops(shapes: Any, op: str, seed: int, backend: str) -> None:
    (sa, sb), out_shape = shapes.input_shapes, shapes.result_shape
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, sa) * rng.choice([-1.0, 1.0], sa)
    b = rng.uniform(0.5, 2.0, sb) * rng.choice([-1.0, 1.0], sb)
    g = rng.uniform(-1, 1, out_shape)
    fn, grads = BINARY[op]
    ta = lucid.tensor(a, device=backend, requires_grad=True)
    tb = lucid.tensor(b, device=backend, requires_grad=True)
    out = lucid.maximum(ta, tb) if fn is None else fn(ta, tb)
    ref = np.maximum(a, b) if fn is None else fn(a, b)
    assert out.shape == out_shape and out.dtype is lucid.float64
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-12, atol=1e-12)
    out.backward(lucid.tensor(g, device=backend))
    ga, gb = grads(np.broadcast_to(a, out_shape), np.broadcast_to(b, out_shape), g)
    assert ta.grad.shape == sa and tb.grad.shape == sb
    np.testing.assert_allclose(ta.grad.numpy(), unbroadcast(ga, sa), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tb.grad.numpy(), unbroadcast(gb, sb), rtol=1e-10, atol=1e-12)


@SETTINGS
@given(shapes=mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3), seed=SEED)
def test_broadcasting_where(shapes: Any, seed: int) -> None:
    sc, sa, sb = shapes.input_shapes
    rng = np.random.default_rng(seed)
    c, a, b = rng.random(sc) > 0.5, rng.standard_normal(sa), rng.standard_normal(sb)
    ta = lucid.tensor(a, requires_grad=True)
    tb = lucid.tensor(b, requires_grad=True)
    out = lucid.where(lucid.tensor(c), ta, tb)
    np.testing.assert_array_equal(out.detach().numpy(), np.where(c, a, b))
    out.sum().backward()
    full = np.ones(shapes.result_shape)
    np.testing.assert_array_equal(ta.grad.numpy(), unbroadcast(np.where(c, full, 0), sa))
    np.testing.assert_array_equal(tb.grad.numpy(), unbroadcast(np.where(c, 0, full), sb))


@st.composite
def shape_and_dims(draw: Any) -> tuple[tuple[int, ...], Any, bool]:
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=4)))
    n = len(shape)
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none" or n == 0:
        dim: Any = None
    elif kind == "int":
        dim = draw(st.integers(-n, n - 1))
    else:
        axes = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
        dim = tuple(a - n if draw(st.booleans()) else a for a in axes)
    return shape, dim, draw(st.booleans())


def _axes(dim: Any, ndim: int) -> Any:
    if dim is None or ndim == 0:
        return None
    return tuple(d % ndim for d in dim) if isinstance(dim, tuple) else dim % ndim


REDUCTIONS = {
    "sum": (lambda t, d, k: t.sum(d, k), lambda a, ax, k: a.sum(axis=ax, keepdims=k)),
    "mean": (lambda t, d, k: t.mean(d, k), lambda a, ax, k: a.mean(axis=ax, keepdims=k)),
    "amax": (lambda t, d, k: t.amax(() if d is None else d, k),
             lambda a, ax, k: a.max(axis=ax, keepdims=k)),
    "amin": (lambda t, d, k: t.amin(() if d is None else d, k),
             lambda a, ax, k: a.min(axis=ax, keepdims=k)),
    "var0": (lambda t, d, k: t.var(d, keepdim=k, correction=0),
             lambda a, ax, k: a.var(axis=ax, keepdims=k)),
    "logsumexp": (lambda t, d, k: t.logsumexp(tuple(range(t.ndim)) if d is None else d, k),
                  lambda a, ax, k: np.log(np.exp(a).sum(axis=ax, keepdims=k))),
    "norm": (lambda t, d, k: t.norm(dim=d, keepdim=k),
             lambda a, ax, k: np.sqrt((a * a).sum(axis=ax, keepdims=k))),
}


@SETTINGS
@given(sd=shape_and_dims(), op=st.sampled_from(sorted(REDUCTIONS)), seed=SEED,
       backend=BACKEND)
def test_reductions(sd: Any, op: str, seed: int, backend: str) -> None:
    shape, dim, keep = sd
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    fn, ref = REDUCTIONS[op]
    t = lucid.tensor(a, device=backend, requires_grad=True)
    out = fn(t, dim, keep)
    expected = np.asarray(ref(a, _axes(dim, a.ndim), keep))
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-12)
    out.sum().backward()
    assert t.grad.shape == shape and np.all(np.isfinite(t.grad.numpy()))
    if op == "sum":
        np.testing.assert_array_equal(t.grad.numpy(), np.ones(shape))
    if op == "mean":
        np.testing.assert_allclose(t.grad.numpy(), np.ones(shape) * expected.size / max(a.size, 1))


@SETTINGS
@given(sd=shape_and_dims(), seed=SEED)
def test_max_with_dim_picks_values_and_indices(sd: Any, seed: int) -> None:
    shape, dim, keep = sd
    if not isinstance(dim, int):
        dim = 0
    rng = np.random.default_rng(seed)
    a = rng.permutation(max(int(np.prod(shape)), 1)).reshape(shape).astype(np.float64)
    t = lucid.tensor(a, requires_grad=True)
    values, indices = t.max(dim, keepdim=keep)
    ax = dim % a.ndim if a.ndim else None
    np.testing.assert_array_equal(values.detach().numpy(), a.max(axis=ax, keepdims=keep))
    np.testing.assert_array_equal(indices.numpy(), np.argmax(a, axis=ax, keepdims=keep)
                                  if a.ndim else 0)
    values.sum().backward()
    assert t.grad.sum().item() == values.numel()  # one winner per reduced slice
    assert np.all(t.grad.numpy()[a == a.max(axis=ax, keepdims=True)] == 1.0) if a.ndim else True


@st.composite
def basic_index(draw: Any) -> tuple[tuple[int, ...], tuple]:
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    idx = []
    for n in shape[:draw(st.integers(1, len(shape)))]:
        if draw(st.booleans()):
            idx.append(draw(st.integers(-n, n - 1)))
        else:
            start = draw(st.one_of(st.none(), st.integers(-n, n)))
            stop = draw(st.one_of(st.none(), st.integers(-n, n)))
            idx.append(slice(start, stop, draw(st.integers(1, 3))))
    return shape, tuple(idx)


@SETTINGS
@given(si=basic_index(), seed=SEED, backend=BACKEND)
def test_basic_indexing_and_its_gradient(si: Any, seed: int, backend: str) -> None:
    shape, idx = si
    a = np.random.default_rng(seed).standard_normal(shape)
    t = lucid.tensor(a, device=backend, requires_grad=True)
    out = t[idx]
    np.testing.assert_array_equal(out.detach().numpy(), a[idx])
    out.sum().backward()
    expected = np.zeros(shape)
    expected[idx] = 1.0
    np.testing.assert_array_equal(t.grad.numpy(), expected)


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), seed=SEED,
       data=st.data())
def test_integer_array_indexing_accumulates_repeats(shape: list, seed: int, data: Any) -> None:
    n = shape[0]
    idx = data.draw(st.lists(st.integers(-n, n - 1), min_size=0, max_size=6))
    a = np.random.default_rng(seed).standard_normal(shape)
    t = lucid.tensor(a, requires_grad=True)
    ii = np.asarray(idx, dtype=np.int64)
    out = t[lucid.tensor(ii)]
    np.testing.assert_array_equal(out.detach().numpy(), a[ii])
    out.sum().backward()
    counts = np.zeros(n)
    np.add.at(counts, ii, 1.0)
    np.testing.assert_array_equal(t.grad.numpy(),
                                  np.broadcast_to(counts.reshape((n,) + (1,) * (len(shape) - 1)),
                                                  shape))

