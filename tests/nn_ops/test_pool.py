"""Pooling beyond the op table (``op_db_pool.py`` holds the loop references, every option's
samples, gradchecks, parity and torch's error messages): NaN and -inf rules with indices, an
empty adaptive output, the kernels' serial and parallel builds, concurrency, ties, empty
batches and channels, windows that see only padding, NUMBA_DISABLE_JIT."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from op_db_pool import MAX_CASES, np_adaptive, np_avg_pool2d, np_max_pool2d, out_size

import lucid
from lucid.kernels import pool as KP
from lucid.ops import pool as P

REPO = Path(__file__).resolve().parents[2]


def _t(a, backend="cpu", rg=False):
    return lucid.tensor(np.asarray(a), device=backend, requires_grad=rg)


def _pp(v):
    return (v, v) if isinstance(v, int) else tuple(v)


# (shape, kernel, stride, padding, dilation, ceil_mode)


def test_adaptive_pools_empty_output(backend):
    x = np.random.default_rng(3).permutation(2 * 2 * 5 * 7).reshape(2, 2, 5, 7) * 0.5
    assert tuple(P.adaptive_avg_pool2d(_t(x, backend), (2, 0)).shape) == (2, 2, 2, 0)
    ym, idx = P.adaptive_max_pool2d(_t(x, backend), (2, 0), return_indices=True)
    assert tuple(ym.shape) == tuple(idx.shape) == (2, 2, 2, 0)
    np.testing.assert_array_equal(ym.numpy(), np_adaptive(x, (2, 0), True)[0])


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


# (shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)


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


_ADAPTIVE = [f"adaptive_{kind}_pool{n}d" for n in (1, 2, 3) for kind in ("avg", "max")]


@pytest.mark.parametrize("name", _ADAPTIVE)
def test_adaptive_pools_of_no_channels_unbatched(backend, name):
    n = int(name[-2])
    x = _t(np.zeros((0,) + (4,) * n), backend, True)
    y = getattr(lucid.nn.functional, name)(x, 2)
    assert tuple(y.shape) == (0,) + (2,) * n
    y.sum().backward()
    assert tuple(x.grad.shape) == (0,) + (4,) * n


def test_adaptive_pools_of_no_channels_batched(backend):
    """torch's average pool checks only the spatial dims (its backward refuses the empty
    channels); its max pool refuses them at once, the 1-D one under its own name."""
    F = lucid.nn.functional
    x = _t(np.zeros((2, 0, 4, 4)), backend, True)
    y = F.adaptive_avg_pool2d(x, 2)
    assert tuple(y.shape) == (2, 0, 2, 2)
    with pytest.raises(RuntimeError, match=re.escape(
            "adaptive_avg_pool2d_backward(): Expected grad_output to have non-zero size for "
            "non-batch dimensions, but grad_output has sizes [2, 0, 2, 2] with dimension 1 "
            "being empty")):
        y.sum().backward()
    with pytest.raises(RuntimeError, match=re.escape(
            "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch "
            "dimensions, but input has sizes [2, 0, 4, 4] with dimension 1 being empty")):
        F.adaptive_max_pool2d(x, 2)
    with pytest.raises(RuntimeError, match=re.escape(
            "adaptive_max_pool1d(): Expected input to have non-zero size for non-batch "
            "dimensions, but input has sizes [4, 0] with dimension 1 being empty")):
        F.adaptive_max_pool1d(_t(np.zeros((4, 0)), backend), 2)


@pytest.mark.parametrize(("name", "shape", "kw"), [
    ("max_pool1d", (1, 1, 1), {"kernel_size": 2, "padding": 1, "dilation": 2}),
    ("max_pool2d", (1, 1, 1, 3), {"kernel_size": 2, "stride": 1, "padding": 1, "dilation": 2}),
    ("max_pool3d", (1, 1, 3, 1, 3), {"kernel_size": 2, "padding": 1, "dilation": 2}),
])
def test_max_pool_window_only_in_padding_is_refused(backend, name, shape, kw):
    """A window whose dilated taps all fall in the padding: torch returns -inf and its
    backward writes outside the input; every lucid device refuses it in the forward."""
    x = _t(np.ones(shape), backend, True)
    with pytest.raises(ValueError, match="a pooling window lies entirely in the padding"):
        getattr(lucid.nn.functional, name)(x, **kw)
    wide = _t(np.ones(shape[:2] + (5,) * (len(shape) - 2)), backend)  # every window sees it
    y = getattr(lucid.nn.functional, name)(wide, **kw)
    assert (y.numpy() == 1).all()


# ---- torch parity -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", _ADAPTIVE)
def test_adaptive_pools_with_empty_dims_match_torch(torch, backend, name):
    n = int(name[-2])
    for shape in [(0,) + (4,) * n, (2, 0) + (4,) * n, (4, 0) + (4,) * (n - 1),
                  (0, 2) + (4,) * n, (0, 0) + (4,) * n]:
        xr = torch.zeros(shape, requires_grad=True)
        x = _t(np.zeros(shape, np.float32), backend, True)
        for stage in ("forward", "backward"):
            try:
                ref = getattr(torch.nn.functional, name)(xr, 2)
                if stage == "backward":
                    ref.sum().backward()
            except RuntimeError as e:
                with pytest.raises(RuntimeError, match=re.escape(str(e))):
                    y = getattr(lucid.nn.functional, name)(x, 2)
                    if stage == "backward":
                        y.sum().backward()
                break
            y = getattr(lucid.nn.functional, name)(x, 2)
            assert tuple(y.shape) == tuple(ref.shape)
            if stage == "backward":
                y.sum().backward()
                assert tuple(x.grad.shape) == shape


# (name, input shape, output size, pooled dims): outputs of all ones, empty windows included
_GLOBAL = [("adaptive_avg_pool2d", (1, 2, 5, 0), 1, 2),
           ("adaptive_avg_pool2d", (3, 0, 4), (1, 1), 2),
           ("adaptive_avg_pool2d", (1, 2, 1, 0), (None, 1), 2),
           ("adaptive_avg_pool2d", (2, 3, 4, 5), 1, 2), ("adaptive_avg_pool2d", (3, 4), 1, 2),
           ("adaptive_avg_pool2d", (2, 1, 3, 4, 5), 1, 2),
           ("adaptive_avg_pool1d", (2, 3, 0), 1, 1),
           ("adaptive_avg_pool3d", (1, 2, 3, 4, 0), 1, 3),
           ("adaptive_avg_pool3d", (2, 3, 4, 5), (1, 1, 1), 3)]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the mean of an empty window
@pytest.mark.parametrize(("name", "shape", "size", "k"), _GLOBAL)
def test_adaptive_avg_pool_to_ones_is_the_mean(backend, name, shape, size, k):
    """torch: an adaptive average pool to an output of all ones is the mean over the pooled
    dims (keepdim) and checks nothing else, so an empty window averages to NaN and a 2-D or
    5-D input pools with an int size."""
    a = np.random.default_rng(0).standard_normal(shape)
    x = _t(a, backend, True)
    y = getattr(lucid.nn.functional, name)(x, size)
    ref = a.mean(tuple(range(len(shape) - k, len(shape))), keepdims=True)
    np.testing.assert_allclose(y.detach().numpy(), ref, rtol=1e-12)
    y.sum().backward()
    count = int(np.prod(shape[len(shape) - k:]))
    np.testing.assert_allclose(x.grad.numpy(), np.full(shape, 1 / max(count, 1)), rtol=1e-12)


_TO_ONES = [("adaptive_avg_pool2d", (1, 2, 5, 0)), ("adaptive_avg_pool2d", (3, 0, 4)),
            ("adaptive_avg_pool2d", (3, 4)), ("adaptive_avg_pool2d", (5,)),
            ("adaptive_avg_pool3d", (1, 2, 3, 4, 0)), ("adaptive_max_pool2d", (1, 2, 5, 0))]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(("name", "shape", "size"), [
    *((n, s, size) for n, s in _TO_ONES for size in [1, 2, (1, 1), (None, 1), (1, None)]),
    ("adaptive_avg_pool1d", (2, 3, 0), 1), ("adaptive_avg_pool1d", (2, 3, 0), 2)])
def test_adaptive_pools_to_ones_match_torch(torch, backend, name, shape, size):
    if isinstance(size, tuple) and name.endswith("3d"):
        size = size + (1,)
    a = np.random.default_rng(1).standard_normal(shape)
    xr, x = torch.tensor(a, requires_grad=True), _t(a, backend, True)
    try:
        ref = getattr(torch.nn.functional, name)(xr, size)
    except (RuntimeError, ValueError, IndexError) as e:
        with pytest.raises(type(e)):
            getattr(lucid.nn.functional, name)(x, size)
        return
    y = getattr(lucid.nn.functional, name)(x, size)
    np.testing.assert_allclose(y.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    y.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xr.grad.numpy(), rtol=1e-12)


# ---- errors (torch's text) ----------------------------------------------------------------------


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
