"""``lucid.nn.utils.parametrize``: the class swap, the property, state_dict keys, right_inverse,
chaining, caching, removal and errors, against PyTorch where it is installed."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.utils.parametrize as P


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT

    def right_inverse(self, A):
        return A.triu()


class Double(nn.Module):
    def forward(self, X):
        return X * 2.0

    def right_inverse(self, X):
        return X / 2.0


class NoInverse(nn.Module):
    def forward(self, X):
        return X + 1.0


class Split(nn.Module):
    """Two originals: ``forward(a, b) = a + b``; ``right_inverse`` splits in halves."""

    def forward(self, a, b):
        return a + b

    def right_inverse(self, X):
        return X * 0.25, X * 0.75


def _np(t):
    return t.detach().numpy()


def test_class_swap_property_and_state_dict_keys():
    m = nn.Linear(3, 3)
    w0 = _np(m.weight).copy()
    assert P.register_parametrization(m, "weight", Symmetric()) is m
    assert type(m).__name__ == "ParametrizedLinear"
    assert type(m).__bases__[0] is nn.Linear and isinstance(m, nn.Linear)
    assert isinstance(type(m).__dict__["weight"], property)
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight")
    assert not P.is_parametrized(m, "bias") and not P.is_parametrized(nn.Linear(2, 2))
    assert P.type_before_parametrizations(m) is nn.Linear
    assert P.type_before_parametrizations(nn.ReLU()) is nn.ReLU
    # right_inverse ran at registration: original holds triu(W)
    np.testing.assert_allclose(_np(m.parametrizations.weight.original), np.triu(w0))
    expected = np.triu(w0) + np.triu(w0, 1).T
    np.testing.assert_allclose(_np(m.weight), expected, rtol=1e-6)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "parametrizations.weight.original"]
    assert isinstance(m.parametrizations, nn.ModuleDict)
    assert isinstance(m.parametrizations.weight, P.ParametrizationList)
    assert "weight" not in m._parameters
    # another instance keeps its own class
    assert type(nn.Linear(3, 3)) is nn.Linear
    r = repr(m)
    assert r.startswith("ParametrizedLinear(") and "ParametrizationList(" in r
    assert "(0): Symmetric()" in r


def test_assignment_calls_right_inverse_and_keeps_parameter_identity():
    m = P.register_parametrization(nn.Linear(4, 4), "weight", Symmetric())
    orig = m.parametrizations.weight.original
    A = lucid.randn(4, 4)
    A = A + A.mT
    m.weight = A
    assert m.parametrizations.weight.original is orig
    np.testing.assert_allclose(_np(m.weight), _np(A), rtol=1e-6)
    np.testing.assert_allclose(_np(orig), np.triu(_np(A)), rtol=1e-6)
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        m.weight = nn.Parameter(A)


def test_chained_parametrizations_apply_in_order():
    m = nn.Linear(3, 3)
    w = _np(m.weight).copy()
    P.register_parametrization(m, "weight", Symmetric())
    P.register_parametrization(m, "weight", Double())
    assert len(m.parametrizations.weight) == 2
    np.testing.assert_allclose(_np(m.weight), 2 * (np.triu(w) + np.triu(w, 1).T), rtol=1e-6)
    # assignment runs the right_inverses last-registered first
    A = lucid.eye(3) * 4.0
    m.weight = A
    np.testing.assert_allclose(_np(m.weight), _np(A), rtol=1e-6)
    np.testing.assert_allclose(_np(m.parametrizations.weight.original), 2 * np.eye(3))


def test_tuple_right_inverse_gives_original0_original1():
    m = nn.Linear(2, 3)
    w = _np(m.weight).copy()
    P.register_parametrization(m, "weight", Split())
    pl = m.parametrizations.weight
    assert not pl.is_tensor and pl.ntensors == 2 and not hasattr(pl, "original")
    assert isinstance(pl.original0, nn.Parameter) and isinstance(pl.original1, nn.Parameter)
    np.testing.assert_allclose(_np(pl.original0), 0.25 * w, rtol=1e-6)
    np.testing.assert_allclose(_np(m.weight), w, rtol=1e-6)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original0",
                                    "parametrizations.weight.original1"]
    m(lucid.randn(4, 2)).sum().backward()
    assert pl.original0.grad is not None and pl.original1.grad is not None
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
    P.remove_parametrizations(m, "weight")
    assert isinstance(m.weight, nn.Parameter) and type(m) is nn.Linear
    np.testing.assert_allclose(_np(m.weight), w, rtol=1e-6)


def test_parametrize_a_buffer():
    m = nn.BatchNorm1d(3)
    P.register_parametrization(m, "running_var", Double())
    assert "parametrizations.running_var.original" in m.state_dict()
    assert isinstance(m.parametrizations.running_var.original, lucid.Tensor)
    assert not isinstance(m.parametrizations.running_var.original, nn.Parameter)
    np.testing.assert_allclose(_np(m.running_var), np.ones(3))


def test_remove_parametrizations_leave_true_and_false():
    m = nn.Linear(3, 3)
    w = _np(m.weight).copy()
    P.register_parametrization(m, "weight", NoInverse())
    orig = m.parametrizations.weight.original
    P.remove_parametrizations(m, "weight")           # keeps the parametrized value
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    assert m.weight is orig and isinstance(m.weight, nn.Parameter)
    np.testing.assert_allclose(_np(m.weight), w + 1.0, rtol=1e-6)
    assert list(m.state_dict()) == ["bias", "weight"]
    P.register_parametrization(m, "weight", NoInverse())
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    np.testing.assert_allclose(_np(m.weight), w + 1.0, rtol=1e-6)


def test_removal_of_one_of_two_keeps_the_class():
    m = nn.Linear(3, 3)
    P.register_parametrization(m, "weight", Double())
    P.register_parametrization(m, "bias", Double())
    P.remove_parametrizations(m, "weight")
    assert type(m).__name__ == "ParametrizedLinear" and P.is_parametrized(m, "bias")
    assert not P.is_parametrized(m, "weight") and isinstance(m.weight, nn.Parameter)
    P.remove_parametrizations(m, "bias")
    assert type(m) is nn.Linear


def test_errors():
    m = nn.Linear(3, 3)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a "
                                         "parametrized element with name 'foo'"):
        P.register_parametrization(m, "foo", Double())
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        P.remove_parametrizations(m, "weight")

    class Shrink(nn.Module):
        def forward(self, X):
            return X[:2]

    with pytest.raises(ValueError, match="may not change the shape of the tensor"):
        P.register_parametrization(m, "weight", Shrink())
    assert type(m) is nn.Linear and "weight" in m._parameters   # nothing changed

    class ToDouble(nn.Module):
        def forward(self, X):
            return X.double()

    with pytest.raises(ValueError, match="may not change the dtype"):
        P.register_parametrization(m, "weight", ToDouble())
    P.register_parametrization(m, "weight", Shrink(), unsafe=True)
    assert m.weight.shape == (2, 3)

    m2 = P.register_parametrization(nn.Linear(3, 3), "weight", Double())
    with pytest.raises(ValueError, match="may not change the shape"):
        P.register_parametrization(m2, "weight", Shrink())

    class BadInverse(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return 3

    with pytest.raises(ValueError, match="'right_inverse' must return a Tensor or a Sequence"):
        P.register_parametrization(nn.Linear(2, 2), "weight", BadInverse())
    m3 = P.register_parametrization(nn.Linear(2, 2), "weight", NoInverse())
    with pytest.raises(RuntimeError, match="NoInverse does not implement right_inverse"):
        m3.weight = lucid.zeros(2, 2)
    with pytest.raises(ValueError, match="requires one or more modules"):
        P.ParametrizationList([], lucid.zeros(2))


def test_cached_computes_once():
    calls = []

    class Counting(nn.Module):
        def forward(self, X):
            calls.append(1)
            return X * 1.0

    m = P.register_parametrization(nn.Linear(3, 3), "weight", Counting(), unsafe=True)
    calls.clear()
    _ = m.weight, m.weight
    assert len(calls) == 2
    calls.clear()
    with P.cached():
        a = m.weight
        with P.cached():
            b = m.weight
        c = m.weight
    assert len(calls) == 1 and a is b is c
    _ = m.weight
    assert len(calls) == 2


def test_train_mode_follows_module_and_deepcopy_and_pickle():
    m = nn.Linear(3, 3).eval()
    p = Double()
    P.register_parametrization(m, "weight", p)
    assert p.training is False
    m2 = copy.deepcopy(m)
    assert type(m2).__name__ == "ParametrizedLinear"
    np.testing.assert_allclose(_np(m2.weight), _np(m.weight))
    assert m2.parametrizations.weight.original is not m.parametrizations.weight.original
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(m)


def test_state_dict_round_trip_and_to():
    m = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    m2 = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    m2.load_state_dict(m.state_dict())
    np.testing.assert_allclose(_np(m2.weight), _np(m.weight))
    m.double()
    assert m.weight.dtype == lucid.float64
    assert m.parametrizations.weight.original.dtype == lucid.float64


def test_transfer_parametrizations_and_params():
    src = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    dst = nn.Linear(3, 3)
    P.transfer_parametrizations_and_params(src, dst)
    assert dst.parametrizations.weight.original is src.parametrizations.weight.original
    np.testing.assert_allclose(_np(dst.weight), _np(src.weight))


def test_training_step_matches_torch(torch):
    tnn = torch.nn
    TP = torch.nn.utils.parametrize

    class TSym(tnn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()

    class TDouble(tnn.Module):
        def forward(self, X):
            return X * 2.0

        def right_inverse(self, X):
            return X / 2.0

    torch.manual_seed(0)
    t = tnn.Sequential(tnn.Linear(4, 4), tnn.Tanh(), tnn.Conv2d(1, 2, 3))
    lm = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Conv2d(1, 2, 3))
    lm.load_state_dict(t.state_dict())
    TP.register_parametrization(t[0], "weight", TSym())
    TP.register_parametrization(t[0], "weight", TDouble())
    TP.register_parametrization(t[2], "weight", TDouble())
    P.register_parametrization(lm[0], "weight", Symmetric())
    P.register_parametrization(lm[0], "weight", Double())
    P.register_parametrization(lm[2], "weight", Double())
    assert list(lm.state_dict()) == list(t.state_dict())
    # a torch state_dict of the parametrized model loads as is
    lm.load_state_dict(t.state_dict())
    lopt = lucid.optim.SGD(lm.parameters(), lr=0.1)
    x = np.random.default_rng(0).standard_normal((2, 1, 5, 4)).astype(np.float32)
    for _ in range(2):
        tl = t(torch.from_numpy(x)).square().mean()
        ll = lm(lucid.tensor(x)).square().mean()
        np.testing.assert_allclose(ll.item(), tl.item(), rtol=1e-5)
        t.zero_grad()
        lopt.zero_grad()
        tl.backward()
        ll.backward()
        for (n, tp), (n2, lp) in zip(t.named_parameters(), lm.named_parameters()):
            assert n == n2
            np.testing.assert_allclose(_np(lp.grad), tp.grad.numpy(), rtol=1e-4, atol=1e-6)
        with torch.no_grad():   # plain SGD (torch.optim's first import is slow)
            for tp in t.parameters():
                tp -= 0.1 * tp.grad
        lopt.step()
    for k, v in t.state_dict().items():
        np.testing.assert_allclose(_np(lm.state_dict()[k]), v.numpy(), rtol=1e-5, atol=1e-6)
    TP.remove_parametrizations(t[0], "weight")
    P.remove_parametrizations(lm[0], "weight")
    assert list(lm.state_dict()) == list(t.state_dict())
    np.testing.assert_allclose(_np(lm[0].weight), t[0].weight.detach().numpy(), rtol=1e-5)
