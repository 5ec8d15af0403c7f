"""Normalisation beyond the op table (``op_db_nn.py`` holds the references, samples,
gradchecks, parity and errors): running statistics (updates, dtypes, momentum, torch over
several steps), gradient work only where asked, batch norm's eps rules, empty batches,
channels and groups, serial and parallel kernel builds, and a NUMBA_DISABLE_JIT run of every
norm/softmax kernel."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lucid
import lucid.ops.normalization as N
from lucid.kernels import norm as KN

REPO = Path(__file__).resolve().parents[2]


def _t(a, backend, rg=False):
    return lucid.tensor(np.asarray(a), device=backend, requires_grad=rg)


def np_batch_norm(x, w, b, eps=1e-5):
    axes = (0, *range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mean, var = x.mean(axes), x.var(axes)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    return y * w.reshape(shape) + b.reshape(shape), mean, var


# ---- running statistics -------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(6, 4), (5, 3, 7), (4, 3, 5, 6), (3, 300)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_norm_train_forward_and_running_stats(backend, shape, dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 2 + 1).astype(dtype)
    c = shape[1]
    w, b = rng.standard_normal(c).astype(dtype), rng.standard_normal(c).astype(dtype)
    rm, rv = _t(np.full(c, 0.5, dtype), backend), _t(np.full(c, 2.0, dtype), backend)
    y = N.batch_norm(_t(x, backend), rm, rv, _t(w, backend), _t(b, backend), True, 0.2)
    ref, mean, var = np_batch_norm(x.astype(np.float64), w, b)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(y.numpy(), ref, rtol=tol, atol=tol)
    m = x.size // c
    np.testing.assert_allclose(rm.numpy(), 0.8 * 0.5 + 0.2 * mean, rtol=tol, atol=tol)
    np.testing.assert_allclose(rv.numpy(), 0.8 * 2.0 + 0.2 * var * m / (m - 1), rtol=tol)
    assert rm._version == 1 and rv._version == 1
    assert y.dtype.np == dtype


def test_batch_norm_momentum_none_keeps_running_stats(backend):
    rm, rv = lucid.zeros(3, device=backend), lucid.ones(3, device=backend)
    N.batch_norm(lucid.randn(4, 3, device=backend), rm, rv, training=True, momentum=None)
    assert rm.numpy().tolist() == [0, 0, 0] and rv.numpy().tolist() == [1, 1, 1]


def test_running_stats_other_dtype_are_written_back():
    x = np.random.default_rng(3).standard_normal((6, 2, 4)).astype(np.float32)
    rm, rv = lucid.zeros(2, dtype=lucid.float64), lucid.ones(2, dtype=lucid.float64)
    N.batch_norm(lucid.tensor(x), rm, rv, training=True, momentum=1.0)
    np.testing.assert_allclose(rm.numpy(), x.mean((0, 2)), rtol=1e-5)
    np.testing.assert_allclose(rv.numpy(), x.astype(np.float64).var((0, 2), ddof=1), rtol=1e-5)


def test_instance_norm_running_stats_average_the_batch(backend):
    x = np.random.default_rng(6).standard_normal((3, 2, 5))
    rm, rv = lucid.zeros(2, dtype=lucid.float64, device=backend), \
        lucid.ones(2, dtype=lucid.float64, device=backend)
    N.instance_norm(_t(x, backend), rm, rv, momentum=1.0)
    np.testing.assert_allclose(rm.numpy(), x.mean(2).mean(0))
    np.testing.assert_allclose(rv.numpy(), x.var(2, ddof=1).mean(0))
    assert rm._version == 1
    y = N.instance_norm(_t(x, backend), rm, rv, use_input_stats=False)
    np.testing.assert_allclose(y.numpy(), (x - rm.numpy()[:, None]) /
                               np.sqrt(rv.numpy()[:, None] + 1e-5))


def test_norm_module_attribute_stays_callable():
    assert lucid.ops.norm(lucid.tensor([3.0, 4.0])).item() == 5.0
    assert lucid.norm(lucid.tensor([3.0, 4.0])).item() == 5.0


def test_gradient_only_for_what_requires_it(backend):
    x = lucid.randn(4, 3, dtype=lucid.float64, device=backend)
    w = lucid.ones(3, dtype=lucid.float64, device=backend, requires_grad=True)
    N.batch_norm(x, None, None, w, None, True).sum().backward()
    assert x.grad is None and w.grad is not None
    x.requires_grad_(True)
    N.layer_norm(x, (3,)).sum().backward()
    assert x.grad is not None


# ---- eps and empty inputs -----------------------------------------------------------------------


def test_batch_norm_eps_rules(backend):
    """torch's F.batch_norm refuses eps <= 0 in training and eps < 0 in eval."""
    x = _t(np.random.default_rng(2).standard_normal((4, 3, 5)), backend)
    rm, rv = _t(np.arange(3.0), backend), _t(np.arange(1.0, 4.0), backend)
    for eps in (0, 0.0, -1e-5):
        with pytest.raises(ValueError, match=re.escape(
                f"batch_norm eps must be positive during training, but got {eps}")):
            N.batch_norm(x, rm, rv, training=True, eps=eps)
    with pytest.raises(ValueError, match=re.escape(
            "batch_norm eps must be non-negative, but got -1.0")):
        N.batch_norm(x, rm, rv, eps=-1.0)
    ref = (x.numpy() - np.arange(3.0)[:, None]) / np.sqrt(np.arange(1.0, 4.0))[:, None]
    np.testing.assert_allclose(N.batch_norm(x, rm, rv, eps=0.0).numpy(), ref, rtol=1e-12)
    m = lucid.nn.BatchNorm1d(3, eps=0.0, device=backend, dtype=lucid.float64)
    with pytest.raises(ValueError, match="must be positive during training"):
        m(x)
    m.eval()
    np.testing.assert_allclose(m(x).detach().numpy(), x.numpy(), rtol=1e-12)
    # instance norm without input statistics is torch's eval batch norm, which checks no eps
    y = N.instance_norm(x, rm, rv, use_input_stats=False, eps=0.0)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # statistics of empty groups: 0 / 0
def test_norms_of_empty_batches_channels_and_groups(backend):
    def run(fn, shape, *params):
        x = _t(np.zeros(shape), backend, True)
        ps = [_t(np.ones(n), backend, True) for n in params]
        y = fn(x, *ps)
        y.sum().backward()
        assert tuple(y.shape) == shape and tuple(x.grad.shape) == shape
        return [p.grad.numpy() for p in ps]

    for shape in ((3, 0), (3, 0, 2), (3, 0, 2, 2)):  # batch norm training with no channels
        run(lambda x: N.batch_norm(x, None, None, training=True), shape)
    run(lambda x: N.instance_norm(x), (0, 3, 4))
    run(lambda x: N.instance_norm(x), (2, 0, 4))
    for shape in ((0, 4, 3), (0, 4), (0, 4, 0)):  # no batch: weight and bias gradients 0
        gw, gb = run(lambda x, w, b: N.group_norm(x, 2, w, b), shape, 4, 4)
        np.testing.assert_array_equal(gw, np.zeros(4))
        np.testing.assert_array_equal(gb, np.zeros(4))
    # empty groups: torch's weight gradient is NaN (0 / 0 statistics), its bias gradient 0
    gw, gb = run(lambda x, w, b: N.group_norm(x, 2, w, b), (2, 4, 0), 4, 4)
    assert np.isnan(gw).all()
    np.testing.assert_array_equal(gb, np.zeros(4))
    # one value per group: normalised to 0 (torch's group norm has no training check)
    x = _t(np.random.default_rng(3).standard_normal((2, 4, 1)), backend)
    np.testing.assert_array_equal(N.group_norm(x, 4).numpy(), np.zeros((2, 4, 1)))


# ---- torch parity -------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # statistics of empty groups: 0 / 0
def test_empty_norms_match_torch(torch, backend):
    F = torch.nn.functional
    cases = [
        ("batch_norm", (3, 0, 2), 0, lambda f, x, *p: f.batch_norm(x, None, None, *p,
                                                                      training=True)),
        ("batch_norm", (0, 3, 2), 3, lambda f, x, *p: f.batch_norm(x, None, None, *p,
                                                                      training=True)),
        ("group_norm", (0, 4, 3), 4, lambda f, x, *p: f.group_norm(x, 2, *p)),
        ("group_norm", (2, 4, 0), 4, lambda f, x, *p: f.group_norm(x, 2, *p)),
        ("group_norm", (0, 4, 0), 4, lambda f, x, *p: f.group_norm(x, 2, *p)),
        ("group_norm", (2, 0, 3), 0, lambda f, x, *p: f.group_norm(x, 1, *p)),
        ("instance_norm", (0, 3, 4), 3, lambda f, x, *p: f.instance_norm(x, None, None, *p)),
    ]
    for name, shape, c, call in cases:
        # torch's batch norm cannot index a 0-size weight (nor instance norm a 0-size repeat)
        affine = name == "group_norm" or (name == "batch_norm" and c)
        xt, xr = _t(np.zeros(shape), backend, True), torch.zeros(shape, dtype=torch.float64,
                                                                   requires_grad=True)
        pl = [_t(np.full(c, 2.0), backend, True) for _ in range(2 if affine else 0)]
        pr = [torch.full((c,), 2.0, dtype=torch.float64, requires_grad=True) for _ in pl]
        y, ref = call(N, xt, *pl), call(F, xr, *pr)
        y.sum().backward()
        ref.sum().backward()
        assert tuple(y.shape) == tuple(ref.shape) and tuple(xt.grad.shape) == shape
        for a, b in zip(pl, pr):
            np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    for eps, training in ((0.0, True), (-1.0, False), (0.0, False)):
        x = np.random.default_rng(4).standard_normal((4, 3))
        try:
            ref = F.batch_norm(torch.tensor(x), torch.zeros(3, dtype=torch.float64),
                               torch.ones(3, dtype=torch.float64), training=training, eps=eps)
        except ValueError as e:
            with pytest.raises(ValueError, match=re.escape(str(e))):
                N.batch_norm(_t(x, backend), lucid.zeros(3, device=backend),
                             lucid.ones(3, device=backend), training=training, eps=eps)
            continue
        got = N.batch_norm(_t(x, backend), _t(np.zeros(3), backend), _t(np.ones(3), backend),
                           training=training, eps=eps)
        np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize("shape", [(8, 5), (4, 3, 7), (4, 3, 5, 6)])
@pytest.mark.parametrize("cumulative", [False, True])
def test_batch_norm_parity_training_steps_then_eval(torch, backend, shape, cumulative):
    rng = np.random.default_rng(7)
    c = shape[1]
    w0, b0 = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    mod = {2: torch.nn.BatchNorm1d, 3: torch.nn.BatchNorm1d, 4: torch.nn.BatchNorm2d}[len(shape)]
    tm = mod(c, momentum=None if cumulative else 0.3)
    with torch.no_grad():
        tm.weight.copy_(torch.from_numpy(w0))
        tm.bias.copy_(torch.from_numpy(b0))
    w, b = _t(w0, backend, True), _t(b0, backend, True)
    rm, rv = lucid.zeros(c, device=backend), lucid.ones(c, device=backend)
    for step in range(1, 5):
        x = (rng.standard_normal(shape) * step + step).astype(np.float32)
        g = rng.standard_normal(shape).astype(np.float32)
        lx, tx = _t(x, backend, True), torch.tensor(x, requires_grad=True)
        factor = 1.0 / step if cumulative else 0.3
        y = N.batch_norm(lx, rm, rv, w, b, True, factor)
        ty = tm(tx)
        y.backward(_t(g, backend))
        ty.backward(torch.from_numpy(g))
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
        np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-5)
        np.testing.assert_allclose(rm.numpy(), tm.running_mean.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(rv.numpy(), tm.running_var.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), tm.weight.grad.numpy(), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(b.grad.numpy(), tm.bias.grad.numpy(), rtol=1e-3, atol=1e-4)
    tm.eval()
    x = rng.standard_normal(shape).astype(np.float32)
    y = N.batch_norm(_t(x, backend), rm, rv, w, b, False)
    np.testing.assert_allclose(y.detach().numpy(), tm(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parity
def test_norm_family_parity(torch, backend):
    F = torch.nn.functional
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 4, 5, 2)).astype(np.float32)
    w, b = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    wl, bl = rng.standard_normal((5, 2)).astype(np.float32), rng.standard_normal((5, 2))
    bl = bl.astype(np.float32)
    rmt, rvt = torch.zeros(4), torch.ones(4)
    rml, rvl = lucid.zeros(4, device=backend), lucid.ones(4, device=backend)
    cases = [
        (lambda x, w, b: N.layer_norm(x, (5, 2), w, b),
         lambda x, w, b: F.layer_norm(x, (5, 2), w, b), (x, wl, bl)),
        (lambda x, w, b: N.group_norm(x, 2, w, b), lambda x, w, b: F.group_norm(x, 2, w, b),
         (x, w, b)),
        (lambda x, w, b: N.instance_norm(x, rml, rvl, w, b),
         lambda x, w, b: F.instance_norm(x, rmt, rvt, w, b), (x, w, b)),
        (lambda x, w: N.rms_norm(x, (2,), w), lambda x, w: F.rms_norm(x, (2,), w),
         (x, w[:2])),
        (lambda x: N.normalize(x, 3.0, 2), lambda x: F.normalize(x, 3.0, 2), (x,)),
    ]
    for lf, tf, arrs in cases:
        la = [_t(a, backend, True) for a in arrs]
        ta = [torch.tensor(a, requires_grad=True) for a in arrs]
        lo, to = lf(*la), tf(*ta)
        np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
        g = rng.standard_normal(tuple(to.shape)).astype(np.float32)
        lo.backward(_t(g, backend))
        to.backward(torch.from_numpy(g))
        for a, t in zip(la, ta):
            np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(rml.numpy(), rmt.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rvl.numpy(), rvt.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize(("shape", "dim"), [((5, 7), 1), ((3, 4, 6), -1), ((3, 4, 6), 0),
                                            ((4,), 0)])
def test_normalize_p2_parity_with_zero_rows_and_second_derivatives(torch, backend, shape, dim):
    """``normalize``'s one-node p = 2 path against torch: values, gradients (a row of zeros
    sits on the eps floor, where only the division's gradient flows) and, on "cpu", the
    gradient of the gradient (through its composite form)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    x[0] = 0.0
    g = rng.standard_normal(shape)
    for dt in (np.float32, np.float64):
        if backend != "cpu" and dt == np.float64:
            continue
        a = _t(x.astype(dt), backend, True)
        t = torch.tensor(x.astype(dt), requires_grad=True)
        y = N.normalize(a, dim=dim)
        yt = torch.nn.functional.normalize(t, dim=dim)
        tol = dict(rtol=1e-5, atol=1e-6) if dt == np.float32 else dict(rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), **tol)
        y.backward(_t(g.astype(dt), backend))
        yt.backward(torch.tensor(g.astype(dt)))
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), **tol)
    if backend == "cpu":
        a = lucid.tensor(x[1:] if len(shape) > 1 else x, requires_grad=True)
        t = torch.tensor(x[1:] if len(shape) > 1 else x, requires_grad=True)
        (g1,) = lucid.autograd.grad(N.normalize(a, dim=dim).pow(3).sum(), a,
                                    create_graph=True)
        (g1t,) = torch.autograd.grad(torch.nn.functional.normalize(t, dim=dim).pow(3).sum(), t,
                                     create_graph=True)
        (g2,) = lucid.autograd.grad(g1.sum(), a)
        (g2t,) = torch.autograd.grad(g1t.sum(), t)
        np.testing.assert_allclose(g2.numpy(), g2t.numpy(), rtol=1e-10, atol=1e-12)


# ---- kernels: both builds, layouts --------------------------------------------------------------


def _transposed(a, backend, dtype=None):
    """``a`` stored with its last two dims swapped: a transposed view, not row-major."""
    return lucid.tensor(a.swapaxes(-1, -2).copy(), device=backend, dtype=dtype).transpose(-1, -2)


def _rms(x, w, eps=1e-6):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


# (name, call, numpy reference, dtype): inputs x (4, 3, 5), c (3,) and l (5,)
_ROW_MAJOR = [
    ("batch_norm_eval", lambda x, c, l: N.batch_norm(x, c[0], c[1].abs(), c[2], c[3]),
     lambda x, c, l: (x - c[0][:, None]) / np.sqrt(np.abs(c[1])[:, None] + 1e-5)
     * c[2][:, None] + c[3][:, None], None),
    ("rms_norm", lambda x, c, l: N.rms_norm(x, (5,), l, eps=1e-6),
     lambda x, c, l: _rms(x, l), None),
    ("rms_norm_no_weight", lambda x, c, l: N.rms_norm(x, (5,), eps=1e-6),
     lambda x, c, l: _rms(x, 1.0), None),
    ("layer_norm_half", lambda x, c, l: N.layer_norm(x, (5,), l),
     lambda x, c, l: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True)
                                                               + 1e-5) * l, "float16"),
    ("batch_norm_train_half", lambda x, c, l: N.batch_norm(x, None, None, c[2], None, True),
     lambda x, c, l: (x - x.mean((0, 2), keepdims=True)) / np.sqrt(
         x.var((0, 2), keepdims=True) + 1e-5) * c[2][:, None], "float16"),
]


@pytest.mark.parametrize(("name", "call", "ref", "dtype"), _ROW_MAJOR,
                         ids=[c[0] for c in _ROW_MAJOR])
def test_norms_of_a_transposed_input_answer_row_major(backend, name, call, ref, dtype):
    """torch writes a norm's result row-major whatever the input's layout, so ``view``
    works on it (eval batch norm and rms_norm are composed of elementwise ops, and the
    reference backend's fused norms of numpy ufuncs, which keep the input's layout)."""
    rng = np.random.default_rng(3)
    xa = rng.standard_normal((4, 3, 5))
    ca = [rng.standard_normal(3) for _ in range(4)]
    la = rng.standard_normal(5)
    d = None if dtype is None else getattr(lucid, dtype)
    if d is not None:  # the reference sees the values the half dtype holds
        xa, ca, la = (np.asarray(a, np.float16).astype(np.float64) for a in (xa, ca, la))
    y = call(_transposed(xa, backend, d), [_t(a, backend).to(d or lucid.float64) for a in ca],
             _t(la, backend).to(d or lucid.float64))
    assert y.is_contiguous() and y.dtype is (d or lucid.float64)
    tol = 1e-10 if d is None else 2e-2
    np.testing.assert_allclose(y.view(-1).to(lucid.float64).numpy(), ref(xa, ca, la).reshape(-1),
                               rtol=tol, atol=tol)


@pytest.mark.parity
@pytest.mark.parametrize(("name", "call", "ref", "dtype"), _ROW_MAJOR,
                         ids=[c[0] for c in _ROW_MAJOR])
def test_norms_of_a_transposed_input_match_torch_layout(torch, backend, name, call, ref, dtype):
    rng = np.random.default_rng(4)
    xa = rng.standard_normal((4, 3, 5))
    ca = [rng.standard_normal(3) for _ in range(4)]
    la = rng.standard_normal(5)
    F = torch.nn.functional
    td = getattr(torch, dtype or "float64")
    xt = torch.tensor(xa.swapaxes(-1, -2).copy(), dtype=td).transpose(-1, -2)
    ct, lt = [torch.tensor(a, dtype=td) for a in ca], torch.tensor(la, dtype=td)
    tref = {"batch_norm_eval": lambda: F.batch_norm(xt, ct[0], ct[1].abs(), ct[2], ct[3]),
            "rms_norm": lambda: F.rms_norm(xt, (5,), lt, 1e-6),
            "rms_norm_no_weight": lambda: F.rms_norm(xt, (5,), None, 1e-6),
            "layer_norm_half": lambda: F.layer_norm(xt, (5,), lt),
            "batch_norm_train_half": lambda: F.batch_norm(xt, None, None, ct[2], None,
                                                          True)}[name]()
    d = getattr(lucid, dtype or "float64")
    y = call(_transposed(xa, backend, d), [_t(a, backend).to(d) for a in ca],
             _t(la, backend).to(d))
    assert y.is_contiguous() == tref.is_contiguous() is True
    tol = 1e-10 if dtype is None else 2e-2
    np.testing.assert_allclose(y.to(lucid.float64).numpy(), tref.double().numpy(), rtol=tol,
                               atol=tol)


@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_with_a_strided_weight(backend, training):
    """A strided weight (every other element of a buffer) gives the gradients of its
    contiguous copy (torch 2.13's backward reads such a weight as if contiguous)."""
    rng = np.random.default_rng(5)
    x, buf, b = rng.standard_normal((4, 3)), rng.standard_normal(6), rng.standard_normal(3)
    g = rng.standard_normal((4, 3))
    grads = []
    for strided in (True, False):
        xt = _t(x, backend, True)
        w = _t(buf, backend)[::2] if strided else _t(buf[::2].copy(), backend)
        w.requires_grad_()
        y = N.batch_norm(xt, _t(np.zeros(3), backend), _t(np.ones(3), backend), w,
                         _t(b, backend), training)
        y.backward(_t(g, backend))
        grads.append((y.detach().numpy(), xt.grad.numpy(), w.grad.numpy()))
    for a, c in zip(*grads):
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-14)
    if not training:  # y = x / sqrt(1 + eps) * w + b
        np.testing.assert_allclose(grads[0][1], g * buf[::2] / np.sqrt(1 + 1e-5), rtol=1e-12)


@pytest.fixture(params=["serial", "parallel"])
def build(request, monkeypatch):
    par = request.param == "parallel"
    monkeypatch.setattr(KN, "use_parallel", lambda n, kind="reduce": par)
    return request.param


@pytest.mark.parametrize("shape", [(5, 300), (3, 4, 9), (2, 3, 1, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernels_both_builds(build, shape, dtype):
    rng = np.random.default_rng(9)
    x = (rng.standard_normal(shape) * 2 + 3).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    c = shape[1]
    w, b = rng.standard_normal(c).astype(dtype), rng.standard_normal(c).astype(dtype)
    rm, rv = np.zeros(c, dtype), np.ones(c, dtype)
    y, mean, invstd = KN.batch_norm_train(x, w, b, rm, rv, 0.1, 1e-5)
    ref = lucid.backend.get_backend("numpy")
    rm2, rv2 = np.zeros(c, dtype), np.ones(c, dtype)
    y2, mean2, invstd2 = ref.batch_norm_train(x, w, b, rm2, rv2, 0.1, 1e-5)
    tol = dict(rtol=2e-4, atol=2e-4) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-9)
    for a, e in [(y, y2), (mean, mean2), (invstd, invstd2), (rm, rm2), (rv, rv2)]:
        np.testing.assert_allclose(a, e, **tol)
    for need in (True, False):
        got = KN.batch_norm_backward(x, g, mean, invstd, w, need)
        exp = ref.batch_norm_backward(x, g, mean2, invstd2, w, need)
        for a, e in zip(got, exp):
            if e is None:
                assert a is None
            else:
                np.testing.assert_allclose(a, e, **tol)
    x2 = x.reshape(shape[0], -1)
    w2, b2 = rng.standard_normal(x2.shape[1]).astype(dtype), np.zeros(x2.shape[1], dtype)
    yl, ml, rl = KN.layer_norm(x2, w2, b2, 1e-5)
    ye, me, re = ref.layer_norm(x2, w2, b2, 1e-5)
    np.testing.assert_allclose(yl, ye, **tol)
    got = KN.layer_norm_backward(x2, g.reshape(x2.shape), ml, rl, w2)
    exp = ref.layer_norm_backward(x2, g.reshape(x2.shape), me, re, w2)
    for a, e in zip(got, exp):
        np.testing.assert_allclose(a, e, **tol)


def test_kernels_take_strided_and_empty_inputs():
    x = np.random.default_rng(10).standard_normal((6, 8, 3))[:, ::2].transpose(0, 1, 2)
    y, _, _ = KN.batch_norm_train(x, None, None, None, None, 0.1, 1e-5)
    np.testing.assert_allclose(y.mean((0, 2)), 0, atol=1e-12)
    y, m, r = KN.layer_norm(np.empty((0, 4), np.float32), None, None, 1e-5)
    assert y.shape == (0, 4) and m.shape == (0,)
    gx, gw, gb = KN.layer_norm_backward(np.empty((0, 4)), np.empty((0, 4)), m, r, None)
    assert gx.shape == (0, 4) and gw.tolist() == [0, 0, 0, 0]


_NOJIT = """
import numpy as np, numba
assert numba.config.DISABLE_JIT
from lucid.kernels import norm as KN, softmax as KS
rng = np.random.default_rng(0)
x = rng.standard_normal((4, 3, 5)).astype(np.float32); g = rng.standard_normal(x.shape)
rm, rv = np.zeros(3, np.float32), np.ones(3, np.float32)
y, m, s = KN.batch_norm_train(x, None, None, rm, rv, 0.1, 1e-5)
assert np.allclose(y.mean((0, 2)), 0, atol=1e-5) and np.allclose(rm, 0.1 * x.mean((0, 2)))
gx, gw, gb = KN.batch_norm_backward(x, g.astype(np.float32), m, s, None)
assert np.allclose(gx.sum((0, 2)), 0, atol=1e-4) and np.allclose(gb, g.sum((0, 2)), atol=1e-4)
y2, _, _ = KN.batch_norm_train(x[:, :, 0], None, None, None, None, 0.1, 1e-5)
assert np.allclose(y2.std(0), 1, atol=1e-3)
yl, ml, rl = KN.layer_norm(x.reshape(4, 15), None, None, 1e-5)
gl = KN.layer_norm_backward(x.reshape(4, 15), g.reshape(4, 15), ml, rl, None)
assert np.allclose(gl[0].sum(1), 0, atol=1e-4)
for dt in (np.float32, np.float64):
    z = (rng.standard_normal((3, 7)) * 30).astype(dt)
    p = KS.softmax(z, 1)
    e = np.exp(z - z.max(1, keepdims=True)); e /= e.sum(1, keepdims=True)
    assert np.allclose(p, e, rtol=1e-5, atol=1e-7), (p, e)
    assert np.allclose(KS.softmax(z, 0, log=True), np.log(KS.softmax(z, 0)), atol=1e-4)
    t = np.array([0, 6, -100])
    loss, lse, wt = KS.cross_entropy(z, t, None, -100, 0.1)
    gx = KS.cross_entropy_backward(z, t, lse, np.ones(3), None, -100, 0.1)
    assert loss[2] == 0 and wt.tolist() == [1, 1, 0] and np.allclose(gx[:2].sum(1), 0, atol=1e-5)
print("nojit ok")
"""


def test_kernels_without_jit():
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_THREAD_TIMEOUT", "GOMP_SPINCOUNT")}
    env.update(NUMBA_DISABLE_JIT="1", PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", _NOJIT], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "nojit ok" in proc.stdout
