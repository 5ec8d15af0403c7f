"""In-place semantics: version counters, saved-tensor checks, leaf rules, and gradients
through in-place ops on tensors and on views: against the same cases written with numpy's
views (values, finite-difference gradients) and, where torch is installed, against PyTorch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid


def leaf(*values: Any, dtype: Any = None) -> lucid.Tensor:
    return lucid.tensor(list(values), dtype=dtype, requires_grad=True)


# ---- in-place ops -------------------------------------------------------------------------------


INPLACE = {
    "add_": lambda x: x.add_(1), "sub_": lambda x: x.sub_(1), "mul_": lambda x: x.mul_(2),
    "div_": lambda x: x.div_(2), "zero_": lambda x: x.zero_(), "fill_": lambda x: x.fill_(3),
    "copy_": lambda x: x.copy_(lucid.ones(3)), "clamp_": lambda x: x.clamp_(0, 1),
    "setitem": lambda x: x.__setitem__(0, 5.0), "iadd": lambda x: x.__iadd__(1),
    "pow_": lambda x: x.pow_(2), "exp_": lambda x: x.exp_(),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_ops_bump_version(name: str) -> None:
    x = lucid.zeros(3)
    v = x[1:]
    before = x._version
    r = INPLACE[name](x)
    assert r is (None if name == "setitem" else x)
    assert x._version == before + 1
    assert v._version == x._version  # views share the counter


def test_inplace_values() -> None:
    x = lucid.tensor([1.0, 2.0, 3.0])
    x.add_(1).mul_(2).sub_(1).div_(2)
    np.testing.assert_allclose(x.numpy(), [1.5, 2.5, 3.5])
    x += 1
    x *= 2
    np.testing.assert_allclose(x.numpy(), [5.0, 7.0, 9.0])
    x.add_(lucid.ones(3), alpha=2)
    np.testing.assert_allclose(x.numpy(), [7.0, 9.0, 11.0])
    x[1:] = lucid.tensor([0.0, -1.0])
    assert x.tolist() == [7.0, 0.0, -1.0]


def test_inplace_into_int_tensor_cannot_hold_float() -> None:
    x = lucid.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        x.add_(1.5)


@pytest.mark.parametrize("fn", [lambda x: x.mul_(2), lambda x: x.exp_(),
                                lambda x: x.__setitem__(0, 1.0), lambda x: x.zero_()])
def test_inplace_on_leaf_requiring_grad_raises(fn: Callable) -> None:
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation."):
        fn(x)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        fn(x[:1])
    with lucid.no_grad():
        fn(x)  # allowed outside of graph recording (e.g. optimizer steps)


def test_modified_saved_tensor_raises() -> None:
    x = leaf(1.0, 2.0)
    y = x * 2
    z = y * y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    a = leaf(1.0, 2.0)
    b = a.exp()  # exp saves its output
    b.add_(1)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        b.sum().backward()


def test_inplace_on_unsaved_input_is_fine() -> None:
    x = leaf(1.0, 2.0)
    y = x * 1
    z = y * 5  # needs only the constant, not y
    y.add_(1)
    z.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


NON_LEAF_CASES = {
    "add_": lambda m, x: (lambda y: (y.add_(1), y.sum())[1])(x * 2),
    "mul_pow_": lambda m, x: (lambda y: (y.mul_(3), y.pow_(2), (y * x).sum())[2])(x * 2),
    "sqrt_": lambda m, x: (lambda y: (y.sqrt_(), y.sum())[1])(x * 1),
    "setitem_from_self": lambda m, x: (lambda y: (y.__setitem__(1, y[0] * 5), y.sum())[1])(
        x * 2),
    "copy_": lambda m, x: (lambda y: (y.copy_(x * 3), (y * y).sum())[1])(m.zeros(3)),
    "fill_": lambda m, x: (lambda y: (y.fill_(2.0), (y * x).sum())[1])(x * 3),
    "zero_": lambda m, x: (lambda y: (y.zero_(), (y + x).sum())[1])(x * 3),
    "clamp_": lambda m, x: (lambda y: (y.clamp_(0.5, 1.5), y.sum())[1])(x * 1),
    "div_tensor": lambda m, x: (lambda y: (y.div_(x + 3), y.sum())[1])(x * x),
    "setitem_mask": lambda m, x: (lambda y: (y.__setitem__(x > 1.5, 0.0), (y * y).sum())[1])(
        x * 3),
    "iadd_tensor": lambda m, x: (lambda y: (y.__iadd__(x * x), y.sum())[1])(x * 1),
}


@pytest.mark.parametrize("name", list(NON_LEAF_CASES))
def test_inplace_on_non_leaf_matches_torch(torch: Any, name: str) -> None:
    vals = [1.0, 2.0, 0.25]
    x, tx = lucid.tensor(vals, requires_grad=True), torch.tensor(vals, requires_grad=True)
    out, tout = NON_LEAF_CASES[name](lucid, x), NON_LEAF_CASES[name](torch, tx)
    assert out.item() == pytest.approx(tout.item(), rel=1e-6)
    out.backward()
    tout.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def _np_clip_(y: np.ndarray, lo: float, hi: float) -> np.ndarray:
    np.clip(y, lo, hi, out=y)
    return y


def _np_fill_(y: np.ndarray, v: float) -> np.ndarray:
    y.fill(v)
    return y


def _np_set(y: np.ndarray, index: Any, value: Any) -> np.ndarray:
    y[index] = value
    return y


def _np_iadd(y: np.ndarray, index: Any, value: Any) -> np.ndarray:
    y[index] += value
    return y


def _np_imul(y: np.ndarray, index: Any, value: Any) -> np.ndarray:
    y[index] *= value
    return y


# the same cases written with numpy's views and in-place ufuncs (float64), so the values and
# (finite-difference) gradients are checked without torch
NON_LEAF_NUMPY = {
    "add_": lambda x: (x * 2 + 1).sum(),
    "mul_pow_": lambda x: (((x * 2) * 3) ** 2 * x).sum(),
    "sqrt_": lambda x: np.sqrt(x * 1).sum(),
    "setitem_from_self": lambda x: _np_set(x * 2, 1, (x * 2)[0] * 5).sum(),
    "copy_": lambda x: (_np_set(np.zeros(3), slice(None), x * 3) ** 2).sum(),
    "fill_": lambda x: (_np_fill_(x * 3, 2.0) * x).sum(),
    "zero_": lambda x: (_np_fill_(x * 3, 0.0) + x).sum(),
    "clamp_": lambda x: _np_clip_(x * 1, 0.5, 1.5).sum(),
    "div_tensor": lambda x: (x * x / (x + 3)).sum(),
    "setitem_mask": lambda x: (_np_set(x * 3, x > 1.5, 0.0) ** 2).sum(),
    "iadd_tensor": lambda x: (x * 1 + x * x).sum(),
}


def _fd_grad(f: Callable, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        g[i] = (f(xp) - f(xm)) / (2 * h)
    return g


@pytest.mark.parametrize("name", list(NON_LEAF_CASES))
def test_inplace_on_non_leaf_values_and_gradients(name: str) -> None:
    vals = np.array([1.0, 2.0, 0.25])
    x = lucid.tensor(vals, requires_grad=True)
    out = NON_LEAF_CASES[name](lucid, x)
    f = NON_LEAF_NUMPY[name]
    assert out.item() == pytest.approx(f(vals.copy()), rel=1e-12)
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), _fd_grad(f, vals), rtol=1e-6, atol=1e-7)


def test_setitem_of_a_grad_value_into_plain_tensor(torch: Any) -> None:
    def run(m: Any) -> tuple:
        buf = m.zeros(3)
        v = m.tensor(2.0, requires_grad=True)
        buf[1] = v
        (buf * 3).sum().backward()
        return buf.requires_grad, v.grad.item(), buf.is_leaf

    assert run(lucid) == run(torch)


# ---- in-place ops on views ----------------------------------------------------------------------


def _grid(m: Any) -> tuple[Any, Any]:
    x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    w = m.tensor([[0.5, -1.0, 2.0], [1.5, 3.0, -0.5]])
    return x, w


def _aug_item(y: Any) -> Any:
    y[0] += 1  # __getitem__, __iadd__ on the view, __setitem__
    return y


VIEW_CASES = {
    "getitem_iadd": lambda m, x, w: (_aug_item(x * 2) * w).sum(),
    "column_mul_": lambda m, x, w: (lambda y: (y[:, 0].mul_(3), (y * w).sum())[1])(x * 2),
    "transpose_add_": lambda m, x, w: (lambda y: (y.T.add_(w.T), (y * y).sum())[1])(x * 1),
    "view_exp_then_both": lambda m, x, w: (lambda y: (lambda v: (
        v.exp_(), (y * w).sum() + v.sum())[1])(y[1]))(x * 1),
    "strided_zero_": lambda m, x, w: (lambda y: (y.view(6)[::2].zero_(), (y * w).sum())[1])(
        x * 2),
    "copy_into_buffer_view": lambda m, x, w: (lambda b: (b[1:].copy_(x[0] * 2), (b * b).sum())[
        1])(m.zeros(4)),
    "nested_views": lambda m, x, w: (lambda y: (y[1:][:, 1:].mul_(x[1:, 1:]), (y * w).sum())[
        1])(x * 1),
    "reshape_view": lambda m, x, w: (lambda y: (y.reshape(3, 2)[0].add_(10), (y * w).sum())[
        1])(x * 1),
    "reshape_copy_leaves_base": lambda m, x, w: (lambda y: (y.T.reshape(6).add_(100),
                                                           (y * w).sum())[1])(x * 1),
    "t_": lambda m, x, w: (lambda y: (y.t_(), (y * w.T).sum())[1])(x * 1),
    "base_changed_view_renewed": lambda m, x, w: (lambda y: (lambda v: (
        y.mul_(w), (v * v).sum())[1])(y[0]))(x * 1),
    "sibling_view_renewed": lambda m, x, w: (lambda y: (lambda v, c: (
        c.copy_(w[:, 0].tanh()), (v * v).sum() + y.sum())[1])(y[1:], y[:, 1]))(x * 1),
    "view_of_view_renewed": lambda m, x, w: (lambda y: (lambda v: (
        v[:, 1].copy_(y[0].tanh()[:2]), v.sum())[1])(y[0:2, 1:]))(x * 1),
    "unsqueeze_": lambda m, x, w: (lambda y: (y.unsqueeze_(0), (y * w).sum())[1])(x * 1),
}


@pytest.mark.parametrize("name", list(VIEW_CASES))
def test_inplace_on_views_matches_torch(torch: Any, name: str) -> None:
    (x, w), (tx, tw) = _grid(lucid), _grid(torch)
    out, tout = VIEW_CASES[name](lucid, x, w), VIEW_CASES[name](torch, tx, tw)
    assert out.item() == pytest.approx(tout.item(), rel=1e-5)
    out.backward()
    tout.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5)


def _view_exp(y: np.ndarray, w: np.ndarray) -> float:
    v = y[1]
    np.exp(v, out=v)
    return float((y * w).sum() + v.sum())


def _sibling(y: np.ndarray, w: np.ndarray) -> float:
    v, c = y[1:], y[:, 1]
    c[...] = np.tanh(w[:, 0])
    return float((v * v).sum() + y.sum())


def _view_of_view(y: np.ndarray) -> float:
    v = y[0:2, 1:]
    v[:, 1] = np.tanh(y[0])[:2]
    return float(v.sum())


def _base_changed(y: np.ndarray, w: np.ndarray) -> float:
    v = y[0]
    y *= w
    return float((v * v).sum())


def _strided_zero(y: np.ndarray, w: np.ndarray) -> float:
    y.reshape(6)[::2] = 0.0  # reshape of a contiguous array is a view
    return float((y * w).sum())


def _reshape_copy(y: np.ndarray, w: np.ndarray) -> float:
    t = y.T.reshape(6)  # a copy: y is not touched
    t += 100
    return float((y * w).sum())


VIEW_NUMPY = {
    "getitem_iadd": lambda x, w: (_np_iadd(x * 2, 0, 1) * w).sum(),
    "column_mul_": lambda x, w: (_np_imul(x * 2, (slice(None), 0), 3) * w).sum(),
    "transpose_add_": lambda x, w: ((x * 1 + w) ** 2).sum(),
    "view_exp_then_both": lambda x, w: _view_exp(x * 1, w),
    "strided_zero_": lambda x, w: _strided_zero(x * 2, w),
    "copy_into_buffer_view": lambda x, w: (_np_set(np.zeros(4), slice(1, None), x[0] * 2)
                                           ** 2).sum(),
    "nested_views": lambda x, w: (_np_imul(x * 1, (slice(1, None), slice(1, None)),
                                           x[1:, 1:]) * w).sum(),
    "reshape_view": lambda x, w: (_np_iadd((x * 1).reshape(3, 2), 0, 10).reshape(2, 3)
                                  * w).sum(),
    "reshape_copy_leaves_base": lambda x, w: _reshape_copy(x * 1, w),
    "t_": lambda x, w: ((x * 1).T * w.T).sum(),
    "base_changed_view_renewed": lambda x, w: _base_changed(x * 1, w),
    "sibling_view_renewed": lambda x, w: _sibling(x * 1, w),
    "view_of_view_renewed": lambda x, w: _view_of_view(x * 1),
    "unsqueeze_": lambda x, w: ((x * 1)[None] * w).sum(),
}


@pytest.mark.parametrize("name", list(VIEW_CASES))
def test_inplace_on_views_values_and_gradients(name: str) -> None:
    x, w = _grid(lucid)
    xv = x.detach().numpy().astype(np.float64)
    wv = w.numpy().astype(np.float64)
    out = VIEW_CASES[name](lucid, x, w)
    f = VIEW_NUMPY[name]
    assert out.item() == pytest.approx(f(xv.copy(), wv), rel=1e-6)
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), _fd_grad(lambda a: f(a, wv), xv), rtol=1e-5,
                               atol=1e-5)


def test_inplace_on_view_updates_base_values() -> None:
    x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    col = y[:, 1]
    col.mul_(10)
    assert y.tolist() == [[1.0, 20.0], [3.0, 40.0]] and col.tolist() == [20.0, 40.0]
    assert y.grad_fn is not None and col.grad_fn is not None
    assert y._version == col._version == 1


def test_view_inplace_ops_on_leaf_raise() -> None:
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.unsqueeze_(0)


def test_inplace_on_expanded_view_raises() -> None:
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        lucid.ones(1, 3).expand(2, 3).add_(1)
