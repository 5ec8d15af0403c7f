"""The functional forms added for torch parity run, and differentiate, on every device:
each device's output and input gradient equal the "cpu" ones (float32; random ops draw on
the host, so one seed gives every device the same numbers)."""

from __future__ import annotations

import numpy as np
import pytest
from devices import DEVICES
from nn_util import arr

import lucid
import lucid.nn.functional as F
import lucid.nn.grad as G

pytestmark = pytest.mark.filterwarnings("ignore:lucid. no Metal or CUDA:RuntimeWarning")

RNG = np.random.default_rng(0)
X4 = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
S2 = RNG.random((2, 3, 2)).astype(np.float32)
W = (RNG.standard_normal((24, 8)) * 0.3).astype(np.float32)
WO = (RNG.standard_normal((8, 8)) * 0.3).astype(np.float32)


def _unpool(x):
    y, i = F.max_pool2d_with_indices(x.detach(), 2)
    return F.max_unpool2d(y * x[:, :, :3, :3], i, 2)


def _mha(x):
    seq = x.reshape(2, 3, 36)[:, :, :8].transpose(0, 1)
    w, wo = lucid.tensor(W, device=x.device), lucid.tensor(WO, device=x.device)
    return F.multi_head_attention_forward(seq, seq, seq, 8, 2, w, None, None, None, True, 0.0,
                                          wo, None)[0]


CASES = {
    "unpool": _unpool,
    "lp_pool2d": lambda x: F.lp_pool2d(x, 2, 2),
    "lp_pool3d": lambda x: F.lp_pool3d(x.unsqueeze(0), 3, 2),
    "fractional": lambda x: F.fractional_max_pool2d(
        x, 2, output_size=4, _random_samples=lucid.tensor(S2, device=x.device)),
    "pdist": lambda x: F.pdist(x.reshape(6, 36)),
    "pdist_inf": lambda x: F.pdist(x.reshape(6, 36), float("inf")),
    "rrelu_eval": lambda x: F.rrelu(x),
    "rrelu_train": lambda x: F.rrelu(x, training=True),
    "alpha_dropout": lambda x: F.alpha_dropout(x, 0.3, True),
    "feature_alpha_dropout": lambda x: F.feature_alpha_dropout(x, 0.3, True),
    "fractional_drawn": lambda x: F.fractional_max_pool2d(x, 2, output_ratio=0.5),
    "elu_": lambda x: F.elu_(x * 1.0),
    "mha": _mha,
    "conv2d_weight": lambda x: G.conv2d_weight(x, (4, 3, 3, 3), lucid.ones(2, 4, 4, 4,
                                                                           device=x.device)),
    "conv2d_input": lambda x: G.conv2d_input((2, 3, 8, 8), x.reshape(-1)[:108].reshape(
        4, 3, 3, 3), lucid.ones(2, 4, 6, 6, device=x.device), stride=1),
}


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "cpu"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_device_matches_cpu(name, device):
    def run(dev):
        lucid.manual_seed(0)
        x = lucid.tensor(X4, device=dev, requires_grad=True)
        y = CASES[name](x)
        (y * y).sum().backward()
        return arr(y), arr(x.grad)

    (y0, g0), (y1, g1) = run("cpu"), run(device)
    np.testing.assert_allclose(y1, y0, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g1, g0, rtol=1e-4, atol=1e-4)
