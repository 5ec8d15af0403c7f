"""Activations: numpy references, float64 gradchecks for every option, torch parity (values and
gradients), in-place variants, softmax family stability and dims."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import erf

import lucid
from lucid.autograd import gradcheck
from lucid.ops import activation as A


def _t(a, backend, rg=False):
    return lucid.tensor(np.asarray(a), device=backend, requires_grad=rg)


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _sp(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)


SELU_A, SELU_S = 1.6732632423543772, 1.0507009873554805

# name, kwargs, numpy reference
CASES = [
    ("relu", {}, lambda x: np.maximum(x, 0)),
    ("relu6", {}, lambda x: np.clip(x, 0, 6)),
    ("leaky_relu", {"negative_slope": 0.2}, lambda x: np.where(x > 0, x, 0.2 * x)),
    ("elu", {"alpha": 0.7}, lambda x: np.where(x > 0, x, 0.7 * np.expm1(np.minimum(x, 0)))),
    ("selu", {}, lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(np.minimum(x, 0)))),
    ("celu", {"alpha": 2.0}, lambda x: np.maximum(x, 0) + np.minimum(0, 2 * np.expm1(x / 2))),
    ("gelu", {}, lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2)))),
    ("gelu", {"approximate": "tanh"},
     lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))),
    ("silu", {}, lambda x: x * _sig(x)),
    ("mish", {}, lambda x: x * np.tanh(_sp(x))),
    ("softplus", {"beta": 2.0, "threshold": 3.0},
     lambda x: np.where(2 * x > 3, x, _sp(2 * x) / 2)),
    ("hardtanh", {"min_val": -0.5, "max_val": 1.5}, lambda x: np.clip(x, -0.5, 1.5)),
    ("hardsigmoid", {}, lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    ("hardswish", {}, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    ("sigmoid", {}, _sig),
    ("tanh", {}, np.tanh),
    ("logsigmoid", {}, lambda x: -_sp(-x)),
    ("softsign", {}, lambda x: x / (1 + np.abs(x))),
    ("tanhshrink", {}, lambda x: x - np.tanh(x)),
    ("threshold", {"threshold": 0.3, "value": -2.0}, lambda x: np.where(x > 0.3, x, -2.0)),
    ("hardshrink", {"lambd": 0.4}, lambda x: np.where(np.abs(x) > 0.4, x, 0)),
    ("softshrink", {"lambd": 0.4},
     lambda x: np.where(x > 0.4, x - 0.4, np.where(x < -0.4, x + 0.4, 0))),
    ("softmax", {"dim": 1}, lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True)),
    ("log_softmax", {"dim": 0}, lambda x: x - np.log(np.exp(x).sum(0, keepdims=True))),
    ("softmin", {"dim": -1}, lambda x: np.exp(-x) / np.exp(-x).sum(-1, keepdims=True)),
]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for n, kw, _ in CASES]

# values away from the kinks (0, +-3, thresholds) so finite differences stay smooth
X = np.array([[-4.1, -2.2, -0.9, -0.35, 0.15], [0.55, 1.2, 2.6, 3.7, -0.05]])


@pytest.mark.parametrize("name,kw,ref", CASES, ids=IDS)
def test_forward_matches_numpy(backend, name, kw, ref):
    for dtype in (np.float64, np.float32):
        x = (X * 1.7).astype(dtype)
        y = getattr(A, name)(_t(x, backend), **kw)
        assert y.dtype.np == dtype and tuple(y.shape) == x.shape
        tol = 1e-12 if dtype == np.float64 else 2e-6
        np.testing.assert_allclose(y.numpy(), ref(x.astype(np.float64)), rtol=tol, atol=tol)


@pytest.mark.parametrize("name,kw,ref", CASES, ids=IDS)
def test_gradcheck(backend, name, kw, ref):
    x = _t(X, backend, True)
    assert gradcheck(lambda x: getattr(A, name)(x, **kw), (x,))


def test_gradcheck_prelu_glu(backend):
    x = _t(X.reshape(2, 5, 1), backend, True)
    w = _t([0.25], backend, True)
    assert gradcheck(lambda x, w: A.prelu(x, w), (x, w))
    x2 = _t(X.reshape(5, 2).T.copy(), backend, True)
    assert gradcheck(lambda x, w: A.prelu(x, w), (x2, _t(np.linspace(0.1, 0.5, 5), backend,
                                                         True)))
    assert gradcheck(lambda x: A.glu(x, 0), (_t(X, backend, True),))


@pytest.mark.parametrize("name,kw", [("relu", {}), ("leaky_relu", {"negative_slope": 0.1}),
                                     ("elu", {}), ("hardtanh", {}), ("silu", {}),
                                     ("hardswish", {}), ("relu6", {}), ("selu", {})])
def test_inplace(backend, name, kw):
    x = _t(X.copy(), backend)
    out = getattr(A, name)(x, inplace=True, **kw)
    assert out is x and x._version == 1
    np.testing.assert_allclose(x.numpy(), getattr(A, name)(_t(X, backend), **kw).numpy())
    leaf = _t(X, backend, True)
    h = leaf * 1.0
    getattr(A, name)(h, inplace=True, **kw).sum().backward()
    ref = _t(X, backend, True)
    getattr(A, name)(ref, **kw).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), ref.grad.numpy())


def test_softmax_is_stable_and_takes_dtype(backend):
    x = _t([[1e4, 1e4 - 1.0, -1e4], [0.0, 0.0, 0.0]], backend)
    y = A.softmax(x, -1)
    e = np.exp(-1.0)
    np.testing.assert_allclose(y.numpy()[0], [1 / (1 + e), e / (1 + e), 0], rtol=1e-6)
    ls = A.log_softmax(x, 1).numpy()
    assert np.isfinite(ls[:, :2]).all() and ls[0, 2] < -1e4 + 1
    y64 = A.softmax(_t(np.ones((2, 3), np.float32), backend), 1, dtype=lucid.float64)
    assert y64.dtype == lucid.float64
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        assert A.softmax(_t(np.ones((2, 3)), backend)).shape == (2, 3)
    assert A.softmax(_t(2.0, backend), 0).item() == 1.0


def test_softmax_over_strided_dims(backend):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    for dim in (0, 1, 2):
        y = A.softmax(_t(x, backend).transpose(0, 2), dim).numpy()
        xt = x.transpose(2, 1, 0)
        e = np.exp(xt - xt.max(dim, keepdims=True))
        np.testing.assert_allclose(y, e / e.sum(dim, keepdims=True), rtol=1e-5, atol=1e-7)


def test_errors():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        A.gelu(lucid.ones(2), approximate="fast")
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        A.glu(lucid.ones(3))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel"):
        A.prelu(lucid.ones(2, 3), lucid.ones(2))
    with pytest.raises(IndexError, match="Dimension out of range"):
        A.softmax(lucid.ones(2, 3), 2)


@pytest.mark.parity
@pytest.mark.parametrize("name,kw,ref", CASES + [("prelu", {}, None), ("glu", {}, None)],
                         ids=[*IDS, "prelu", "glu"])
def test_parity_values_and_grads(torch, backend, name, kw, ref):
    F = torch.nn.functional
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((4, 6)) * 3).astype(np.float32)
    x[0, :3] = [0.0, 3.0, -3.0]  # kinks: torch's one-sided choices
    lx, tx = _t(x, backend, True), torch.tensor(x, requires_grad=True)
    extra_l, extra_t = [], []
    if name == "prelu":
        w = np.linspace(0.1, 0.6, 6).astype(np.float32)
        extra_l, extra_t = [_t(w, backend, True)], [torch.tensor(w, requires_grad=True)]
    lo = getattr(A, name)(lx, *extra_l, **kw)
    to = getattr(F, name)(tx, *extra_t, **kw)
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    lo.backward(_t(g, backend))
    to.backward(torch.from_numpy(g))
    for a, b in zip([lx, *extra_l], [tx, *extra_t]):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-6)
