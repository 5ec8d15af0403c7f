"""Ops that return new data return it row-major, as torch's do, so ``.view`` works on their
results wherever it works in torch: softmax / log_softmax / softmin over any dim (and of a
transposed input), cumsum / cumprod of a transposed input, topk, median, flip, advanced
indexing, cat / stack / constant padding / masked_fill of transposed inputs, pixel_unshuffle,
and the gradients of softmax and cumsum. flip and roll return copies: writing to the input never
changes them (torch's flip and roll copy too)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from devices import DEVICES

import lucid
import lucid.nn.functional as F

X = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)


def _funcs(m: Any) -> Any:
    return F if m is lucid else m.nn.functional


OPS: dict[str, Callable] = {
    "softmax": lambda m, t, d: _funcs(m).softmax(t, d),
    "log_softmax": lambda m, t, d: _funcs(m).log_softmax(t, d),
    "softmin": lambda m, t, d: _funcs(m).softmin(t, d),
    "method_softmax": lambda m, t, d: t.softmax(d),
    "softmax_of_transposed": lambda m, t, d: _funcs(m).softmax(t.transpose(0, 2), d),
    "cumsum": lambda m, t, d: t.cumsum(d),
    "cumsum_of_transposed": lambda m, t, d: t.transpose(0, 2).cumsum(d),
    "cumprod_of_transposed": lambda m, t, d: t.transpose(0, 2).cumprod(d),
    "topk_values": lambda m, t, d: t.topk(2, d)[0],
    "topk_indices": lambda m, t, d: t.topk(2, d)[1],
    "median_values": lambda m, t, d: t.median(d)[0],
    "median_indices": lambda m, t, d: t.median(d, keepdim=True)[1],
    "flip": lambda m, t, d: t.flip(d),
}


def _t(x: np.ndarray, device: str, **kw: Any) -> lucid.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lucid.tensor(x, device=device, **kw)


def _row_major(shape: tuple) -> tuple:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("op", list(OPS))
def test_view_of_the_result(device: str, op: str, dim: int) -> None:
    y = OPS[op](lucid, _t(X, device), dim)
    flat = y.view(-1)
    np.testing.assert_array_equal(flat.numpy(), y.numpy().reshape(-1))
    if device != "gpu":
        assert y.stride() == _row_major(tuple(y.shape))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("op", ["softmax", "log_softmax", "cumsum", "cumsum_of_transposed",
                                "softmax_of_transposed", "flip"])
def test_view_of_the_gradient(device: str, op: str, dim: int) -> None:
    x = _t(X, device, requires_grad=True)
    y = OPS[op](lucid, x, dim)
    y.backward(_t(np.ones(tuple(y.shape), np.float32), device))
    assert tuple(x.grad.view(-1).shape) == (X.size,)


@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("op", list(OPS))
def test_values_and_strides_against_torch(torch: Any, op: str, dim: int) -> None:
    a = OPS[op](lucid, lucid.tensor(X), dim)
    b = OPS[op](torch, torch.tensor(X), dim)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    assert b.is_contiguous() and a.stride() == b.stride()


def _pad(m: Any) -> Callable:
    return _funcs(m).pad


OF_TRANSPOSED: dict[str, Callable] = {
    "x[:, i]": lambda m, t: t[:, m.tensor([2, 0, 1]) if m is not lucid else
                              lucid.tensor([2, 0, 1], device=t.device)],
    "x[:, :, i]": lambda m, t: t[:, :, [0, 3]],
    "x[i, :, j]": lambda m, t: t[[0, 1], :, [1, 2]],
    "x[:, i2d]": lambda m, t: t[:, [[0, 1], [1, 2]]],
    "cat_dim0": lambda m, t: m.cat([t.transpose(0, 2), t.transpose(0, 2)], 0),
    "cat_dim1": lambda m, t: m.cat([t.transpose(0, 2), t.transpose(0, 2)], 1),
    "stack": lambda m, t: m.stack([t.transpose(0, 2), t.transpose(0, 2)]),
    "pad": lambda m, t: _pad(m)(t.transpose(0, 2), (1, 1)),
    "roll": lambda m, t: t.transpose(0, 2).roll(1, 0),
    "block_diag": lambda m, t: m.block_diag(t[0].t(), t[1, :2, :2]),
    "pixel_unshuffle": lambda m, t: _funcs(m).pixel_unshuffle(t[:1, :3, :3], 3),
    "masked_fill": lambda m, t: t.transpose(0, 2).masked_fill(t.transpose(0, 2) > 0, 2.0),
    "rot90": lambda m, t: t.transpose(0, 2).rot90(1, (0, 2)),
    "rot90_k3": lambda m, t: t.transpose(0, 2).rot90(3, (2, 0)),
    "rpow": lambda m, t: 2.0 ** t.transpose(0, 2).round(),  # exact powers: same bits
    "repeat": lambda m, t: t.transpose(0, 2).repeat(1, 2, 1),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", list(OF_TRANSPOSED))
def test_new_data_is_row_major(device: str, op: str) -> None:
    y = OF_TRANSPOSED[op](lucid, _t(X, device))
    np.testing.assert_array_equal(y.view(-1).numpy(), y.numpy().reshape(-1))
    if device != "gpu":
        assert y.stride() == _row_major(tuple(y.shape))


@pytest.mark.parametrize("op", list(OF_TRANSPOSED))
def test_new_data_against_torch(torch: Any, op: str) -> None:
    a = OF_TRANSPOSED[op](lucid, lucid.tensor(X))
    b = OF_TRANSPOSED[op](torch, torch.tensor(X))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert b.is_contiguous() and a.stride() == b.stride()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("make", [
    lambda x: x.flip(0), lambda x: x.fliplr(), lambda x: x.flipud(), lambda x: x.rot90(1, (0, 1)),
    lambda x: x.roll(0, 0), lambda x: x.roll(3, 0), lambda x: x.roll((3, 2), (0, 1)),
], ids=["flip", "fliplr", "flipud", "rot90", "roll_0", "roll_full_turn", "roll_two_full_turns"])
def test_copies_do_not_alias_the_input(device: str, make: Callable) -> None:
    x = _t(np.arange(6.0).reshape(3, 2), device)
    y = make(x)
    before = y.numpy().copy()
    x.add_(100.0)
    np.testing.assert_array_equal(y.numpy(), before)
    y.mul_(-1.0)
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0).reshape(3, 2) + 100.0)


def test_softmax_values_unchanged_by_the_copy() -> None:
    x = lucid.tensor(X)
    want = np.exp(X) / np.exp(X).sum(0, keepdims=True)
    np.testing.assert_allclose(F.softmax(x, 0).numpy(), want, rtol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("make", [
    lambda x: x.topk(2, 1), lambda x: x.topk(2, 0, largest=False), lambda x: x.median(1),
    lambda x: x.median(0, keepdim=True),
], ids=["topk", "topk_smallest", "median", "median_keepdim"])
def test_row_major_indices_are_the_ones_backward_reads(device: str, make: Callable) -> None:
    """The indices returned are those the values were gathered through: editing them in
    place is caught at backward, as in torch."""
    x = _t(X[0], device, requires_grad=True)
    values, indices = make(x)
    assert indices.stride() == _row_major(tuple(indices.shape)) or device == "gpu"
    indices.fill_(0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        values.sum().backward()


def test_topk_and_median_values_unchanged() -> None:
    x = lucid.tensor([[3.0, 1.0, 2.0, 5.0], [0.0, -1.0, 4.0, 4.0]])
    v, i = x.topk(2, 1)
    np.testing.assert_array_equal(v.numpy(), [[5.0, 3.0], [4.0, 4.0]])
    np.testing.assert_array_equal(x.gather(1, i).numpy(), v.numpy())
    m, j = x.median(1)
    np.testing.assert_array_equal(m.numpy(), [2.0, 0.0])
    np.testing.assert_array_equal(j.numpy(), [2, 0])


REDUCTIONS: dict[str, Callable] = {
    "sum": lambda t: t.sum(0), "sum_keepdim": lambda t: t.sum(0, keepdim=True),
    "mean": lambda t: t.mean(0), "amax": lambda t: t.amax(0), "amin": lambda t: t.amin(1),
    "logsumexp": lambda t: t.logsumexp(0), "prod": lambda t: t.prod(0),
    "var": lambda t: t.var(0), "std": lambda t: t.std(0), "norm": lambda t: t.norm(dim=0),
    "nansum": lambda t: t.nansum(0), "nanmean": lambda t: t.nanmean(0),
    "max_values": lambda t: t.max(0)[0], "any": lambda t: (t > 0).any(0),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_reductions_of_a_transposed_input_are_row_major(device: str, op: str) -> None:
    x = X.astype(np.float64)
    y = REDUCTIONS[op](_t(x, device).transpose(0, 2))
    np.testing.assert_array_equal(y.view(-1).numpy(), y.numpy().reshape(-1))
    ref = {"sum": x.sum(2).T, "mean": x.mean(2).T, "amax": x.max(2).T, "amin": x.min(1).T,
           "prod": x.prod(2).T, "max_values": x.max(2).T, "nansum": x.sum(2).T,
           "nanmean": x.mean(2).T}.get(op)
    if ref is not None:
        np.testing.assert_allclose(y.numpy(), ref, rtol=1e-6)
