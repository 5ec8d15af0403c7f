"""Saving whole modules (PyTorch 2.6+ semantics): lucid.save pickles them with their tensors
kept as checkpoint tensors; lucid.load refuses them unless weights_only=False or their
classes are allowlisted."""

from __future__ import annotations

import io
import os
import pickle

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.nn.modules.linear import Linear
from lucid.serialization import add_safe_globals, clear_safe_globals, safe_globals


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("shift", lucid.ones(2))
        self.meta = {"classes": ["a", "b"], "lr": 0.1, "table": np.arange(3)}

    def forward(self, x):
        return self.fc(x) + self.shift


class Evil:
    def __reduce__(self):
        return (os.system, ("echo should-never-run",))


@pytest.fixture(autouse=True)
def _clean_allowlist():
    yield
    clear_safe_globals()


def _saved(obj) -> io.BytesIO:
    buf = io.BytesIO()
    lucid.save(obj, buf)
    buf.seek(0)
    return buf


def test_whole_module_round_trip_with_weights_only_false(tmp_path):
    net = Net()
    path = tmp_path / "net.lucid"
    lucid.save(net, path)
    loaded = lucid.load(path, weights_only=False)
    x = lucid.randn(4, 3)
    assert type(loaded) is Net and lucid.equal(loaded(x), net(x))
    assert isinstance(loaded.fc.weight, nn.Parameter) and loaded.fc.weight.requires_grad
    assert list(loaded.state_dict()) == list(net.state_dict())
    assert loaded.meta["classes"] == ["a", "b"] and loaded.meta["table"].tolist() == [0, 1, 2]
    loaded(x).sum().backward()
    assert loaded.fc.weight.grad is not None


def test_weights_only_refuses_with_torchs_explanation(torch):
    with pytest.raises(pickle.UnpicklingError) as mine:
        lucid.load(_saved(Net()))
    msg = str(mine.value)
    assert msg.startswith("Weights only load failed. This file can still be loaded, to do so "
                          "you have two options")
    assert "GLOBAL tests.test_save_module.Net" in msg or "test_save_module.Net" in msg
    assert "add_safe_globals" in msg and "weights_only` set to `False`" in msg
    tnet = torch.nn.Linear(2, 2)
    buf = io.BytesIO()
    torch.save(tnet, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError) as ref:
        torch.load(buf)
    assert str(ref.value).startswith("Weights only load failed. This file can still be "
                                     "loaded, to do so you have two options")


def test_allowlisted_classes_load_with_weights_only():
    net = Net()
    x = lucid.randn(2, 3)
    buf = _saved({"model": net, "epoch": 3})
    with pytest.raises(pickle.UnpicklingError, match="Linear was not an allowed global"):
        with safe_globals([Net]):
            lucid.load(buf)
    buf.seek(0)
    with safe_globals([Net, Linear]):  # tensors and arrays are never pickled: no numpy global
        got = lucid.load(buf)
    assert got["model"].meta["table"].tolist() == [0, 1, 2]
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):  # the context manager's allowlist is gone
        lucid.load(buf)
    buf.seek(0)
    add_safe_globals([Net, Linear])
    got = lucid.load(buf)
    assert got["epoch"] == 3 and lucid.equal(got["model"](x), net(x))
    assert lucid.serialization.get_safe_globals() == [Net, Linear]


def test_malicious_pickle_never_runs(capfd):
    buf = _saved({"w": lucid.ones(2), "evil": Evil()})
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL (posix|nt)\.system"):
        lucid.load(buf)
    assert "should-never-run" not in capfd.readouterr().out


def test_plain_data_still_loads_without_pickle_and_bad_objects_fail():
    sd = Net().state_dict()
    assert list(lucid.load(_saved(sd))) == list(sd)
    with pytest.raises(TypeError, match="cannot store an object of type function"):
        lucid.save({"fn": lambda: 0}, io.BytesIO())


def test_optimizer_object_round_trip():
    net = Net()
    opt = lucid.optim.Adam(net.parameters(), lr=1e-2)
    net(lucid.randn(2, 3)).sum().backward()
    opt.step()
    both = lucid.load(_saved({"net": net, "opt": opt}), weights_only=False)
    assert both["opt"].state_dict()["param_groups"][0]["lr"] == 1e-2
    assert float(next(iter(both["opt"].state.values()))["step"]) == 1.0
