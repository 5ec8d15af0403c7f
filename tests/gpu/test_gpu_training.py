"""Training on the "gpu" device: a CNN trained from the same weights on both devices ends in
the same place (float32 tolerance), and a long loop that never reads a value keeps memory
flat (MLX's laziness must not keep a graph alive from one step to the next)."""

from __future__ import annotations

import copy
import os
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F


def cnn() -> nn.Module:
    lucid.manual_seed(0)
    # the first conv has no bias: a bias right before batch norm gets a zero gradient, which
    # Adam turns into +-lr steps of rounding noise
    return nn.Sequential(
        nn.Conv2d(1, 6, 3, padding=1, bias=False), nn.BatchNorm2d(6), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(6, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 6 * 6, 10))


@pytest.mark.parametrize("opt_name,kw", [("SGD", {"lr": 0.05, "momentum": 0.9}),
                                         ("Adam", {"lr": 1e-3})])
def test_cnn_trains_the_same_on_both_devices(opt_name: str, kw: dict[str, Any]) -> None:
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((20, 16, 1, 16, 16)).astype(np.float32)
    ys = rng.integers(0, 10, (20, 16))
    start = cnn()
    res = {}
    for dev in ("cpu", "gpu"):
        m = copy.deepcopy(start).to(dev)
        opt = getattr(lucid.optim, opt_name)(m.parameters(), **kw)
        losses = []
        for s in range(20):
            opt.zero_grad()
            loss = F.cross_entropy(m(lucid.tensor(xs[s], device=dev)),
                                   lucid.tensor(ys[s], device=dev))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        res[dev] = (np.array(losses), {k: v.numpy() for k, v in m.state_dict().items()})
    np.testing.assert_allclose(res["gpu"][0], res["cpu"][0], rtol=1e-5, atol=1e-5)
    assert res["gpu"][0][-1] < res["gpu"][0][0]
    for k, v in res["cpu"][1].items():
        np.testing.assert_allclose(res["gpu"][1][k], v, rtol=1e-4, atol=1e-5, err_msg=k)


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_long_loop_without_item_keeps_memory_flat() -> None:
    lucid.manual_seed(0)
    m = nn.Sequential(nn.Linear(64, 128), nn.BatchNorm1d(128), nn.ReLU(),
                      nn.Linear(128, 10)).to("gpu")
    opt = lucid.optim.Adam(m.parameters(), lr=1e-3)
    x = lucid.randn(32, 64, device="gpu")
    y = lucid.randint(0, 10, (32,), device="gpu")
    rss = {}
    for step in range(1, 501):
        opt.zero_grad()
        F.cross_entropy(m(x), y).backward()
        opt.step()
        if step in (50, 500):
            rss[step] = _rss_mb()
    print(f"\nRSS at step 50: {rss[50]:.1f} MB, at step 500: {rss[500]:.1f} MB")
    assert rss[500] - rss[50] < 30
    assert F.cross_entropy(m(x), y).item() < 1.0  # it did train
