"""lucid.nn.grad: conv{1,2,3}d_input and conv{1,2,3}d_weight equal torch.nn.grad's (float64)
over strides, padding, dilation and groups, and are differentiable again."""

from __future__ import annotations

import numpy as np
import pytest
from nn_util import arr

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
import lucid.nn.grad as G

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("n, xs, ws, kw", [
    (1, (2, 4, 11), (6, 2, 3), dict(stride=2, padding=1, dilation=1, groups=2)),
    (1, (1, 3, 10), (4, 3, 2), dict(stride=3)),
    (2, (2, 3, 9, 8), (4, 3, 3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2))),
    (2, (1, 4, 7, 7), (4, 1, 3, 3), dict(stride=2, padding=1, groups=4)),
    (3, (1, 2, 5, 6, 7), (3, 2, 2, 3, 2), dict(stride=(1, 2, 2), padding=(0, 1, 1))),
])
def test_matches_torch(torch, n, xs, ws, kw):
    x = RNG.standard_normal(xs)
    w = RNG.standard_normal(ws)
    conv = getattr(torch.nn.functional, f"conv{n}d")
    gy = RNG.standard_normal(tuple(conv(torch.tensor(x), torch.tensor(w), **kw).shape))
    li = getattr(G, f"conv{n}d_input")(xs, lucid.tensor(w), lucid.tensor(gy), **kw)
    ti = getattr(torch.nn.grad, f"conv{n}d_input")(xs, torch.tensor(w), torch.tensor(gy), **kw)
    np.testing.assert_allclose(arr(li), arr(ti), rtol=1e-12, atol=1e-12)
    lw = getattr(G, f"conv{n}d_weight")(lucid.tensor(x), ws, lucid.tensor(gy), **kw)
    tw = getattr(torch.nn.grad, f"conv{n}d_weight")(torch.tensor(x), ws, torch.tensor(gy), **kw)
    np.testing.assert_allclose(arr(lw), arr(tw), rtol=1e-12, atol=1e-12)
    assert not lw.requires_grad and not li.requires_grad


def test_equal_the_convolution_backward():
    x = lucid.randn(2, 3, 8, 8, dtype=lucid.float64, requires_grad=True)
    w = lucid.randn(5, 3, 3, 3, dtype=lucid.float64, requires_grad=True)
    y = F.conv2d(x, w, stride=2, padding=1)
    gy = lucid.randn(*y.shape, dtype=lucid.float64)
    y.backward(gy)
    np.testing.assert_allclose(arr(G.conv2d_input(x.shape, w, gy, 2, 1)), arr(x.grad),
                               rtol=1e-12)
    np.testing.assert_allclose(arr(G.conv2d_weight(x, w.shape, gy, 2, 1)), arr(w.grad),
                               rtol=1e-12)


def test_differentiable_again():
    x = lucid.randn(1, 2, 6, dtype=lucid.float64, requires_grad=True)
    gy = lucid.randn(1, 3, 4, dtype=lucid.float64, requires_grad=True)
    w = lucid.randn(3, 2, 3, dtype=lucid.float64, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda a, b: G.conv1d_weight(a, (3, 2, 3), b), [x, gy])
    assert lucid.autograd.gradcheck(lambda a, b: G.conv1d_input((1, 2, 6), a, b), [w, gy])
    assert nn.grad is G and F.grad is G
