"""kernels/_gemm.py ``one`` / ``pool_one``: a product from Python as one compiled call. One
build per dtype takes every layout and read-only flag (no call compiles another), and the
results match a float64 numpy reference, with and without a bias row."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from lucid.kernels import _gemm, blas

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT,
                                reason="the compiled entry points exist compiled only")


@pytest.fixture(params=["mkl", "pool"])
def lib(request, monkeypatch):
    monkeypatch.setenv("LUCID_BLAS", request.param)
    blas.reset()
    if blas.library() != request.param:
        monkeypatch.undo()
        blas.reset()
        pytest.skip(f"{request.param} does not load here")
    yield _gemm._ONE if request.param == "mkl" else _gemm.POOL_ONE[1]
    monkeypatch.undo()
    blas.reset()


def _ref(a, b, bias=None):
    out = a.astype(np.float64) @ b.astype(np.float64)
    return out if bias is None else out + bias.astype(np.float64).reshape(-1)


def _layouts(r, m, n, dt):
    """(m, n) operands: C, transposed (F), a slice of a wider array, and read-only."""
    c = r.standard_normal((m, n)).astype(dt)
    f = np.ascontiguousarray(r.standard_normal((n, m)).astype(dt)).T
    s = r.standard_normal((m + 2, n + 3)).astype(dt)[1:m + 1, 2:n + 2]
    ro = c.copy()
    ro.flags.writeable = False
    return [c, f, s, ro]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_one_build_per_dtype_takes_every_layout(lib, dt):
    r = np.random.default_rng(3)
    m, k, n = 48, 40, 36
    for a in _layouts(r, m, k, dt):
        for b in _layouts(r, k, n, dt):
            for bias in (None, r.standard_normal(n).astype(dt),
                         r.standard_normal((1, n)).astype(dt)):
                out = blas.gemm(a, b, bias)
                assert out.dtype == dt and out.shape == (m, n) and out.flags.c_contiguous
                tol = dict(rtol=1e-5, atol=1e-4) if dt == np.float32 else dict(rtol=1e-12)
                np.testing.assert_allclose(out, _ref(a, b, bias), **tol)
    assert {sig[0].dtype for sig in lib.signatures} <= {numba.float32, numba.float64}
    assert len(lib.signatures) == len({sig[0].dtype for sig in lib.signatures})


@pytest.mark.parametrize("shape", [(16, 256, 64), (512, 300, 32)])
def test_bias_row_small_and_large_outputs(lib, shape):
    """A small output is filled with the bias before the product (beta 1); a large one gets
    it after, on both cores: both are numpy's ``a @ b + bias``, the bias untouched."""
    m, n, k = shape
    r = np.random.default_rng(5)
    a = r.standard_normal((m, k)).astype(np.float32)
    w = r.standard_normal((n, k)).astype(np.float32)
    bias = r.standard_normal(n).astype(np.float32)
    keep = bias.copy()
    out = blas.gemm(a, w.T, bias)
    np.testing.assert_allclose(out, _ref(a, w.T, bias), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(bias, keep)


def test_operands_blas_cannot_read(lib):
    """Reversed rows, a broadcast row and columns with no unit stride: copied (MKL) or left
    to numpy (the pool), numpy's values either way."""
    r = np.random.default_rng(6)
    a = r.standard_normal((40, 60)).astype(np.float32)
    b = r.standard_normal((60, 30)).astype(np.float32)
    for x, y in ((a[::-1], b), (a, np.broadcast_to(b[:1], b.shape)),
                 (r.standard_normal((40, 120)).astype(np.float32)[:, ::2], b)):
        np.testing.assert_allclose(blas.gemm(x, y), _ref(x, y), rtol=1e-5, atol=1e-4)


def test_empty_inner_dimension_keeps_the_bias(lib):
    a = np.zeros((200, 0), np.float32)
    b = np.zeros((0, 300), np.float32)
    bias = np.arange(300, dtype=np.float32)
    np.testing.assert_array_equal(blas.gemm(a, b, bias), np.broadcast_to(bias, (200, 300)))


def test_unaligned_operands_and_bias(lib):
    """Data at an odd byte offset (read from a buffer) is numpy's to multiply: the compiled
    entries are never handed what their one build cannot take."""
    r = np.random.default_rng(8)
    m, k, n = 40, 50, 60

    def unaligned(shape):
        vals = r.standard_normal(shape).astype(np.float32)
        buf = bytearray(vals.nbytes + 1)
        out = np.frombuffer(buf, np.float32, count=vals.size, offset=1).reshape(shape)
        out[...] = vals
        assert not out.flags.aligned
        return out

    a, b = r.standard_normal((m, k)).astype(np.float32), r.standard_normal((k, n)).astype(
        np.float32)
    for x, y, bias in ((unaligned((m, k)), b, None), (a, unaligned((k, n)), None),
                       (a, b, unaligned((n,)))):
        np.testing.assert_allclose(blas.gemm(x, y, bias), _ref(x, y, bias), rtol=1e-5,
                                   atol=1e-4)
