"""std's gradient is 0 where the standard deviation is 0 (a constant slice), as torch's
std_backward masks ``grad / (2 * std)`` there, never ``0 * inf = nan``; var, std_mean and
var_mean agree with torch too, on every device, and std's double backward stays finite."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from devices import DEVICES

import lucid

X = np.array([[1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0], [5.0, 5.0, 5.0, 5.0]])
KWARGS = [{}, {"dim": 0}, {"dim": 1}, {"dim": -1, "keepdim": True}, {"dim": 1, "correction": 0}]
FNS = ["std", "var", "std_mean", "var_mean"]


def _t(x: np.ndarray, device: str) -> lucid.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lucid.tensor(x, device=device, requires_grad=True)


def _grad(m: Any, fn: str, x: Any, kw: dict) -> tuple[list, np.ndarray]:
    out = getattr(m, fn)(x, **kw)
    outs = out if isinstance(out, tuple) else (out,)
    total = outs[0].sum()
    for o in outs[1:]:
        total = total + o.sum()
    total.backward()
    return [o.detach().numpy() for o in outs], x.grad.numpy()


def _std_grad_ref(x: np.ndarray, dim: int, correction: int = 1) -> np.ndarray:
    """d/dx sum(std(x, dim)): (x - mean) / (std * (n - correction)), 0 where std is 0."""
    n = x.shape[dim]
    mean = x.mean(dim, keepdims=True)
    std = np.sqrt(((x - mean) ** 2).sum(dim, keepdims=True) / (n - correction))
    with np.errstate(invalid="ignore", divide="ignore"):
        g = (x - mean) / (std * (n - correction))
    return np.where(std == 0, 0.0, g)


@pytest.mark.parametrize("device", DEVICES)
def test_std_gradient_is_zero_on_constant_rows(device: str) -> None:
    x = _t(X, device)
    x.std(1).sum().backward()
    g = x.grad.numpy()
    assert np.isfinite(g).all()
    np.testing.assert_allclose(g, _std_grad_ref(X, 1), atol=1e-7)
    np.testing.assert_array_equal(g[[0, 2]], 0.0)


@pytest.mark.parametrize("device", DEVICES)
def test_std_gradient_of_an_all_constant_tensor(device: str) -> None:
    for kw in KWARGS:
        x = _t(np.full((3, 4), 2.5), device)
        lucid.std(x, **kw).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), 0.0, err_msg=str(kw))
        x = _t(np.full((3, 4), 2.5), device)
        lucid.std_mean(x, **kw)[0].sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), 0.0, err_msg=str(kw))


@pytest.mark.parametrize("device", DEVICES)
def test_std_of_one_element_keeps_nan(device: str) -> None:
    """No degrees of freedom: std is nan, and so is its gradient (torch: the same)."""
    x = _t(np.array([3.0]), device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = x.std()
    y.backward()
    assert np.isnan(y.item()) and np.isnan(x.grad.numpy()).all()


def test_std_double_backward_is_finite_off_the_constant_rows() -> None:
    x = lucid.tensor(X, requires_grad=True)
    (g,) = lucid.autograd.grad(x.std(1).sum(), x, create_graph=True)
    (g ** 2).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    np.testing.assert_array_equal(x.grad.numpy()[[0, 2]], 0.0)


@pytest.mark.parametrize("fn", FNS)
@pytest.mark.parametrize("kw", KWARGS, ids=[str(k) for k in KWARGS])
def test_against_torch(torch: Any, fn: str, kw: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo, lg = _grad(lucid, fn, lucid.tensor(X, requires_grad=True), kw)
        to, tg = _grad(torch, fn, torch.tensor(X, requires_grad=True), kw)
    for a, b in zip(lo, to):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(lg, tg, rtol=1e-12, atol=1e-15)
