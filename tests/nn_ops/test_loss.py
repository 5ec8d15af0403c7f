"""Losses beyond the op table (``op_db_loss.py`` holds the references, every option's samples,
gradchecks, parity and errors): stability at extreme logits, all-ignored batches, non-finite
logits and targets of no class, gradients at NaN, target dtypes, bce's log clamp, broadcast
warnings and legacy reduction arguments, and the softmax / cross-entropy kernels in both
builds."""

from __future__ import annotations

import re
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


def _lse(row):
    m = np.max(row)
    return m + np.log(np.sum(np.exp(row - m)))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf arithmetic
@pytest.mark.parametrize("loss", [L.cross_entropy, L.nll_loss])
def test_zero_total_weight_mean_gradients(backend, loss):
    """torch's rule: an ignored target's row gets 0 even when every target is ignored (the
    loss itself is 0 / 0 = NaN); a target kept with class weight 0 divides by that 0."""
    x = _t(np.random.default_rng(1).standard_normal((3, 4)), backend, True)
    out = loss(x, _t([-100, -100, -100], backend))
    out.backward()
    assert np.isnan(out.item())
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 4)))
    x.grad = None
    out = loss(x, _t([0, -100, 0], backend), weight=_t([0.0, 1.0, 1.0, 1.0], backend))
    out.backward()
    g = x.grad.numpy()
    assert np.isnan(out.item()) and np.isnan(g[[0, 2], 0]).all()
    np.testing.assert_array_equal(g[1], np.zeros(4))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf arithmetic
def test_cross_entropy_rows_with_nonfinite_logits(backend):
    """A row whose maximum is not finite (+inf, NaN, all -inf) scores NaN, as torch's
    log-softmax makes it; an ignored row scores 0 whatever its logits (its gradient is NaN
    there)."""
    inf, nan = np.inf, np.nan
    x = np.array([[inf, 1.0, 0.0], [nan, 1.0, 0.0], [-inf, -inf, -inf], [inf, inf, 0.0],
                  [0.5, 1.0, 2.0]])
    last = _lse(x[4]) - 1.0
    ignored = _t([-100, -100, -100, -100, 1], backend)
    for ls in (0.0, 0.1):
        smooth = (1 - ls) * last + ls / 3 * np.sum(_lse(x[4]) - x[4])
        np.testing.assert_allclose(
            L.cross_entropy(_t(x, backend), ignored, reduction="none",
                            label_smoothing=ls).numpy(), [0, 0, 0, 0, smooth], rtol=1e-12)
        np.testing.assert_allclose(L.cross_entropy(_t(x, backend), ignored,
                                                   label_smoothing=ls).item(), smooth,
                                   rtol=1e-12)
    xt = _t(x, backend, True)
    out = L.cross_entropy(xt, _t([0, 1, 2, 1, 1], backend), reduction="none")
    out.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), [nan, nan, nan, nan, last], rtol=1e-12)
    g = xt.grad.numpy()
    assert np.isnan(g[:4]).all()
    np.testing.assert_allclose(g[4], np.exp(x[4] - _lse(x[4])) - [0, 1, 0], rtol=1e-12)
    # an ignored row's gradient is NaN too where its log-sum-exp is not finite (torch's
    # log-softmax backward multiplies its NaN row by 0); a -inf beside finite logits is 0
    rows = np.concatenate([x, [[-inf, 1.0, 0.0]]])
    xt = _t(rows, backend, True)
    for ls in (0.0, 0.1):
        xt.grad = None
        L.cross_entropy(xt, _t([-100, -100, -100, -100, 1, -100], backend),
                        label_smoothing=ls).backward()
        g = xt.grad.numpy()
        assert np.isnan(g[:4]).all() and not np.isnan(g[4:]).any()
        np.testing.assert_array_equal(g[5], [0.0, 0.0, 0.0])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf arithmetic
def test_log_softmax_rows_with_nonfinite_max_are_nan(backend):
    inf = np.inf
    x = np.array([[inf, 1.0, 0.0], [inf, inf, 0.0], [-inf, -inf, -inf], [np.nan, 1.0, 0.0],
                  [0.0, -inf, 1.0]])
    y = log_softmax(_t(x, backend), 1).numpy()
    assert np.isnan(y[:4]).all()
    np.testing.assert_allclose(y[4], [-np.log1p(np.e), -inf, -np.log1p(np.exp(-1))],
                               rtol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf arithmetic
@pytest.mark.parametrize("loss", [L.cross_entropy, L.nll_loss])
def test_class_losses_with_no_classes(backend, loss):
    ignored = _t([-100, -100, -100], backend)
    x = _t(np.zeros((3, 0)), backend, True)
    out = loss(x, ignored)
    out.backward()
    assert np.isnan(out.item()) and tuple(x.grad.shape) == (3, 0)
    assert loss(x, ignored, reduction="sum").item() == 0
    np.testing.assert_array_equal(loss(x, ignored, reduction="none").detach().numpy(),
                                  [0, 0, 0])
    x4 = _t(np.zeros((2, 0, 2, 2)), backend)
    assert np.isnan(loss(x4, _t(np.full((2, 2, 2), -100), backend)).item())
    with pytest.raises(RuntimeError, match=re.escape(
            "size mismatch (got input: [3, 0, 0, 0] , target: [3, 1, 2]")):
        loss(_t(np.zeros((3, 0, 2)), backend), _t(np.full((3, 2), -100), backend))
    with pytest.raises(IndexError, match="Target 0 is out of bounds"):
        loss(_t(np.zeros((3, 0)), backend), _t([0, 1, -100], backend))


@pytest.mark.parametrize(("dtype", "name"), [(lucid.int32, "Int"), (lucid.int16, "Short"),
                                             (lucid.int8, "Char"), (lucid.bool, "Bool"),
                                             (lucid.float32, "Float")])
@pytest.mark.parametrize("loss", [L.cross_entropy, L.nll_loss])
def test_class_index_target_must_be_long_or_byte(backend, loss, dtype, name):
    x = lucid.randn(3, 4, device=backend)
    t = lucid.tensor([0, 1, 1], dtype=dtype, device=backend)
    with pytest.raises(RuntimeError,
                       match=f"^expected target dtype to be Long or Byte, but got {name}$"):
        loss(x, t)


def test_class_targets_of_the_input_shape_must_be_probabilities(backend):
    x = lucid.randn(3, 4, device=backend)
    with pytest.raises(RuntimeError, match="^Expected floating point type for target with "
                                           "class probabilities, got Long$"):
        L.cross_entropy(x, lucid.zeros(3, 4, dtype=lucid.int64, device=backend))
    t = lucid.tensor([0, 3, 1], device=backend)
    for loss in (L.cross_entropy, L.nll_loss):
        np.testing.assert_allclose(loss(x, t.to(lucid.uint8)).item(), loss(x, t).item())


# ---- pointwise losses ---------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf arithmetic
@pytest.mark.parametrize(("loss", "kw"), [(L.huber_loss, {}), (L.huber_loss, {"delta": 0.5}),
                                          (L.smooth_l1_loss, {}),
                                          (L.smooth_l1_loss, {"beta": 0.5})])
def test_huber_and_smooth_l1_gradient_at_nan_is_nan(backend, loss, kw):
    x = np.array([np.nan, 3.0, -3.0, 0.25, -0.75, 0.0])
    xt, tt = _t(x, backend, True), _t(np.zeros(6), backend, True)
    loss(xt, tt, reduction="sum", **kw).backward()
    c = kw.get("delta", kw.get("beta", 1.0))
    ref = np.clip(x, -c, c) if loss is L.huber_loss else np.clip(x / c, -1, 1)
    np.testing.assert_array_equal(xt.grad.numpy(), ref)
    np.testing.assert_array_equal(tt.grad.numpy(), -ref)


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


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf arithmetic
def test_pointwise_losses_at_special_points_match_torch(torch, backend):
    tf = torch.nn.functional
    x = np.array([np.nan, np.inf, -np.inf, 1.0, -1.0, 0.5, 2.0, 0.0])
    for name, kw in [("huber_loss", {}), ("huber_loss", {"delta": 0.5}), ("smooth_l1_loss", {}),
                     ("smooth_l1_loss", {"beta": 0.5}), ("smooth_l1_loss", {"beta": 0.0}),
                     ("l1_loss", {}), ("mse_loss", {})]:
        xt, tt = _t(x, backend, True), _t(np.zeros(8), backend, True)
        xr = torch.tensor(x, requires_grad=True)
        tr = torch.zeros(8, dtype=torch.float64, requires_grad=True)
        out, ref = getattr(L, name)(xt, tt, reduction="none", **kw), \
            getattr(tf, name)(xr, tr, reduction="none", **kw)
        out.sum().backward()
        ref.sum().backward()
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(tt.grad.numpy(), tr.grad.numpy(), rtol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf arithmetic
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("ls", [0.0, 0.1])
def test_cross_entropy_nonfinite_logits_match_torch(torch, backend, reduction, ls):
    inf, nan = np.inf, np.nan
    x = np.array([[inf, 1.0, 0.0], [nan, 1.0, 0.0], [-inf, -inf, -inf], [inf, inf, 0.0],
                  [0.5, 1.0, 2.0], [0.0, -inf, 3.0]])
    for t in ([-100, -100, -100, -100, 1, 2], [0, 1, 2, 1, 1, 0], [-100, 1, -100, 0, 1, 2]):
        xt = _t(x, backend, True)
        xr = torch.tensor(x, requires_grad=True)
        out = L.cross_entropy(xt, _t(t, backend), reduction=reduction, label_smoothing=ls)
        ref = torch.nn.functional.cross_entropy(xr, torch.tensor(t), reduction=reduction,
                                                label_smoothing=ls)
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
        out.sum().backward()
        ref.sum().backward()
        np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), rtol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf arithmetic
def test_log_softmax_nonfinite_rows_match_torch(torch, backend):
    inf = np.inf
    x = np.array([[inf, 1.0, 0.0], [inf, inf, 0.0], [-inf, -inf, -inf], [np.nan, 1.0, 0.0],
                  [0.0, -inf, 1.0], [-inf, 2.0, -inf]])
    xt, xr = _t(x, backend, True), torch.tensor(x, requires_grad=True)
    y, ref = log_softmax(xt, 1), torch.log_softmax(xr, 1)
    np.testing.assert_allclose(y.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    y.backward(lucid.ones_like(y))
    ref.backward(torch.ones_like(ref))
    np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf arithmetic
@pytest.mark.parametrize("shape", [(3, 0), (2, 0, 2, 2), (3, 0, 2), (0, 0, 2), (0,)])
@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
def test_no_classes_match_torch(torch, backend, name, shape):
    tshape = () if len(shape) == 1 else (shape[0], *shape[2:])
    for fill in (-100, 0):
        for reduction in ("none", "mean", "sum"):
            try:
                ref = getattr(torch.nn.functional, name)(
                    torch.zeros(shape), torch.full(tshape, fill), reduction=reduction)
            except (RuntimeError, IndexError) as e:
                with pytest.raises(type(e), match=re.escape(str(e))):
                    getattr(L, name)(lucid.zeros(*shape, device=backend),
                                     lucid.full(tshape, fill, device=backend),
                                     reduction=reduction)
                continue
            got = getattr(L, name)(lucid.zeros(*shape, device=backend),
                                   lucid.full(tshape, fill, device=backend),
                                   reduction=reduction)
            np.testing.assert_array_equal(got.numpy(), ref.numpy())


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


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf arithmetic
def test_multi_margin_hinges_skip_nan_terms(backend):
    """torch's multi-margin kernels add a term only ``if z > 0``: a NaN term counts 0 (value
    and gradient), an infinite one counts, and z == 0 passes no gradient."""
    F = lucid.nn.functional
    nan, inf = np.nan, np.inf
    x = np.array([[nan, 1.0, 0.5, 2.0], [0.1, inf, 0.3, -inf], [1.0, 2.0, 3.0, nan],
                  [0.0, -0.5, 0.0, 1.0]])
    xt = _t(x, backend, True)
    y = F.multi_margin_loss(xt, _t([1, 0, 2, 0], backend), margin=0.5, reduction="none")
    np.testing.assert_allclose(y.detach().numpy(), [(0.0 + 1.5) / 4, inf, 0.0, 2.0 / 4])
    y.sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), [[0, -0.25, 0, 0.25], [-0.5, 0.25, 0.25, 0],
                                                 [0, 0, 0, 0], [-0.5, 0, 0.25, 0.25]])
    xt.grad = None
    y = F.multilabel_margin_loss(xt, _t([[1, -1, 0, 0], [0, 2, -1, 0], [3, -1, 0, 0],
                                         [0, -1, 0, 0]], backend), reduction="none")
    np.testing.assert_allclose(y.detach().numpy(), [(0.5 + 2.0) / 4, inf, 0.0, 3.5 / 4])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_non_finite_match_torch(torch, backend, p):
    nan, inf = np.nan, np.inf
    x = np.array([[nan, 1.0, 0.5, 2.0], [0.1, inf, 0.3, -inf], [1.0, 2.0, 3.0, nan],
                  [0.0, -0.6, 0.0, 1.0]])
    w = np.array([1.0, 2.0, 3.0, 4.0])
    xt, xr = _t(x, backend, True), torch.tensor(x, requires_grad=True)
    F, TF = lucid.nn.functional, torch.nn.functional
    y = F.multi_margin_loss(xt, _t([1, 0, 2, 0], backend), p=p, margin=0.6,
                            weight=_t(w, backend), reduction="sum")
    r = TF.multi_margin_loss(xr, torch.tensor([1, 0, 2, 0]), p=p, margin=0.6,
                             weight=torch.tensor(w), reduction="sum")
    np.testing.assert_allclose(y.item(), r.item(), rtol=1e-12)
    y.backward()
    r.backward()
    np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), rtol=1e-12)
    t = [[1, -1, 0, 0], [0, 2, -1, 0], [3, -1, 0, 0], [0, 1, 2, 3]]
    xt.grad, xr.grad = None, None
    y = F.multilabel_margin_loss(xt, _t(t, backend), reduction="none")
    r = TF.multilabel_margin_loss(xr, torch.tensor(t), reduction="none")
    np.testing.assert_allclose(y.detach().numpy(), r.detach().numpy(), rtol=1e-12)
    y.sum().backward()
    r.sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), rtol=1e-12)
