"""state_dict: keys, snapshots, hooks, extra state."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from nn_util import catch

import lucid
import lucid.nn as nn


def _net(fw, nn_):
    class Net(nn_.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn_.Linear(4, 3)
            self.register_buffer("rm", fw.zeros(3))
            self.register_buffer("np", fw.zeros(1), persistent=False)
            self.register_buffer("none_b", None)
            self.seq = nn_.Sequential(nn_.Linear(3, 3), nn_.ReLU())
            self.md = nn_.ModuleDict({"x": nn_.Linear(3, 2, bias=False)})

    return Net()


def _keys(fw, nn_):
    net = _net(fw, nn_)
    sd = net.state_dict()
    out = [repr(list(sd)), repr(list(sd._metadata.items())), type(sd).__name__]
    out.append(repr([tuple(v.shape) for v in sd.values()]))
    out.append(repr(list(net.state_dict(prefix="m.").keys())))
    dest = {}
    out.append(repr(net.state_dict(destination=dest) is dest))
    out.append(repr(list(net.seq.state_dict()._metadata)))
    return out


def test_keys_and_metadata_match_torch(both):
    both(_keys)


def test_state_dict_is_a_snapshot():
    net = _net(lucid, nn)
    sd = net.state_dict()
    before = {k: v.numpy().copy() for k, v in sd.items()}
    for k, v in sd.items():
        assert type(v) is lucid.Tensor and not v.requires_grad
        t = net.get_parameter(k) if k.endswith(("weight", "bias")) else net.get_buffer(k)
        assert not np.shares_memory(v.numpy(), t.detach().numpy())
    # training after the snapshot changes the model, never the snapshot
    with lucid.no_grad():
        for p in net.parameters():
            p.add_(1.0)
        net.rm.fill_(7.0)
    for k, v in sd.items():
        np.testing.assert_array_equal(v.numpy(), before[k])


def test_keep_vars_returns_the_objects():
    net = _net(lucid, nn)
    sd = net.state_dict(keep_vars=True)
    assert sd["fc.weight"] is net.fc.weight and sd["rm"] is net.rm


def test_state_dict_pass_attr_leaves_names_out():
    class Cached(nn.Module):
        _state_dict_pass_attr = ("cache",)

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lucid.zeros(2))
            self.register_buffer("cache", lucid.zeros(5))

    m = nn.Sequential(Cached())
    assert list(m.state_dict()) == ["0.w"]
    assert [n for n, _ in m.named_buffers()] == ["0.cache"]
    assert str(m.load_state_dict({"0.w": np.ones(2)})) == "<All keys matched successfully>"
    keys = m.load_state_dict({"0.w": np.ones(2), "0.cache": np.ones(5)}, strict=False)
    assert keys.unexpected_keys == ["0.cache"]


def test_version_goes_into_metadata():
    class V(nn.Linear):
        _version = 3

    sd = nn.Sequential(V(1, 1)).state_dict()
    assert sd._metadata == OrderedDict([("", {"version": 1}), ("0", {"version": 3})])


def _hooks(fw, nn_):
    out = []
    net = nn_.Sequential(nn_.Linear(2, 2))
    net.register_state_dict_pre_hook(lambda m, prefix, keep_vars: out.append(
        f"pre {type(m).__name__} {prefix!r} {keep_vars}"))
    net[0].register_state_dict_pre_hook(lambda m, prefix, keep_vars: out.append(
        f"pre {type(m).__name__} {prefix!r} {keep_vars}"))

    def post(m, sd, prefix, meta):
        out.append(f"post {type(m).__name__} {prefix!r} {sorted(sd)} {meta}")
        sd.pop(prefix + "bias", None)

    h = net[0].register_state_dict_post_hook(post)
    out.append(repr(list(net.state_dict())))
    h.remove()
    out.append(repr(list(net.state_dict())))
    bad = net.register_state_dict_post_hook(lambda m, sd, p, meta: {})
    out.append(catch(lambda: net.state_dict()))
    bad.remove()
    net._register_state_dict_hook(lambda m, sd, p, meta: OrderedDict(x=1))
    out.append(repr(net.state_dict()))
    return out


def test_state_dict_hooks_match_torch(both):
    both(_hooks)


def test_extra_state_round_trip():
    class WithSteps(nn.Module):
        def __init__(self):
            super().__init__()
            self.steps = 0
            self.fc = nn.Linear(1, 1)

        def get_extra_state(self):
            return {"steps": self.steps}

        def set_extra_state(self, state):
            self.steps = state["steps"]

    a = nn.Sequential(WithSteps())
    a[0].steps = 5
    sd = a.state_dict()
    assert list(sd) == ["0._extra_state", "0.fc.weight", "0.fc.bias"]
    b = nn.Sequential(WithSteps())
    b.load_state_dict(sd)
    assert b[0].steps == 5
    del sd["0._extra_state"]
    keys = b.load_state_dict(sd, strict=False)
    assert keys.missing_keys == ["0._extra_state"]
    assert nn.Linear(1, 1).load_state_dict(
        {"weight": np.ones((1, 1)), "bias": np.ones(1), "_extra_state": 1},
        strict=False).unexpected_keys == ["_extra_state"]


def test_save_to_state_dict_is_overridable():
    class Packed(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Parameter(lucid.zeros(2))

        def _save_to_state_dict(self, destination, prefix, keep_vars):
            super()._save_to_state_dict(destination, prefix, keep_vars)
            destination[prefix + "a_sum"] = self.a.detach().sum()

    sd = nn.Sequential(Packed()).state_dict()
    assert list(sd) == ["0.a", "0.a_sum"]
