"""NaN in ordering ops ranks as PyTorch ranks it: larger than every number (first for
``largest=True`` / ``descending=True``, last ascending), and max/argmax propagate it."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import lucid

NAN = float("nan")
X = [1.0, NAN, 3.0, NAN, 2.0]
DEVICES = ("cpu", "numpy", "gpu")


def _t(values: list, device: str, dtype: object = None) -> lucid.Tensor:
    if device == "gpu":
        pytest.importorskip("mlx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lucid.tensor(values, dtype=dtype, device=device)


def _eq(t: lucid.Tensor, want: list) -> None:
    np.testing.assert_array_equal(t.numpy(), np.array(want, dtype=t.numpy().dtype))


@pytest.mark.parametrize("device", DEVICES)
def test_topk_ranks_nan_largest(device: str) -> None:
    v, i = lucid.topk(_t(X, device), 2)
    _eq(v, [NAN, NAN])
    _eq(i, [1, 3])
    v, i = lucid.topk(_t(X, device), 3, largest=False)
    _eq(v, [1.0, 2.0, 3.0])
    _eq(i, [0, 4, 2])
    v, _ = lucid.topk(_t(X, device), 4, largest=False)
    _eq(v, [1.0, 2.0, 3.0, NAN])


@pytest.mark.parametrize("device", DEVICES)
def test_sort_and_argsort_put_nan_last_ascending_first_descending(device: str) -> None:
    x = _t(X, device)
    v, i = lucid.sort(x)
    _eq(v, [1.0, 2.0, 3.0, NAN, NAN])
    _eq(i, [0, 4, 2, 1, 3])
    v, i = lucid.sort(x, descending=True)
    _eq(v, [NAN, NAN, 3.0, 2.0, 1.0])
    _eq(i, [1, 3, 2, 4, 0])
    _eq(lucid.argsort(x, descending=True), [1, 3, 2, 4, 0])
    m = _t([[3.0, NAN], [NAN, -1.0]], device)
    _eq(lucid.sort(m, 0, descending=True).values, [[NAN, NAN], [3.0, -1.0]])
    _eq(lucid.topk(m, 1, dim=1).indices, [[1], [0]])


@pytest.mark.parametrize("device", DEVICES)
def test_descending_sort_of_unsigned_and_bool_and_ties(device: str) -> None:
    v, i = lucid.sort(_t([0, 1, 2, 1, 0], device, lucid.uint8), descending=True)
    _eq(v, [2, 1, 1, 0, 0])
    _eq(i, [2, 1, 3, 0, 4])  # ties keep their order
    v, i = lucid.sort(_t([True, False, True], device), descending=True)
    _eq(v, [True, True, False])
    _eq(i, [0, 2, 1])
    _eq(lucid.topk(_t([5, 200, 7], device, lucid.uint8), 2).values, [200, 7])
    v, _ = lucid.sort(_t([-np.inf, NAN, np.inf], device), descending=True)
    _eq(v, [NAN, np.inf, -np.inf])


@pytest.mark.parametrize("device", DEVICES)
def test_max_min_and_argmax_propagate_nan(device: str) -> None:
    x = _t(X, device)
    assert np.isnan(x.max().item()) and np.isnan(x.min().item())
    assert x.argmax().item() == 1 and x.argmin().item() == 1
    v, i = lucid.max(x.view(1, 5), 1)
    assert np.isnan(v.item()) and i.item() == 1
    v, i = lucid.min(x.view(1, 5), 1)
    assert np.isnan(v.item()) and i.item() == 1
    assert np.isnan(lucid.amax(x).item()) and np.isnan(lucid.amin(x).item())


@pytest.mark.parity
def test_nan_ordering_matches_torch(torch: object) -> None:
    t = torch.tensor(X)  # type: ignore[attr-defined]
    x = lucid.tensor(X)
    for ours, theirs in (
            (lucid.topk(x, 2), torch.topk(t, 2)),  # type: ignore[attr-defined]
            (lucid.topk(x, 3, largest=False), torch.topk(t, 3, largest=False)),  # type: ignore
            (lucid.sort(x), torch.sort(t)),  # type: ignore[attr-defined]
            (lucid.sort(x, descending=True), torch.sort(t, descending=True)),  # type: ignore
            (lucid.max(x.view(1, 5), 1), torch.max(t.view(1, 5), 1))):  # type: ignore
        np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy())
        np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    assert x.argmax().item() == t.argmax().item()


# ---- activations at NaN: the value passes through, and so does the gradient ------------------

_V = [NAN, -1.0, 0.0, 2.0, np.inf, -np.inf]
# (value, gradient of sum) at _V, as torch 2.13 gives them
ACTIVATIONS_AT_NAN = {
    "relu": (lambda F, x: F.relu(x), [NAN, 0, 0, 2, np.inf, 0], [1, 0, 0, 1, 1, 0]),
    "relu6": (lambda F, x: F.relu6(x), [NAN, 0, 0, 2, 6, 0], [1, 0, 0, 1, 0, 0]),
    "hardtanh": (lambda F, x: F.hardtanh(x), [NAN, -1, 0, 1, 1, -1], [1, 0, 1, 0, 0, 0]),
    "threshold": (lambda F, x: F.threshold(x, 0.0, -5.0), [NAN, -5, -5, 2, np.inf, -5],
                  [1, 0, 0, 1, 1, 0]),
    "leaky_relu": (lambda F, x: F.leaky_relu(x, 0.1), [NAN, -0.1, 0, 2, np.inf, -np.inf],
                   [0.1, 0.1, 0.1, 1, 1, 0.1]),
    "elu": (lambda F, x: F.elu(x), [NAN, np.expm1(-1.0), 0, 2, np.inf, -1],
            [1, np.exp(-1.0), 1, 1, 1, 0]),
    "hardshrink": (lambda F, x: F.hardshrink(x), [NAN, -1, 0, 2, np.inf, -np.inf],
                   [1, 1, 0, 1, 1, 1]),
    "softshrink": (lambda F, x: F.softshrink(x), [NAN, -0.5, 0, 1.5, np.inf, -np.inf],
                   [1, 1, 0, 1, 1, 1]),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(ACTIVATIONS_AT_NAN))
def test_activation_value_and_gradient_at_nan(device: str, name: str) -> None:
    fn, value, grad = ACTIVATIONS_AT_NAN[name]
    x = _t(_V, device).requires_grad_()
    y = fn(lucid.nn.functional, x)
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), value, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("name", list(ACTIVATIONS_AT_NAN))
def test_activation_at_nan_matches_torch(name: str, torch: object) -> None:
    fn, value, grad = ACTIVATIONS_AT_NAN[name]
    x = torch.tensor(_V, requires_grad=True)  # type: ignore[attr-defined]
    y = fn(torch.nn.functional, x)  # type: ignore[attr-defined]
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), value, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-6)


def _max_min_at_nan(L: Any, make: Any) -> list:
    a, b = make([NAN, 1.0, 2.0]), make([0.0, NAN, 1.0])
    (L.maximum(a, b) + 2 * L.minimum(a, b)).sum().backward()
    return [a.grad.tolist(), b.grad.tolist()]


@pytest.mark.parametrize("device", DEVICES)
def test_maximum_minimum_gradient_at_nan_reaches_both_sides(device: str) -> None:
    got = _max_min_at_nan(lucid, lambda v: _t(v, device).requires_grad_())
    assert got == [[3.0, 3.0, 1.0], [3.0, 3.0, 2.0]]


@pytest.mark.parity
def test_maximum_minimum_at_nan_matches_torch(torch: Any) -> None:
    theirs = _max_min_at_nan(torch, lambda v: torch.tensor(v, requires_grad=True))
    assert theirs == [[3.0, 3.0, 1.0], [3.0, 3.0, 2.0]]


@pytest.mark.parametrize("dev", DEVICES)
def test_full_max_and_min_share_the_gradient_among_nans(dev: str) -> None:
    """x.max() / x.min() of a tensor holding NaN: torch's gradient goes to the NaNs, shared
    evenly; amax() over everything gives NaN everywhere; without NaN, ties share as before."""
    nan = float("nan")
    for fn in (lambda t: t.max(), lambda t: t.min()):
        x = _t([[1.0, nan, 3.0], [nan, 0.0, 2.0]], dev).requires_grad_()
        fn(x).backward()
        assert x.grad.tolist() == [[0.0, 0.5, 0.0], [0.5, 0.0, 0.0]]
    x = _t([[1.0, nan], [0.0, 2.0]], dev).requires_grad_()
    x.amax().backward()
    assert np.isnan(x.grad.numpy()).all()
    y = _t([[1.0, 5.0], [5.0, 0.0]], dev).requires_grad_()
    y.max().backward()
    assert y.grad.tolist() == [[0.0, 0.5], [0.5, 0.0]]


def test_searchsorted_of_an_unsorted_sequence_follows_torchs_search(torch: Any) -> None:
    """Boundaries out of order give what torch's binary search gives (numpy's may differ)."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        s = rng.standard_normal(int(rng.integers(1, 9)))
        v = rng.standard_normal(3)
        right = bool(rng.integers(2))
        got = lucid.searchsorted(lucid.tensor(s), lucid.tensor(v), right=right).numpy()
        want = torch.searchsorted(torch.tensor(s), torch.tensor(v), right=right).numpy()
        np.testing.assert_array_equal(got, want)
