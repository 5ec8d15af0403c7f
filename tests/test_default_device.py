"""The default device: ``set_default_device`` / ``get_default_device`` and
``with lucid.device(...)`` blocks, as PyTorch's (per thread, restored on exit)."""

from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest
from devices import DEVICES

import lucid

OTHER = "gpu" if "gpu" in DEVICES else "numpy"  # a second device to switch to


def _factories() -> list[lucid.Tensor]:
    return [lucid.zeros(2), lucid.ones(2, 3), lucid.empty(1), lucid.full((2,), 3.0),
            lucid.tensor([1.0, 2.0]), lucid.arange(3), lucid.linspace(0, 1, 4), lucid.eye(2),
            lucid.randn(2), lucid.rand(2), lucid.randint(0, 5, (3,))]


def test_default_is_cpu() -> None:
    assert lucid.get_default_device() == lucid.device("cpu")
    assert repr(lucid.get_default_device()) == "device(type='cpu')"
    assert all(t.device.type == "cpu" for t in _factories())


def test_set_default_device() -> None:
    try:
        lucid.set_default_device(OTHER)
        assert lucid.get_default_device().type == OTHER
        assert all(t.device.type == OTHER for t in _factories())
        assert lucid.zeros(2, device="cpu").device.type == "cpu"  # an explicit device wins
        assert lucid.from_numpy(np.zeros(2)).device.type == "cpu"  # as in PyTorch
        x = lucid.ones(2, device="cpu")
        assert lucid.zeros_like(x).device.type == "cpu"  # *_like follow their input
    finally:
        lucid.set_default_device(None)
    assert lucid.get_default_device().type == "cpu" and lucid.zeros(1).device.type == "cpu"


def test_device_context_manager_nests_and_restores() -> None:
    with lucid.device(OTHER) as d:
        assert isinstance(d, lucid.device) and d.type == OTHER
        assert lucid.zeros(2).device.type == OTHER
        with lucid.device("cpu"):
            assert lucid.zeros(2).device.type == "cpu"
            assert lucid.get_default_device().type == "cpu"
        assert lucid.get_default_device().type == OTHER
    assert lucid.zeros(2).device.type == "cpu"
    with pytest.raises(KeyError), lucid.device(OTHER):
        raise KeyError("x")
    assert lucid.get_default_device().type == "cpu"


def test_device_decorator_and_objects_unchanged() -> None:
    @lucid.device(OTHER)
    def make() -> lucid.Tensor:
        return lucid.ones(3)

    assert make().device.type == OTHER and lucid.ones(3).device.type == "cpu"
    d = lucid.device("cuda:0")
    assert d.type == "gpu" and d.index == 0 and str(d) == "gpu:0"
    assert d == "gpu" and lucid.device("cpu") == "cpu"
    assert pickle.loads(pickle.dumps(d)) == d
    with pytest.raises(RuntimeError, match="Invalid device string"):
        lucid.device("cpu:x")


def test_default_device_is_per_thread() -> None:
    seen = []
    with lucid.device(OTHER):
        t = threading.Thread(target=lambda: seen.append(lucid.zeros(1).device.type))
        t.start()
        t.join()
    assert seen == ["cpu"]


def test_set_default_device_matches_torch(torch) -> None:
    torch.set_default_device("meta")
    try:
        with torch.device("cpu"):
            want = torch.zeros(1).device.type
        after = torch.zeros(1).device.type
    finally:
        torch.set_default_device(None)
    lucid.set_default_device(OTHER)
    try:
        with lucid.device("cpu"):
            got = lucid.zeros(1).device.type
        got_after = lucid.zeros(1).device.type
    finally:
        lucid.set_default_device(None)
    assert (got, got_after) == (want, OTHER) and after == "meta"
    assert str(torch.get_default_device()) == str(lucid.get_default_device()) == "cpu"


def test_bad_default_device() -> None:
    with pytest.raises(TypeError, match="expected a device"):
        lucid.set_default_device(1.5)
    assert lucid.get_default_device().type == "cpu"
