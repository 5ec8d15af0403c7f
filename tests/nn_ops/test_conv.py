"""Convolutions (conv1d/2d, conv_transpose1d/2d, unfold, fold): a loop-over-offsets numpy
reference, float64 gradchecks for every option on both backends, the kernels' serial and
parallel builds, torch parity (values and gradients), torch's error messages, NUMBA_DISABLE_JIT."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck
from lucid.kernels import conv as KC
from lucid.ops import conv as C

REPO = Path(__file__).resolve().parents[2]


def _t(a, backend="cpu", rg=False):
    return lucid.tensor(np.asarray(a), device=backend, requires_grad=rg)


def np_conv2d(x, w, b=None, stride=(1, 1), pads=((0, 0), (0, 0)), dil=(1, 1), groups=1):
    """Reference: zero-pad, then for each kernel offset add w[:, :, i, j] times a strided slice."""
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), pads[0], pads[1]))
    oh = (xp.shape[2] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (xp.shape[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, oc, oh, ow))
    ocg = oc // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                r, s = i * dil[0], j * dil[1]
                sl = xs[:, :, r:r + (oh - 1) * stride[0] + 1:stride[0],
                        s:s + (ow - 1) * stride[1] + 1:stride[1]]
                y[:, g * ocg:(g + 1) * ocg] += np.einsum("nchw,oc->nohw", sl,
                                                         w[g * ocg:(g + 1) * ocg, :, i, j])
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def np_conv_transpose2d(x, w, b=None, stride=(1, 1), pad=(0, 0), out_pad=(0, 0), dil=(1, 1),
                        groups=1):
    """Reference: scatter every input pixel times the kernel into the (cropped) output."""
    n, cin, h, wd = x.shape
    _, coutg, kh, kw = w.shape
    cing = cin // groups
    hf = (h - 1) * stride[0] + dil[0] * (kh - 1) + 1 + out_pad[0]
    wf = (wd - 1) * stride[1] + dil[1] * (kw - 1) + 1 + out_pad[1]
    full = np.zeros((n, coutg * groups, hf, wf))
    for g in range(groups):
        xs = x[:, g * cing:(g + 1) * cing]
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum("nchw,co->nohw", xs, w[g * cing:(g + 1) * cing, :, i, j])
                r, s = i * dil[0], j * dil[1]
                full[:, g * coutg:(g + 1) * coutg, r:r + (h - 1) * stride[0] + 1:stride[0],
                     s:s + (wd - 1) * stride[1] + 1:stride[1]] += contrib
    y = full[:, :, pad[0]:hf - pad[0], pad[1]:wf - pad[1]]
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return y


# (N, C, OC, H, W, kernel, stride, padding, dilation, groups)
CONV_CASES = [
    (2, 3, 4, 6, 7, (3, 3), 1, 1, 1, 1),
    (2, 4, 6, 7, 9, (3, 2), (2, 1), (0, 1), (1, 2), 2),
    (1, 4, 4, 6, 6, (3, 3), 2, 1, 1, 4),              # depthwise
    (2, 2, 6, 5, 5, (3, 3), 1, 1, 1, 2),              # depth multiplier 3
    (1, 3, 2, 5, 4, (1, 1), 1, 0, 1, 1),
    (2, 2, 3, 8, 8, (2, 2), 3, 2, 2, 1),
    (1, 2, 2, 3, 3, (3, 3), 1, 0, 1, 1),              # kernel = input
]


def _pp(v):
    return (v, v) if isinstance(v, int) else tuple(v)


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_forward_matches_reference(backend, case):
    n, c, oc, h, w, k, s, p, d, g = case
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, c, h, w))
    wt = rng.standard_normal((oc, c // g, *k))
    b = rng.standard_normal(oc)
    got = C.conv2d(_t(x, backend), _t(wt, backend), _t(b, backend), s, p, d, g)
    p2 = _pp(p)
    want = np_conv2d(x, wt, b, _pp(s), ((p2[0], p2[0]), (p2[1], p2[1])), _pp(d), g)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("par", [False, True], ids=["serial", "parallel"])
@pytest.mark.parametrize("case", CONV_CASES[:4])
def test_conv2d_float32_kernel_builds(case, par, monkeypatch):
    """float32 forward and both gradients from the serial and the parallel kernel builds."""
    monkeypatch.setattr(KC, "use_parallel", lambda n, kind="reduce": par)
    n, c, oc, h, w, k, s, p, d, g = case
    rng = np.random.default_rng(2)
    x = rng.standard_normal((n * 3, c, h, w)).astype(np.float32)
    wt = rng.standard_normal((oc, c // g, *k)).astype(np.float32)
    p2 = _pp(p)
    a = (_pp(s), ((p2[0], p2[0]), (p2[1], p2[1])), _pp(d), g)
    y = KC.conv2d(x, wt, None, *a)
    gy = rng.standard_normal(y.shape).astype(np.float32)
    from lucid.backend import _conv_ref as R

    x64, w64, g64 = (v.astype(np.float64) for v in (x, wt, gy))
    for got, want in ((y, R.conv2d(x64, w64, None, *a)),
                      (KC.conv2d_grad_input(gy, wt, x.shape, *a),
                       R.conv2d_grad_input(g64, w64, x.shape, *a)),
                      (KC.conv2d_grad_weight(x, gy, wt.shape, *a),
                       R.conv2d_grad_weight(x64, g64, wt.shape, *a))):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_gradcheck(backend, case):
    n, c, oc, h, w, k, s, p, d, g = case
    rng = np.random.default_rng(3)
    x = _t(rng.standard_normal((n, c, h, w)), backend, True)
    wt = _t(rng.standard_normal((oc, c // g, *k)), backend, True)
    b = _t(rng.standard_normal(oc), backend, True)
    assert gradcheck(lambda a, ww, bb: C.conv2d(a, ww, bb, s, p, d, g), (x, wt, b))


@pytest.mark.parametrize("padding,k,d", [("same", (3, 3), 1), ("same", (4, 2), 1),
                                         ("same", (2, 3), (2, 1)), ("valid", (3, 2), 1)])
def test_conv2d_string_padding(backend, padding, k, d):
    rng = np.random.default_rng(4)
    x = _t(rng.standard_normal((1, 2, 5, 6)), backend, True)
    w = _t(rng.standard_normal((3, 2, *k)), backend, True)
    y = C.conv2d(x, w, padding=padding, dilation=d)
    if padding == "same":
        assert tuple(y.shape) == (1, 3, 5, 6)
        dd = _pp(d)
        tot = [dd[0] * (k[0] - 1), dd[1] * (k[1] - 1)]
        pads = ((tot[0] // 2, tot[0] - tot[0] // 2), (tot[1] // 2, tot[1] - tot[1] // 2))
    else:
        pads = ((0, 0), (0, 0))
    want = np_conv2d(x.detach().numpy(), w.detach().numpy(), None, (1, 1), pads, _pp(d))
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-10, atol=1e-10)
    assert gradcheck(lambda a, ww: C.conv2d(a, ww, padding=padding, dilation=d), (x, w))


def test_conv2d_unbatched_and_no_bias(backend):
    rng = np.random.default_rng(5)
    x = _t(rng.standard_normal((2, 5, 5)), backend, True)
    w = _t(rng.standard_normal((3, 2, 3, 3)), backend, True)
    y = C.conv2d(x, w, padding=1)
    assert tuple(y.shape) == (3, 5, 5)
    want = np_conv2d(x.detach().numpy()[None], w.detach().numpy(), pads=((1, 1), (1, 1)))[0]
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-10, atol=1e-10)
    assert gradcheck(lambda a, ww: C.conv2d(a, ww, padding=1), (x, w))


@pytest.mark.parametrize("s,p,d,g", [(1, 0, 1, 1), (2, 1, 1, 2), (1, "same", 2, 1), (3, 2, 2, 1)])
def test_conv1d(backend, s, p, d, g):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 4, 9))
    w = rng.standard_normal((6, 4 // g, 3))
    b = rng.standard_normal(6)
    y = C.conv1d(_t(x, backend), _t(w, backend), _t(b, backend), s, p, d, g)
    if p == "same":
        tot = d * 2
        pads = ((0, 0), (tot // 2, tot - tot // 2))
    else:
        pads = ((0, 0), (p, p))
    want = np_conv2d(x[:, :, None], w[:, :, None], b, (1, s), pads, (1, d), g)[:, :, 0]
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-10, atol=1e-10)
    xt, wt, bt = _t(x, backend, True), _t(w, backend, True), _t(b, backend, True)
    assert gradcheck(lambda a, ww, bb: C.conv1d(a, ww, bb, s, p, d, g), (xt, wt, bt))
    assert tuple(C.conv1d(_t(x[0], backend), _t(w, backend), None, s, p, d, g).shape) == (
        6, want.shape[-1])


# (N, Cin, Cout/groups, H, W, kernel, stride, padding, output_padding, dilation, groups)
CT_CASES = [
    (2, 3, 2, 4, 4, (3, 3), 1, 0, 0, 1, 1),
    (1, 4, 3, 3, 5, (3, 2), (2, 1), (1, 0), (1, 0), 1, 2),
    (2, 2, 2, 3, 3, (2, 2), 2, 0, 1, 2, 1),
    (1, 4, 1, 3, 4, (3, 3), 2, 1, 1, 1, 4),
    (1, 2, 3, 3, 3, (2, 2), 1, 0, 1, 2, 1),          # output_padding >= stride (dilation 2)
]


@pytest.mark.parametrize("case", CT_CASES)
def test_conv_transpose2d(backend, case):
    n, cin, coutg, h, w, k, s, p, op, d, g = case
    rng = np.random.default_rng(7)
    x = rng.standard_normal((n, cin, h, w))
    wt = rng.standard_normal((cin, coutg, *k))
    b = rng.standard_normal(coutg * g)
    y = C.conv_transpose2d(_t(x, backend), _t(wt, backend), _t(b, backend), s, p, op, g, d)
    want = np_conv_transpose2d(x, wt, b, _pp(s), _pp(p), _pp(op), _pp(d), g)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-10, atol=1e-10)
    xt, wtt, bt = _t(x, backend, True), _t(wt, backend, True), _t(b, backend, True)
    assert gradcheck(lambda a, ww, bb: C.conv_transpose2d(a, ww, bb, s, p, op, g, d),
                     (xt, wtt, bt))


def test_conv_transpose1d_and_unbatched(backend):
    rng = np.random.default_rng(8)
    x = _t(rng.standard_normal((2, 4, 5)), backend, True)
    w = _t(rng.standard_normal((4, 3, 3)), backend, True)
    y = C.conv_transpose1d(x, w, stride=2, padding=1, output_padding=1)
    want = np_conv_transpose2d(x.detach().numpy()[:, :, None], w.detach().numpy()[:, :, None],
                               None, (1, 2), (0, 1), (0, 1))[:, :, 0]
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-10, atol=1e-10)
    assert gradcheck(lambda a, ww: C.conv_transpose1d(a, ww, stride=2, padding=1,
                                                      output_padding=1), (x, w))
    x3 = _t(rng.standard_normal((4, 3, 3)), backend, True)
    w4 = _t(rng.standard_normal((4, 2, 2, 2)), backend, True)
    assert tuple(C.conv_transpose2d(x3, w4, stride=2).shape) == (2, 6, 6)
    assert gradcheck(lambda a, ww: C.conv_transpose2d(a, ww, stride=2), (x3, w4))


@pytest.mark.parametrize("k,d,p,s", [(2, 1, 0, 1), ((2, 3), (1, 2), (1, 0), (2, 1)), (3, 1, 1, 2)])
def test_unfold_fold(backend, k, d, p, s):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 6, 5))
    cols = C.unfold(_t(x, backend), k, d, p, s)
    kk, dd, pp, ss = _pp(k), _pp(d), _pp(p), _pp(s)
    # unfold is conv2d with an identity weight
    eye = np.eye(3 * kk[0] * kk[1]).reshape(-1, 3, *kk)
    want = np_conv2d(x, eye, None, ss, ((pp[0], pp[0]), (pp[1], pp[1])), dd)
    np.testing.assert_allclose(cols.numpy(), want.reshape(2, want.shape[1], -1), atol=1e-12)
    folded = C.fold(cols, (6, 5), k, d, p, s)
    assert tuple(folded.shape) == (2, 3, 6, 5)
    ones = C.fold(C.unfold(_t(np.ones_like(x), backend), k, d, p, s), (6, 5), k, d, p, s)
    np.testing.assert_allclose(folded.numpy(), x * ones.numpy(), atol=1e-12)
    xt = _t(x[:1, :2], backend, True)
    assert gradcheck(lambda a: C.unfold(a, k, d, p, s), (xt,))
    ct = _t(rng.standard_normal((1, cols.shape[1] // 3 * 2, cols.shape[2])), backend, True)
    assert gradcheck(lambda a: C.fold(a, (6, 5), k, d, p, s), (ct,))
    assert tuple(C.unfold(_t(x[0], backend), k, d, p, s).shape) == tuple(cols.shape[1:])


def test_grad_only_where_asked(backend):
    """Inputs that do not require grad get no gradient work (a first layer's image)."""
    x = _t(np.random.default_rng(0).standard_normal((2, 1, 6, 6)), backend)
    w = _t(np.ones((4, 1, 3, 3)), backend, True)
    y = C.conv2d(x, w, padding=1)
    assert y.grad_fn.name() == "ConvolutionBackward0"
    assert y.grad_fn.saved[1] is None  # the weight is not kept: no input gradient is wanted
    y.sum().backward()
    assert x.grad is None and tuple(w.grad.shape) == (4, 1, 3, 3)


def test_empty_batch_and_integer_fallback(backend):
    y = C.conv2d(_t(np.zeros((0, 2, 5, 5)), backend), _t(np.ones((3, 2, 3, 3)), backend))
    assert tuple(y.shape) == (0, 3, 3, 3)
    xi = _t(np.arange(32).reshape(1, 2, 4, 4), backend)
    wi = _t(np.ones((1, 2, 2, 2), dtype=np.int64), backend)
    got = C.conv2d(xi, wi)
    assert got.dtype is lucid.int64
    np.testing.assert_array_equal(got.numpy(), np_conv2d(xi.numpy(), wi.numpy()).astype(int))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cpu_matches_reference_backend(dtype):
    rng = np.random.default_rng(10)
    x = rng.standard_normal((3, 4, 9, 8)).astype(dtype)
    w = rng.standard_normal((6, 2, 3, 3)).astype(dtype)
    out = {}
    for be in ("cpu", "numpy"):
        xt, wt = _t(x, be, True), _t(w, be, True)
        y = C.conv2d(xt, wt, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
        (y * y).sum().backward()
        out[be] = (y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy())
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for a, b in zip(out["cpu"], out["numpy"]):
        assert a.dtype == dtype
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# ---- torch parity -------------------------------------------------------------------------------


@pytest.mark.parity
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_parity(torch, case):
    n, c, oc, h, w, k, s, p, d, g = case
    rng = np.random.default_rng(11)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wt = rng.standard_normal((oc, c // g, *k)).astype(np.float32)
    b = rng.standard_normal(oc).astype(np.float32)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, wt, b))
    ty = torch.nn.functional.conv2d(tx, tw, tb, s, p, d, g)
    gy = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    ty.backward(torch.tensor(gy))
    lx, lw, lb = (_t(a, "cpu", True) for a in (x, wt, b))
    ly = C.conv2d(lx, lw, lb, s, p, d, g)
    ly.backward(_t(gy))
    for mine, theirs in ((ly, ty), (lx.grad, tx.grad), (lw.grad, tw.grad), (lb.grad, tb.grad)):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-4,
                                   atol=1e-4)


@pytest.mark.parity
@pytest.mark.parametrize("case", CT_CASES)
def test_conv_transpose2d_parity(torch, case):
    n, cin, coutg, h, w, k, s, p, op, d, g = case
    rng = np.random.default_rng(12)
    x = rng.standard_normal((n, cin, h, w))
    wt = rng.standard_normal((cin, coutg, *k))
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(wt, requires_grad=True)
    ty = torch.nn.functional.conv_transpose2d(tx, tw, None, s, p, op, g, d)
    ty.pow(2).sum().backward()
    lx, lw = _t(x, "cpu", True), _t(wt, "cpu", True)
    ly = C.conv_transpose2d(lx, lw, None, s, p, op, g, d)
    (ly * ly).sum().backward()
    for mine, theirs in ((ly, ty), (lx.grad, tx.grad), (lw.grad, tw.grad)):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-9,
                                   atol=1e-9)


@pytest.mark.parity
def test_unfold_fold_parity(torch):
    x = np.random.default_rng(13).standard_normal((2, 3, 7, 6))
    F = torch.nn.functional
    np.testing.assert_allclose(C.unfold(_t(x), (2, 3), 2, 1, (2, 1)).numpy(),
                               F.unfold(torch.tensor(x), (2, 3), 2, 1, (2, 1)).numpy())
    cols = F.unfold(torch.tensor(x), 3, 1, 1, 2)
    np.testing.assert_allclose(C.fold(_t(cols.numpy()), (7, 6), 3, 1, 1, 2).numpy(),
                               F.fold(cols, (7, 6), 3, 1, 1, 2).numpy(), atol=1e-12)


# ---- errors (torch's text) ----------------------------------------------------------------------


ERRORS = [
    (lambda F, z: F.conv2d(z(28, 28), z(16, 1, 3, 3)),
     "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [28, 28]"),
    (lambda F, z: F.conv2d(z(8, 1, 28, 28), z(16, 3, 3, 3)),
     "Given groups=1, weight of size [16, 3, 3, 3], expected input[8, 1, 28, 28] to have 3 "
     "channels, but got 1 channels instead"),
    (lambda F, z: F.conv2d(z(8, 1, 2, 2), z(16, 1, 3, 3)),
     "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size "
     "can't be greater than actual input size"),
    (lambda F, z: F.conv2d(z(1, 2, 2), z(16, 1, 3, 3)),
     "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size "
     "can't be greater than actual input size"),
    (lambda F, z: F.conv2d(z(8, 4, 5, 5), z(6, 2, 3, 3), groups=3),
     "Given groups=3, weight of size [6, 2, 3, 3], expected input[8, 4, 5, 5] to have 6 "
     "channels, but got 4 channels instead"),
    (lambda F, z: F.conv2d(z(8, 6, 5, 5), z(4, 2, 3, 3), groups=3),
     "Given groups=3, expected weight to be divisible by 3 at dimension 0, but got weight of "
     "size [[4, 2, 3, 3]] instead"),
    (lambda F, z: F.conv2d(z(8, 4, 5, 5), z(4, 2, 3, 3), groups=0),
     "non-positive groups is not supported"),
    (lambda F, z: F.conv2d(z(8, 4, 5, 5), z(4, 4, 3, 3), stride=0),
     "non-positive stride is not supported"),
    (lambda F, z: F.conv2d(z(8, 4, 5, 5), z(4, 4, 3, 3), padding=-1),
     "negative padding is not supported"),
    (lambda F, z: F.conv2d(z(8, 4, 5, 5), z(4, 4, 3, 3), dilation=0),
     "non-positive dilation is not supported"),
    (lambda F, z: F.conv2d(z(8, 4, 5, 5), z(4, 4, 3, 3), padding="same", stride=2),
     "padding='same' is not supported for strided convolutions"),
    (lambda F, z: F.conv2d(z(8, 4, 5, 5), z(4, 4, 3, 3), padding="foo"),
     "Invalid padding string: 'foo'"),
    (lambda F, z: F.conv2d(z(8, 4, 5, 5), z(4, 4, 3, 3), bias=z(3)),
     "Given weight of size [4, 4, 3, 3], expected bias to be 1-dimensional with 4 elements, but "
     "got bias of size [3] instead"),
    (lambda F, z: F.conv2d(z(8, 4, 5, 5), z(4, 4, 3, 3), stride=(1, 2, 3)),
     "expected stride to be a single integer value or a list of 2 values to match the "
     "convolution dimensions, but got stride=[1, 2, 3]"),
    (lambda F, z: F.conv2d(z(2, 4, 5, 5), z(0, 4, 3, 3)),
     "Given groups=1, expected weight to be at least 1 at dimension 0, but got weight of size "
     "[0, 4, 3, 3] instead"),
    (lambda F, z: F.conv1d(z(8, 4, 5, 5), z(4, 4, 3)),
     "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: "
     "[8, 4, 5, 5]"),
    (lambda F, z: F.conv1d(z(8, 4, 2), z(4, 4, 3)),
     "Calculated padded input size per channel: (2). Kernel size: (3). Kernel size can't be "
     "greater than actual input size"),
    (lambda F, z: F.conv1d(z(8, 3, 5), z(4, 4, 3)),
     "Given groups=1, weight of size [4, 4, 3], expected input[8, 3, 5] to have 4 channels, "
     "but got 3 channels instead"),
    (lambda F, z: F.conv_transpose2d(z(8, 3, 5, 5), z(4, 4, 3, 3)),
     "Given transposed=1, weight of size [4, 4, 3, 3], expected input[8, 3, 5, 5] to have 4 "
     "channels, but got 3 channels instead"),
    (lambda F, z: F.conv_transpose2d(z(3, 5), z(4, 4, 3, 3)),
     "Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of size: "
     "[3, 5]"),
    (lambda F, z: F.conv_transpose2d(z(8, 4, 5, 5), z(4, 4, 3, 3), stride=2, output_padding=2),
     "output padding must be smaller than either stride or dilation, but got "
     "output_padding_height: 2 output_padding_width: 2 stride_height: 2 stride_width: 2 "
     "dilation_height: 1 dilation_width: 1"),
    (lambda F, z: F.conv_transpose2d(z(1, 2, 5, 5), z(2, 2, 3, 3), bias=z(3)),
     "Given transposed=1, weight of size [2, 2, 3, 3], expected bias to be 1-dimensional with 2 "
     "elements, but got bias of size [3] instead"),
    (lambda F, z: F.conv_transpose2d(z(1, 2, 5, 5), z(2, 2, 3, 3), output_padding=-1),
     "negative output_padding is not supported"),
    (lambda F, z: F.conv_transpose2d(z(1, 2, 2, 2), z(2, 2, 3, 3), padding=3),
     "Given input size per channel: (2 x 2). Calculated output size per channel: (-2 x -2). "
     "Output size is too small"),
    (lambda F, z: F.unfold(z(2, 3, 5, 5), 6),
     "Given input with spatial size (5, 5), kernel_size=(6, 6), dilation=(1, 1), padding=(0, 0), "
     "calculated shape of the array of sliding blocks as (0, 0), but its components must be at "
     "least one."),
    (lambda F, z: F.unfold(z(2, 3, 5, 5), 2, stride=0),
     "stride should be greater than zero, but got stride_height: 0 stride_width: 0"),
    (lambda F, z: F.unfold(z(2, 3, 5, 5), 2, padding=-1),
     "padding should be non-negative, but got pad_height: -1 pad_width: -1"),
    (lambda F, z: F.unfold(z(2, 3, 5, 5, 2), 2),
     "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
     "dimensions for input, but got: [2, 3, 5, 5, 2]"),
    (lambda F, z: F.fold(z(2, 12, 9), (5, 5), 2),
     "Given output_size=(5, 5), kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), "
     "stride=(1, 1), expected size of input's dimension 2 to match the calculated number of "
     "sliding blocks 4 * 4 = 16, but got input.size(2)=9."),
    (lambda F, z: F.fold(z(2, 13, 16), (5, 5), 2),
     "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
     "got input.size(1)=13 and kernel_size=(2, 2)."),
    (lambda F, z: F.fold(z(2, 2, 12, 16), (5, 5), 2),
     "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
     "dimensions for input, but got: [2, 2, 12, 16]"),
    (lambda F, z: F.fold(z(2, 12, 16), (5, 5, 5), 2),
     "It is expected output_size equals to 2, but got size 3"),
]


@pytest.mark.parametrize("fn,msg", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors_match_torch(fn, msg):
    with pytest.raises(RuntimeError) as info:
        fn(C, lucid.zeros)
    assert str(info.value) == msg


@pytest.mark.parity
@pytest.mark.parametrize("fn,msg", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_error_texts_are_torchs(torch, fn, msg):
    """The same calls made with torch raise exactly these messages."""
    with pytest.raises(RuntimeError) as info:
        fn(torch.nn.functional, torch.zeros)
    assert str(info.value).split("\n")[0] == msg


def test_blas_thread_count_restored(monkeypatch):
    """Parallel GEMM kernels set OpenBLAS to one thread and restore it, also when several
    Python threads run convolutions at once."""
    from concurrent.futures import ThreadPoolExecutor

    if not KC._BLAS.available():
        pytest.skip("no controllable OpenBLAS")
    monkeypatch.setattr(KC, "use_parallel", lambda n, kind="reduce": True)
    before = [g() for _, g in KC._BLAS.libs]
    rng = np.random.default_rng(14)
    x = rng.standard_normal((6, 4, 9, 9)).astype(np.float32)
    w = rng.standard_normal((8, 4, 3, 3)).astype(np.float32)
    a = ((1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    want = KC.conv2d(x, w, None, *a)

    def work(_):
        y = KC.conv2d(x, w, None, *a)
        KC.conv2d_grad_input(y, w, x.shape, *a)
        KC.conv2d_grad_weight(x, y, w.shape, *a)
        return y

    with ThreadPoolExecutor(3) as pool:
        for y in pool.map(work, range(12)):
            np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    assert KC._BLAS.depth == 0 and [g() for _, g in KC._BLAS.libs] == before


def test_dtype_mismatch():
    with pytest.raises(RuntimeError, match="should be the same"):
        C.conv2d(lucid.zeros(1, 1, 3, 3), lucid.zeros(1, 1, 2, 2, dtype=lucid.float64))


def test_kernels_without_jit():
    """The conv kernels run as plain Python (NUMBA_DISABLE_JIT=1), same answers."""
    code = (
        "import numpy as np, numba\n"
        "assert numba.config.DISABLE_JIT\n"
        "from lucid.kernels import conv as K\n"
        "from lucid.backend import _conv_ref as R\n"
        "r = np.random.default_rng(0)\n"
        "def close(a, b): np.testing.assert_allclose(a, b, 1e-4, 1e-4)\n"
        "for dt in (np.float32, np.float64):\n"
        "    x = r.standard_normal((3, 4, 6, 5)).astype(dt)\n"
        "    for ws, args in (((6, 2, 3, 2), ((1, 2), ((1, 1), (0, 1)), (1, 2), 2)),\n"
        "                     ((2, 4, 3, 3), ((1, 1), ((1, 1), (1, 1)), (1, 1), 1))):\n"
        "        w = r.standard_normal(ws).astype(dt)\n"
        "        y = K.conv2d(x, w, None, *args)\n"
        "        close(y, R.conv2d(x, w, None, *args))\n"
        "        close(K.conv2d_grad_input(y, w, x.shape, *args),"
        " R.conv2d_grad_input(y, w, x.shape, *args))\n"
        "        close(K.conv2d_grad_weight(x, y, w.shape, *args),"
        " R.conv2d_grad_weight(x, y, w.shape, *args))\n"
        "    a = ((2, 2), (1, 1), (1, 0), (1, 2))\n"
        "    c = K.unfold(x, *a)\n"
        "    close(c, R.unfold(x, *a))\n"
        "    close(K.fold(c, (6, 5), *a), R.fold(c, (6, 5), *a))\n"
        "print('ok')\n")
    run_without_jit(code)


def run_without_jit(code: str) -> None:
    """Run ``code`` in a fresh interpreter with NUMBA_DISABLE_JIT=1; it must print "ok"."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", LUCID_PARALLEL_THRESHOLD="0")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
