"""Losses beyond the op table (``op_db_loss.py`` holds the references, every option's samples,
gradchecks, parity and errors): stability at extreme logits, all-ignored batches, bce's log
clamp, broadcast warnings and legacy reduction arguments, and the softmax / cross-entropy
kernels in both builds."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck
from lucid.kernels import softmax as KS
from lucid.ops import loss as L
from lucid.ops.activation import log_softmax


def _t(a, backend, rg=False):
    return lucid.tensor(np.asarray(a), device=backend, requires_grad=rg)


# ---- cross-entropy and nll ----------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:overflow")  # the numpy reference's x - max at 3e38
def test_cross_entropy_is_stable_at_large_logits(backend):
    x = np.array([[1e4, 0.0, -1e4], [-3e38, 3e38, 0.0]], np.float32)
    got = L.cross_entropy(_t(x, backend), _t([0, 1], backend), reduction="none").numpy()
    np.testing.assert_allclose(got, [0.0, 0.0], atol=1e-6)
    x = lucid.tensor(x, device=backend, requires_grad=True)
    L.cross_entropy(x, _t([2, 0], backend)).backward()
    assert np.isfinite(x.grad.numpy()).all()


def test_cross_entropy_all_ignored_mean_is_nan(backend):
    x = lucid.randn(3, 4, device=backend, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = L.cross_entropy(x, _t([-100, -100, -100], backend))
        out.backward()
    assert np.isnan(out.item())
    assert (x.grad.numpy() == 0).all()


# ---- pointwise losses ---------------------------------------------------------------------------


def test_bce_clamps_log_like_torch(backend):
    got = L.binary_cross_entropy(_t([0.0, 1.0], backend), _t([1.0, 0.0], backend),
                                 reduction="none")
    np.testing.assert_allclose(got.numpy(), [100.0, 100.0])


def test_broadcast_warning_and_legacy_reduction(backend):
    with pytest.warns(UserWarning, match="different to the input size"):
        out = L.mse_loss(lucid.ones(2, 3, device=backend), lucid.zeros(3, device=backend))
    assert out.item() == 1.0
    out = L.mse_loss(lucid.ones(2, 3, device=backend), lucid.zeros(2, 3, device=backend),
                     size_average=False)
    assert out.item() == 6.0


# ---- gradchecks ---------------------------------------------------------------------------------


# ---- errors -------------------------------------------------------------------------------------


# ---- torch parity -------------------------------------------------------------------------------


# ---- softmax / cross-entropy kernels: both builds -----------------------------------------------


@pytest.fixture(params=["serial", "parallel"])
def build(request, monkeypatch):
    par = request.param == "parallel"
    monkeypatch.setattr(KS, "use_parallel", lambda n, kind="reduce": par)
    return request.param


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 1), (5, 17), (2, 5000)])
def test_kernels_both_builds(build, dtype, shape):
    rng = np.random.default_rng(10)
    x = (rng.standard_normal(shape) * 20).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    ref = lucid.backend.get_backend("numpy")
    tol = dict(rtol=2e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-14)
    for log in (False, True):
        for axis in (1, 0):
            y = KS.softmax(x, axis, log)
            np.testing.assert_allclose(y, ref.softmax(x, axis, log), **tol)
            np.testing.assert_allclose(KS.softmax_backward(y, g, axis, log),
                                       ref.softmax_backward(y, g, axis, log), **tol)
    t = rng.integers(0, shape[1], shape[0])
    t[0] = -100
    w = (rng.random(shape[1]) + 0.5).astype(dtype)
    grow = rng.random(shape[0]).astype(dtype)
    for weight in (None, w):
        for ls in (0.0, 0.2):
            got = KS.cross_entropy(x, t, weight, -100, ls)
            exp = ref.cross_entropy(x, t, weight, -100, ls)
            for a, e in zip(got, exp):
                np.testing.assert_allclose(a, e, **tol)
            np.testing.assert_allclose(
                KS.cross_entropy_backward(x, t, got[1], grow, weight, -100, ls),
                ref.cross_entropy_backward(x, t, exp[1], weight, grow, -100, ls), **tol)


def test_fast_exp_accuracy_and_edges():
    import numba

    from lucid.kernels._vmath import fast_exp

    jexp = numba.njit(lambda v: fast_exp(v))
    x = np.linspace(-80, 80, 4001, dtype=np.float32)
    vals = np.array([jexp(v) for v in x], np.float32)
    np.testing.assert_allclose(vals, np.exp(x.astype(np.float64)), rtol=3e-7)
    edges = [jexp(np.float32(v)) for v in (-np.inf, -1000, -87.5, 100, np.inf)]
    assert edges == [0, 0, 0, np.inf, np.inf] and np.isnan(jexp(np.float32(np.nan)))
    assert jexp(1.0) == np.exp(1.0)  # float64 keeps np.exp
    row = np.array([[0.0, np.nan, 1.0]], np.float32)
    assert np.isnan(KS.softmax(row, 1)).all()  # a NaN makes its row NaN, as in torch


def test_log_softmax_extreme_rows(backend):
    x = np.array([[0.0, -np.inf, 5.0], [1e30, 1e30, -1e30]], np.float32)
    y = log_softmax(_t(x, backend), 1).numpy()
    ls = np.log1p(np.exp(-5.0))
    np.testing.assert_allclose(y[0], [-5.0 - ls, -np.inf, -ls], rtol=1e-6)
    np.testing.assert_allclose(y[1, :2], [-np.log(2)] * 2, rtol=1e-6)


def test_gradcheck_pos_weight(backend):
    """lucid differentiates bce-with-logits through ``pos_weight`` (torch does not, so the op
    table's entry keeps it constant)."""
    rng = np.random.default_rng(8)
    x = _t(rng.standard_normal((2, 3)) * 3, backend, True)
    y = _t(rng.random((2, 3)), backend)
    pw = _t(rng.random(3) * 2, backend, True)
    assert gradcheck(lambda x, pw: L.binary_cross_entropy_with_logits(x, y, pos_weight=pw),
                     (x, pw))
