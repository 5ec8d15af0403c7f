"""Forward and backward hooks on modules."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from nn_util import arr, catch

import lucid
import lucid.nn as nn


def _r(g):
    return None if g is None else [round(v, 4) for v in arr(g).flatten().tolist()]


def _two(nn_):
    class Two(nn_.Module):
        def forward(self, a, k, b):
            return a * 2, b * 3 + a

    return Two()


def _backward_scenario(fw, nn_):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "full backward hook is firing ... outputs"
        return _backward_steps(fw, nn_)


def _backward_steps(fw, nn_):
    log = []
    m = _two(nn_)
    m.register_full_backward_hook(
        lambda mod, gi, go: log.append(f"full {[_r(g) for g in gi]} {[_r(g) for g in go]}"))
    m.register_full_backward_pre_hook(lambda mod, go: log.append(f"pre {[_r(g) for g in go]}"))
    a = fw.ones(2, requires_grad=True)
    b = fw.ones(2, requires_grad=True)
    x, y = m(a, 5, b)
    (x.sum() + 2 * y.sum()).backward()
    log.append(f"grads {_r(a.grad)} {_r(b.grad)}")
    x, y = m(a, 5, b)
    x.sum().backward()  # an output without gradient, an input without gradient
    x, y = m(fw.ones(2), 5, b)
    y.sum().backward()  # an input that does not require grad
    lin = nn_.Linear(2, 1)
    lin.register_full_backward_hook(
        lambda mod, gi, go: log.append(f"lin {[_r(g) for g in gi]} {[_r(g) for g in go]}"))
    lin(fw.ones(1, 2)).sum().backward()  # no input requires grad: fires at the outputs

    class Mixed(nn_.Module):
        def forward(self, a):
            return a * 2, a.detach() * 3, 7

    mm = Mixed()
    mm.register_full_backward_hook(
        lambda mod, gi, go: log.append(f"mixed {[_r(g) for g in gi]} {[_r(g) for g in go]}"))
    o1, o2, o3 = mm(fw.ones(2, requires_grad=True))
    log.append(f"{o1.requires_grad} {o2.requires_grad} {o3}")
    o1.sum().backward()

    class Id(nn_.Module):
        def forward(self, a, b):
            return a

    m2 = Id()
    m2.register_full_backward_hook(
        lambda mod, gi, go: log.append(f"id {[_r(g) for g in gi]} {[_r(g) for g in go]}"))
    a2, b2 = fw.ones(2, requires_grad=True), fw.ones(3, requires_grad=True)
    o = m2(a2, b2)
    log.append(f"{o is a2} {o.requires_grad}")
    (o * 3).sum().backward()
    log.append(f"{_r(a2.grad)} {_r(b2.grad)}")
    return log


def test_full_backward_hooks_match_torch(both):
    both(_backward_scenario)


def _replace_scenario(fw, nn_):
    out = []

    def fixed(lin):
        with fw.no_grad():
            lin.weight.fill_(1.0)
            lin.bias.fill_(0.5)
        return lin

    l2 = fixed(nn_.Linear(2, 1))
    l2.register_full_backward_hook(lambda m, gi, go: tuple(g * 10 for g in gi))
    z = fw.ones(1, 2, requires_grad=True)
    l2(z).sum().backward()
    out.append(f"{_r(z.grad)} {_r(l2.weight.grad)}")
    l3 = fixed(nn_.Linear(2, 1))
    l3.register_full_backward_pre_hook(lambda m, go: (go[0] * 100,))
    z = fw.ones(1, 2, requires_grad=True)
    l3(z).sum().backward()
    out.append(f"{_r(z.grad)} {_r(l3.weight.grad)}")
    l5 = nn_.Linear(2, 1)
    l5.register_full_backward_hook(lambda m, gi, go: (None, None))
    out.append(catch(lambda: l5(fw.ones(1, 2, requires_grad=True)).sum().backward()))
    l6 = nn_.Linear(2, 1)
    l6.register_full_backward_pre_hook(lambda m, go: (None, None))
    out.append(catch(lambda: l6(fw.ones(1, 2, requires_grad=True)).sum().backward()))
    l7 = nn_.Linear(2, 1)
    l7.register_full_backward_hook(lambda m, gi, go: (fw.ones(1, 2),))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out.append(catch(lambda: l7(fw.ones(1, 2)).sum().backward()))
    seq = nn_.Sequential(nn_.Linear(2, 2), nn_.ReLU(), nn_.Linear(2, 1))
    with fw.no_grad():
        seq[0].weight.copy_(fw.tensor([[1.0, -1.0], [0.5, 2.0]]))
        seq[0].bias.fill_(0.1)
        seq[2].weight.fill_(1.0)
        seq[2].bias.fill_(0.0)
    for n, mod in seq.named_modules():
        mod.register_full_backward_hook(lambda m, gi, go, n=n: out.append(
            f"{n!r} {[_r(g) for g in gi]} {[_r(g) for g in go]}"))
    inp = fw.tensor([[1.0, 2.0]], requires_grad=True)
    seq(inp).sum().backward()
    out.append(f"{_r(inp.grad)}")
    return out


def test_backward_hook_replacement_and_errors_match_torch(both):
    both(_replace_scenario)


def _forward_scenario(fw, nn_):
    out = []
    l4 = nn_.Linear(2, 2)
    with fw.no_grad():
        l4.weight.fill_(1.0)
        l4.bias.fill_(0.5)
    h0 = l4.register_forward_pre_hook(lambda m, a: a[0] * 0)
    out.append(f"{_r(l4(fw.ones(1, 2)))}")
    h0.remove()
    h = l4.register_forward_pre_hook(lambda m, a, k: ((a[0] + 1,), k), with_kwargs=True)
    out.append(f"{_r(l4(fw.ones(1, 2)))}")
    h.remove()
    l4.register_forward_pre_hook(lambda m, a, k: 3, with_kwargs=True)
    out.append(catch(lambda: l4(fw.ones(1, 2))))

    class Bad(nn_.Module):
        def forward(self, x):
            raise ValueError("boom")

    bm = Bad()
    bm.register_forward_hook(lambda m, a, o: out.append(f"always {a} {o}"), always_call=True)
    bm.register_forward_hook(lambda m, a, o: out.append("never"))
    out.append(catch(lambda: bm(1)))
    order = []
    ident = nn_.Identity()
    ident.register_forward_hook(lambda m, a, o: order.append("f1"))
    ident.register_forward_hook(lambda m, a, o: order.append("f0"), prepend=True)
    ident.register_forward_pre_hook(lambda m, a: order.append("p1"))
    ident.register_forward_pre_hook(lambda m, a: order.append("p0"), prepend=True)
    ident.register_forward_hook(lambda m, a, k, o: order.append(f"kw {k}"), with_kwargs=True)
    ident(1)
    out.append(repr(order))
    l9 = nn_.Identity()
    l9.register_forward_hook(lambda m, a, o: o + 1)
    out.append(repr(l9(1)))
    with l9.register_forward_hook(lambda m, a, o: o * 10):
        out.append(repr(l9(1)))
    out.append(repr(l9(1)))
    lin = nn_.Linear(1, 1)
    lin.register_full_backward_hook(lambda *a: None)
    out.append(catch(lambda: lin.register_backward_hook(lambda *a: None)))
    return out


def test_forward_hooks_match_torch(both):
    both(_forward_scenario)


def test_handles_remove_and_ids():
    m = nn.Identity()
    h1 = m.register_forward_hook(lambda mod, a, o: None, with_kwargs=True, always_call=True)
    h2 = m.register_forward_pre_hook(lambda mod, a: None, with_kwargs=True)
    assert h1.id != h2.id
    h1.remove()
    h1.remove()  # idempotent
    h2.remove()
    assert not m._forward_hooks and not m._forward_hooks_with_kwargs
    assert not m._forward_hooks_always_called and not m._forward_pre_hooks
    assert not m._forward_pre_hooks_with_kwargs


def test_backward_hook_on_numpy_device():
    lin = nn.Linear(3, 2).to("numpy")
    got = []
    lin.register_full_backward_hook(lambda m, gi, go: got.append((gi[0].device, go[0].shape)))
    x = lucid.randn(4, 3, device="numpy", requires_grad=True)
    lin(x).sum().backward()
    assert got == [(lucid.device("numpy"), lucid.Size([4, 2]))]
    ref = lucid.ones(4, 2, device="numpy") @ lin.weight.detach()
    np.testing.assert_allclose(arr(x.grad), arr(ref), rtol=1e-6)


def test_backward_hooks_leave_gradients_unchanged_when_returning_none():
    lin = nn.Linear(3, 2)
    x = lucid.randn(4, 3, requires_grad=True)
    lin(x).sum().backward()
    gx, gw = arr(x.grad), arr(lin.weight.grad)
    x.grad = None
    lin.zero_grad()
    lin.register_full_backward_hook(lambda m, gi, go: None)
    lin.register_full_backward_pre_hook(lambda m, go: None)
    lin(x).sum().backward()
    np.testing.assert_allclose(arr(x.grad), gx)
    np.testing.assert_allclose(arr(lin.weight.grad), gw)


def test_legacy_backward_hook_runs_as_full_hook():
    lin = nn.Linear(2, 1)
    got = []
    with pytest.warns(FutureWarning, match="full backward hook"):
        lin.register_backward_hook(lambda m, gi, go: got.append(len(gi)))
    lin(lucid.ones(1, 2, requires_grad=True)).sum().backward()
    assert got == [1]
    with pytest.raises(RuntimeError, match="Cannot use both"):
        lin.register_full_backward_hook(lambda *a: None)
