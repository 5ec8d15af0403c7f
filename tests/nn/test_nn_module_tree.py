"""Iteration, modes, zero_grad, apply, repr, deepcopy."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import lucid
import lucid.nn as nn


def _tree(fw, nn_):
    """A tree with a shared submodule, a tied parameter, None slots and buffers."""

    class Block(nn_.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn_.Linear(3, 3)
            self.register_buffer("count", fw.zeros(1))
            self.register_buffer("tmp", fw.zeros(1), persistent=False)
            self.register_parameter("none_p", None)

    class Net(nn_.Module):
        def __init__(self):
            super().__init__()
            shared = Block()
            self.a = shared
            self.seq = nn_.Sequential(nn_.Linear(3, 3), shared, nn_.ReLU())
            self.b = nn_.Linear(3, 3)
            self.b.weight = self.seq[0].weight  # tied
            self.register_buffer("scale", fw.ones(1))
            self.empty = None

    return Net()


def _names(fw, nn_):
    net = _tree(fw, nn_)
    return [
        repr([n for n, _ in net.named_parameters()]),
        repr([n for n, _ in net.named_parameters(remove_duplicate=False)]),
        repr([n for n, _ in net.named_parameters(prefix="net")]),
        repr([n for n, _ in net.named_parameters(recurse=False)]),
        repr([n for n, _ in net.named_buffers()]),
        repr([n for n, _ in net.named_buffers(remove_duplicate=False)]),
        repr([n for n, _ in net.named_buffers(recurse=False)]),
        repr([n for n, _ in net.named_children()]),
        repr([n for n, _ in net.named_modules()]),
        repr([n for n, _ in net.named_modules(remove_duplicate=False)]),
        repr([n for n, _ in net.named_modules(prefix="root")]),
        repr(len(list(net.parameters()))), repr(len(list(net.modules()))),
        repr(list(net.state_dict())),
        repr(net),
    ]


def test_iteration_order_and_dedup_match_torch(both):
    both(_names)


def test_iteration_without_torch():
    net = _tree(lucid, nn)
    assert [n for n, _ in net.named_parameters()] == [
        "a.fc.weight", "a.fc.bias", "seq.0.weight", "seq.0.bias", "b.bias"]
    assert len(list(net.named_parameters(remove_duplicate=False))) == 8
    assert list(net.children())[0] is net.a
    assert net.seq[1] is net.a


def test_named_modules_memo_is_shared():
    net = _tree(lucid, nn)
    memo: set = set()
    first = [n for n, _ in net.seq.named_modules(memo)]
    again = [n for n, _ in net.seq.named_modules(memo)]
    assert first == ["", "0", "1", "1.fc", "2"] and again == []


def test_train_eval_recurse():
    net = _tree(lucid, nn)
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")


def test_requires_grad_and_zero_grad():
    net = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    net(lucid.randn(4, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    g = net[0].weight.grad
    net.zero_grad(set_to_none=False)
    assert net[0].weight.grad is g
    np.testing.assert_array_equal(g.numpy(), np.zeros((2, 3)))
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    assert net[0].requires_grad_(False) is net[0]
    assert [p.requires_grad for p in net.parameters()] == [False, False, True, True]


def test_grads_accumulate_until_zeroed():
    fc = nn.Linear(2, 1)
    x = lucid.ones(1, 2)
    fc(x).sum().backward()
    fc(x).sum().backward()
    np.testing.assert_allclose(fc.bias.grad.numpy(), [2.0])


def test_apply_is_post_order():
    net = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU()))
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "ReLU", "Sequential", "Sequential"]


def test_forward_via_call_with_kwargs():
    class K(nn.Module):
        def forward(self, x, *, scale=1.0):
            return x * scale

    out = K()(lucid.ones(2), scale=3.0)
    np.testing.assert_array_equal(out.numpy(), [3.0, 3.0])


def test_repr_layout():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.seq = nn.Sequential(nn.ReLU(), nn.Linear(3, 1, bias=False))

        def extra_repr(self):
            return "note=1\nmore=2"

    assert repr(Net()) == (
        "Net(\n  note=1\n  more=2\n  (fc): Linear(in_features=4, out_features=3, bias=True)\n"
        "  (seq): Sequential(\n    (0): ReLU()\n"
        "    (1): Linear(in_features=3, out_features=1, bias=False)\n  )\n)")
    assert repr(nn.Module()) == "Module()"
    assert nn.Linear(1, 1)._get_name() == "Linear"


def test_deepcopy_keeps_ties_and_types():
    net = _tree(lucid, nn)
    net.seq[0](lucid.randn(2, 3)).sum().backward()
    c = copy.deepcopy(net)
    assert c.b.weight is c.seq[0].weight and c.a is c.seq[1]
    assert c.b.weight is not net.b.weight
    assert type(c.b.weight) is nn.Parameter and c.b.weight.requires_grad
    assert c.b.weight.grad is None
    np.testing.assert_array_equal(c.b.weight.detach().numpy(), net.b.weight.detach().numpy())
    assert [n for n, _ in c.named_parameters()] == [n for n, _ in net.named_parameters()]
    assert "tmp" in c.a._non_persistent_buffers_set
