"""Activations beyond the op table (``op_db_nn.py`` holds their references, gradchecks, parity
and errors): in-place variants, softmax family stability, dtype argument, strided dims and
non-finite rows, logsigmoid's row-major result."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.ops import activation as A


def _t(a, backend, rg=False):
    return lucid.tensor(np.asarray(a), device=backend, requires_grad=rg)


# values away from the kinks (0, +-3, thresholds) so finite differences stay smooth
X = np.array([[-4.1, -2.2, -0.9, -0.35, 0.15], [0.55, 1.2, 2.6, 3.7, -0.05]])


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




def test_logsigmoid_of_a_transposed_input_is_row_major(backend):
    """torch's log_sigmoid writes a new row-major result (the other activations keep a
    transposed input's layout), so ``view`` works on it."""
    leaf = _t(X.T.copy(), backend, True)
    y = A.logsigmoid(leaf.t())
    assert y.is_contiguous()
    np.testing.assert_allclose(y.view(-1).detach().numpy(), -np.logaddexp(0, -X).reshape(-1),
                               rtol=1e-12)
    y.sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), 1 / (1 + np.exp(X.T)), rtol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf arithmetic
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_rows_with_nonfinite_max_are_nan(backend, dtype):
    """A row with a +inf or NaN logit, or only -inf ones, is NaN throughout (torch's)."""
    inf = np.inf
    x = np.array([[inf, 1.0, 0.0], [inf, inf, 0.0], [-inf, -inf, -inf], [np.nan, 1.0, 0.0],
                  [0.0, -inf, 1.0]])
    y = A.softmax(_t(x, backend).to(getattr(lucid, dtype)), 1).numpy()
    assert np.isnan(y[:4]).all()
    np.testing.assert_allclose(y[4], [1 / (1 + np.e), 0.0, np.e / (1 + np.e)], rtol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["hardtanh", "relu6", "hardsigmoid", "hardswish", "silu",
                                  "mish", "softplus", "elu", "logsigmoid"])
@pytest.mark.parametrize("half", ["float16", "bfloat16"])
def test_half_inputs_keep_their_dtype(torch, name, half):
    """The clamping activations on float16/bfloat16 stay in that dtype (numpy's clip turns
    bfloat16 into float32) and agree with torch's to the dtype's resolution."""
    x = np.linspace(-5, 5, 23).astype(np.float32)
    a = lucid.tensor(x).to(getattr(lucid, half)).requires_grad_()
    t = torch.tensor(x).to(getattr(torch, half)).requires_grad_()
    y, yt = getattr(A, name)(a), getattr(torch.nn.functional, name)(t)
    y.sum().backward()
    yt.sum().backward()
    assert y.dtype == getattr(lucid, half) and a.grad.dtype == getattr(lucid, half)
    np.testing.assert_allclose(y.detach().float().numpy(), yt.detach().float().numpy(),
                               rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(a.grad.float().numpy(), t.grad.float().numpy(), rtol=2e-2,
                               atol=2e-2)
