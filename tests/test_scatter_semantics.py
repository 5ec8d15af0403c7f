"""scatter / scatter_ / scatter_add / scatter_reduce write only the index's extent (and read
only that much of ``src``), as torch does, with their gradients, on every device: an index
smaller than the input off ``dim`` leaves the rest of each row alone; an empty index writes
nothing and keeps the input's shape; 0-d tensors scatter as 1-element vectors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from devices import DEVICES

import lucid

# (input shape, dim, index, src shape): each index smaller than the input off ``dim``, or empty
CASES = [
    ((3, 4), 0, [[2, 0], [1, 2]], (3, 4)),
    ((3, 4), 0, [[2]], (2, 3)),
    ((3, 4), 1, [[3], [0]], (3, 4)),
    ((2, 3, 4), 2, [[[1, 3], [0, 2]]], (2, 3, 3)),
    ((3, 4), 0, [[2, 0, 1, 0], [1, 2, 0, 0], [0, 1, 2, 1], [1, 1, 1, 1]], (5, 4)),
    ((3, 4), 0, np.zeros((2, 0), np.int64), (3, 4)),
    ((3, 4), 1, np.zeros((0, 0), np.int64), (3, 4)),
    ((), 0, 0, ()),
]
IDS = ["2x2_of_3x4", "1x1_of_3x4", "column_of_3x4", "3d", "longer_than_input", "empty_cols",
       "empty", "0d"]


def _t(x: Any, device: str, **kw: Any) -> lucid.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the gpu device's one-time "MLX's CPU stream" note
        return lucid.tensor(x, device=device, **kw)


def _data(shape: tuple, src_shape: tuple, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape), rng.standard_normal(src_shape) + 10


def _positions(idx: np.ndarray, dim: int) -> tuple:
    pos = list(np.indices(idx.shape, sparse=True))
    pos[dim] = idx
    return tuple(pos)


def _ref_scatter(x: np.ndarray, dim: int, idx: np.ndarray, src: Any) -> np.ndarray:
    """numpy reference: ``out[pos] = src[extent]`` over the index's extent only."""
    out = x.copy()
    if idx.size == 0:
        return out
    if x.ndim == 0:
        return np.asarray(src, dtype=x.dtype).reshape(()).copy()
    vals = src[tuple(slice(0, n) for n in idx.shape)] if isinstance(src, np.ndarray) else src
    out[_positions(idx, dim)] = vals
    return out


def _ref_scatter_add(x: np.ndarray, dim: int, idx: np.ndarray, src: np.ndarray) -> np.ndarray:
    out = x.copy()
    if idx.size == 0:
        return out
    if x.ndim == 0:
        return out + src.reshape(())
    np.add.at(out, _positions(idx, dim), src[tuple(slice(0, n) for n in idx.shape)])
    return out


OPS: dict[str, tuple[Callable, Callable]] = {
    "scatter": (lambda x, d, i, s: x.scatter(d, i, s), _ref_scatter),
    "scatter_value": (lambda x, d, i, s: x.scatter(d, i, value=-1.5),
                      lambda x, d, i, s: _ref_scatter(x, d, i, -1.5)),
    "scatter_": (lambda x, d, i, s: x.clone().scatter_(d, i, s), _ref_scatter),
    "scatter_add": (lambda x, d, i, s: x.scatter_add(d, i, s), _ref_scatter_add),
    "scatter_add_": (lambda x, d, i, s: x.clone().scatter_add_(d, i, s), _ref_scatter_add),
    "scatter_reduce_sum": (lambda x, d, i, s: x.scatter_reduce(d, i, s, "sum"),
                           _ref_scatter_add),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("shape,dim,index,src_shape", CASES, ids=IDS)
def test_forward_writes_only_the_index_extent(device: str, op: str, shape: tuple, dim: int,
                                              index: Any, src_shape: tuple) -> None:
    x, s = _data(shape, src_shape)
    idx = np.asarray(index, np.int64)
    fn, ref = OPS[op]
    out = fn(_t(x, device), dim, _t(idx, device), _t(s, device))
    assert tuple(out.shape) == x.shape
    np.testing.assert_allclose(out.numpy(), ref(x, dim, idx, s), rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,dim,index,src_shape", CASES, ids=IDS)
def test_gradients_at_the_index_extent(device: str, shape: tuple, dim: int, index: Any,
                                       src_shape: tuple) -> None:
    """scatter: input's gradient is zero where something was written, src's is the upstream
    gradient gathered at the index (zero beyond the index's extent); scatter_add: input's
    gradient passes through unchanged."""
    x, s = _data(shape, src_shape)
    idx = np.asarray(index, np.int64)
    g = np.random.default_rng(1).standard_normal(shape)
    hit = np.zeros(shape, bool)
    gs = np.zeros(src_shape)
    if idx.size:
        if hit.ndim:
            hit[_positions(idx, dim)] = True
            ext = tuple(slice(0, n) for n in idx.shape)
            gs[ext] = g[_positions(idx, dim)]
        else:
            hit[()] = True
            gs[()] = g[()]
    for op, want_x in (("scatter", np.where(hit, 0.0, g)), ("scatter_add", g)):
        lx, ls = _t(x, device, requires_grad=True), _t(s, device, requires_grad=True)
        out = getattr(lx, op)(dim, _t(idx, device), ls)
        out.backward(_t(g, device))
        np.testing.assert_allclose(lx.grad.numpy(), want_x, err_msg=op)
        np.testing.assert_allclose(ls.grad.numpy(), gs, err_msg=op)


@pytest.mark.parametrize("device", DEVICES)
def test_index_of_one_leaves_the_rest_of_the_row(device: str) -> None:
    """The defect this pins: a (1, 1) index used to write a whole row of the input."""
    out = _t(np.zeros((3, 4)), device).scatter(0, _t([[2]], device), 7.0)
    want = np.zeros((3, 4))
    want[2, 0] = 7.0
    np.testing.assert_array_equal(out.numpy(), want)


@pytest.mark.parametrize("device", DEVICES)
def test_reduce_multiply(device: str) -> None:
    x = np.arange(1.0, 13.0).reshape(3, 4)
    out = _t(x, device).scatter(0, _t([[0, 1], [0, 2]], device), _t(np.full((2, 2), 2.0),
                                                                       device),
                                reduce="multiply")
    want = x.copy()
    want[0, 0] *= 4
    want[1, 1] *= 2
    want[0, 1] *= 1
    want[2, 1] *= 2
    np.testing.assert_array_equal(out.numpy(), want)


@pytest.mark.parametrize("device", DEVICES)
def test_scatter_reduce_amax_and_prod_on_the_extent(device: str) -> None:
    x = np.zeros((3, 4))
    idx = np.array([[2]])
    s = np.full((2, 3), 5.0)
    amax = _t(x, device).scatter_reduce(0, _t(idx, device), _t(s, device), "amax")
    prod = _t(x + 1, device).scatter_reduce(0, _t(idx, device), _t(s, device), "prod")
    want = np.zeros((3, 4))
    want[2, 0] = 5.0
    np.testing.assert_array_equal(amax.numpy(), want)
    np.testing.assert_array_equal(prod.numpy(), np.where(want > 0, 5.0, 1.0))


@pytest.mark.parametrize("device", DEVICES)
def test_scatter_reduce_amax_shares_the_gradient_among_ties(device: str) -> None:
    """torch's rule: a max's gradient is split evenly among the values equal to it, the
    input's own counted too; include_self=False gives the input none where something was
    scattered (its share is still counted, as torch counts it)."""
    x = np.array([3.0, 1.0, 0.0])
    s = np.array([3.0, 2.0, 3.0, 5.0])
    idx = np.array([0, 1, 0, 2])
    g = np.array([6.0, 4.0, 2.0])
    for include_self, gx, gs in ((True, [2.0, 0.0, 0.0], [2.0, 4.0, 2.0, 2.0]),
                                 (False, [0.0, 0.0, 0.0], [2.0, 4.0, 2.0, 2.0])):
        tx, ts = _t(x, device, requires_grad=True), _t(s, device, requires_grad=True)
        out = tx.scatter_reduce(0, _t(idx, device), ts, "amax", include_self=include_self)
        np.testing.assert_array_equal(out.detach().numpy(), [3.0, 2.0, 5.0])
        out.backward(_t(g, device))
        np.testing.assert_array_equal(tx.grad.numpy(), gx)
        np.testing.assert_array_equal(ts.grad.numpy(), gs)


@pytest.mark.parametrize("device", DEVICES)
def test_scatter_reduce_prod_gradient_with_zeros(device: str) -> None:
    x = np.array([2.0, 3.0])
    s = np.array([0.0, 5.0, 4.0])  # one zero lands on x[0]
    idx = np.array([0, 0, 1])
    tx, ts = _t(x, device, requires_grad=True), _t(s, device, requires_grad=True)
    out = tx.scatter_reduce(0, _t(idx, device), ts, "prod")
    np.testing.assert_array_equal(out.detach().numpy(), [0.0, 12.0])
    out.backward(_t(np.ones(2), device))
    np.testing.assert_array_equal(tx.grad.numpy(), [0.0, 4.0])  # d/dx0 of x0*0*5 = 0
    np.testing.assert_array_equal(ts.grad.numpy(), [10.0, 0.0, 3.0])  # the zero's: 2*5


@pytest.mark.parametrize("reduce", ["amax", "amin", "prod", "sum", "mean"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradients_against_torch(torch: Any, reduce: str,
                                                include_self: bool) -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(-2, 3, (3, 4)).astype(np.float64)  # ties and zeros on purpose
    s = rng.integers(-2, 3, (5, 3)).astype(np.float64)
    idx = rng.integers(0, 3, (5, 3))
    g = rng.standard_normal((3, 4))
    outs = []
    for m in (lucid, torch):
        tx, ts = m.tensor(x, requires_grad=True), m.tensor(s, requires_grad=True)
        y = tx.scatter_reduce(0, m.tensor(idx), ts, reduce, include_self=include_self)
        y.backward(m.tensor(g))
        outs.append([y.detach().numpy(), tx.grad.numpy(), ts.grad.numpy()])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


ERRORS = [
    ("bigger_than_self", lambda m: m.zeros(3, 4).scatter(0, m.zeros(2, 5, dtype=m.int64), 1.0)),
    ("bigger_than_src", lambda m: m.zeros(3, 4).scatter(0, m.zeros(2, 2, dtype=m.int64),
                                                        m.ones(1, 1))),
    ("add_bigger_than_self", lambda m: m.zeros(3, 4).scatter_add(
        0, m.zeros(2, 5, dtype=m.int64), m.ones(2, 5))),
    ("ndim", lambda m: m.zeros(3, 4).scatter(0, m.zeros(2, dtype=m.int64), 1.0)),
    ("add_ndim", lambda m: m.zeros(3, 4).scatter_add(0, m.zeros(2, dtype=m.int64), m.ones(2))),
    ("dtype", lambda m: m.zeros(3, 4).scatter(0, m.zeros(2, 2, dtype=m.int64),
                                              m.ones(2, 2, dtype=m.float64))),
    ("add_dtype", lambda m: m.zeros(3, 4).scatter_add(0, m.zeros(2, 2, dtype=m.int64),
                                                      m.ones(2, 2, dtype=m.float64))),
    ("reduce_dtype", lambda m: m.zeros(3).scatter_reduce(0, m.zeros(2, dtype=m.int64),
                                                         m.ones(2, dtype=m.float64), "sum")),
    ("reduce_name", lambda m: m.zeros(3).scatter(0, m.zeros(2, dtype=m.int64), 1.0,
                                                 reduce="max")),
]


def _message(fn: Callable, m: Any) -> tuple[type, str]:
    with pytest.raises(Exception) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn(m)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(torch: Any, name: str, fn: Callable) -> None:
    assert _message(fn, lucid) == _message(fn, torch)


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_clear_without_torch(name: str, fn: Callable) -> None:
    kind, text = _message(fn, lucid)
    assert kind is RuntimeError
    assert "broadcast" not in text and "axis" not in text


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("shape,dim,index,src_shape", CASES, ids=IDS)
def test_against_torch(torch: Any, op: str, shape: tuple, dim: int, index: Any,
                       src_shape: tuple) -> None:
    """Values and the input's gradient. (torch 2.13's own backward fails for ``src`` when
    the index is smaller than ``src``, "returned an invalid gradient at index 1"; lucid
    returns the gathered gradient, zero beyond the index, checked above.)"""
    x, s = _data(shape, src_shape)
    idx = np.asarray(index, np.int64)
    g = np.random.default_rng(1).standard_normal(shape)
    fn = OPS[op][0]
    outs = []
    for m in (lucid, torch):
        tx = m.tensor(x, requires_grad=True)
        y = fn(tx, dim, m.tensor(idx), m.tensor(s))
        y.backward(m.tensor(g))
        outs.append([y.detach().numpy(), tx.grad.numpy()])
    for a, b in zip(*outs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("op", ["scatter", "scatter_add"])
def test_src_gradient_against_torch_where_torch_has_one(torch: Any, op: str) -> None:
    """With ``src`` of the index's shape torch's backward works: both gradients agree."""
    x, s = _data((3, 4), (2, 4))
    idx = np.array([[2, 0, 1, 0], [1, 2, 0, 2]])
    g = np.random.default_rng(1).standard_normal((3, 4))
    outs = []
    for m in (lucid, torch):
        tx, ts = m.tensor(x, requires_grad=True), m.tensor(s, requires_grad=True)
        getattr(tx, op)(0, m.tensor(idx), ts).backward(m.tensor(g))
        outs.append([tx.grad.numpy(), ts.grad.numpy()])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-12)
