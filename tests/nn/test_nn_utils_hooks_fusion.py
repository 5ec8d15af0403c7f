"""The legacy hook-based ``nn.utils.weight_norm`` / ``spectral_norm``, BatchNorm fusion and
``functional_call`` (``lucid.func`` and ``nn.utils.stateless``), against numpy and PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from nn_util import train_alongside

import lucid
import lucid.nn as nn


def _np(t):
    return t.detach().numpy()


def _wn(m, **kw):
    with pytest.warns(FutureWarning, match="`lucid.nn.utils.weight_norm` is deprecated in favor "
                                           "of `lucid.nn.utils.parametrizations.weight_norm`"):
        return nn.utils.weight_norm(m, **kw)


# ---- legacy weight_norm -------------------------------------------------------------------
def test_weight_norm_parameters_hook_and_removal():
    m = nn.Linear(3, 4)
    W = _np(m.weight).copy()
    _wn(m)
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_g", "weight_v"]
    assert m.weight_g.shape == (4, 1) and m.weight_v.shape == (4, 3)
    np.testing.assert_allclose(_np(m.weight_g), np.linalg.norm(W, axis=1, keepdims=True),
                               rtol=1e-6)
    assert not isinstance(m.weight, nn.Parameter)
    with lucid.no_grad():
        m.weight_g.mul_(2.0)
    x = lucid.randn(2, 3)
    np.testing.assert_allclose(_np(m(x)), _np(x) @ (2 * W).T + _np(m.bias), rtol=1e-5)
    m(x).sum().backward()
    assert m.weight_g.grad is not None and m.weight_v.grad is not None
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the same "
                                           "parameter weight"):
        _wn(m)
    nn.utils.remove_weight_norm(m)
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight"]
    assert isinstance(m.weight, nn.Parameter) and not m._forward_pre_hooks
    np.testing.assert_allclose(_np(m.weight), 2 * W, rtol=1e-6)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(m)


def test_weight_norm_dims():
    m = _wn(nn.Conv2d(2, 3, 3), dim=-2)
    assert m.weight_g.shape == (1, 1, 3, 1)
    m = _wn(nn.Conv2d(2, 3, 3), dim=None)
    assert m.weight_g.shape == ()
    m = _wn(nn.Linear(2, 3), dim=1)
    assert m.weight_g.shape == (1, 2)


# ---- legacy spectral_norm -----------------------------------------------------------------
def test_spectral_norm_parameters_buffers_and_eval():
    m = nn.Linear(6, 5)
    W = _np(m.weight).astype(np.float64)
    nn.utils.spectral_norm(m, n_power_iterations=40)
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_orig"]
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert m.state_dict()._metadata[""]["spectral_norm"] == {"weight.version": 1}
    x = lucid.randn(2, 6)
    m(x)
    np.testing.assert_allclose(_np(m.weight), W / np.linalg.svd(W)[1][0], rtol=1e-4)
    m.eval()
    u = _np(m.weight_u).copy()
    m(x)
    np.testing.assert_array_equal(_np(m.weight_u), u)
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(m)
    nn.utils.remove_spectral_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"]
    assert not m._state_dict_hooks and not m._load_state_dict_pre_hooks
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
        nn.utils.remove_spectral_norm(m)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    m = nn.utils.spectral_norm(nn.ConvTranspose2d(3, 4, 2))
    assert m.weight_u.shape == (4,) and m.weight_v.shape == (3 * 2 * 2,)


def test_spectral_norm_upgrades_an_old_checkpoint_and_rejects_lazy_modules():
    m = nn.utils.spectral_norm(nn.Linear(4, 3))
    m(lucid.randn(2, 4))
    sd = dict(m.state_dict())                  # no metadata: an old-format checkpoint
    sd["weight"] = m.weight.detach().clone()
    del sd["weight_v"]
    m2 = nn.utils.spectral_norm(nn.Linear(4, 3))
    m2.load_state_dict(sd)                     # weight_v is solved for
    m.eval()
    m2.eval()
    x = lucid.randn(2, 4)
    np.testing.assert_allclose(_np(m2(x)), _np(m(x)), rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="can't have uninitialized parameters"):
        nn.utils.spectral_norm(nn.LazyLinear(3))
    with pytest.raises(ValueError, match="can't have uninitialized parameters"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        nn.utils.weight_norm(nn.LazyLinear(3))


@pytest.mark.parametrize("which", ["weight_norm", "spectral_norm"])
@pytest.mark.parametrize("conv", [False, True])
def test_legacy_matches_torch(torch, which, conv):
    tnn = torch.nn
    torch.manual_seed(0)
    if conv:
        t, lm = tnn.Conv2d(2, 3, 3), nn.Conv2d(2, 3, 3)
        x = np.random.default_rng(0).standard_normal((2, 2, 5, 5)).astype(np.float32)
    else:
        t, lm = tnn.Linear(3, 4), nn.Linear(3, 4)
        x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    lm.load_state_dict(t.state_dict())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        getattr(tnn.utils, which)(t)
        getattr(nn.utils, which)(lm)
    assert list(lm.state_dict()) == list(t.state_dict())
    lm.load_state_dict(t.state_dict())
    train_alongside(torch, t, lm, x)
    getattr(tnn.utils, "remove_" + which)(t)
    getattr(nn.utils, "remove_" + which)(lm)
    np.testing.assert_allclose(_np(lm.weight), t.weight.detach().numpy(), rtol=1e-4, atol=1e-6)


def test_legacy_weight_norm_checkpoint_loads_into_parametrization(torch):
    t = torch.nn.Linear(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.nn.utils.weight_norm(t)
    lm = nn.utils.parametrizations.weight_norm(nn.Linear(3, 4))
    lm.load_state_dict(t.state_dict())
    x = torch.randn(2, 3)
    np.testing.assert_allclose(_np(lm(lucid.tensor(x.numpy()))), t(x).detach().numpy(),
                               rtol=1e-5)


# ---- fusion -------------------------------------------------------------------------------
def _randomised_bn(bn):
    rng = np.random.default_rng(3)
    n = bn.num_features
    with lucid.no_grad():
        bn.running_mean.copy_(lucid.tensor(rng.standard_normal(n), dtype=lucid.float32))
        bn.running_var.copy_(lucid.tensor(rng.uniform(0.5, 2.0, n), dtype=lucid.float32))
        bn.weight.copy_(lucid.tensor(rng.standard_normal(n), dtype=lucid.float32))
        bn.bias.copy_(lucid.tensor(rng.standard_normal(n), dtype=lucid.float32))
    return bn.eval()


def test_fuse_conv_bn_and_linear_bn():
    conv, bn = nn.Conv2d(3, 4, 3, bias=False).eval(), _randomised_bn(nn.BatchNorm2d(4))
    fused = nn.utils.fuse_conv_bn_eval(conv, bn)
    assert fused is not conv and conv.bias is None and isinstance(fused.bias, nn.Parameter)
    x = lucid.randn(2, 3, 6, 6)
    np.testing.assert_allclose(_np(fused(x)), _np(bn(conv(x))), rtol=1e-4, atol=1e-5)
    convt, bn2 = nn.ConvTranspose2d(3, 4, 2).eval(), _randomised_bn(nn.BatchNorm2d(4))
    fusedt = nn.utils.fuse_conv_bn_eval(convt, bn2, transpose=True)
    np.testing.assert_allclose(_np(fusedt(x)), _np(bn2(convt(x))), rtol=1e-4, atol=1e-5)
    lin, bn1 = nn.Linear(3, 4).eval(), _randomised_bn(nn.BatchNorm1d(4))
    fl = nn.utils.fuse_linear_bn_eval(lin, bn1)
    x = lucid.randn(5, 3)
    np.testing.assert_allclose(_np(fl(x)), _np(bn1(lin(x))), rtol=1e-4, atol=1e-5)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_conv_bn_eval(nn.Conv2d(3, 4, 3), bn)
    with pytest.raises(AssertionError, match="To fuse, linear.out_features == bn.num_features"):
        nn.utils.fuse_linear_bn_eval(nn.Linear(3, 5).eval(), bn1)


# ---- functional_call ----------------------------------------------------------------------
def _net():
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))


def test_functional_call_substitutes_and_restores():
    net = _net()
    w0 = net[0].weight
    w = lucid.randn(4, 3, requires_grad=True)
    x = lucid.randn(5, 3)
    rm = lucid.zeros(4)
    out = lucid.func.functional_call(net, ({"0.weight": w}, {"1.running_mean": rm}), (x,))
    ref_net = _net()
    ref_net.load_state_dict(net.state_dict())
    with lucid.no_grad():
        ref_net[0].weight.copy_(w)
    np.testing.assert_allclose(_np(out), _np(ref_net(x)), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    assert w.grad is not None and w0.grad is None
    assert net[0].weight is w0 and isinstance(net[0].weight, nn.Parameter)
    assert np.abs(_np(rm)).max() > 0                 # the running stats went to the given tensor
    np.testing.assert_array_equal(_np(net[1].running_mean), np.zeros(4))
    # a non-tuple ``args`` is one argument; kwargs pass through
    lucid.func.functional_call(net, {}, x)
    with pytest.warns(FutureWarning, match="lucid.func.functional_call"):
        nn.utils.stateless.functional_call(net, {"0.weight": w}, (x,))


def test_functional_call_errors_and_tied_weights():
    net = _net()
    with pytest.raises(RuntimeError, match=r"Error\(s\) in reparametrizing for Sequential:\n\t"
                                           r"Unexpected key\(s\): 'x.weight'"):
        lucid.func.functional_call(net, {"x.weight": lucid.zeros(1)}, (lucid.randn(2, 3),),
                                   strict=True)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        lucid.func.functional_call(net, ({"0.bias": lucid.zeros(4)}, {"0.bias": lucid.zeros(4)}),
                                   (lucid.randn(2, 3),))
    with pytest.raises(ValueError, match="Expected parameter_and_buffer_dicts to be a dict"):
        lucid.func.functional_call(net, 3, (lucid.randn(2, 3),))
    tied = nn.Sequential(nn.Linear(3, 3, bias=False), nn.Linear(3, 3, bias=False))
    tied[1].weight = tied[0].weight
    z = lucid.zeros(3, 3)
    x = lucid.randn(2, 3)
    assert np.abs(_np(lucid.func.functional_call(tied, {"0.weight": z}, (x,)))).max() == 0
    out = lucid.func.functional_call(tied, {"0.weight": z}, (x,), tie_weights=False)
    assert np.abs(_np(out)).max() == 0
    with pytest.raises(ValueError, match="which are tied"):
        lucid.func.functional_call(tied, {"0.weight": z, "1.weight": lucid.ones(3, 3)}, (x,))


def test_functional_call_matches_torch(torch):
    tfc = torch.func.functional_call
    torch.manual_seed(0)
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    lm = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    lm.load_state_dict(t.state_dict())
    params = {k: torch.randn_like(v).requires_grad_() for k, v in t.named_parameters()}
    lparams = {k: lucid.tensor(v.detach().numpy(), requires_grad=True)
               for k, v in params.items()}
    x = torch.randn(5, 3)
    tl = tfc(t, params, (x,)).square().sum()
    ll = lucid.func.functional_call(lm, lparams, (lucid.tensor(x.numpy()),)).square().sum()
    np.testing.assert_allclose(ll.item(), tl.item(), rtol=1e-5)
    tl.backward()
    ll.backward()
    for k in params:
        np.testing.assert_allclose(_np(lparams[k].grad), params[k].grad.numpy(), rtol=1e-4,
                                   atol=1e-6)
