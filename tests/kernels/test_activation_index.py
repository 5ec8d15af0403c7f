"""The GELU kernels and the row scatter-add kernel against their numpy references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import erf

from lucid.kernels import activation as A
from lucid.kernels import index as K


def _gelu_ref(x: np.ndarray, approximate: bool) -> tuple[np.ndarray, np.ndarray]:
    x = x.astype(np.float64)
    if approximate:
        k0 = math.sqrt(2 / math.pi)
        t = np.tanh(k0 * (x + 0.044715 * x ** 3))
        return 0.5 * x * (1 + t), \
            0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k0 * (1 + 3 * 0.044715 * x * x)
    cdf = 0.5 * (1 + erf(x / math.sqrt(2)))
    return x * cdf, cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("approximate", [False, True])
@pytest.mark.parametrize("shape", [(0,), (1,), (3, 1, 257), (100_003,)])
def test_gelu_kernels(rng, dtype, approximate, shape) -> None:
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    if x.size > 4:
        x.reshape(-1)[:4] = [0.0, -0.0, 12.0, -12.0]
    g = rng.standard_normal(shape).astype(dtype)
    y, d = _gelu_ref(x, approximate)
    # float32: tanh(...) rounds to -1 far left, so tiny outputs are absolute-accurate only
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-6, atol=2e-6)
    got = A.gelu(x, approximate)
    assert got.dtype == dtype and got.shape == x.shape
    np.testing.assert_allclose(got, y, **tol)
    np.testing.assert_allclose(A.gelu_backward(x, g, approximate), g * d,
                               **(tol if dtype == np.float64 else dict(rtol=2e-6, atol=3e-6)))


def test_gelu_kernels_decline_other_inputs() -> None:
    x = np.ones((3, 4), np.float32)
    assert A.gelu(x.T, False) is None  # strided
    assert A.gelu(x.astype(np.float16), False) is None
    assert A.gelu_backward(x, np.ones((3, 4), np.float64), False) is None


def test_index_add_rows_against_add_at(rng) -> None:
    idx = rng.integers(0, 50, 400)
    idx[:5] = 7  # repeats accumulate
    for dtype in (np.float32, np.float64):
        g = rng.standard_normal((400, 3, 4)).astype(dtype)
        ref = np.zeros((50, 3, 4), dtype)
        np.add.at(ref, idx, g)
        got = K.index_add_rows((50, 3, 4), idx, g)
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)
        assert got.dtype == dtype


def test_index_add_rows_refuses_bad_indices() -> None:
    g = np.ones((2, 3), np.float32)
    for bad in (5, -1):
        with pytest.raises(IndexError, match=f"index {bad} is out of bounds"):
            K.index_add_rows((5, 3), np.array([1, bad]), g)
    assert K.index_add_rows((5, 3), (np.array([1, 2]),), g) is None  # tuple index: numpy path
    assert K.index_add_rows((5, 3), np.array([1, 2], np.int32), g) is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(0,), (7,), (3, 1, 257), (100_003,)])
def test_leaky_relu_kernels(rng, dtype, shape) -> None:
    x = rng.standard_normal(shape).astype(dtype)
    if x.size > 3:
        x.reshape(-1)[:3] = [0.0, -0.0, np.nan]
    g = rng.standard_normal(shape).astype(dtype)
    np.testing.assert_array_equal(A.leaky_relu(x, 0.2), np.where(x > 0, x, x * dtype(0.2)))
    np.testing.assert_array_equal(A.leaky_relu_backward(x, g, 0.2),
                                  np.where(x > 0, g, g * dtype(0.2)))
    assert A.leaky_relu(x.astype(np.float16), 0.2) is None
