"""kernels/blas.py: products through MKL (where it loads) and numpy's BLAS agree with a
float64 numpy reference for every layout, bias shape and fallback case."""

from __future__ import annotations

import multiprocessing as mp
import os
import subprocess
import sys

import numba
import numpy as np
import pytest

import lucid
from lucid.backend.cpu import CpuBackend
from lucid.backend.numpy_ref import NumpyBackend
from lucid.kernels import _blaslib, _gemm, _threads, blas
from lucid.kernels import matmul as kmm


def _mkl_loads() -> bool:
    old = os.environ.get("LUCID_BLAS")
    os.environ["LUCID_BLAS"] = "mkl"
    blas.reset()
    try:
        return blas.library() == "mkl"
    finally:
        if old is None:
            del os.environ["LUCID_BLAS"]
        else:
            os.environ["LUCID_BLAS"] = old
        blas.reset()


LIBS = ["numpy", pytest.param("mkl", marks=pytest.mark.skipif(
    not _mkl_loads(), reason="MKL (the mkl wheel, x86-64 Linux) is not installed")),
        pytest.param("pool", marks=pytest.mark.skipif(
            numba.config.DISABLE_JIT, reason="the pool's kernels run compiled only"))]


@pytest.fixture(params=LIBS)
def lib(request, monkeypatch):
    monkeypatch.setenv("LUCID_BLAS", request.param)
    blas.reset()
    assert blas.library() == request.param
    yield request.param
    monkeypatch.undo()
    blas.reset()


def _ref(a, b, bias=None):
    out = a.astype(np.float64) @ b.astype(np.float64)
    return out if bias is None else out + np.asarray(bias, np.float64)


def _tol(dt):
    return dict(rtol=1e-5, atol=1e-4) if dt == np.float32 else dict(rtol=1e-12, atol=1e-10)


def _operand(r, shape, layout, dt):
    """A (rows, cols) operand stored as ``layout``: C, F (transposed), or a slice of a wider
    array (leading dimension larger than the extent)."""
    m, n = shape
    if layout == "C":
        return r.standard_normal((m, n)).astype(dt)
    if layout == "F":
        return np.ascontiguousarray(r.standard_normal((n, m)).astype(dt)).T
    if layout == "slice":
        return r.standard_normal((m + 3, n + 5)).astype(dt)[1:m + 1, 2:n + 2]
    return r.standard_normal((n + 4, m + 2)).astype(dt)[2:n + 2, 1:m + 1].T  # sliced, F


LAYOUTS = ["C", "F", "slice", "sliceF"]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", LAYOUTS)
def test_every_layout(lib, dt, la, lb):
    r = np.random.default_rng(0)
    a = _operand(r, (37, 53), la, dt)
    b = _operand(r, (53, 29), lb, dt)
    out = blas.gemm(a, b)
    assert out.dtype == dt and out.shape == (37, 29) and out.flags.c_contiguous
    np.testing.assert_allclose(out, _ref(a, b), **_tol(dt))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("bshape", [(29,), (1, 29), (37, 1), (37, 29), ()])
def test_bias_shapes(lib, dt, bshape):
    r = np.random.default_rng(1)
    a = _operand(r, (37, 53), "C", dt)
    b = _operand(r, (53, 29), "F", dt)  # x @ W.T, a linear layer's product
    bias = r.standard_normal(bshape).astype(dt)
    out = blas.gemm(a, b, bias)
    assert out.dtype == dt and out.shape == (37, 29)
    np.testing.assert_allclose(out, _ref(a, b, bias), **_tol(dt))
    if bias.ndim:  # the bias itself is untouched
        np.testing.assert_array_equal(bias, bias.copy())


def test_bias_of_another_dtype_promotes_as_numpy(lib):
    r = np.random.default_rng(2)
    a = r.standard_normal((40, 30)).astype(np.float32)
    b = r.standard_normal((30, 20)).astype(np.float32)
    bias = r.standard_normal(20)  # float64
    out = blas.gemm(a, b, bias)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, _ref(a, b, bias), rtol=1e-5, atol=1e-4)


def test_bias_larger_than_the_product_broadcasts_as_numpy(lib):
    r = np.random.default_rng(3)
    a = r.standard_normal((1, 30)).astype(np.float32)
    b = r.standard_normal((30, 200)).astype(np.float32)
    bias = r.standard_normal((4, 200)).astype(np.float32)
    out = blas.gemm(a, b, bias)
    assert out.shape == (4, 200)
    np.testing.assert_allclose(out, _ref(a, b, bias), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("case", ["strided", "int", "mixed", "tiny", "empty", "vector"])
def test_fallbacks_match_numpy(lib, case):
    r = np.random.default_rng(4)
    a = r.standard_normal((64, 96)).astype(np.float32)
    b = r.standard_normal((96, 48)).astype(np.float32)
    if case == "strided":  # no unit stride in either axis
        a = r.standard_normal((64, 192)).astype(np.float32)[:, ::2]
    elif case == "int":
        a, b = r.integers(-5, 5, (20, 30)), r.integers(-5, 5, (30, 10))
    elif case == "mixed":
        b = b.astype(np.float64)
    elif case == "tiny":
        a, b = a[:3, :4], b[:4, :2]
    elif case == "empty":
        a, b = a[:0], b
    elif case == "vector":
        a, b = a[:, :1], b[:1]  # an outer product: column times row
    out = blas.gemm(a, b)
    expect = a @ b
    assert out.dtype == expect.dtype and out.shape == expect.shape
    np.testing.assert_allclose(out, expect, rtol=1e-5, atol=1e-4)


def test_shape_errors_are_numpys(lib):
    a = np.ones((4, 5), np.float32)
    with pytest.raises(ValueError, match="matmul"):
        blas.gemm(a, np.ones((6, 3), np.float32))
    with pytest.raises(ValueError, match="matmul"):
        kmm.matmul(np.ones((2, 4, 5), np.float32), np.ones((6, 3), np.float32))


@pytest.mark.parametrize("bshape", [None, (24,), (1, 24), (7, 1)])
def test_batched_shared_weight_with_bias(lib, bshape):
    r = np.random.default_rng(5)
    x = r.standard_normal((3, 7, 40)).astype(np.float32)
    w = r.standard_normal((24, 40)).astype(np.float32)
    bias = None if bshape is None else r.standard_normal(bshape).astype(np.float32)
    out = kmm.matmul(x, w.T, bias)
    assert out.shape == (3, 7, 24)
    np.testing.assert_allclose(out, _ref(x, w.T, bias), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_addmm_cpu_matches_reference(lib, dt):
    r = np.random.default_rng(6)
    x = r.standard_normal((2, 9, 33)).astype(dt)
    w = r.standard_normal((17, 33)).astype(dt)
    b = r.standard_normal(17).astype(dt)
    want = NumpyBackend().addmm(b, x, w.T)
    got = CpuBackend().addmm(b, x, w.T)
    assert got.dtype == want.dtype == dt
    np.testing.assert_allclose(got, _ref(x, w.T, b), **_tol(dt))
    np.testing.assert_allclose(want, _ref(x, w.T, b), **_tol(dt))


def test_unknown_choice_uses_numpy(monkeypatch):
    monkeypatch.setenv("LUCID_BLAS", "no-such-library")
    blas.reset()
    try:
        assert blas.library() == "numpy"
    finally:
        monkeypatch.undo()
        blas.reset()


def test_threads_are_kept_for_when_mkl_loads(monkeypatch):
    monkeypatch.setattr(_blaslib, "_STATE", {"lib": None, "loaded": False, "threads": None,
                                             "choice": "numpy", "forked": False})
    blas.set_threads(1)
    assert _blaslib._STATE["threads"] == 1
    _threads.set_blas_threads(2)  # lucid.set_num_threads reaches the BLAS module too
    assert _blaslib._STATE["threads"] == 2


def _child_product(q):
    r = np.random.default_rng(7)
    a = r.standard_normal((200, 300)).astype(np.float32)
    b = r.standard_normal((300, 100)).astype(np.float32)
    q.put(float(np.abs(blas.gemm(a, b) - _ref(a, b)).max()))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_products_in_a_forked_child(lib):
    """A child forked after the parent ran threaded products (its OpenMP pool started) runs
    its own products instead of hanging on the parent's pool."""
    r = np.random.default_rng(8)
    blas.gemm(r.standard_normal((300, 300)).astype(np.float32),
              r.standard_normal((300, 300)).astype(np.float32))
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_product, args=(q,))
    p.start()
    p.join(60)
    if p.is_alive():
        p.kill()
        pytest.fail("the forked child's product hung")
    assert p.exitcode == 0
    assert q.get(timeout=5) < 1e-3


def test_numba_prefers_the_omp_layer():
    if os.environ.get("NUMBA_THREADING_LAYER_PRIORITY", _threads.LAYER_PRIORITY) \
            != _threads.LAYER_PRIORITY:
        pytest.skip("the user chose numba's layer order")
    assert list(numba.config.THREADING_LAYER_PRIORITY) == ["omp", "tbb", "workqueue"]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("case", ["same", "left_shared", "grid", "transposed", "strided_batch",
                                  "sliced", "4d", "tiny", "empty", "heads", "heads_3"])
@pytest.mark.parametrize("small", [True, False])  # numpy's loop for small products, or BLAS
def test_batched_products(lib, dt, case, small, monkeypatch):
    if not small:
        monkeypatch.setattr(blas, "SMALL_MACS", 0)
    r = np.random.default_rng(10)
    a = r.standard_normal((6, 20, 30)).astype(dt)
    b = r.standard_normal((6, 30, 25)).astype(dt)
    if case == "left_shared":  # one left matrix for every batch entry (stride 0)
        a = a[:1]
    elif case == "grid":  # batch dims broadcast both ways: (2, 1) x (1, 3)
        a = r.standard_normal((2, 1, 20, 30)).astype(dt)
        b = r.standard_normal((1, 3, 30, 25)).astype(dt)
    elif case == "transposed":
        b = np.ascontiguousarray(b.transpose(0, 2, 1)).transpose(0, 2, 1)
        a = np.ascontiguousarray(a.transpose(0, 2, 1)).transpose(0, 2, 1)
    elif case == "strided_batch":
        a = r.standard_normal((12, 20, 30)).astype(dt)[::2]
    elif case == "sliced":
        a = r.standard_normal((6, 24, 35)).astype(dt)[:, 2:22, 1:31]
    elif case == "4d":
        a = r.standard_normal((2, 3, 20, 30)).astype(dt)
        b = r.standard_normal((2, 3, 30, 25)).astype(dt)
    elif case == "tiny":
        a, b = a[:, :3, :4], b[:, :4, :2]
    elif case == "empty":
        a, b = a[:0], b[:0]
    elif case == "heads":  # q @ k^T of heads viewed out of one (B, L, 3, H, D) projection:
        x = r.standard_normal((2, 20, 3, 4, 30)).astype(dt)  # batch dims that do not merge
        a, b = x[:, :, 0].transpose(0, 2, 1, 3), x[:, :, 1].transpose(0, 2, 3, 1)
    elif case == "heads_3":  # three such dims, and a broadcast one: copies, as before
        x = r.standard_normal((2, 3, 20, 2, 4, 30)).astype(dt)[:, ::2]
        a = x[..., 0, :, :].transpose(0, 1, 3, 2, 4)
        b = r.standard_normal((1, 4, 30, 25)).astype(dt)
    out = kmm.matmul(a, b)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert out.dtype == dt and out.shape == want.shape
    np.testing.assert_allclose(out, want, **_tol(dt))


def test_batched_shape_errors_are_numpys(lib):
    with pytest.raises(ValueError, match="broadcast"):
        kmm.matmul(np.ones((2, 4, 5), np.float32), np.ones((3, 5, 6), np.float32))
    with pytest.raises(ValueError, match="matmul"):
        kmm.matmul(np.ones((2, 4, 5), np.float32), np.ones((2, 6, 6), np.float32))


# ---- the GEMM numba kernels call (kernels/_gemm.py) -----------------------------------------

_KERNEL_CASES = '''
import numba, numpy as np
from lucid.kernels import _gemm, blas

# any-layout ("A") signatures: two compilations, and every layout is then told apart at run
# time from the strides, as in the kernels
@numba.njit(["void(float32[:, :], float32[:, :], float32[:, :])",
             "void(float64[:, :], float64[:, :], float64[:, :])"])
def run(a, b, out):
    _gemm.gemm(a, b, out)

r = np.random.default_rng(9)

def make(m, n, lay, dt):
    if lay == "C":
        return r.standard_normal((m, n)).astype(dt)
    if lay == "F":
        return np.asfortranarray(r.standard_normal((m, n)).astype(dt))
    if lay == "S":  # a slice: leading dimension above the extent
        return r.standard_normal((m + 3, n + 4)).astype(dt)[1:m + 1, 2:n + 2]
    return r.standard_normal((m, 2 * n)).astype(dt)[:, ::2]  # no unit stride

checked = 0
for dt in (np.float32, np.float64):
    for m, k, n in ((37, 53, 29), (1, 5, 7), (6, 1, 4), (5, 6, 1), (3, 0, 4), (0, 3, 2)):
        for la in "CFSX":
            for lb in "CFSX":
                for lo in "CFSX":
                    a, b = make(m, k, la, dt), make(k, n, lb, dt)
                    out = make(m, n, lo, dt)
                    out[...] = np.nan
                    run(a, b, out)
                    ref = a.astype(np.float64) @ b.astype(np.float64)
                    tol = 1e-4 if dt == np.float32 else 1e-11
                    np.testing.assert_allclose(out, ref, rtol=tol, atol=tol,
                                               err_msg=f"{dt} {m}x{k}x{n} {la}{lb}{lo}")
                    checked += 1
print(blas.library(), checked)
'''


def _kernel_cases(choice: str) -> str:
    env = dict(os.environ, LUCID_BLAS=choice)
    res = subprocess.run([sys.executable, "-c", _KERNEL_CASES], env=env, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout.split()[-2:]


def test_kernel_gemm_on_numpys_blas():
    """Every layout of operands and output, through scipy's BLAS (numba's own np.dot's)."""
    assert _kernel_cases("numpy") == ["numpy", str(2 * 6 * 64)]


@pytest.mark.skipif(not _mkl_loads(), reason="MKL (the mkl wheel, x86-64 Linux) is not installed")
def test_kernel_gemm_on_mkl():
    assert _kernel_cases("mkl") == ["mkl", str(2 * 6 * 64)]


def test_choice_follows_lucid_blas(monkeypatch):
    linux = sys.platform.startswith("linux")
    monkeypatch.setattr(_threads, "_amd_avx512", lambda: False)
    monkeypatch.setenv("LUCID_BLAS", "numpy")
    assert not _threads.wants_mkl() and _threads.blas_choice() == "numpy"
    monkeypatch.setenv("LUCID_BLAS", "pool")
    assert _threads.blas_choice() == "pool"
    monkeypatch.setattr(_threads, "mkl_candidates", lambda: [])
    monkeypatch.setenv("LUCID_BLAS", "mkl")
    assert not _threads.wants_mkl()  # nothing installed
    monkeypatch.setattr(_threads, "mkl_candidates", lambda: ["/x/libmkl_rt.so.3"])
    assert _threads.wants_mkl() == linux
    monkeypatch.setenv("LUCID_BLAS", "auto")
    assert _threads.wants_mkl() == linux  # Intel, or AMD without AVX-512
    monkeypatch.setattr(_threads, "_amd_avx512", lambda: True)
    assert _threads.blas_choice() == ("pool" if linux else "numpy")  # AMD with AVX-512
    monkeypatch.setenv("LUCID_BLAS", "mkl")
    assert _threads.wants_mkl() == linux  # asked for by name: MKL wherever it is installed


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="the pool's kernels run compiled only")
def test_kernel_gemm_on_the_pool():
    assert _kernel_cases("pool") == ["pool", str(2 * 6 * 64)]


@pytest.fixture
def pool(monkeypatch):
    """Products on the pool, every one of them cut into blocks (no size floor)."""
    if numba.config.DISABLE_JIT:
        pytest.skip("the pool's kernels run compiled only")
    monkeypatch.setenv("LUCID_BLAS", "pool")
    monkeypatch.setattr(_gemm, "POOL_MIN", 0)
    blas.reset()
    assert blas.library() == "pool"
    yield
    monkeypatch.undo()
    blas.reset()


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("mkn", [(70, 30, 45), (20, 30, 75), (33, 17, 33), (64, 8, 1)])
@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", LAYOUTS)
def test_pool_blocks_cover_the_product(pool, dt, mkn, la, lb):
    """Cut into blocks of rows (70x45) or columns (20x75), edges off the 16-element grid, every
    operand layout: the product is numpy's."""
    m, k, n = mkn
    r = np.random.default_rng(11)
    a, b = _operand(r, (m, k), la, dt), _operand(r, (k, n), lb, dt)
    out = blas.gemm(a, b)
    assert out.dtype == dt and out.shape == (m, n) and out.flags.c_contiguous
    np.testing.assert_allclose(out, _ref(a, b), **_tol(dt))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("mkn", [(70, 30, 45), (20, 30, 75), (5, 7, 9), (64, 8, 1)])
@pytest.mark.parametrize("blocks", [1, 2, 3])
@pytest.mark.parametrize("la", ["C", "F"])
def test_pool_bias_fills_before_the_product(pool, monkeypatch, dt, mkn, blocks, la):
    """A bias row on the pool fills each block of the output before BLAS adds the product
    onto it (beta 1): blocks of rows (70x45), of columns (20x75), one call (5x9, a single
    column of k): numpy's ``a @ b + bias``, for (n,) and (1, n) rows."""
    monkeypatch.setattr(_gemm, "block_count", lambda default: blocks)
    monkeypatch.setattr(blas, "MIN_WORK", 0)
    monkeypatch.setattr(blas, "add_into", lambda *a: pytest.fail("bias added after"))
    m, k, n = mkn
    r = np.random.default_rng(17)
    a, b = _operand(r, (m, k), la, dt), _operand(r, (k, n), "F", dt)
    for bias in (r.standard_normal(n).astype(dt), r.standard_normal((1, n)).astype(dt)):
        out = blas.gemm(a, b, bias)
        assert out.shape == (m, n) and out.dtype == dt
        np.testing.assert_allclose(out, _ref(a, b, bias), **_tol(dt))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_pool_bias_other_shapes_added_after(pool, dt):
    """Biases the products do not take (a column, a strided row, another dtype, a full
    matrix) are added afterwards: still numpy's sum, with numpy's result dtype."""
    r = np.random.default_rng(18)
    a, b = r.standard_normal((40, 30)).astype(dt), r.standard_normal((30, 50)).astype(dt)
    other = np.float64 if dt == np.float32 else np.float32
    for bias in (r.standard_normal((40, 1)).astype(dt), r.standard_normal(100).astype(dt)[::2],
                 r.standard_normal(50).astype(other), r.standard_normal((40, 50)).astype(dt)):
        out = blas.gemm(a, b, bias)
        assert out.dtype == np.result_type(dt, bias.dtype)
        np.testing.assert_allclose(out, _ref(a, b, bias), **_tol(dt))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_pool_bias_in_batched_products(pool, dt):
    """``products`` with a bias address adds the row to every product of a batch."""
    r = np.random.default_rng(19)
    a = r.standard_normal((3, 24, 40)).astype(dt)
    b = r.standard_normal((3, 40, 36)).astype(dt)
    bias = r.standard_normal(36).astype(dt)
    out = np.empty((3, 24, 36), dt)
    _gemm.products(a.ctypes.data, 0, 40, b.ctypes.data, 0, 36, out.ctypes.data, 24, 36, 40,
                   dt == np.float64, 3, a.strides[0], b.strides[0], pbias=bias.ctypes.data)
    np.testing.assert_allclose(out, _ref(a, b) + bias, **_tol(dt))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_pool_batches(pool, dt, count):
    """Fewer products than threads: each one cut into blocks; more: whole ones per thread;
    a shared right operand (stride 0) and a transposed left one."""
    r = np.random.default_rng(12)
    a = r.standard_normal((count, 40, 50)).astype(dt).transpose(0, 2, 1)  # (count, 50, 40)
    b = r.standard_normal((1, 40, 36)).astype(dt)
    out = kmm.matmul(a, b)
    assert out.shape == (count, 50, 36)
    np.testing.assert_allclose(out, _ref(a, b), **_tol(dt))


_PINNED = '''
import numpy as np
import lucid
from lucid.kernels import _threads, blas
a = np.ones((300, 300), np.float32)
assert blas.library() == "pool" and float(blas.gemm(a, a)[0, 0]) == 300.0
lucid.set_num_threads(2)
with _threads.ONE_BLAS_THREAD:
    pass
print(_threads.ONE_BLAS_THREAD.pinned, [int(g()) for _, g in _threads.ONE_BLAS_THREAD.libs])
'''


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="the pool's kernels run compiled only")
def test_the_pool_holds_scipys_blas_at_one_thread():
    """The pool's threads call scipy's OpenBLAS: it stays at one thread, whatever
    ``set_num_threads`` or a conv's ``ONE_BLAS_THREAD`` does afterwards."""
    env = dict(os.environ, LUCID_BLAS="pool")
    res = subprocess.run([sys.executable, "-c", _PINNED], env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    pinned, counts = res.stdout.strip().splitlines()[-1].split(" ", 1)
    assert pinned == "True" and set(eval(counts)) == {1}


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", LAYOUTS)
def test_gemm_pair_every_layout(lib, dt, la, lb):
    """Two products of different shapes and layouts in one call: each is numpy's."""
    r = np.random.default_rng(13)
    a1, b1 = _operand(r, (70, 30), la, dt), _operand(r, (30, 45), lb, dt)
    a2, b2 = _operand(r, (20, 30), lb, dt), _operand(r, (30, 75), la, dt)
    o1, o2 = blas.gemm_pair(a1, b1, a2, b2)
    for o, ref in ((o1, _ref(a1, b1)), (o2, _ref(a2, b2))):
        assert o.dtype == dt and o.shape == ref.shape and o.flags.c_contiguous
        np.testing.assert_allclose(o, ref, **_tol(dt))


class _Recorded:
    """A kernel whose calls append their last three arguments (blocks, split1, split2)."""

    def __init__(self, kern, calls):
        self.kern, self.calls = kern, calls

    def __call__(self, *args):
        self.calls.append(args[-3:])
        return self.kern(*args)

    def __getattr__(self, name):
        return getattr(self.kern, name)


@pytest.mark.parametrize("blocks", [1, 2, 3, 4])
@pytest.mark.parametrize("forked", [False, True])
def test_pool_pair_side_by_side(pool, monkeypatch, blocks, forked):
    """On the pool the two run in one region, half the blocks each, edges off the 16-element
    grid, the 50x90 one cut into rows and the 37x90 one into columns (an odd block count or a
    forked child: one after the other); both are numpy's."""
    monkeypatch.setattr(_gemm, "block_count", lambda default: blocks)
    monkeypatch.setitem(_blaslib._STATE, "forked", forked)
    regions = []
    monkeypatch.setattr(_gemm, "PAIR", _Recorded(_gemm.PAIR, regions))
    r = np.random.default_rng(14)
    for dt in (np.float32, np.float64):
        g, w, x = (r.standard_normal(s).astype(dt) for s in ((50, 37), (37, 90), (50, 90)))
        gx, gw = blas.gemm_pair(g, w, g.T, x)
        np.testing.assert_allclose(gx, _ref(g, w), **_tol(dt))
        np.testing.assert_allclose(gw, _ref(g.T, x), **_tol(dt))
    assert regions == ([] if blocks % 2 or forked else [(blocks // 2, 0, 1)] * 2)


def test_matmul_pair_backends_agree():
    """``matmul_pair`` is two ``matmul`` calls on the reference backend; the CPU backend's
    (the pool's pair, half floats through float32) gives the same products."""
    r = np.random.default_rng(15)
    for dt in (np.float16, np.float32, np.float64):
        g, w, x = (r.standard_normal(s).astype(dt) for s in ((64, 48), (48, 80), (64, 80)))
        ref = NumpyBackend().matmul_pair(g, w, g.T, x)
        got = CpuBackend().matmul_pair(g, w, g.T, x)
        tol = dict(rtol=2e-2, atol=2e-1) if dt == np.float16 else _tol(dt)
        for a, b in zip(got, ref):
            assert a.dtype == b.dtype == dt
            np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), **tol)


@pytest.mark.parametrize("shape", [(6, 40), (3, 5, 40)])
def test_linear_gradients_through_the_pair(pool, shape):
    """A linear layer's input and weight gradients (one pair of products) against numpy, for
    2-D and 3-D inputs, float64."""
    r = np.random.default_rng(16)
    xn, wn, bn = r.standard_normal(shape), r.standard_normal((30, 40)), r.standard_normal(30)
    gn = r.standard_normal((*shape[:-1], 30))
    x, w, b = (lucid.tensor(a, requires_grad=True) for a in (xn, wn, bn))
    lucid.nn.functional.linear(x, w, b).backward(lucid.tensor(gn))
    g2 = gn.reshape(-1, 30)
    np.testing.assert_allclose(x.grad.numpy(), (g2 @ wn).reshape(shape), rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), g2.T @ xn.reshape(-1, 40), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), g2.sum(0), rtol=1e-12)
