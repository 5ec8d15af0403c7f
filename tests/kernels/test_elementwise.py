"""Fused elementwise kernels against their numpy expressions."""

from __future__ import annotations

import numpy as np
import pytest

from lucid.kernels import elementwise as E


def _data(rng, shape, dtype):
    x = rng.standard_normal(shape).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    if x.size > 3:
        x.reshape(-1)[:3] = [np.nan, 0.0, -0.0]
    return x, g


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(0,), (1,), (1000,), (3, 1, 257)])
def test_backward_kernels(build, rng, dtype, shape) -> None:
    x, g = _data(rng, shape, dtype)
    y = 1 / (1 + np.exp(-x))
    t = np.tanh(x)
    cases = [
        (E.sigmoid_backward(y, g), g * y * (1 - y)),
        (E.tanh_backward(t, g), g * (1 - t * t)),
        (E.relu_backward(x, g), np.where(np.isnan(x) | (x > 0), g, 0).astype(dtype)),
        (E.relu(x), np.where(np.isnan(x) | (x > 0), x, 0).astype(dtype)),
    ]
    for got, exp in cases:
        assert got.shape == exp.shape and got.dtype == dtype
        np.testing.assert_allclose(got, exp, rtol=1e-6, atol=1e-7, equal_nan=True)


def test_fallbacks_keep_numpy_semantics(rng) -> None:
    y = rng.random((4, 6))
    g = rng.standard_normal((4, 6))
    # strided, broadcast and mixed-dtype inputs take the numpy expression
    np.testing.assert_allclose(E.sigmoid_backward(y[:, ::2], g[:, ::2]), (g * y * (1 - y))[:, ::2])
    np.testing.assert_allclose(E.tanh_backward(y, g[0]), g[0] * (1 - y * y))
    out = E.relu_backward(y.astype(np.float32), g)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(E.relu(np.array([-1, 2])), [0, 2])
    np.testing.assert_array_equal(E.relu(y.T), np.maximum(y.T, 0))
