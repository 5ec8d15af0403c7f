"""Training-step benchmarks on the "gpu" device (MLX) beside "cpu", float32.

Each step is forward + backward + optimizer step, ended by ``loss.item()`` so the lazily
evaluated "gpu" work is included in the time. On Linux without a GPU, MLX runs "gpu" on its
CPU stream with a reference BLAS: there the figures measure overhead, not acceleration.

Run: ``pytest benchmarks/test_gpu.py --benchmark-enable --benchmark-group-by=group``
"""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mlx") is None,
                                reason='needs MLX: pip install "lucid-jit[gpu]"')

rng = np.random.default_rng(0)
X_MLP = rng.standard_normal((128, 784), dtype=np.float32)
Y_MLP = rng.integers(0, 10, 128)
X_CNN = rng.standard_normal((32, 1, 28, 28), dtype=np.float32)
Y_CNN = rng.integers(0, 10, 32)


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def _cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 7 * 7, 10))


def _step(kind: str, device: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MLX's CPU-stream notice
        lucid.manual_seed(0)
        model = (_mlp if kind == "mlp" else _cnn)().to(device)
    x, y = (X_MLP, Y_MLP) if kind == "mlp" else (X_CNN, Y_CNN)
    xb, yb = lucid.tensor(x, device=device), lucid.tensor(y, device=device)
    opt = lucid.optim.SGD(model.parameters(), lr=0.01) if kind == "mlp" else \
        lucid.optim.Adam(model.parameters(), lr=1e-3)

    def step() -> float:
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        return loss.item()

    step()  # warm-up: kernels compiled / MLX graphs built once
    return step


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_mlp_784_512_256_10_sgd_step(benchmark, device: str) -> None:
    benchmark.group = "gpu: mlp 784-512-256-10 train step (SGD, batch 128)"
    benchmark(_step("mlp", device))


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_small_cnn_adam_step(benchmark, device: str) -> None:
    benchmark.group = "gpu: cnn 1-8-16 28x28 train step (Adam, batch 32)"
    benchmark(_step("cnn", device))
