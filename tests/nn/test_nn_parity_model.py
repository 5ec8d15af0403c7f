"""One architecture built in torch and in lucid: same state_dict, and after loading torch's
weights the same outputs and gradients (float32, 1e-5)."""

from __future__ import annotations

import numpy as np
import pytest
from nn_util import arr

import lucid
import lucid.nn as nn

pytestmark = pytest.mark.parity


def build(fw, nn_):
    class Net(nn_.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn_.Linear(6, 8)
            self.blocks = nn_.ModuleList([
                nn_.Sequential(nn_.Linear(8, 8), nn_.Tanh()),
                nn_.Sequential(nn_.Linear(8, 8), nn_.ReLU(),
                               nn_.Sequential(nn_.Linear(8, 8), nn_.Sigmoid())),
            ])
            self.heads = nn_.ModuleDict({
                "a": nn_.Linear(8, 3),
                "b": nn_.Sequential(nn_.Identity(), nn_.Linear(8, 8, bias=False)),
            })
            self.out = nn_.Linear(8, 8)
            self.out.weight = self.blocks[0][0].weight  # tied
            self.register_buffer("mean", fw.zeros(6))
            self.register_buffer("steps", fw.tensor(0))
            self.register_buffer("scratch", fw.zeros(2), persistent=False)

        def forward(self, x):
            x = self.embed(x - self.mean)
            for block in self.blocks:
                x = block(x) + x
            return self.heads["a"](x), self.out(self.heads["b"](x))

    return Net()


@pytest.fixture
def models(torch):
    torch.manual_seed(0)
    tm = build(torch, torch.nn)
    with torch.no_grad():
        tm.mean.copy_(torch.randn(6))
        tm.steps.fill_(5)
    lm = build(lucid, nn)
    return tm, lm


def test_same_state_dict_keys_shapes_and_parameter_names(models):
    tm, lm = models
    tsd, lsd = tm.state_dict(), lm.state_dict()
    assert list(lsd) == list(tsd)
    assert [tuple(v.shape) for v in lsd.values()] == [tuple(v.shape) for v in tsd.values()]
    assert list(lsd._metadata) == list(tsd._metadata)
    assert [n for n, _ in lm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in lm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    assert repr(lm) == repr(tm)


def test_outputs_and_gradients_match_after_loading_torch_weights(models, torch):
    tm, lm = models
    params = list(lm.parameters())
    assert str(lm.load_state_dict(tm.state_dict())) == "<All keys matched successfully>"
    assert all(a is b for a, b in zip(lm.parameters(), params))
    assert lm.out.weight is lm.blocks[0][0].weight  # still tied
    assert lm.steps.dtype == lucid.int64 and int(lm.steps.item()) == 5
    for (n, lv), tv in zip(lm.state_dict().items(), tm.state_dict().values()):
        np.testing.assert_array_equal(arr(lv), tv.numpy(), err_msg=n)

    xn = np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32)
    xt = torch.tensor(xn, requires_grad=True)
    xl = lucid.tensor(xn, requires_grad=True)
    ta, tb = tm(xt)
    la, lb = lm(xl)
    np.testing.assert_allclose(arr(la), ta.detach().numpy(), atol=1e-5)
    np.testing.assert_allclose(arr(lb), tb.detach().numpy(), atol=1e-5)
    ((ta ** 2).sum() + tb.sum()).backward()
    ((la ** 2).sum() + lb.sum()).backward()
    np.testing.assert_allclose(arr(xl.grad), xt.grad.numpy(), atol=1e-5)
    for (n, lp), (tn, tp) in zip(lm.named_parameters(), tm.named_parameters()):
        assert n == tn
        np.testing.assert_allclose(arr(lp.grad), tp.grad.numpy(), atol=1e-5, err_msg=n)


def test_lucid_state_dict_loads_into_torch(models, torch):
    tm, lm = models
    tm.load_state_dict({k: torch.from_numpy(arr(v)) for k, v in lm.state_dict().items()})
    for (n, lv), tv in zip(lm.state_dict().items(), tm.state_dict().values()):
        np.testing.assert_array_equal(arr(lv), tv.numpy(), err_msg=n)


def test_round_trip_on_another_device_and_dtype(models, torch):
    tm, lm = models
    lm.to("numpy", lucid.float64)
    lm.load_state_dict(tm.state_dict())
    assert lm.embed.weight.device == "numpy" and lm.embed.weight.dtype == lucid.float64
    assert lm.steps.dtype == lucid.int64
    xn = np.random.default_rng(1).standard_normal((3, 6))
    la, _ = lm(lucid.tensor(xn, device="numpy"))
    ta, _ = tm(torch.tensor(xn, dtype=torch.float32))
    np.testing.assert_allclose(arr(la), ta.detach().numpy(), atol=1e-5)
