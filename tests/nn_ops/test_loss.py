"""Losses and the softmax / cross-entropy kernels: numpy references, float64 gradchecks for every
option, torch parity (values and gradients), errors, and both kernel builds."""

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


def np_log_softmax(x, axis=1):
    z = x - x.max(axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis, keepdims=True))


def np_cross_entropy(x, t, w=None, ignore=-100, ls=0.0, reduction="mean"):
    """Reference on (N, C) logits with class indices."""
    n, c = x.shape
    w = np.ones(c) if w is None else w
    lp = np_log_softmax(x)
    keep = t != ignore
    tc = np.where(keep, t, 0)
    wt = w[tc] * keep
    nll = -lp[np.arange(n), tc] * wt
    smooth = -(lp * w).sum(1) * keep
    loss = (1 - ls) * nll + ls / c * smooth
    if reduction == "none":
        return loss
    return loss.sum() / (wt.sum() if reduction == "mean" else 1)


# ---- cross-entropy and nll ----------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ls", [0.0, 0.25])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_forward(backend, reduction, ls, weighted):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, 5)) * 4
    t = rng.integers(0, 5, 7)
    t[3] = -100
    w = rng.random(5) + 0.1 if weighted else None
    got = L.cross_entropy(_t(x, backend), _t(t, backend), None if w is None else _t(w, backend),
                          reduction=reduction, label_smoothing=ls)
    np.testing.assert_allclose(got.numpy(), np_cross_entropy(x, t, w, -100, ls, reduction),
                               rtol=1e-10, atol=1e-12)


def test_cross_entropy_spatial_and_unbatched(backend):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 3, 2))
    t = rng.integers(0, 4, (2, 3, 2))
    got = L.cross_entropy(_t(x, backend), _t(t, backend), reduction="none")
    rows = x.transpose(0, 2, 3, 1).reshape(-1, 4)
    np.testing.assert_allclose(got.numpy(), np_cross_entropy(rows, t.reshape(-1),
                                                             reduction="none").reshape(t.shape))
    one = L.cross_entropy(_t(x[0, :, 0, 0], backend), _t(np.array(2), backend))
    np.testing.assert_allclose(one.item(), -np_log_softmax(x[0, :, 0, 0][None])[0, 2])


def test_cross_entropy_probability_targets(backend):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3))
    p = rng.random((4, 3))
    p /= p.sum(1, keepdims=True)
    w = rng.random(3)
    got = L.cross_entropy(_t(x, backend), _t(p, backend), _t(w, backend), label_smoothing=0.1)
    q = p * 0.9 + 0.1 / 3
    np.testing.assert_allclose(got.item(), -(np_log_softmax(x) * q * w).sum(1).mean())


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


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_forward(backend, reduction):
    rng = np.random.default_rng(3)
    lp = np_log_softmax(rng.standard_normal((6, 4)))
    t = np.array([0, 3, 1, -100, 2, 3])
    w = rng.random(4)
    got = L.nll_loss(_t(lp, backend), _t(t, backend), _t(w, backend), reduction=reduction)
    keep = t != -100
    per = -lp[np.arange(6), np.where(keep, t, 0)] * w[np.where(keep, t, 0)] * keep
    exp = {"none": per, "sum": per.sum(), "mean": per.sum() / (w[t[keep]]).sum()}[reduction]
    np.testing.assert_allclose(got.numpy(), exp)


# ---- pointwise losses ---------------------------------------------------------------------------


def test_pointwise_losses_forward(backend):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((3, 4)) * 2, rng.standard_normal((3, 4))
    d = a - b
    ad = np.abs(d)
    ta, tb = _t(a, backend), _t(b, backend)
    np.testing.assert_allclose(L.mse_loss(ta, tb).item(), (d * d).mean())
    np.testing.assert_allclose(L.l1_loss(ta, tb, reduction="sum").item(), ad.sum())
    sl1 = np.where(ad < 0.5, 0.5 * d * d / 0.5, ad - 0.25)
    np.testing.assert_allclose(L.smooth_l1_loss(ta, tb, beta=0.5, reduction="none").numpy(), sl1)
    hub = np.where(ad < 2.0, 0.5 * d * d, 2.0 * (ad - 1.0))
    np.testing.assert_allclose(L.huber_loss(ta, tb, delta=2.0).item(), hub.mean())
    np.testing.assert_allclose(L.smooth_l1_loss(ta, tb, beta=0.0).item(), ad.mean())
    w = rng.random((3, 4))
    np.testing.assert_allclose(L.mse_loss(ta, tb, weight=_t(w, backend)).item(),
                               (d * d * w).sum() / w.sum())
    p = rng.random((3, 4)) * 0.98 + 0.01
    y = rng.random((3, 4))
    bce = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    np.testing.assert_allclose(L.binary_cross_entropy(_t(p, backend), _t(y, backend)).item(),
                               bce.mean())
    pw = rng.random(4) * 3
    sp = np.log1p(np.exp(-a))
    bcel = ((1 - y) * a + (1 + (pw - 1) * y) * sp) * w
    got = L.binary_cross_entropy_with_logits(ta, _t(y, backend), _t(w, backend),
                                             reduction="sum", pos_weight=_t(pw, backend))
    np.testing.assert_allclose(got.item(), bcel.sum())
    lq = np.log(p)
    kl = np.where(y > 0, y * np.log(np.where(y > 0, y, 1)), 0) - y * lq
    np.testing.assert_allclose(L.kl_div(_t(lq, backend), _t(y, backend),
                                        reduction="batchmean").item(), kl.sum() / 3)
    kll = np.exp(lq) * (lq - b)
    np.testing.assert_allclose(L.kl_div(_t(b, backend), _t(lq, backend), reduction="sum",
                                        log_target=True).item(), kll.sum())


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


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ls", [0.0, 0.3])
def test_gradcheck_cross_entropy(backend, reduction, ls):
    rng = np.random.default_rng(5)
    x = _t(rng.standard_normal((4, 3)), backend, True)
    t = _t([0, 2, -100, 1], backend)
    w = _t(rng.random(3) + 0.2, backend)
    assert gradcheck(lambda x: L.cross_entropy(x, t, w, reduction=reduction,
                                               label_smoothing=ls), (x,))
    x4 = _t(rng.standard_normal((2, 3, 2)), backend, True)
    t4 = _t([[0, 2], [1, -100]], backend)
    assert gradcheck(lambda x: L.cross_entropy(x, t4, reduction=reduction,
                                               label_smoothing=ls), (x4,))


def test_gradcheck_probability_targets_and_nll(backend):
    rng = np.random.default_rng(6)
    x = _t(rng.standard_normal((3, 4)), backend, True)
    p = _t(rng.random((3, 4)), backend, True)
    assert gradcheck(lambda x, p: L.cross_entropy(x, p, label_smoothing=0.2), (x, p))
    t = _t([1, -100, 3], backend)
    w = _t(np.arange(1.0, 5.0), backend)
    for red in ("mean", "sum", "none"):
        assert gradcheck(lambda x, red=red: L.nll_loss(x, t, w, reduction=red), (x,))


@pytest.mark.parametrize("name,kw", [
    ("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {"beta": 0.7}),
    ("huber_loss", {"delta": 0.6}), ("mse_loss", {"reduction": "sum"}),
    ("l1_loss", {"reduction": "none"}),
])
def test_gradcheck_pointwise(backend, name, kw):
    rng = np.random.default_rng(7)
    a = _t(rng.standard_normal((3, 4)), backend, True)
    b = _t(rng.standard_normal((3, 4)) + 0.05, backend, True)
    assert gradcheck(lambda a, b: getattr(L, name)(a, b, **kw), (a, b))


def test_gradcheck_bce_kl(backend):
    rng = np.random.default_rng(8)
    p = _t(rng.random((2, 3)) * 0.8 + 0.1, backend, True)
    y = _t(rng.random((2, 3)), backend, True)
    w = _t(rng.random((2, 3)), backend)
    x = _t(rng.standard_normal((2, 3)) * 3, backend, True)
    pw = _t(rng.random(3) * 2, backend, True)
    assert gradcheck(lambda p, y: L.binary_cross_entropy(p, y, w), (p, y))
    assert gradcheck(lambda x, y, pw: L.binary_cross_entropy_with_logits(
        x, y, w, pos_weight=pw), (x, y, pw))
    assert gradcheck(lambda x, y: L.binary_cross_entropy_with_logits(x, y), (x, y))
    lq = _t(np.log(rng.random((2, 3))), backend, True)
    assert gradcheck(lambda a, b: L.kl_div(a, b, reduction="batchmean"), (lq, y))
    assert gradcheck(lambda a, b: L.kl_div(a, b, reduction="sum", log_target=True), (x, lq))


# ---- errors -------------------------------------------------------------------------------------


def test_errors(backend):
    x = lucid.randn(3, 5, device=backend)
    with pytest.raises(IndexError, match=r"Target 5 is out of bounds\. Expected class indices "
                                         r"in \[0, 5\)"):
        L.cross_entropy(x, _t([0, 5, 1], backend))
    with pytest.raises(IndexError, match="Target -3 is out of bounds"):
        L.nll_loss(x, _t([0, -3, 1], backend))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target "
                                         r"batch_size \(2\)"):
        L.cross_entropy(x, _t([0, 1], backend))
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        L.mse_loss(x, x, reduction="avg")
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        L.binary_cross_entropy(x + 2, x)
    with pytest.raises(ValueError, match="is different to the input size"):
        L.binary_cross_entropy(lucid.rand(3, device=backend), lucid.rand(3, 1, device=backend))


@pytest.mark.parity
def test_error_types_and_messages_match_torch(torch):
    F = torch.nn.functional
    cases = [
        ("cross_entropy", lambda m: (m.randn(3, 5), m.tensor([0, 5, 1])), IndexError),
        ("nll_loss", lambda m: (m.randn(3, 5), m.tensor([0, -3, 1])), IndexError),
        ("cross_entropy", lambda m: (m.randn(3, 5), m.tensor([0, 1])), ValueError),
        ("binary_cross_entropy", lambda m: (m.rand(3), m.rand(3, 1)), ValueError),
        ("binary_cross_entropy", lambda m: (m.rand(3) + 1, m.rand(3)), RuntimeError),
    ]
    for name, args, etype in cases:
        with pytest.raises(etype) as te:
            getattr(F, name)(*args(torch))
        with pytest.raises(etype) as le:
            getattr(L, name)(*args(lucid))
        assert str(le.value).startswith(str(te.value).replace("torch.", "lucid.").rstrip("."))


# ---- torch parity -------------------------------------------------------------------------------


@pytest.mark.parity
def test_parity_values_and_grads(torch, backend):
    F = torch.nn.functional
    rng = np.random.default_rng(9)
    x = rng.standard_normal((6, 5)).astype(np.float32) * 3
    x4 = rng.standard_normal((2, 5, 3, 2)).astype(np.float32)
    y = rng.standard_normal((6, 5)).astype(np.float32)
    t = np.array([0, 4, -100, 2, 2, 1])
    t4 = rng.integers(0, 5, (2, 3, 2))
    w = (rng.random(5) + 0.1).astype(np.float32)
    p = rng.random((6, 5)).astype(np.float32) * 0.9 + 0.05
    lq = np.log(p / p.sum(1, keepdims=True)).astype(np.float32)
    cases = [
        ("cross_entropy", (x, t), dict(weight=w, label_smoothing=0.1)),
        ("cross_entropy", (x4, t4), dict(reduction="none")),
        ("cross_entropy", (x, p), dict(weight=w)),
        ("nll_loss", (lq, t), dict(weight=w, reduction="sum")),
        ("mse_loss", (x, y), {}), ("l1_loss", (x, y), dict(reduction="sum")),
        ("smooth_l1_loss", (x, y), dict(beta=0.5)), ("huber_loss", (x, y), dict(delta=0.8)),
        ("binary_cross_entropy", (p, y * 0 + p[::-1]), dict(weight=w)),
        ("binary_cross_entropy_with_logits", (x, p), dict(pos_weight=w)),
        ("kl_div", (lq, p), dict(reduction="batchmean")),
        ("kl_div", (lq, x), dict(reduction="sum", log_target=True)),
    ]
    for name, arrs, kw in cases:
        la = [_t(a, backend, a.dtype.kind == "f") for a in arrs]
        ta = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrs]
        lkw = {k: (_t(v, backend) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
        tkw = {k: (torch.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
        lo, to = getattr(L, name)(*la, **lkw), getattr(F, name)(*ta, **tkw)
        np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=name)
        g = rng.standard_normal(tuple(to.shape)).astype(np.float32)
        lo.backward(_t(g, backend))
        to.backward(torch.from_numpy(g))
        for a, b in zip(la, ta):
            if b.requires_grad:
                np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-3,
                                           atol=1e-5, err_msg=name)


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

    from lucid.kernels._softmax_kernels import fast_exp

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
