"""Optimizer step benchmarks: one step over the parameters of an MLP 784-512-256-10.

lucid (one fused kernel per parameter) vs plain numpy (the same update rules written as numpy
expressions) vs torch (its CPU default, the for-loop implementation, and foreach / fused).
Run: python -m pytest benchmarks/test_optim.py --benchmark-enable --benchmark-only
     --benchmark-group-by=group
"""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.optim as optim
from lucid.backend import _optim_ref as ref

SHAPES = [(512, 784), (512,), (256, 512), (256,), (10, 256), (10,)]
rng = np.random.default_rng(0)
P0 = [rng.standard_normal(s).astype(np.float32) * 0.05 for s in SHAPES]
G = [rng.standard_normal(s).astype(np.float32) * 0.01 for s in SHAPES]

ADAM = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8}
SGD = {"lr": 1e-3, "momentum": 0.9}
GROUPS = {"adam": "optim Adam step, MLP 784-512-256-10",
          "sgd": "optim SGD(momentum) step, MLP 784-512-256-10"}


def _lucid_opt(name: str):
    ps = [nn.Parameter(lucid.tensor(a.copy())) for a in P0]
    for p, g in zip(ps, G):
        p.grad = lucid.tensor(g)
    return optim.Adam(ps, **ADAM) if name == "adam" else optim.SGD(ps, **SGD)


def _torch_opt(torch, name: str, **impl):
    ps = [torch.tensor(a.copy(), requires_grad=True) for a in P0]
    for p, g in zip(ps, G):
        p.grad = torch.from_numpy(g)
    if name == "adam":
        return torch.optim.Adam(ps, **ADAM, **impl)
    return torch.optim.SGD(ps, **SGD, **impl)


class _NumpyAdam:
    """Adam as plain numpy expressions (lucid's numpy reference rules), scalars in Python."""

    def __init__(self) -> None:
        self.p = [a.copy() for a in P0]
        self.m = [np.zeros_like(a) for a in P0]
        self.v = [np.zeros_like(a) for a in P0]
        self.t = 0

    def step(self) -> None:
        self.t += 1
        b1, b2 = ADAM["betas"]
        ss = ADAM["lr"] / (1 - b1**self.t)
        bc = (1 - b2**self.t) ** 0.5
        for p, g, m, v in zip(self.p, G, self.m, self.v):
            ref.adam(p, g, m, v, beta1=b1, beta2=b2, eps=ADAM["eps"], step_size=ss,
                     bc2_sqrt=bc)


class _NumpySGD:
    def __init__(self) -> None:
        self.p = [a.copy() for a in P0]
        self.b = [np.zeros_like(a) for a in P0]
        self.first = True

    def step(self) -> None:
        for p, g, b in zip(self.p, G, self.b):
            ref.sgd(p, g, b, lr=SGD["lr"], momentum=SGD["momentum"], first=self.first)
        self.first = False


@pytest.mark.parametrize("name", ["adam", "sgd"])
def test_optim_lucid(benchmark, name):
    benchmark.group = GROUPS[name]
    opt = _lucid_opt(name)
    opt.step()  # compile / load the kernels outside the timing
    benchmark(opt.step)
    p = opt.param_groups[0]["params"][0]
    assert np.isfinite(p.detach().numpy()).all()


@pytest.mark.parametrize("name", ["adam", "sgd"])
def test_optim_numpy(benchmark, name):
    benchmark.group = GROUPS[name]
    opt = _NumpyAdam() if name == "adam" else _NumpySGD()
    benchmark(opt.step)


@pytest.mark.parametrize("impl", ["default", "foreach", "fused"])
@pytest.mark.parametrize("name", ["adam", "sgd"])
def test_optim_torch(benchmark, name, impl, torch_or_skip):
    benchmark.group = GROUPS[name]
    kw = {} if impl == "default" else {impl: True}
    opt = _torch_opt(torch_or_skip, name, **kw)
    opt.step()
    benchmark(opt.step)


def test_adam_matches_torch_on_benchmark_set(torch_or_skip):
    """The benchmarked lucid step computes what torch's does (10 steps, float32)."""
    lo = _lucid_opt("adam")
    to = _torch_opt(torch_or_skip, "adam")
    for _ in range(10):
        lo.step()
        to.step()
    for a, b in zip(lo.param_groups[0]["params"], to.param_groups[0]["params"]):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=0, atol=1e-6)
