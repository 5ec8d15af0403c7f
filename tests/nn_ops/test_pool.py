"""Pooling (max/avg/adaptive, 1-D and 2-D): loop references, float64 gradchecks for every
option on both backends, the kernels' serial and parallel builds, NaN and -inf rules, torch
parity (values, indices, gradients) and torch's error messages."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck
from lucid.kernels import pool as KP
from lucid.ops import pool as P

REPO = Path(__file__).resolve().parents[2]


def _t(a, backend="cpu", rg=False):
    return lucid.tensor(np.asarray(a), device=backend, requires_grad=rg)


def _pp(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def out_size(n, k, s, p, d, ceil):
    num = n + 2 * p - d * (k - 1) - 1
    o = (math.ceil(num / s) if ceil else num // s) + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def np_max_pool2d(x, k, s, p, d, ceil):
    """Reference by explicit loops over output positions (torch's NaN / first-max rules)."""
    n, c, h, w = x.shape
    oh, ow = out_size(h, k[0], s[0], p[0], d[0], ceil), out_size(w, k[1], s[1], p[1], d[1], ceil)
    y = np.empty((n, c, oh, ow))
    idx = np.empty((n, c, oh, ow), np.int64)
    for i in range(oh):
        for j in range(ow):
            rows = [i * s[0] - p[0] + a * d[0] for a in range(k[0])]
            cols = [j * s[1] - p[1] + b * d[1] for b in range(k[1])]
            pos = [(r, q) for r in rows for q in cols if 0 <= r < h and 0 <= q < w]
            for nn in range(n):
                for cc in range(c):
                    best, at = -np.inf, pos[0][0] * w + pos[0][1]
                    for r, q in pos:
                        v = x[nn, cc, r, q]
                        if v > best or v != v:
                            best, at = v, r * w + q
                    y[nn, cc, i, j], idx[nn, cc, i, j] = best, at
    return y, idx


def np_avg_pool2d(x, k, s, p, ceil, cip, div):
    n, c, h, w = x.shape
    oh, ow = out_size(h, k[0], s[0], p[0], 1, ceil), out_size(w, k[1], s[1], p[1], 1, ceil)
    y = np.empty((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s[0] - p[0], j * s[1] - p[1]
            h1, w1 = min(h0 + k[0], h + p[0]), min(w0 + k[1], w + p[1])
            size = (h1 - h0) * (w1 - w0)
            h0, w0, h1, w1 = max(h0, 0), max(w0, 0), min(h1, h), min(w1, w)
            total = x[:, :, h0:h1, w0:w1].sum((2, 3))
            y[:, :, i, j] = total / (div or (size if cip else (h1 - h0) * (w1 - w0)))
    return y


def np_adaptive(x, out_hw, reduce):
    n, c, h, w = x.shape
    y = np.empty((n, c, *out_hw))
    for i in range(out_hw[0]):
        for j in range(out_hw[1]):
            h0, h1 = i * h // out_hw[0], -(-(i + 1) * h // out_hw[0])
            w0, w1 = j * w // out_hw[1], -(-(j + 1) * w // out_hw[1])
            y[:, :, i, j] = reduce(x[:, :, h0:h1, w0:w1], axis=(2, 3))
    return y


# (shape, kernel, stride, padding, dilation, ceil_mode)
MAX_CASES = [
    ((2, 3, 6, 6), 2, None, 0, 1, False),
    ((1, 2, 7, 9), (3, 2), (2, 1), 1, (1, 2), True),
    ((2, 2, 5, 5), 2, 3, 1, 1, True),
    ((1, 2, 9, 8), 3, 2, (1, 0), (2, 1), False),
    ((2, 1, 7, 7), 2, 2, 0, 1, True),                # 2x2 windows, a partial last window
    ((1, 1, 4, 6), (4, 6), 1, (2, 3), 1, False),     # padding = half the kernel
]


@pytest.mark.parametrize("case", MAX_CASES)
def test_max_pool2d_forward_and_indices(backend, case):
    shape, k, s, p, d, ceil = case
    x = np.random.default_rng(0).standard_normal(shape)
    x[0, 0, 1, 1] = np.nan
    x[0, -1, 0, :] = -np.inf
    y, idx = P.max_pool2d(_t(x, backend), k, s, p, d, ceil, return_indices=True)
    ry, ridx = np_max_pool2d(x, _pp(k), _pp(s if s is not None else k), _pp(p), _pp(d), ceil)
    np.testing.assert_array_equal(y.numpy(), ry)
    np.testing.assert_array_equal(idx.numpy(), ridx)
    assert idx.dtype is lucid.int64


@pytest.mark.parametrize("case", MAX_CASES)
def test_max_pool2d_gradcheck(backend, case):
    shape, k, s, p, d, ceil = case
    x = _t(np.random.default_rng(1).permutation(np.prod(shape)).reshape(shape) * 0.1,
           backend, True)  # distinct values: the argmax does not move under the probe
    assert gradcheck(lambda a: P.max_pool2d(a, k, s, p, d, ceil), (x,))


# (shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
AVG_CASES = [
    ((2, 3, 6, 6), 2, None, 0, False, True, None),
    ((1, 2, 7, 9), (3, 2), (2, 1), 1, True, True, None),
    ((1, 2, 7, 9), (3, 2), (2, 1), 1, True, False, None),
    ((2, 2, 5, 5), 2, 3, 1, True, False, None),
    ((1, 2, 5, 6), 3, 2, 1, False, True, 4),
]


@pytest.mark.parametrize("case", AVG_CASES)
def test_avg_pool2d(backend, case):
    shape, k, s, p, ceil, cip, div = case
    x = np.random.default_rng(2).standard_normal(shape)
    y = P.avg_pool2d(_t(x, backend), k, s, p, ceil, cip, div)
    want = np_avg_pool2d(x, _pp(k), _pp(s if s is not None else k), _pp(p), ceil, cip, div)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)
    xt = _t(x, backend, True)
    assert gradcheck(lambda a: P.avg_pool2d(a, k, s, p, ceil, cip, div), (xt,))


@pytest.mark.parametrize("out", [1, (3, 2), (5, 7), (7, None), (2, 0)])
def test_adaptive_pools(backend, out):
    x = np.random.default_rng(3).permutation(2 * 2 * 5 * 7).reshape(2, 2, 5, 7) * 0.5
    hw = tuple(x.shape[2 + i] if v is None else v for i, v in enumerate(_pp(out)))
    ya = P.adaptive_avg_pool2d(_t(x, backend), out)
    np.testing.assert_allclose(ya.numpy(), np_adaptive(x, hw, np.mean), rtol=1e-12)
    ym, idx = P.adaptive_max_pool2d(_t(x, backend), out, return_indices=True)
    np.testing.assert_array_equal(ym.numpy(), np_adaptive(x, hw, np.max))
    flat = x.reshape(2, 2, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(2, 2, -1), 2),
                                  ym.numpy().reshape(2, 2, -1))
    if 0 not in hw:
        xt = _t(x[:1], backend, True)
        assert gradcheck(lambda a: P.adaptive_avg_pool2d(a, out), (xt,))
        assert gradcheck(lambda a: P.adaptive_max_pool2d(a, out), (xt,))


def test_pools_1d_and_unbatched(backend):
    rng = np.random.default_rng(4)
    x = rng.permutation(2 * 3 * 11).reshape(2, 3, 11) * 0.25
    y, i = P.max_pool1d(_t(x, backend), 3, 2, 1, 2, True, return_indices=True)
    ry, ri = np_max_pool2d(x[:, :, None], (1, 3), (1, 2), (0, 1), (1, 2), True)
    np.testing.assert_array_equal(y.numpy(), ry[:, :, 0])
    np.testing.assert_array_equal(i.numpy(), ri[:, :, 0])
    ya = P.avg_pool1d(_t(x, backend), 4, 3, 2, True, False)
    np.testing.assert_allclose(ya.numpy(), np_avg_pool2d(x[:, :, None], (1, 4), (1, 3), (0, 2),
                                                         True, False, None)[:, :, 0])
    np.testing.assert_allclose(P.adaptive_avg_pool1d(_t(x, backend), 4).numpy(),
                               np_adaptive(x[:, :, None], (1, 4), np.mean)[:, :, 0])
    np.testing.assert_allclose(P.adaptive_max_pool1d(_t(x, backend), 4).numpy(),
                               np_adaptive(x[:, :, None], (1, 4), np.max)[:, :, 0])
    xt = _t(x[0], backend, True)  # unbatched (C, L)
    for f in (lambda a: P.max_pool1d(a, 3, 2, 1, 2, True),
              lambda a: P.avg_pool1d(a, 4, 3, 2, True, False),
              lambda a: P.adaptive_avg_pool1d(a, 4),
              lambda a: P.adaptive_max_pool1d(a, 4)):
        assert f(xt).dim() == 2
        assert gradcheck(f, (xt,))
    x3 = _t(rng.standard_normal((2, 5, 5)), backend, True)  # unbatched (C, H, W)
    assert tuple(P.max_pool2d(x3, 2).shape) == (2, 2, 2)
    assert gradcheck(lambda a: P.avg_pool2d(a, 3, 2, 1), (x3,))


@pytest.mark.parametrize("par", [False, True], ids=["serial", "parallel"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernel_builds(par, dtype, monkeypatch):
    monkeypatch.setattr(KP, "use_parallel", lambda n, kind="reduce": par)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4, 9, 8)).astype(dtype)
    for k, s, p, d in (((2, 2), (2, 2), (0, 0), (1, 1)), ((3, 2), (2, 1), (1, 1), (2, 1))):
        ohw = (out_size(9, k[0], s[0], p[0], d[0], False), out_size(8, k[1], s[1], p[1], d[1],
                                                                  False))
        y, idx = KP.max_pool2d(x, k, s, p, d, ohw)
        ry, ridx = np_max_pool2d(x, k, s, p, d, False)
        np.testing.assert_array_equal(y, ry.astype(dtype))
        np.testing.assert_array_equal(idx, ridx)
        g = rng.standard_normal(y.shape).astype(dtype)
        dx = KP.max_pool2d_backward(g, idx, x.shape)
        want = np.zeros((12, 72))
        np.add.at(want, (np.arange(12)[:, None], ridx.reshape(12, -1)), g.reshape(12, -1))
        np.testing.assert_allclose(dx, want.reshape(x.shape), rtol=1e-6)
    ya = KP.avg_pool2d(x, (3, 3), (2, 2), (1, 1), (5, 4), False)
    np.testing.assert_allclose(ya, np_avg_pool2d(x, (3, 3), (2, 2), (1, 1), False, False, None),
                               rtol=1e-5, atol=1e-6)
    assert ya.dtype == dtype


def test_concurrent_calls(monkeypatch):
    """Parallel pool kernels launched from several Python threads at once (numba's workqueue
    layer would abort without conv.PARALLEL_LOCK)."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(KP, "use_parallel", lambda n, kind="reduce": True)
    x = np.random.default_rng(15).standard_normal((4, 3, 8, 8)).astype(np.float32)
    want = KP.max_pool2d(x, (2, 2), (2, 2), (0, 0), (1, 1), (4, 4))[0]

    def work(_):
        y, idx = KP.max_pool2d(x, (2, 2), (2, 2), (0, 0), (1, 1), (4, 4))
        KP.max_pool2d_backward(y, idx, x.shape)
        KP.avg_pool2d_backward(KP.avg_pool2d(x, (2, 2), (2, 2), (0, 0), (4, 4)), x.shape, (2, 2),
                               (2, 2), (0, 0))
        return y

    with ThreadPoolExecutor(3) as pool:
        for y in pool.map(work, range(12)):
            np.testing.assert_array_equal(y, want)


def test_grad_fn_names_and_max_ties():
    x = _t(np.ones((1, 1, 4, 4)), rg=True)
    y, idx = P.max_pool2d(x, 2, return_indices=True)
    assert y.grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    np.testing.assert_array_equal(idx.numpy().ravel(), [0, 2, 8, 10])  # first of equal maxima
    assert P.avg_pool2d(x, 2).grad_fn.name() == "AvgPool2DBackward0"
    assert P.adaptive_avg_pool2d(x, 2).grad_fn.name() == "AdaptiveAvgPool2DBackward0"
    assert P.adaptive_max_pool2d(x, 2).grad_fn.name() == "AdaptiveMaxPool2DBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], [[1, 0, 1, 0], [0, 0, 0, 0],
                                                         [1, 0, 1, 0], [0, 0, 0, 0]])


def test_empty_batch(backend):
    x = _t(np.zeros((0, 2, 4, 4)), backend, True)
    for y in (P.max_pool2d(x, 2), P.avg_pool2d(x, 2), P.adaptive_avg_pool2d(x, 3),
              P.adaptive_max_pool2d(x, 3)):
        assert y.shape[0] == 0
        y.sum().backward()
    assert tuple(x.grad.shape) == (0, 2, 4, 4)


# ---- torch parity -------------------------------------------------------------------------------


@pytest.mark.parity
@pytest.mark.parametrize("case", MAX_CASES)
def test_max_pool2d_parity(torch, case):
    shape, k, s, p, d, ceil = case
    x = np.random.default_rng(6).standard_normal(shape).astype(np.float32)
    x[0, 0, 1, 1] = np.nan
    tx = torch.tensor(x, requires_grad=True)
    ty, ti = torch.nn.functional.max_pool2d(tx, k, s, p, d, ceil, True)
    g = np.random.default_rng(7).standard_normal(tuple(ty.shape)).astype(np.float32)
    ty.backward(torch.tensor(g))
    lx = _t(x, rg=True)
    ly, li = P.max_pool2d(lx, k, s, p, d, ceil, True)
    ly.backward(_t(g))
    np.testing.assert_array_equal(ly.detach().numpy(), ty.detach().numpy())
    np.testing.assert_array_equal(li.numpy(), ti.numpy())
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("case", AVG_CASES)
def test_avg_pool2d_parity(torch, case):
    shape, k, s, p, ceil, cip, div = case
    x = np.random.default_rng(8).standard_normal(shape)
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.avg_pool2d(tx, k, s, p, ceil, cip, div)
    ty.pow(3).sum().backward()
    lx = _t(x, rg=True)
    ly = P.avg_pool2d(lx, k, s, p, ceil, cip, div)
    (ly * ly * ly).sum().backward()
    np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-10)


@pytest.mark.parity
@pytest.mark.parametrize("out", [1, (3, 2), (6, 9), (4, None)])
def test_adaptive_parity(torch, out):
    x = np.random.default_rng(9).standard_normal((2, 3, 5, 7))
    F = torch.nn.functional
    tx = torch.tensor(x, requires_grad=True)
    (F.adaptive_avg_pool2d(tx, out).pow(2).sum() + F.adaptive_max_pool2d(tx, out).sum()).backward()
    lx = _t(x, rg=True)
    la = P.adaptive_avg_pool2d(lx, out)
    lm, li = P.adaptive_max_pool2d(lx, out, True)
    ((la * la).sum() + lm.sum()).backward()
    np.testing.assert_allclose(la.detach().numpy(), F.adaptive_avg_pool2d(tx, out).detach().numpy(),
                               rtol=1e-12)
    tm, ti = F.adaptive_max_pool2d(tx, out, True)
    np.testing.assert_array_equal(li.numpy(), ti.numpy())
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-10)


# ---- errors (torch's text) ----------------------------------------------------------------------

ERRORS = [
    (lambda F, z: F.max_pool2d(z(28, 28), 2),
     "non-empty 3D or 4D (batch mode) tensor expected for input"),
    (lambda F, z: F.max_pool2d(z(1, 2, 2), 3),
     "Given input size: (1x2x2). Calculated output size: (1x0x0). Output size is too small"),
    (lambda F, z: F.max_pool2d(z(1, 4, 4), 2, padding=2),
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and "
     "dilation=1"),
    (lambda F, z: F.max_pool2d(z(1, 4, 4), 0), "stride should not be zero"),
    (lambda F, z: F.max_pool2d(z(1, 4, 4), -1),
     "kernel size should be greater than zero, but got kH: -1 kW: -1"),
    (lambda F, z: F.max_pool2d(z(1, 4, 4), 2, stride=-1),
     "stride should be greater than zero, but got dH: -1 dW: -1"),
    (lambda F, z: F.max_pool2d(z(1, 4, 4), 2, padding=-1),
     "pad must be non-negative, but got pad: -1"),
    (lambda F, z: F.max_pool2d(z(1, 4, 4), 2, dilation=0),
     "dilation should be greater than zero, but got dilationH: 0 dilationW: 0"),
    (lambda F, z: F.max_pool2d(z(1, 4, 4), (2, 2, 2)),
     "max_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    (lambda F, z: F.max_pool2d(z(1, 4, 4), 2, stride=(1, 2, 3)),
     "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints"),
    (lambda F, z: F.max_pool2d(z(1, 0, 4), 2),
     "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
     "got:[1, 0, 4]"),
    (lambda F, z: F.max_pool1d(z(1, 4, 4, 4), 2),
     "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
     "input, but got:[1, 4, 4, 4]"),
    (lambda F, z: F.max_pool1d(z(1, 2), 3), "max_pool1d() Invalid computed output size: 0"),
    (lambda F, z: F.max_pool1d(z(1, 4), 2, padding=2),
     "max_pool1d() padding should be at most half of kernel size, but got padding=2 and "
     "kernel_size=2"),
    (lambda F, z: F.max_pool1d(z(1, 4), 0),
     "max_pool1d() kernel_size must be greater than zero, but got 0"),
    (lambda F, z: F.max_pool1d(z(1, 4), 2, stride=0),
     "max_pool1d() stride must be greater than zero, but got 0"),
    (lambda F, z: F.max_pool1d(z(1, 4), (2, 2)),
     "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got "
     "size 2"),
    (lambda F, z: F.avg_pool2d(z(1, 2, 2), 3),
     "Given input size: (1x2x2). Calculated output size: (1x0x0). Output size is too small"),
    (lambda F, z: F.avg_pool2d(z(1, 4, 4), 2, divisor_override=0), "divisor must be not zero"),
    (lambda F, z: F.avg_pool2d(z(1, 4, 4), (2, 2, 2)),
     "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    (lambda F, z: F.avg_pool2d(z(2, 2, 1, 4, 4), 2),
     "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
     "got:[2, 2, 1, 4, 4]"),
    (lambda F, z: F.avg_pool1d(z(1, 4, 4, 4), 2),
     "Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self' (while "
     "checking arguments for avg_pool1d)"),
    (lambda F, z: F.avg_pool1d(z(1, 2), 3),
     "Given input size: (1x1x2). Calculated output size: (1x1x0). Output size is too small"),
    (lambda F, z: F.avg_pool1d(z(1, 4), -1),
     "kernel size should be greater than zero, but got kH: 1 kW: -1"),
    (lambda F, z: F.adaptive_avg_pool2d(z(4, 4), 2),
     "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [4, 4]"),
    (lambda F, z: F.adaptive_avg_pool2d(z(1, 0, 4), 2),
     "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but "
     "input has sizes [1, 0, 4] with dimension 1 being empty"),
    (lambda F, z: F.adaptive_avg_pool2d(z(1, 4, 4), (-1, 2)),
     "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
     "received {-1, 2}"),
    (lambda F, z: F.adaptive_max_pool2d(z(4, 4), 2),
     "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: [4, 4]"),
    (lambda F, z: F.adaptive_max_pool2d(z(1, 4, 4), -1),
     "Trying to create tensor with negative dimension -1: [1, -1, -1]"),
    (lambda F, z: F.adaptive_avg_pool1d(z(1, 4, 4, 4), 2),
     "Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self' (while "
     "checking arguments for adaptive_avg_pool1d)"),
    (lambda F, z: F.adaptive_avg_pool1d(z(1, 4), (2, 2)),
     "adaptive_avg_pool1d() argument 'output_size' should contain one int (got 2)"),
]


@pytest.mark.parametrize("fn,msg", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors_match_torch(fn, msg):
    with pytest.raises(RuntimeError) as info:
        fn(P, lucid.zeros)
    assert str(info.value) == msg


@pytest.mark.parity
@pytest.mark.parametrize("fn,msg", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_error_texts_are_torchs(torch, fn, msg):
    with pytest.raises(RuntimeError) as info:
        fn(torch.nn.functional, torch.zeros)
    assert str(info.value).split("\n")[0] == msg


def test_kernels_without_jit():
    """The pool kernels run as plain Python (NUMBA_DISABLE_JIT=1), same answers."""
    code = (
        "import numpy as np, numba\n"
        "assert numba.config.DISABLE_JIT\n"
        "from lucid.kernels import pool as P\n"
        "from lucid.backend import _conv_ref as R\n"
        "r = np.random.default_rng(0)\n"
        "for dt in (np.float32, np.float64):\n"
        "    x = r.standard_normal((3, 4, 6, 5)).astype(dt)\n"
        "    for k, s, p, d in (((2, 2), (2, 2), (0, 0), (1, 1)), ((3, 2), (2, 1), (1, 1),"
        " (1, 2))):\n"
        "        o = (2, 3) if k == (2, 2) else (3, 4)\n"
        "        v, i = P.max_pool2d(x, k, s, p, d, o)\n"
        "        rv, ri = R.max_pool2d(x, k, s, p, d, o)\n"
        "        assert np.array_equal(v, rv) and np.array_equal(i, ri)\n"
        "        assert np.allclose(P.max_pool2d_backward(v, i, x.shape),"
        " R.max_pool2d_backward(v, i, x.shape))\n"
        "    v = P.avg_pool2d(x, (3, 2), (2, 1), (1, 1), (3, 6), False)\n"
        "    np.testing.assert_allclose(v, R.avg_pool2d(x, (3, 2), (2, 1), (1, 1), (3, 6), False),"
        " 1e-5)\n"
        "    np.testing.assert_allclose(P.avg_pool2d_backward(v, x.shape, (3, 2), (2, 1), (1, 1),"
        " False), R.avg_pool2d_backward(v, x.shape, (3, 2), (2, 1), (1, 1), False), 1e-5)\n"
        "    np.testing.assert_allclose(P.adaptive_avg_pool2d(x, (4, 3)),"
        " R.adaptive_avg_pool2d(x, (4, 3)), 1e-5)\n"
        "print('ok')\n")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", LUCID_PARALLEL_THRESHOLD="0")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
