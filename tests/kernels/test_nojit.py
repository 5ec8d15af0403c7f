"""Every kernel also runs as plain Python (NUMBA_DISABLE_JIT=1) and gives the same answers."""

from __future__ import annotations

import pytest

_CHECK = """
import warnings
import numpy as np, numba
assert numba.config.DISABLE_JIT
from lucid.kernels import reduce as R, elementwise as E, warmup as W, _jit
reg = W.registry()
assert reg and all(not hasattr(e.dispatcher, "compile") for e in reg.values())
assert not _jit.cache_enabled()
rng = np.random.default_rng(0)
checked = 0
for dt in (np.float32, np.float64):
    for shape, axes in [((3, 5), [None, 0, 1, (0, 1)]), ((2, 4100), [1, None]),
                        ((4, 3, 6), [1, (0, 2), -1]), ((2, 300), [1])]:
        x = rng.standard_normal(shape).astype(dt)
        x.reshape(-1)[3] = np.nan if shape == (2, 300) else x.reshape(-1)[3]
        x64 = x.astype(np.float64)
        for ax in axes:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                np.testing.assert_allclose(R.sum(x, ax), x64.sum(ax), rtol=1e-5, atol=1e-5)
                np.testing.assert_allclose(R.mean(x, ax), x64.mean(ax), rtol=1e-5, atol=1e-5)
                np.testing.assert_allclose(R.var(x, ax), x64.var(ax, ddof=1), rtol=1e-4)
            np.testing.assert_array_equal(R.max(x, ax), x.max(ax))
            np.testing.assert_array_equal(R.min(x, ax), x.min(ax))
            if ax is None or isinstance(ax, int):
                np.testing.assert_array_equal(R.argmax(x, ax), x.argmax(ax))
                np.testing.assert_array_equal(R.argmin(x, ax), x.argmin(ax))
            checked += 1
    y = rng.random(50).astype(dt); g = rng.standard_normal(50).astype(dt)
    np.testing.assert_allclose(E.sigmoid_backward(y, g), g * y * (1 - y), rtol=1e-6)
    np.testing.assert_allclose(E.tanh_backward(y, g), g * (1 - y * y), rtol=1e-6)
    np.testing.assert_array_equal(E.relu_backward(y - 0.5, g), g * (y > 0.5))
    np.testing.assert_array_equal(E.relu(y - 0.5), np.maximum(y - 0.5, 0))
from math import erf
from lucid.kernels import activation as A, pointwise as P
z = rng.standard_normal(40).astype(np.float32); z64 = z.astype(np.float64)
phi = np.array([0.5 * (1 + erf(v / np.sqrt(2))) for v in z64])
np.testing.assert_allclose(A.gelu(z, False), z64 * phi, rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(A.gelu_backward(z, np.ones_like(z), False),
                           phi + z64 * np.exp(-z64 * z64 / 2) / np.sqrt(2 * np.pi), rtol=1e-5)
np.testing.assert_allclose(P.forward("silu", z), z64 / (1 + np.exp(-z64)), rtol=1e-5, atol=1e-7)
np.testing.assert_allclose(P.forward("exp", z), np.exp(z64), rtol=1e-6)
print("checked", checked)
"""


@pytest.mark.parametrize("threshold", ["0", "inf"])
def test_kernels_without_jit(threshold: str, run_py) -> None:
    env = {"NUMBA_DISABLE_JIT": "1", "LUCID_PARALLEL_THRESHOLD": threshold}
    assert "checked 20" in run_py(_CHECK, env)
