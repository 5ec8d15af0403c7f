"""Linear, Identity, Flatten, Unflatten and the activation modules."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_util import arr, catch

import lucid
import lucid.nn as nn
import lucid.nn.functional as F


def test_linear_shapes_names_and_default_init():
    fc = nn.Linear(50, 30)
    assert [n for n, _ in fc.named_parameters()] == ["weight", "bias"]
    assert tuple(fc.weight.shape) == (30, 50) and tuple(fc.bias.shape) == (30,)
    bound = 1 / math.sqrt(50)
    w, b = arr(fc.weight), arr(fc.bias)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.9 * bound  # really spread over the whole range
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01
    assert nn.Linear(3, 2, bias=False).bias is None


def test_linear_init_is_reproducible_with_manual_seed():
    lucid.manual_seed(123)
    a = nn.Linear(4, 3)
    lucid.manual_seed(123)
    b = nn.Linear(4, 3)
    np.testing.assert_array_equal(arr(a.weight), arr(b.weight))
    np.testing.assert_array_equal(arr(a.bias), arr(b.bias))
    assert not np.array_equal(arr(nn.Linear(4, 3).weight), arr(a.weight))


def test_linear_dtype_device_and_input_ranks():
    fc = nn.Linear(3, 2, dtype=lucid.float64, device="numpy")
    assert fc.weight.dtype == lucid.float64 and fc.bias.device == "numpy"
    x = lucid.randn(3, dtype=lucid.float64, device="numpy")
    assert tuple(fc(x).shape) == (2,)
    assert tuple(nn.Linear(3, 2)(lucid.randn(5, 4, 3)).shape) == (5, 4, 2)


@pytest.mark.parity
def test_linear_matches_torch_forward_and_backward(torch):
    tl = torch.nn.Linear(4, 3)
    ll = nn.Linear(4, 3)
    ll.load_state_dict(tl.state_dict())
    xn = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    xt = torch.tensor(xn, requires_grad=True)
    xl = lucid.tensor(xn, requires_grad=True)
    (tl(xt) ** 2).sum().backward()
    (ll(xl) ** 2).sum().backward()
    np.testing.assert_allclose(arr(ll(xl)), tl(xt).detach().numpy(), atol=1e-5)
    np.testing.assert_allclose(arr(xl.grad), xt.grad.numpy(), atol=1e-5)
    np.testing.assert_allclose(arr(ll.weight.grad), tl.weight.grad.numpy(), atol=1e-5)
    np.testing.assert_allclose(arr(ll.bias.grad), tl.bias.grad.numpy(), atol=1e-5)


def _reprs_and_errors(fw, nn_):
    return [
        repr(nn_.Linear(4, 3)), repr(nn_.Linear(2, 3, bias=False)), repr(nn_.Identity(3, a=1)),
        repr(nn_.Flatten()), repr(nn_.Flatten(0, 2)), repr(nn_.Unflatten(1, (2, 2))),
        repr(nn_.ReLU()), repr(nn_.ReLU(inplace=True)), repr(nn_.Sigmoid()), repr(nn_.Tanh()),
        catch(lambda: nn_.Unflatten(1, 3)), catch(lambda: nn_.Unflatten(1, (2, 2.0))),
        catch(lambda: nn_.Linear(2, 2)(fw.zeros(3, 3))),
        repr(list(nn_.Linear(2, 2).state_dict())),
    ]


def test_layer_reprs_and_errors_match_torch(both):
    both(_reprs_and_errors)


@pytest.mark.parity
def test_shape_and_activation_layers_match_torch(torch):
    xn = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    pairs = [(nn.Identity(), torch.nn.Identity()), (nn.Flatten(), torch.nn.Flatten()),
             (nn.Flatten(0, -1), torch.nn.Flatten(0, -1)),
             (nn.Unflatten(2, (2, 2)), torch.nn.Unflatten(2, (2, 2))),
             (nn.ReLU(), torch.nn.ReLU()), (nn.Sigmoid(), torch.nn.Sigmoid()),
             (nn.Tanh(), torch.nn.Tanh())]
    for lm, tm in pairs:
        xl = lucid.tensor(xn, requires_grad=True)
        xt = torch.tensor(xn, requires_grad=True)
        yl, yt = lm(xl), tm(xt)
        assert tuple(yl.shape) == tuple(yt.shape)
        np.testing.assert_allclose(arr(yl), yt.detach().numpy(), atol=1e-6)
        (yl * yl).sum().backward()
        (yt * yt).sum().backward()
        np.testing.assert_allclose(arr(xl.grad), xt.grad.numpy(), atol=1e-5)


def test_relu_inplace_overwrites_input():
    x = lucid.tensor([-1.0, 2.0])
    y = nn.ReLU(inplace=True)(x)
    assert y is x
    np.testing.assert_array_equal(arr(x), [0.0, 2.0])
    z = lucid.tensor([-1.0, 2.0])
    assert F.relu_(z) is z and arr(F.relu(lucid.tensor([-3.0])))[0] == 0.0


def test_identity_returns_its_input():
    x = lucid.ones(2)
    assert nn.Identity(5, unused=True)(x) is x


def test_functional_linear():
    x, w, b = lucid.randn(2, 3), lucid.randn(4, 3), lucid.randn(4)
    np.testing.assert_allclose(arr(F.linear(x, w, b)), arr(x) @ arr(w).T + arr(b), rtol=1e-5)
    np.testing.assert_allclose(arr(F.linear(x, w)), arr(x) @ arr(w).T, rtol=1e-5)
    np.testing.assert_allclose(arr(F.sigmoid(lucid.zeros(1))), [0.5])
    np.testing.assert_allclose(arr(F.tanh(lucid.zeros(1))), [0.0])
