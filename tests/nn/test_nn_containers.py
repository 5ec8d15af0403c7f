"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from nn_util import arr, catch

import lucid
import lucid.nn as nn


def _sequential(fw, nn_):
    out = []
    s = nn_.Sequential(nn_.ReLU(), nn_.Tanh())
    for i in [2, -3]:
        out.append(catch(lambda i=i: s[i]))
    out += [catch(lambda: s + 1), catch(lambda: s * 0), catch(lambda: s * "a"),
            catch(lambda: s.insert(5, nn_.ReLU())), catch(lambda: s.insert(0, 3)).split(":")[0]]
    seq = nn_.Sequential(OrderedDict([("a", nn_.ReLU()), ("b", nn_.Tanh()), ("c", nn_.Sigmoid())]))
    out += [repr(seq[1:]), repr(seq[::-1]), repr(len(seq)), repr(seq[-1])]
    del seq[0]
    out.append(repr(seq))
    seq.append(nn_.ReLU())
    seq.insert(1, nn_.Identity())
    seq.insert(-1, nn_.Flatten())
    seq.extend([nn_.Tanh()])
    out.append(repr(seq))
    seq[0] = nn_.Identity()
    seq[-1] = nn_.Sigmoid()
    out += [repr(seq), repr(seq.pop(1)), repr(seq)]
    del seq[1:3]
    out.append(repr(seq))
    out.append(repr(seq + nn_.Sequential(nn_.ReLU())))
    out.append(repr(nn_.Sequential(nn_.ReLU()) * 2))
    out.append(repr(2 * nn_.Sequential(nn_.ReLU())))
    s2 = nn_.Sequential(nn_.ReLU())
    s2 += nn_.Sequential(nn_.Tanh())
    out.append(repr(s2))
    out.append(repr([type(m).__name__ for m in s2]))
    out.append(repr(nn_.Sequential()))
    return out


def test_sequential_matches_torch(both):
    both(_sequential)


def test_sequential_forward_chains():
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = lucid.randn(5, 3)
    ref = net[2](net[1](net[0](x)))
    np.testing.assert_allclose(arr(net(x)), arr(ref), rtol=1e-6)
    assert list(net.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def _module_list(fw, nn_):
    out = []
    ml = nn_.ModuleList([nn_.ReLU(), nn_.Tanh()])
    ml.insert(1, nn_.Sigmoid())
    ml.append(nn_.Identity())
    del ml[0]
    out += [repr(ml), repr(ml[-1]), repr(ml[1:])]
    ml += [nn_.ReLU()]
    out += [repr(len(ml)), repr(ml.pop(0)), repr(ml)]
    ml[0] = nn_.Linear(1, 1)
    out.append(repr(ml + nn_.ModuleList([nn_.ReLU()])))
    out += [catch(lambda: nn_.ModuleList()[0]), catch(lambda: nn_.ModuleList().extend(3))]
    out.append(repr(nn_.ModuleList([nn_.Linear(1, 1), nn_.Linear(1, 1), nn_.ReLU()])))
    out.append(repr(nn_.ModuleList()))
    del ml[::2]
    out.append(repr(ml))
    return out


def test_module_list_matches_torch(both):
    both(_module_list)


def _module_dict(fw, nn_):
    out = []
    md = nn_.ModuleDict([("x", nn_.ReLU()), ("y", nn_.Tanh())])
    md["z"] = nn_.Identity()
    out += [repr(list(md.keys())), repr("x" in md), repr(md.pop("x")), repr(len(md)),
            repr(list(md)), repr([type(v).__name__ for v in md.values()]),
            repr([k for k, _ in md.items()])]
    md.update({"b": nn_.ReLU(), "a": nn_.ReLU()})
    md.update(nn_.ModuleDict({"c": nn_.ReLU()}))
    out.append(repr(list(md.keys())))
    del md["b"]
    out.append(repr(md))
    md.clear()
    out.append(repr(md))
    out += [catch(lambda: nn_.ModuleDict().update(3)),
            catch(lambda: nn_.ModuleDict().update([3])),
            catch(lambda: nn_.ModuleDict().update([(1, 2, 3)])),
            catch(lambda: nn_.ModuleDict({"a.b": nn_.ReLU()}))]
    return out


def test_module_dict_matches_torch(both):
    both(_module_dict)


def _parameter_containers(fw, nn_):
    out = []
    pl = nn_.ParameterList([fw.zeros(1), nn_.Parameter(fw.ones(2, 3)), 3])
    out += [type(pl[0]).__name__, repr(pl[0].requires_grad),
            repr([n for n, _ in pl.named_parameters()]), repr(pl), repr(len(pl))]
    pl.append(fw.zeros(2))
    pl[0] = fw.ones(1)
    out += [repr(pl[-1]), repr(pl[1:]), repr(len(list(pl.parameters())))]
    out += [catch(lambda: pl[10]), catch(lambda: nn_.ParameterList().extend(fw.zeros(2))),
            catch(lambda: pl(1))]
    pd = nn_.ParameterDict({"b": fw.zeros(1), "a": fw.ones(1), "c": "x"})
    out += [repr(list(pd.keys())), repr([n for n, _ in pd.named_parameters()]), repr(pd)]
    out += [repr(pd.get("zz", 5)), repr("a" in pd), repr(len(pd)), repr(pd.popitem()[0]),
            repr(list(pd.keys()))]
    pd.update(OrderedDict([("z", fw.zeros(2)), ("y", fw.zeros(2))]))
    pd.update([("q", fw.zeros(1))])
    out.append(repr(list(pd)))
    out.append(repr(list(reversed(pd))))
    out.append(repr(pd.setdefault("new", fw.ones(1)).shape))
    out.append(repr(list((pd | nn_.ParameterDict({"w": fw.zeros(1)})).keys())))
    pd2 = pd.copy()
    out.append(repr(pd2["a"] is pd["a"]))
    out.append(repr(list(pd.fromkeys(["u", "v"]).keys())))
    del pd["a"]
    out.append(repr(list(pd.keys())))
    pd.clear()
    out += [repr(len(pd)), catch(lambda: pd[3]), catch(lambda: pd(1)),
            catch(lambda: pd.update(3))]
    return out


def test_parameter_containers_match_torch(both):
    both(_parameter_containers)


def test_containers_feed_parameters_and_state_dict():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])
            self.heads = nn.ModuleDict({"a": nn.Linear(2, 1)})
            self.scales = nn.ParameterList([lucid.ones(2)])
            self.extra = nn.ParameterDict({"bias": lucid.zeros(1)})

    net = Net()
    assert list(net.state_dict()) == [
        "layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias",
        "heads.a.weight", "heads.a.bias", "scales.0", "extra.bias"]
    assert len(list(net.parameters())) == 8
    net.to(lucid.float64)
    assert net.scales[0].dtype == lucid.float64 and net.extra["bias"].dtype == lucid.float64
