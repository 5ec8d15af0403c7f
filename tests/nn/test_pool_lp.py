"""F.lp_pool1d/2d/3d and nn.LPPool1d/2d/3d: values and gradients equal torch's (float64),
for finite and infinite norms, with and without stride and ceil_mode."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_util import arr

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("n, shape, k, stride", [
    (1, (2, 3, 11), 3, 2),
    (1, (3, 8), 2, None),
    (2, (2, 3, 7, 9), (2, 3), 2),
    (2, (3, 8, 8), 2, None),
    (3, (1, 2, 5, 6, 7), 2, (1, 2, 2)),
])
@pytest.mark.parametrize("p", [1, 2, 3.0, 1.5, math.inf, -math.inf])
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_lp_pool_matches_torch(torch, n, shape, k, stride, p, ceil_mode):
    x = RNG.standard_normal(shape)
    if p not in (1, 2, math.inf, -math.inf):
        x = np.abs(x) + 0.1  # fractional powers of negatives are NaN in both
    lx, tx = lucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ly = getattr(F, f"lp_pool{n}d")(lx, p, k, stride, ceil_mode)
    ty = getattr(torch.nn.functional, f"lp_pool{n}d")(tx, p, k, stride, ceil_mode)
    np.testing.assert_allclose(arr(ly), arr(ty), rtol=1e-12, atol=1e-12)
    g = RNG.standard_normal(tuple(ly.shape))
    ly.backward(lucid.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(arr(lx.grad), arr(tx.grad), rtol=1e-10, atol=1e-12)


def test_zero_window_has_zero_gradient(torch):
    x = np.zeros((1, 1, 4, 4))
    x[0, 0, 2:, 2:] = 1.0
    lx = lucid.tensor(x, requires_grad=True)
    F.lp_pool2d(lx, 2, 2).sum().backward()
    tx = torch.tensor(x, requires_grad=True)
    torch.nn.functional.lp_pool2d(tx, 2, 2).sum().backward()
    np.testing.assert_array_equal(arr(lx.grad), arr(tx.grad))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_modules_match_torch(torch, n):
    lm = getattr(nn, f"LPPool{n}d")(2, 2, stride=1)
    tm = getattr(torch.nn, f"LPPool{n}d")(2, 2, stride=1)
    assert repr(lm) == repr(tm)
    x = RNG.standard_normal((2, 3) + (5,) * n)
    np.testing.assert_allclose(arr(lm(lucid.tensor(x))), arr(tm(torch.tensor(x))), rtol=1e-12)
