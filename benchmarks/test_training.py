"""Training-step benchmarks: one forward + backward + optimizer step, float32.

lucid on "cpu" (numpy + numba kernels) vs lucid on its numpy-only reference backend
("numpy") vs torch, same architecture, batch and optimizer, side by side in one run.
"""

from __future__ import annotations

import numpy as np
import pytest
from bench_models import cnn_net, mlp_net

import lucid
import lucid.nn as lnn
import lucid.nn.functional as LF
import lucid.optim as loptim

rng = np.random.default_rng(0)
X_MLP = rng.standard_normal((128, 784), dtype=np.float32)
Y_MLP = rng.integers(0, 10, 128)
X_CNN = rng.standard_normal((64, 1, 28, 28), dtype=np.float32)
Y_CNN = rng.integers(0, 10, 64)


_mlp = mlp_net  # one definition for every suite: bench_models.py
_cnn = cnn_net


def _lucid_step(kind: str, device: str):
    lucid.manual_seed(0)
    model = (_mlp if kind == "mlp" else _cnn)(lnn).to(device)
    x, y = (X_MLP, Y_MLP) if kind == "mlp" else (X_CNN, Y_CNN)
    xb, yb = lucid.tensor(x, device=device), lucid.tensor(y, device=device)
    opt = loptim.SGD(model.parameters(), lr=0.01) if kind == "mlp" else \
        loptim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        loss = LF.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        return loss

    return step


def _torch_step(torch, kind: str):
    torch.manual_seed(0)
    model = (_mlp if kind == "mlp" else _cnn)(torch.nn)
    x, y = (X_MLP, Y_MLP) if kind == "mlp" else (X_CNN, Y_CNN)
    xb, yb = torch.from_numpy(x), torch.from_numpy(y)
    opt = torch.optim.SGD(model.parameters(), lr=0.01) if kind == "mlp" else \
        torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        return loss

    return step


GROUPS = {"mlp": "train step MLP 784-512-256-10 b128 SGD",
          "cnn": "train step CNN 28x28 b64 Adam"}


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_train_step_lucid(benchmark, kind):
    benchmark.group = GROUPS[kind]
    step = _lucid_step(kind, "cpu")
    first = step().item()
    benchmark(step)
    assert step().item() < first  # it is learning


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_train_step_lucid_numpy_backend(benchmark, kind):
    benchmark.group = GROUPS[kind]
    step = _lucid_step(kind, "numpy")
    step()
    benchmark.pedantic(step, rounds=5 if kind == "cnn" else 20, iterations=1)


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_train_step_torch(benchmark, kind, torch_or_skip):
    benchmark.group = GROUPS[kind]
    step = _torch_step(torch_or_skip, kind)
    step()
    benchmark(step)
