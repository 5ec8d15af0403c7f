"""Convolutions beyond the op table (``op_db_conv.py`` holds the references, every
stride/padding/dilation/groups sample, gradchecks, parity and torch's error messages): the
kernels' serial and parallel builds, gradient work only where asked, integer and empty inputs
(transposed ones of no batch and no length included), cpu against the reference backend, BLAS
threads, NUMBA_DISABLE_JIT."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from op_db_conv import CONV_CASES, np_conv2d
from op_db_nn3d import conv3d_ref

import lucid
from lucid.kernels import _chunks
from lucid.kernels import conv as KC
from lucid.kernels._threads import ONE_BLAS_THREAD
from lucid.ops import conv as C

REPO = Path(__file__).resolve().parents[2]


def _t(a, backend="cpu", rg=False):
    return lucid.tensor(np.asarray(a), device=backend, requires_grad=rg)


# (N, C, OC, H, W, kernel, stride, padding, dilation, groups)


def _pp(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _row_major(shape):
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


@pytest.mark.parametrize("par", [False, True], ids=["serial", "parallel"])
@pytest.mark.parametrize("case", CONV_CASES[:4])
def test_conv2d_float32_kernel_builds(case, par, monkeypatch):
    """float32 forward and both gradients from the serial and the parallel kernel builds."""
    monkeypatch.setattr(_chunks, "use_parallel", lambda n, kind="reduce": par)
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


# (N, Cin, Cout/groups, H, W, kernel, stride, padding, output_padding, dilation, groups)


def test_grad_only_where_asked(backend):
    """Inputs that do not require grad get no gradient work (a first layer's image)."""
    x = _t(np.random.default_rng(0).standard_normal((2, 1, 6, 6)), backend)
    w = _t(np.ones((4, 1, 3, 3)), backend, True)
    y = C.conv2d(x, w, padding=1)
    assert y.grad_fn.name() == "ConvolutionBackward0"
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


_EMPTY = [  # (function, input shape, weight shape, kwargs, output shape)
    ("conv_transpose1d", (0, 2, 1), (2, 1, 2), {"padding": 1}, (0, 1, 0)),
    ("conv_transpose1d", (0, 2, 0), (2, 3, 1), {}, (0, 3, 0)),
    ("conv_transpose1d", (0, 2, 0), (2, 1, 2), {"stride": 2, "output_padding": 1}, (0, 1, 1)),
    ("conv_transpose2d", (0, 2, 1, 1), (2, 1, 2, 2), {"padding": 1}, (0, 1, 0, 0)),
    ("conv_transpose2d", (0, 2, 0, 3), (2, 2, 1, 1), {}, (0, 2, 0, 3)),
    ("conv_transpose3d", (0, 2, 1, 1, 1), (2, 1, 2, 2, 2), {"padding": 1}, (0, 1, 0, 0, 0)),
    ("conv_transpose3d", (0, 2, 3, 3, 3), (2, 2, 2, 2, 2), {}, (0, 2, 4, 4, 4)),
    ("conv1d", (0, 2, 5), (3, 2, 2), {}, (0, 3, 4)),
    ("conv2d", (2, 0, 4, 4), (3, 0, 1, 1), {}, (2, 0, 4, 4)),
    ("conv3d", (2, 0, 3, 3, 3), (2, 0, 2, 2, 2), {"padding": 1}, (2, 0, 4, 4, 4)),
    ("conv3d", (0, 2, 3, 3, 3), (2, 1, 2, 2, 2), {"groups": 2}, (0, 2, 2, 2, 2)),
]


@pytest.mark.parametrize(("fn", "xs", "ws", "kw", "ys"), _EMPTY)
def test_empty_batch_channels_and_length(backend, fn, xs, ws, kw, ys):
    """torch's rules: with no batch a transposed output may have no length; the result has
    no elements, the weight and bias gradients are zeros."""
    transposed = "transpose" in fn
    x, w = _t(np.zeros(xs), backend, True), _t(np.ones(ws), backend, True)
    b = _t(np.ones(ws[1] * kw.get("groups", 1) if transposed else ws[0]), backend, True)
    y = getattr(lucid.nn.functional, fn)(x, w, b, **kw)
    assert tuple(y.shape) == ys
    y.sum().backward()
    assert tuple(x.grad.shape) == xs
    np.testing.assert_array_equal(w.grad.numpy(), np.zeros(ws))
    np.testing.assert_array_equal(b.grad.numpy(), np.zeros(b.shape))


def test_transposed_output_too_small_with_a_batch(backend):
    x, w = _t(np.zeros((1, 2, 1)), backend), _t(np.ones((2, 1, 2)), backend)
    with pytest.raises(RuntimeError, match=r"Calculated output size per channel: \(0\)\. "
                                           "Output size is too small"):
        C.conv_transpose1d(x, w, padding=1)
    with pytest.raises(RuntimeError, match="Output size is too small"):  # negative, no batch
        C.conv_transpose1d(_t(np.zeros((0, 2, 1)), backend), w, padding=2)


@pytest.mark.parametrize(("fn", "xs", "ws", "kw", "ys"), _EMPTY)
def test_empty_inputs_match_torch(torch, backend, fn, xs, ws, kw, ys):
    transposed = "transpose" in fn
    nb = ws[1] * kw.get("groups", 1) if transposed else ws[0]
    xr, wr = torch.zeros(xs, requires_grad=True), torch.ones(ws, requires_grad=True)
    br = torch.ones(nb, requires_grad=True)
    ref = getattr(torch.nn.functional, fn)(xr, wr, br, **kw)
    ref.sum().backward()
    x, w = _t(np.zeros(xs, np.float32), backend, True), _t(np.ones(ws, np.float32), backend, True)
    b = _t(np.ones(nb, np.float32), backend, True)
    y = getattr(lucid.nn.functional, fn)(x, w, b, **kw)
    y.sum().backward()
    assert tuple(y.shape) == tuple(ref.shape)
    for a, r in ((x, xr), (w, wr), (b, br)):
        np.testing.assert_array_equal(a.grad.numpy(), r.grad.numpy())


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


# ---- errors (torch's text) ----------------------------------------------------------------------


def test_blas_thread_count_restored(monkeypatch):
    """Parallel GEMM kernels set OpenBLAS to one thread and restore it, also when several
    Python threads run convolutions at once."""
    from concurrent.futures import ThreadPoolExecutor

    if not ONE_BLAS_THREAD.available():
        pytest.skip("no controllable OpenBLAS")
    monkeypatch.setattr(_chunks, "use_parallel", lambda n, kind="reduce": True)
    before = [g() for _, g in ONE_BLAS_THREAD.libs]
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
    assert ONE_BLAS_THREAD.depth == 0 and [g() for _, g in ONE_BLAS_THREAD.libs] == before


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


@pytest.mark.parametrize("layout", ["row-major", "transposed"])
@pytest.mark.parametrize("batched", [True, False])
def test_conv3d_answers_row_major(backend, layout, batched):
    """conv3d runs a 2-D convolution over (N * oD, C * kD, H, W) and moves oD back behind the
    channels; its result is row-major, as torch's, so ``view`` works on it."""
    rng = np.random.default_rng(0)
    xa, wa = rng.standard_normal((2, 2, 3, 4, 3)), rng.standard_normal((3, 2, 2, 2, 2))
    ba = rng.standard_normal(3)
    x = _t(xa, backend) if layout == "row-major" else \
        _t(xa.swapaxes(-1, -2).copy(), backend).transpose(-1, -2)
    y = lucid.nn.functional.conv3d(x if batched else x[0], _t(wa, backend), _t(ba, backend),
                                   padding=1)
    ref = conv3d_ref(xa, wa, ba, padding=1)
    ref = ref if batched else ref[0]
    assert y.is_contiguous() and y.stride() == _row_major(ref.shape)
    np.testing.assert_allclose(y.view(-1).numpy(), ref.reshape(-1), rtol=1e-10, atol=1e-12)
