"""Module.to / cpu / float / double / half / type: identity kept, own tensors then children."""

from __future__ import annotations

import numpy as np
import pytest
from nn_util import arr, catch

import lucid
import lucid.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("count", lucid.tensor([1, 2]))
        self.register_buffer("tmp", lucid.zeros(2), persistent=False)
        self.plain = lucid.zeros(2)


def test_to_dtype_keeps_identity_and_converts_grads():
    net = Net()
    net.fc(lucid.randn(4, 3)).sum().backward()
    w, g, cnt, tmp = net.fc.weight, net.fc.weight.grad, net.count, net.tmp
    before = arr(w)
    assert net.to(lucid.float64) is net
    assert net.fc.weight is w and w.grad is g and net.count is cnt and net.tmp is tmp
    assert w.dtype == lucid.float64 and g.dtype == lucid.float64 and w.requires_grad
    assert tmp.dtype == lucid.float64  # non-persistent buffers too
    assert cnt.dtype == lucid.int64  # integer buffers are not cast
    assert net.plain.dtype == lucid.float32  # plain attributes are not touched
    np.testing.assert_allclose(arr(w), before, rtol=1e-7)
    assert isinstance(w, nn.Parameter) and isinstance(w, lucid.Tensor)


def test_to_device_moves_everything_registered():
    net = Net()
    net.fc(lucid.randn(4, 3)).sum().backward()
    params = list(net.parameters())
    net.to("numpy")
    assert all(a is b for a, b in zip(net.parameters(), params))
    assert {t.device.type for t in [*net.parameters(), *net.buffers()]} == {"numpy"}
    assert net.fc.weight.grad.device == "numpy" and net.plain.device == "cpu"
    out = net.fc(lucid.randn(2, 3, device="numpy"))
    assert out.device == "numpy"
    net.cpu()
    assert {t.device.type for t in [*net.parameters(), *net.buffers()]} == {"cpu"}


def test_to_forms():
    net = Net()
    net.to("numpy", lucid.float64)
    assert net.fc.weight.device == "numpy" and net.fc.weight.dtype == lucid.float64
    net.to(device="cpu", dtype=lucid.float16, non_blocking=True)
    assert net.fc.weight.device == "cpu" and net.fc.weight.dtype == lucid.float16
    net.to(lucid.zeros(1, dtype=lucid.float32, device="numpy"))
    assert net.fc.weight.device == "numpy" and net.fc.weight.dtype == lucid.float32
    net.to(lucid.device("cpu"))
    assert net.fc.weight.device == "cpu"


def test_float_double_half_type():
    net = Net()
    assert net.double() is net and net.fc.bias.dtype == lucid.float64
    assert net.count.dtype == lucid.int64
    net.half()
    assert net.fc.weight.dtype == lucid.float16 and net.count.dtype == lucid.int64
    net.float()
    assert net.fc.weight.dtype == lucid.float32
    net.type(lucid.float64)
    assert net.count.dtype == lucid.float64  # type() casts every tensor, as PyTorch
    net.type("lucid.FloatTensor")
    assert net.fc.weight.dtype == lucid.float32 and net.count.dtype == lucid.float32


def test_shared_and_late_children_are_fixed_by_the_parent():
    shared = nn.Linear(2, 2)
    net = nn.Sequential(shared, nn.ReLU(), shared)
    net[0].weight.grad = lucid.ones(2, 2)
    net.to(lucid.float64)
    assert shared.weight.dtype == lucid.float64 and shared.weight.grad.dtype == lucid.float64
    shared.to(lucid.float16)  # moved separately
    net.append(nn.Linear(2, 2))  # added later
    net.to(lucid.float64)
    assert {p.dtype for p in net.parameters()} == {lucid.float64}


def test_tied_parameter_converted_once():
    calls = []
    net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    net[1].weight = net[0].weight

    def fn(t):
        calls.append(id(t))
        return t

    net._apply(fn)
    assert len(calls) == len(set(calls)) == 3


def test_apply_override_sees_every_move():
    seen = []

    class Watch(nn.Linear):
        def _apply(self, fn, recurse=True):
            seen.append("watch")
            return super()._apply(fn, recurse)

    nn.Sequential(Watch(1, 1)).to(lucid.float64)
    assert seen == ["watch"]


def test_to_empty_and_share_memory():
    net = Net()
    w = net.fc.weight
    net.to_empty(device="numpy")
    assert net.fc.weight is w and w.device == "numpy" and tuple(w.shape) == (2, 3)
    assert net.share_memory() is net


def test_gpu_routes_through_the_same_code(monkeypatch):
    from lucid.nn import module_to

    numpy_be = lucid.backend.get_backend("numpy")
    monkeypatch.setattr(module_to, "get_backend",
                        lambda d: numpy_be if d == "gpu" else lucid.backend.get_backend(d))
    net = Net()
    w = net.fc.weight
    assert net.gpu() is net and w.device == "numpy"
    net.cpu()
    net.cuda()
    assert net.fc.weight is w and w.device == "numpy"


def _errors(fw, nn_):
    net = nn_.Linear(1, 1)
    return [catch(lambda: net.to(fw.int64)), catch(lambda: net.to(fw.bool))]


def test_to_errors_match_torch(both):
    both(_errors)


def test_integer_to_dtype_rejected():
    with pytest.raises(TypeError, match="only accepts floating point"):
        nn.Linear(1, 1).to(lucid.int32)


def test_tensor_and_module_share_one_parser():
    from lucid.ops.device import parse_to

    be = lucid.backend.get_backend("numpy")
    x = lucid.zeros(1, dtype=lucid.float16, device="numpy")
    assert parse_to(x)[:2] == (be, lucid.float16)
    assert parse_to("numpy", lucid.float64, True, True)[:4] == (be, lucid.float64, True, True)
    assert parse_to(dtype=float, copy=True, memory_format=None)[1:4] == (
        lucid.float32, False, True)
    assert parse_to(np.float64).dtype is lucid.float64
    assert parse_to(np.dtype("int32")).dtype is lucid.int32
    assert parse_to(None, lucid.device("numpy")).backend is be
    bad = object()
    for call in (lambda t: t.to(foo=1), lambda t: t.to(bad), lambda t: t.to(3.5)):
        msgs = {catch(lambda c=call: c(lucid.zeros(1))), catch(lambda c=call: c(Net()))}
        assert len(msgs) == 1 and msgs.pop().startswith("TypeError: to() ")
    assert "unexpected keyword argument 'foo'" in str(catch(lambda: Net().to(foo=1)))
    assert "invalid argument" in str(catch(lambda: lucid.zeros(1).to(object())))


def test_positional_flags_are_non_blocking_then_copy():
    x = lucid.zeros(2)
    assert x.to(lucid.float32, True) is x  # non_blocking
    assert x.to(lucid.float32, False, True) is not x  # copy
    net = Net()
    assert net.to("cpu", lucid.float64, True, copy=True) is net
    assert net.fc.weight.dtype == lucid.float64
