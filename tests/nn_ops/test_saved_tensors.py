"""What a backward keeps, as torch keeps it: an in-place change after the forward to a tensor
torch does not save (a matmul operand whose partner needs no gradient, cross-entropy's
logits, an l1 operand) leaves the gradient of the original values; a change to one torch
saves (convolution and pooling inputs, nll's input, class-index targets) refuses the
backward."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

_MODIFIED = "modified by an inplace operation"


def _t(a, backend, rg=False):
    return lucid.tensor(np.asarray(a), device=backend, requires_grad=rg)


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _edit(t, grad_mode=False):
    if grad_mode:
        t.mul_(3.0)
    else:
        with lucid.no_grad():
            t.add_(1.0)


@pytest.mark.parametrize("grad_mode", [False, True])
def test_matmul_operand_whose_partner_needs_no_gradient(backend, grad_mode):
    rng = np.random.default_rng(0)
    a0, c0 = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    a, c = _t(a0, backend, True), _t(c0, backend)
    x = a * 1.0
    y = x @ c
    _edit(x, grad_mode)  # x is read only for c's gradient, which nobody wants
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.ones((3, 5)) @ c0.T, rtol=1e-12)
    # c is read for x's gradient: changing it refuses
    a.grad = None
    y = a @ c
    _edit(c)
    with pytest.raises(RuntimeError, match=_MODIFIED):
        y.sum().backward()


@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4)])
def test_linear_input_and_weight(backend, shape):
    rng = np.random.default_rng(1)
    a0, w0 = rng.standard_normal(shape), rng.standard_normal((5, 4))
    a, w = _t(a0, backend, True), _t(w0, backend)
    x = a * 1.0
    y = F.linear(x, w)
    _edit(x)  # the weight needs no gradient, so x is not kept
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.ones(shape[:-1] + (5,)) @ w0, rtol=1e-12)
    b = _t(w0, backend, True)
    wv = b * 1.0
    y = F.linear(_t(a0, backend), wv)
    _edit(wv)  # the input needs no gradient, so the weight is not kept
    y.sum().backward()
    rows = a0.reshape(-1, 4)
    np.testing.assert_allclose(b.grad.numpy(), np.ones((len(rows), 5)).T @ rows, rtol=1e-12)
    y = F.linear(a * 1.0, b)  # both wanted: both kept
    with lucid.no_grad():
        b.add_(1.0)
    with pytest.raises(RuntimeError, match=_MODIFIED):
        y.sum().backward()


@pytest.mark.parametrize("grad_mode", [False, True])
@pytest.mark.parametrize("layout", ["rows", "unbatched", "view", "spatial", "spatial_one"])
def test_cross_entropy_logits(backend, layout, grad_mode):
    """torch's cross-entropy keeps the log-softmax, not the logits; lucid's fused kernel reads
    the logits, so it is handed a copy of them before the write."""
    rng = np.random.default_rng(2)
    shapes = {"rows": (6, 4), "unbatched": (4,), "view": (2, 3, 4), "spatial": (2, 4, 3),
              "spatial_one": (3, 4, 1)}
    a0 = rng.standard_normal(shapes[layout])
    a = _t(a0, backend, True)
    h = a * 2.0
    if layout == "view":
        x, t0 = h.view(6, 4), np.array([0, 3, 1, 2, -100, 1])
    elif layout == "unbatched":
        x, t0 = h, np.array(2)
    elif layout == "rows":
        x, t0 = h, np.array([0, 3, 1, 2, -100, 1])
    else:
        x, t0 = h, rng.integers(0, 4, (a0.shape[0], a0.shape[2]))
    loss = F.cross_entropy(x, _t(t0, backend))
    _edit(h, grad_mode)
    loss.backward()
    # numpy: the mean over kept targets of softmax - onehot, on the original logits, times 2
    spatial = layout.startswith("spatial")
    rows = np.moveaxis(2 * a0, 1, -1).reshape(-1, 4) if spatial else (2 * a0).reshape(-1, 4)
    tr = t0.reshape(-1)
    keep = tr != -100
    g = _softmax(rows)
    g[np.arange(len(tr)), np.where(keep, tr, 0)] -= 1
    g = np.where(keep[:, None], g, 0) / keep.sum() * 2
    if spatial:
        g = np.moveaxis(g.reshape(a0.shape[0], a0.shape[2], 4), -1, 1)
    np.testing.assert_allclose(a.grad.numpy(), g.reshape(a0.shape), rtol=1e-10, atol=1e-15)


def test_cross_entropy_target_still_refuses_and_aliases_are_covered(backend):
    a0 = np.random.default_rng(3).standard_normal((4, 3))
    a = _t(a0, backend, True)
    t = _t([0, 2, 1, 1], backend)
    loss = F.cross_entropy(a * 1.0, t)
    with lucid.no_grad():
        t.fill_(-10 ** 12)  # an index edited after the forward is never read
    with pytest.raises(RuntimeError, match=_MODIFIED):
        loss.backward()
    x = a * 1.0
    loss = F.cross_entropy(x, _t([0, 2, 1, 1], backend))
    x.detach().add_(1.0)  # a detached alias shares the memory and the version counter
    x.detach()[0].zero_()
    loss.backward()
    g = _softmax(a0)
    g[np.arange(4), [0, 2, 1, 1]] -= 1
    np.testing.assert_allclose(a.grad.numpy(), g / 4, rtol=1e-12)


def test_l1_loss_operands(backend):
    rng = np.random.default_rng(4)
    a0, t0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    a, t = _t(a0, backend, True), _t(t0, backend)
    x = a * 1.0
    loss = F.l1_loss(x, t)
    _edit(t)
    _edit(x)
    loss.backward()
    np.testing.assert_allclose(a.grad.numpy(), np.sign(a0 - t0) / 12, rtol=1e-12)


def test_what_torch_keeps_refuses(backend):
    rng = np.random.default_rng(5)
    img, k = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3))
    cases = [
        lambda x: F.conv2d(x, _t(k, backend)),  # torch keeps both operands of a convolution
        lambda x: F.conv2d(_t(img, backend), x[:, :3, :3, :3].reshape(2, 3, 3, 3)),
        lambda x: F.max_pool2d(x, 2),
        lambda x: F.avg_pool2d(x, 2),
        lambda x: F.adaptive_max_pool2d(x, 2),
        lambda x: F.nll_loss(x.reshape(2, -1), _t([0, 1], backend)),
        lambda x: F.mse_loss(x, _t(np.zeros(img.shape), backend)),
    ]
    for op in cases:
        a = _t(img, backend, True)
        x = a * 1.0
        y = op(x)
        _edit(x)
        with pytest.raises(RuntimeError, match=_MODIFIED):
            y.sum().backward()


# ---- torch parity -------------------------------------------------------------------------------


_CASES = ["x@c edit x", "c@x edit c", "x@w edit x", "linear edit x", "linear edit w",
          "linear both edit x", "conv edit x", "conv edit w", "mul edit x", "mul edit c",
          "cross_entropy edit logits", "cross_entropy view edit base", "nll edit input",
          "l1 edit target", "mse edit target", "max_pool edit input", "avg_pool edit input",
          "adaptive_avg_pool edit input", "global_avg_pool edit input",
          "log_softmax edit input", "softmax edit input"]


def _build(m, backend, case):
    """(output, tensor to edit, leaf whose gradient is compared) for lucid or torch ``m``."""
    rng = np.random.default_rng(6)
    kw = {"device": backend} if m is lucid else {}
    F_ = m.nn.functional

    def t(shape, rg=False):
        return m.tensor(rng.standard_normal(shape), requires_grad=rg, **kw)

    a = t((2, 3, 4, 4) if "conv" in case or "pool" in case else (3, 4), True)
    x = a * 1.0
    if case == "x@c edit x":
        return x @ t((4, 5)), x, a
    if case == "c@x edit c":
        c = t((5, 3))
        return c @ a, c, a
    if case == "x@w edit x":
        return x @ t((4, 5), True), x, a
    if case == "linear edit x":
        return F_.linear(x, t((5, 4)), t((5,), True)), x, a
    if case == "linear edit w":
        w = t((5, 4))
        return F_.linear(a, w), w, a
    if case == "linear both edit x":
        return F_.linear(x, t((5, 4), True)), x, a
    if case == "conv edit x":
        return F_.conv2d(x, t((2, 3, 3, 3))), x, a
    if case == "conv edit w":
        w = t((2, 3, 3, 3))
        return F_.conv2d(a, w), w, a
    if case == "mul edit x":
        return x * t((3, 4)), x, a
    if case == "mul edit c":
        c = t((3, 4))
        return a * c, c, a
    if case == "cross_entropy edit logits":
        return F_.cross_entropy(x, m.tensor([0, 3, -100], **kw)), x, a
    if case == "cross_entropy view edit base":
        return F_.cross_entropy(x.view(4, 3), m.tensor([0, 2, 1, 1], **kw)), x, a
    if case == "nll edit input":
        return F_.nll_loss(x, m.tensor([0, 3, 1], **kw)), x, a
    if case in ("l1 edit target", "mse edit target"):
        c = t((3, 4))
        return getattr(F_, case.split()[0] + "_loss")(a, c), c, a
    if case == "max_pool edit input":
        return F_.max_pool2d(x, 2), x, a
    if case == "avg_pool edit input":
        return F_.avg_pool2d(x, 2), x, a
    if case == "adaptive_avg_pool edit input":
        return F_.adaptive_avg_pool2d(x, (2, 1)), x, a
    if case == "global_avg_pool edit input":  # torch takes a mean, which keeps nothing
        return F_.adaptive_avg_pool2d(x, 1), x, a
    if case == "log_softmax edit input":
        return F_.log_softmax(x, 1) * t((3, 4)), x, a
    return F_.softmax(x, 1) * t((3, 4)), x, a


@pytest.mark.parametrize("case", _CASES)
def test_in_place_edits_after_forward_match_torch(torch, backend, case):
    results = []
    for m in (torch, lucid):
        y, edited, leaf = _build(m, backend, case)
        with m.no_grad():
            edited.add_(1.0)
        try:
            y.sum().backward()
            results.append(leaf.grad.numpy())
        except RuntimeError as e:
            assert "modified by an inplace operation" in str(e)
            results.append(None)
    ref, got = results
    assert (got is None) == (ref is None), f"torch {'refuses' if ref is None else 'computes'}"
    if ref is not None:
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-14)


def test_cross_entropy_second_derivative_after_editing_logits(torch, backend):
    rng = np.random.default_rng(7)
    a0 = rng.standard_normal((2, 3, 4))
    res = []
    for m in (torch, lucid):
        kw = {"device": backend} if m is lucid else {}
        a = m.tensor(a0, requires_grad=True, **kw)
        h = a * 2.0
        loss = m.nn.functional.cross_entropy(h.view(6, 4),
                                             m.tensor([0, 3, 1, 2, -100, 1], **kw))
        with m.no_grad():
            h.add_(1.0)
        (g,) = m.autograd.grad(loss, a, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), a)
        res.append((g.detach().numpy(), gg.numpy()))
    for r, o in zip(*res):
        np.testing.assert_allclose(o, r, rtol=1e-9, atol=1e-14)
