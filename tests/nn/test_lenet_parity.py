"""A LeNet-style model and a model with BatchNorm, Dropout and tied weights, built in lucid
and in PyTorch: torch's weights load into the lucid twin, outputs and one SGD training step
match, and a bad checkpoint (missing key, extra key and wrong shape at once) raises one error
listing all three while leaving every weight unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import lucid

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def lenet(nn):
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, 10),
    )


def tied(nn):
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Linear(12, 12, bias=False)
            self.body = nn.Sequential(nn.Linear(12, 16), nn.BatchNorm1d(16), nn.ReLU(),
                                      nn.Dropout(0.0), nn.Linear(16, 12))
            self.head = nn.Linear(12, 12, bias=False)
            self.head.weight = self.emb.weight  # tied

        def forward(self, x):
            return self.head(self.body(self.emb(x)))

    return Tied()


CASES = [(lenet, (4, 1, 28, 28)), (tied, (6, 12))]


def _build(factory):
    import lucid.nn as lnn

    torch.manual_seed(0)
    tm = factory(torch.nn)
    lm = factory(lnn)
    return lm, tm


@pytest.mark.parametrize("factory,shape", CASES, ids=["lenet", "bn-dropout-tied"])
def test_twin_loads_torch_weights_and_trains_identically(factory, shape):
    lm, tm = _build(factory)
    assert list(lm.state_dict()) == list(tm.state_dict())
    assert lm.load_state_dict(tm.state_dict()) == ([], [])
    assert len(list(lm.parameters())) == len(list(tm.parameters()))  # tied weight once
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    y = np.random.default_rng(1).integers(0, 10, shape[0])
    lm.train()
    tm.train()
    lopt = lucid.optim.SGD(lm.parameters(), lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    for _ in range(2):
        lout, tout = lm(lucid.tensor(x)), tm(torch.tensor(x))
        np.testing.assert_allclose(lout.detach().numpy(), tout.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
        lloss = lucid.nn.functional.cross_entropy(lout, lucid.tensor(y))
        tloss = torch.nn.functional.cross_entropy(tout, torch.tensor(y))
        lopt.zero_grad()
        topt.zero_grad()
        lloss.backward()
        tloss.backward()
        lopt.step()
        topt.step()
    for (k, lv), (_, tv) in zip(lm.state_dict().items(), tm.state_dict().items()):
        np.testing.assert_allclose(lv.numpy(), tv.numpy(), rtol=1e-4, atol=1e-5, err_msg=k)
    lm.eval()
    tm.eval()
    np.testing.assert_allclose(lm(lucid.tensor(x)).detach().numpy(),
                               tm(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("factory", [lenet, tied], ids=["lenet", "bn-dropout-tied"])
def test_bad_checkpoint_one_error_nothing_changed(factory):
    lm, tm = _build(factory)
    before = {k: v.numpy().copy() for k, v in lm.state_dict().items()}
    sd = dict(tm.state_dict())
    keys = list(sd)
    missing, wrong = keys[0], keys[-1]
    del sd[missing]
    sd["extra.weight"] = torch.zeros(3)
    sd[wrong] = torch.zeros(tuple(s + 1 for s in sd[wrong].shape))
    with pytest.raises(RuntimeError) as info:
        lm.load_state_dict(sd)
    msg = str(info.value)
    assert msg.startswith(f"Error(s) in loading state_dict for {type(lm).__name__}:")
    assert f'Missing key(s) in state_dict: "{missing}"' in msg
    assert 'Unexpected key(s) in state_dict: "extra.weight"' in msg
    assert f"size mismatch for {wrong}" in msg
    for k, v in lm.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k], err_msg=k)
    with pytest.raises(RuntimeError) as tinfo:  # torch names the same three problems
        tm.load_state_dict(sd)
    for line in str(tinfo.value).split("\n\t")[1:]:
        assert line.replace("torch.", "lucid.") in msg
