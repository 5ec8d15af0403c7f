"""Dropout's mask kernel (kernels/random.py) against its numpy reference, and the masks'
statistics, determinism and backend independence."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.backend._nn_ref import dropout_scale_host
from lucid.kernels import random as R


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("shape", [(1,), (7, 13), (3, 5, 1031)])
def test_kernel_matches_reference(monkeypatch, dtype, parallel, shape) -> None:
    monkeypatch.setattr(R, "use_parallel", lambda n, kind: parallel)
    for seed, p in [(0, 0.5), (2**64 - 1, 0.1), (123456789, 0.9), (42, 0.0)]:
        got = R.dropout_scale(shape, seed, p, dtype)
        want = dropout_scale_host(shape, seed, p, np.dtype(dtype))
        assert got.dtype == dtype and got.shape == shape
        np.testing.assert_array_equal(got, want)
        assert set(np.unique(got)) <= {0.0, dtype(1.0 / (1.0 - p))}


def test_other_dtypes_take_the_reference() -> None:
    assert R.dropout_scale((4,), 1, 0.5, np.float16) is None
    h = dropout_scale_host((4, 4), 1, 0.5, np.dtype(np.float16))
    assert h.dtype == np.float16 and set(np.unique(h)) <= {0.0, 2.0}


@pytest.mark.parametrize("p", [0.05, 0.3, 0.5, 0.9])
def test_keep_rate_and_independence(p) -> None:
    n = 1 << 20
    keep = R.dropout_scale((n,), 987654321, p, np.float64) != 0
    # the kept fraction within 6 binomial standard deviations of 1 - p
    assert abs(keep.mean() - (1 - p)) < 6 * np.sqrt(p * (1 - p) / n)
    # neighbours (and rows of a 1024-wide matrix) are uncorrelated
    k = keep.astype(np.float64) - keep.mean()
    for lag in (1, 2, 1024):
        corr = (k[:-lag] * k[lag:]).mean() / k.var()
        assert abs(corr) < 6 / np.sqrt(n), (lag, corr)


def test_manual_seed_fixes_masks_on_every_backend() -> None:
    masks = {}
    for dev in ("cpu", "numpy"):
        lucid.manual_seed(3)
        x = lucid.ones(64, 33, device=dev)
        a = lucid.nn.functional.dropout(x, 0.25).numpy()
        b = lucid.nn.functional.dropout(x, 0.25).numpy()
        assert not np.array_equal(a, b)  # each call draws a new seed
        masks[dev] = (a, b)
    for a, b in zip(masks["cpu"], masks["numpy"]):
        np.testing.assert_array_equal(a, b)
    lucid.manual_seed(3)
    again = lucid.nn.functional.dropout(lucid.ones(64, 33), 0.25).numpy()
    np.testing.assert_array_equal(again, masks["cpu"][0])


def test_dropout_gradient_uses_the_same_mask() -> None:
    lucid.manual_seed(0)
    x = lucid.randn(40, 50, requires_grad=True)
    y = lucid.nn.functional.dropout(x, 0.4)
    y.sum().backward()
    m = y.detach().numpy() / x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), m, rtol=1e-6)
    g = x.grad.numpy()
    assert np.all((g == 0) | np.isclose(g, 1 / 0.6)) and 0.3 < (g == 0).mean() < 0.5
