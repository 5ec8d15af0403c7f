"""Pickling tensors, Parameters, Buffers, devices and whole modules."""

from __future__ import annotations

import copy
import importlib.util
import pickle

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.optim as optim

_DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.skipif(
    importlib.util.find_spec("mlx") is None, reason="mlx is not installed"))]

pytestmark = pytest.mark.filterwarnings("ignore:lucid. no Metal or CUDA device")


def _rt(obj, protocol=pickle.HIGHEST_PROTOCOL):
    return pickle.loads(pickle.dumps(obj, protocol=protocol))


@pytest.mark.parametrize("device", _DEVICES)
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_tensor_round_trip_combines_with_live_tensors(device, protocol):
    x = lucid.tensor([[1.5, -2.0, 3.25]], device=device)
    y = _rt(x, protocol)
    assert y._be is x._be  # the backend is looked up again, not rebuilt from bytes
    assert y.device == device and y.dtype == lucid.float32 and y.shape == (1, 3)
    assert (x + y).tolist() == [[3.0, -4.0, 6.5]]
    assert y._data is not x._data


@pytest.mark.parametrize("device", _DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "float16", "int64", "int32", "uint8", "bool"])
def test_dtypes_and_zero_dim(device, dtype):
    if device == "gpu" and dtype == "float64":
        pytest.skip("float64 depends on the MLX stream")
    d = getattr(lucid, dtype)
    x = lucid.tensor([[1, 0, 3]], dtype=d, device=device)
    y = _rt(x)
    assert y.dtype == d and y.tolist() == x.tolist()
    s = _rt(lucid.tensor(7, dtype=d, device=device))
    assert s.shape == () and s.item() == (True if dtype == "bool" else 7)


@pytest.mark.parametrize("device", _DEVICES)
def test_requires_grad_kept_and_grad_flows(device):
    x = lucid.tensor([1.0, 2.0], requires_grad=True, device=device)
    x.grad = lucid.ones(2, device=device)
    y = _rt(x)
    assert y.requires_grad and y.is_leaf and y.grad is None  # .grad is dropped, as in PyTorch
    (y * y).sum().backward()
    assert y.grad.tolist() == [2.0, 4.0]
    assert not _rt(lucid.ones(2, device=device)).requires_grad


def test_non_leaf_comes_back_as_a_leaf_like_torch():
    torch = pytest.importorskip("torch")
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    ty = pickle.loads(pickle.dumps(tx * 3))
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = _rt(x * 3)
    assert (y.requires_grad, y.is_leaf) == (ty.requires_grad, ty.is_leaf) == (True, True)
    assert y.tolist() == ty.tolist() == [3.0, 6.0]


def test_instance_attributes_kept_views_dropped():
    x = lucid.arange(6).reshape(2, 3)
    x.tag = {"name": "x"}
    y = _rt(x)
    assert y.tag == {"name": "x"} and y.tolist() == [[0, 1, 2], [3, 4, 5]]
    v = _rt(x[1])
    assert v.tolist() == [3, 4, 5] and v._base is None


def test_one_tensor_pickled_twice_is_shared():
    x = lucid.ones(3)
    a, b = _rt([x, x])
    assert a is b


@pytest.mark.parametrize("device", _DEVICES)
def test_parameter_and_buffer_keep_class(device):
    p = nn.Parameter(lucid.tensor([1.0, 2.0], device=device))
    q = _rt(p)
    assert type(q) is nn.Parameter and q.requires_grad and q.tolist() == [1.0, 2.0]
    frozen = _rt(nn.Parameter(lucid.ones(2, device=device), requires_grad=False))
    assert type(frozen) is nn.Parameter and not frozen.requires_grad
    b = _rt(nn.Buffer(lucid.tensor([3.0], device=device), persistent=False))
    assert type(b) is nn.Buffer and b.persistent is False and not b.requires_grad
    assert _rt(nn.Buffer(lucid.zeros(1, device=device))).persistent is True
    assert q.device == device and b.device == device


def test_devices_and_dtypes_pickle():
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        d = _rt(lucid.device("cuda:1"), protocol)
        assert d == lucid.device("gpu", 1) and d.index == 1
        assert _rt(lucid.float16, protocol) is lucid.float16


def _net() -> nn.Module:
    lucid.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))


def _train(net: nn.Module, steps: int = 3) -> list[float]:
    lucid.manual_seed(1)
    x, y = lucid.randn(16, 3), lucid.randn(16, 2)
    opt = optim.SGD(net.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_module_pickles_and_trains_afterwards():
    net = _net()
    net2 = _rt(net)
    assert all(type(p) is nn.Parameter for p in net2.parameters())
    assert all(type(b) is nn.Buffer for b in net2.buffers())
    for (k, a), (k2, b) in zip(net.state_dict().items(), net2.state_dict().items()):
        assert k == k2
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    before = net2[0].weight.detach().numpy().copy()
    assert _train(net2) == _train(net)  # same values, same training
    assert not np.array_equal(before, net2[0].weight.detach().numpy())  # the optimizer moved them


def test_tied_weights_stay_tied():
    net = nn.Sequential(nn.Linear(4, 4, bias=False), nn.Linear(4, 4, bias=False))
    net[1].weight = net[0].weight
    net2 = _rt(net)
    assert net2[1].weight is net2[0].weight
    assert len(list(net2.parameters())) == 1


@pytest.mark.skipif(importlib.util.find_spec("mlx") is None, reason="mlx is not installed")
def test_gpu_module_pickles_and_trains():
    net = _net().to("gpu")
    net2 = _rt(net)
    assert all(p.device == "gpu" for p in net2.parameters())
    losses = _train_on(net2, "gpu")
    assert losses[-1] < losses[0]


def _train_on(net: nn.Module, device: str) -> list[float]:
    lucid.manual_seed(1)
    x, y = lucid.randn(16, 3, device=device), lucid.randn(16, 2, device=device)
    opt = optim.Adam(net.parameters(), lr=0.05)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_copy_and_deepcopy_still_work():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    c = copy.copy(x)
    assert c._data is x._data and c.requires_grad  # shallow: values shared, as in PyTorch
    d = copy.deepcopy(x)
    d.data.zero_()  # type: ignore[attr-defined]
    assert x.tolist() == [1.0, 2.0] and d.requires_grad
    net = _net()
    net2 = copy.deepcopy(net)
    assert _train(net2) == _train(net)
