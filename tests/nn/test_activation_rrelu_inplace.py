"""F.rrelu / F.rrelu_ / nn.RReLU and the in-place functional activations (F.elu_, celu_,
selu_, hardtanh_, leaky_relu_, threshold_): eval-mode rrelu and every in-place form equal
torch's values and gradients; training-mode rrelu draws a slope in [lower, upper] per
non-positive element and its gradient is that slope."""

from __future__ import annotations

import numpy as np
import pytest
from nn_util import arr, catch

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

X = np.array([[-2.0, -0.5, 0.0, 0.3, 1.7], [3.0, -1.0, 0.9, -0.1, 0.0]])


@pytest.mark.parametrize("name, args", [
    ("elu_", (0.7,)), ("celu_", (1.3,)), ("selu_", ()), ("hardtanh_", (-0.4, 0.8)),
    ("leaky_relu_", (0.2,)), ("threshold_", (0.25, -3.0)), ("rrelu_", (0.1, 0.3, False)),
])
def test_inplace_forms_match_torch(torch, name, args):
    lw = lucid.tensor(X, requires_grad=True)
    tw = torch.tensor(X, requires_grad=True)
    lx, tx = lw * 1.0, tw * 1.0
    ly = getattr(F, name)(lx, *args)
    ty = getattr(torch.nn.functional, name)(tx, *args)
    assert ly is lx and ty is tx
    np.testing.assert_allclose(arr(lx), arr(tx), rtol=1e-15)
    ly.sum().backward()
    ty.sum().backward()
    # torch's celu backward carries 1 / alpha in float32 (its gradient at 0 is 1 + 3.7e-8)
    rtol = 1e-7 if name == "celu_" else 1e-15
    np.testing.assert_allclose(arr(lw.grad), arr(tw.grad), rtol=rtol)


def test_rrelu_eval_matches_torch(torch):
    lx, tx = lucid.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    ly, ty = F.rrelu(lx, 0.1, 0.4), torch.nn.functional.rrelu(tx, 0.1, 0.4)
    np.testing.assert_allclose(arr(ly), arr(ty), rtol=1e-15)
    ly.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(arr(lx.grad), arr(tx.grad), rtol=1e-15)


def test_rrelu_training_draws_slopes():
    x = lucid.tensor(np.linspace(-3, 3, 6001), requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    y.sum().backward()
    xv, yv, g = arr(x), arr(y), arr(x.grad)
    pos = xv > 0
    np.testing.assert_array_equal(yv[pos], xv[pos])
    np.testing.assert_array_equal(g[pos], 1.0)
    slopes = g[~pos]
    assert (slopes >= 0.1).all() and (slopes <= 0.3).all() and slopes.std() > 0.03
    np.testing.assert_allclose(yv[~pos], xv[~pos] * slopes, rtol=1e-15)
    z = x.detach().clone()
    assert F.rrelu_(z, training=True) is z


def test_rrelu_module_and_errors_match_torch(torch):
    def run(fw, nn):
        x = fw.tensor([-1.0, 2.0])
        m = nn.RReLU(0.1, 0.3)
        m.eval()
        return [repr(nn.RReLU()), repr(nn.RReLU(0.1, 0.3, True)), catch(lambda: m(x).tolist()),
                catch(lambda: nn.functional.rrelu(x, 0.5, 0.1, True)),
                catch(lambda: nn.functional.rrelu(x, 0.5, 0.1))]

    assert run(lucid, nn) == run(torch, torch.nn)
    m = nn.RReLU()
    assert (arr(m(lucid.full((100,), -1.0))) != arr(m(lucid.full((100,), -1.0)))).any()
