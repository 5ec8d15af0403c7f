"""``linear`` beyond the op table (``op_db.py`` holds its references, gradchecks and parity):
zero-size features, batches and outputs, forward and backward, against numpy and torch; the
same for ``bilinear``."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

# (input shape, weight shape): no input features, no output features, no rows
_SHAPES = [((3, 0), (2, 0)), ((2, 3, 0), (2, 0)), ((0,), (2, 0)), ((3, 4), (0, 4)),
           ((2, 3, 4), (0, 4)), ((0, 4), (2, 4)), ((2, 0, 4), (2, 4)), ((4,), (0, 4))]


def _t(a, backend, rg=False):
    return lucid.tensor(np.asarray(a), device=backend, requires_grad=rg)


@pytest.mark.parametrize(("xs", "ws"), _SHAPES)
@pytest.mark.parametrize("need", ["both", "input", "weight"])
def test_zero_size_linear(backend, xs, ws, need):
    rng = np.random.default_rng(0)
    xa, wa, ba = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])
    x = _t(xa, backend, need != "weight")
    w = _t(wa, backend, need != "input")
    b = _t(ba, backend, True)
    y = F.linear(x, w, b)
    np.testing.assert_allclose(y.detach().numpy(), xa @ wa.T + ba, rtol=1e-12)
    y.sum().backward()
    g = np.ones(y.shape)
    if need != "weight":
        np.testing.assert_allclose(x.grad.numpy(), g @ wa, rtol=1e-12)
    if need != "input":
        rows = int(np.prod(xs[:-1]))
        gw = g.reshape(rows, ws[0]).T @ xa.reshape(rows, ws[1])
        np.testing.assert_allclose(w.grad.numpy(), gw, rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), g.reshape(int(np.prod(xs[:-1])), ws[0]).sum(0),
                               rtol=1e-12)


@pytest.mark.parametrize(("xs", "ws"), _SHAPES)
def test_zero_size_linear_matches_torch(torch, backend, xs, ws):
    rng = np.random.default_rng(1)
    arrs = [rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])]
    ours = [_t(a, backend, True) for a in arrs]
    ref = [torch.tensor(a, requires_grad=True) for a in arrs]
    y, r = F.linear(*ours), torch.nn.functional.linear(*ref)
    y.sum().backward()
    r.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), r.detach().numpy(), rtol=1e-12)
    for a, t in zip(ours, ref):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12)


# (input1, input2, weight): no batch, an empty batch dim, no output features, and both
_BILINEAR = [((0, 4), (0, 5), (2, 4, 5)), ((0, 3, 4), (0, 3, 5), (0, 4, 5)),
             ((2, 0, 4), (2, 0, 5), (3, 4, 5)), ((2, 3, 4), (2, 3, 5), (0, 4, 5)),
             ((3, 4), (3, 5), (0, 4, 5))]


def _bilinear_ref(a, b, w, bias):
    return np.einsum("...i,oij,...j->...o", a, w, b) + bias


@pytest.mark.parametrize(("s1", "s2", "ws"), _BILINEAR)
def test_zero_size_bilinear(backend, s1, s2, ws):
    rng = np.random.default_rng(2)
    arrs = [rng.standard_normal(s) for s in (s1, s2, ws, ws[:1])]
    ours = [_t(a, backend, True) for a in arrs]
    y = F.bilinear(*ours)
    np.testing.assert_allclose(y.detach().numpy(), _bilinear_ref(*arrs), rtol=1e-12)
    y.sum().backward()
    g = np.ones(y.shape)
    a, b, w, _ = arrs
    np.testing.assert_allclose(ours[0].grad.numpy(), np.einsum("...o,oij,...j->...i", g, w, b),
                               rtol=1e-12)
    np.testing.assert_allclose(ours[1].grad.numpy(), np.einsum("...o,oij,...i->...j", g, w, a),
                               rtol=1e-12)
    n = int(np.prod(s1[:-1]))
    rows = (g.reshape(n, ws[0]), a.reshape(n, ws[1]), b.reshape(n, ws[2]))
    np.testing.assert_allclose(ours[2].grad.numpy(), np.einsum("ro,ri,rj->oij", *rows),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours[3].grad.numpy(), rows[0].sum(0), rtol=1e-12)


@pytest.mark.parametrize(("s1", "s2", "ws"), _BILINEAR)
def test_zero_size_bilinear_matches_torch(torch, backend, s1, s2, ws):
    rng = np.random.default_rng(3)
    arrs = [rng.standard_normal(s) for s in (s1, s2, ws)]
    ours = [_t(a, backend, True) for a in arrs]
    ref = [torch.tensor(a, requires_grad=True) for a in arrs]
    y, r = F.bilinear(*ours), torch.nn.functional.bilinear(*ref)
    assert tuple(y.shape) == tuple(r.shape) and y.is_contiguous()
    y.sum().backward()
    r.sum().backward()
    for a, t in zip(ours, ref):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12)
