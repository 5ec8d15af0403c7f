"""Anomaly detection (detect_anomaly, set_detect_anomaly) against torch.autograd: the same
errors and warnings for NaN-producing and failing backward functions, the same mode
switching; and the legacy Variable / variable / set_multithreading_enabled names."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.autograd as autograd
from lucid.autograd import anomaly_mode
from lucid.autograd.variable import Variable as LegacyVariable

pytestmark = [pytest.mark.filterwarnings("ignore:Error detected in"),
              pytest.mark.filterwarnings("ignore:invalid value encountered")]


@pytest.fixture(autouse=True)
def _anomaly_off():
    yield
    anomaly_mode.set_anomaly_enabled(False, True)


def _quiet_detect(mod, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mod.autograd.detect_anomaly(**kw)


def _sqrt_at_zero(mod):
    x = mod.tensor([0.0, 4.0], requires_grad=True)
    return x, (x.sqrt() * 0).sum()


def _log_of_zero(mod):
    a = mod.tensor([0.0, 1.0], requires_grad=True)
    return a, mod.log(mod.zeros(1, requires_grad=True) * a[:1]).sum()


def _negative_sqrt(mod):
    x = mod.tensor([1.0, -1.0], requires_grad=True)
    return x, x.sqrt().sum()


@pytest.mark.parametrize("build", [_sqrt_at_zero, _log_of_zero, _negative_sqrt])
def test_nan_in_backward_raises_as_torch(build, torch) -> None:
    with _quiet_detect(torch):
        _, tloss = build(torch)
        with pytest.raises(RuntimeError) as terr:
            tloss.backward()
    with _quiet_detect(lucid):
        _, lloss = build(lucid)
        with pytest.raises(RuntimeError) as lerr:
            lloss.backward()
    assert str(lerr.value) == str(terr.value)
    assert "returned nan values in its 0th output" in str(lerr.value)


def test_nan_is_let_through_without_anomaly_mode_or_check_nan(torch) -> None:
    x, loss = _sqrt_at_zero(lucid)
    loss.backward()
    assert np.isnan(x.grad.numpy()[0])
    with _quiet_detect(lucid, check_nan=False):
        assert autograd.anomaly_mode.is_anomaly_enabled()
        assert not autograd.anomaly_mode.is_anomaly_check_nan_enabled()
        x, loss = _sqrt_at_zero(lucid)
        loss.backward()
    assert np.isnan(x.grad.numpy()[0])
    with _quiet_detect(torch, check_nan=False):
        tx, tloss = _sqrt_at_zero(torch)
        tloss.backward()
    assert np.isnan(tx.grad.numpy()[0])


def test_nan_check_covers_grad_and_create_graph() -> None:
    with _quiet_detect(lucid):
        x, loss = _sqrt_at_zero(lucid)
        with pytest.raises(RuntimeError, match="'SqrtBackward0' returned nan values"):
            autograd.grad(loss, x)
        x, loss = _sqrt_at_zero(lucid)
        with pytest.raises(RuntimeError, match="'SqrtBackward0' returned nan values"):
            autograd.grad(loss, x, create_graph=True)


def test_finite_backward_is_unchanged_under_anomaly_mode() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    grads = []
    for on in (False, True):
        x = lucid.tensor(a, requires_grad=True)
        with lucid.autograd.set_detect_anomaly(on):
            (x.tanh() * x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_nan_error_warns_with_the_forward_traceback() -> None:
    with _quiet_detect(lucid):
        x = lucid.tensor([0.0], requires_grad=True)
        y = x.sqrt() * 0  # the line the warning must show
        with pytest.warns(UserWarning, match="Error detected in SqrtBackward0") as rec:
            with pytest.raises(RuntimeError):
                y.sum().backward()
    (text,) = [str(w.message) for w in rec if "Error detected" in str(w.message)]
    assert "Traceback of forward call that caused the error" in text
    assert __file__ in text and "y = x.sqrt() * 0" in text


def test_node_recorded_before_anomaly_mode_has_no_forward_information() -> None:
    x, loss = _sqrt_at_zero(lucid)
    with _quiet_detect(lucid):
        with pytest.warns(UserWarning, match="No forward pass information available"):
            with pytest.raises(RuntimeError, match="returned nan values"):
                loss.backward()


class _Boom(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        raise ValueError("boom in backward")


def test_error_in_a_backward_warns_then_propagates(torch) -> None:
    with _quiet_detect(lucid):
        x = lucid.tensor([1.0], requires_grad=True)
        out = _Boom.apply(x).sum()
        with pytest.warns(UserWarning, match="Error detected in _BoomBackward") as rec:
            with pytest.raises(ValueError, match="boom in backward"):
                out.backward()
    assert any("out = _Boom.apply(x).sum()" in str(w.message) for w in rec)
    x = lucid.tensor([1.0], requires_grad=True)
    out = _Boom.apply(x).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # off: no warning, the error alone
        with pytest.raises(ValueError, match="boom in backward"):
            out.backward()


def test_no_forward_trace_is_kept_when_off() -> None:
    x = lucid.tensor([1.0], requires_grad=True)
    assert not hasattr((x * 2).grad_fn, "_anomaly_trace")
    with _quiet_detect(lucid):
        assert hasattr((x * 2).grad_fn, "_anomaly_trace")


def test_detect_anomaly_warns_and_restores_as_torch(torch) -> None:
    with pytest.warns(UserWarning) as trec:
        tmgr = torch.autograd.detect_anomaly()
    with pytest.warns(UserWarning) as lrec:
        lmgr = autograd.detect_anomaly()
    assert str(lrec[0].message) == str(trec[0].message)
    assert lrec[0].filename == __file__
    with tmgr, lmgr:
        assert torch.is_anomaly_enabled() and anomaly_mode.is_anomaly_enabled()
    assert not torch.is_anomaly_enabled() and not anomaly_mode.is_anomaly_enabled()


def test_set_detect_anomaly_as_function_and_context(torch) -> None:
    for mod, is_on, is_nan in ((torch, torch.is_anomaly_enabled,
                                torch.is_anomaly_check_nan_enabled),
                               (lucid, anomaly_mode.is_anomaly_enabled,
                                anomaly_mode.is_anomaly_check_nan_enabled)):
        mod.autograd.set_detect_anomaly(True)
        assert is_on() and is_nan()
        with mod.autograd.set_detect_anomaly(False):
            assert not is_on()
            with mod.autograd.set_detect_anomaly(True, check_nan=False):
                assert is_on() and not is_nan()
            assert not is_on() and is_nan()
        assert is_on()
        mod.autograd.set_detect_anomaly(False)
        assert not is_on()


def test_detect_anomaly_as_a_decorator() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @autograd.detect_anomaly()
        def run():
            assert anomaly_mode.is_anomaly_enabled()
            x, loss = _sqrt_at_zero(lucid)
            loss.backward()

    assert not anomaly_mode.is_anomaly_enabled()
    with pytest.raises(RuntimeError, match="returned nan values"):
        run()
    assert not anomaly_mode.is_anomaly_enabled()


def test_anomaly_module_surface_matches_torch(torch) -> None:
    assert sorted(torch.autograd.anomaly_mode.__all__) == sorted(
        n for n in anomaly_mode.__all__ if n in ("detect_anomaly", "set_detect_anomaly"))
    assert autograd.detect_anomaly is anomaly_mode.detect_anomaly
    assert autograd.set_detect_anomaly is anomaly_mode.set_detect_anomaly


# ---- legacy names ----------------------------------------------------------------------------
def test_variable_returns_a_detached_tensor_as_torch(torch) -> None:
    base = lucid.tensor([1.0, 2.0], requires_grad=True)
    v = autograd.Variable(base * 3, requires_grad=True)
    tv = torch.autograd.Variable(torch.tensor([1.0, 2.0], requires_grad=True) * 3,
                                 requires_grad=True)
    assert type(v) is lucid.Tensor and type(tv) is torch.Tensor
    assert v.requires_grad == tv.requires_grad and v.is_leaf == tv.is_leaf
    assert v.grad_fn is None and tv.grad_fn is None
    np.testing.assert_array_equal(v.detach().numpy(), tv.detach().numpy())
    plain = autograd.Variable(lucid.ones(2))
    assert not plain.requires_grad
    assert isinstance(lucid.ones(1), autograd.Variable)
    assert not isinstance(np.ones(1), autograd.Variable)
    empty, tempty = autograd.Variable(), torch.autograd.Variable()
    assert tuple(empty.shape) == tuple(tempty.shape) == (0,)
    assert empty.dtype == lucid.get_default_dtype()


def test_variable_shares_memory_with_its_data() -> None:
    t = lucid.zeros(3)
    v = autograd.Variable(t)
    v.add_(1.0)
    np.testing.assert_array_equal(t.numpy(), [1.0, 1.0, 1.0])


def test_variable_errors_and_volatile_as_torch(torch) -> None:
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        torch.autograd.Variable([1.0])
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        autograd.Variable([1.0])
    with pytest.raises(RuntimeError):
        autograd.Variable(lucid.ones(2, dtype=lucid.int64), requires_grad=True)
    with pytest.warns(UserWarning, match="volatile was removed"):
        autograd.Variable(lucid.ones(2), volatile=True)


def test_variable_function_is_gone_as_in_torch(torch) -> None:
    with pytest.raises(RuntimeError, match="is deprecated"):
        torch.autograd.variable(torch.ones(1))
    with pytest.raises(RuntimeError, match="is deprecated, use lucid.tensor"):
        autograd.variable(lucid.ones(1))
    assert autograd.variable.Variable is autograd.Variable
    assert LegacyVariable is autograd.Variable


def test_set_multithreading_enabled_as_torch(torch) -> None:
    for mod in (torch, lucid):
        ag = mod.autograd
        assert ag.is_multithreading_enabled()
        with ag.set_multithreading_enabled(False):
            assert not ag.is_multithreading_enabled()
        assert ag.is_multithreading_enabled()
        ag.set_multithreading_enabled(False)
        assert not ag.is_multithreading_enabled()
        ag.set_multithreading_enabled(True)
        assert ag.is_multithreading_enabled()


def test_set_multithreading_enabled_as_a_decorator_restores() -> None:
    """lucid differs from torch 2.13 here: torch's decorator form leaves the mode switched
    off after decorating; lucid applies it only inside the call, as set_grad_enabled."""
    ag = autograd

    @ag.set_multithreading_enabled(False)
    def inside():
        return ag.is_multithreading_enabled()

    assert ag.is_multithreading_enabled()
    assert inside() is False
    assert ag.is_multithreading_enabled()
    with autograd.set_multithreading_enabled(False):
        x = lucid.tensor([2.0], requires_grad=True)
        (x * x).sum().backward()
    assert x.grad.tolist() == [4.0]
