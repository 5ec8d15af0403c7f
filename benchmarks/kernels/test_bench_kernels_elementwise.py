"""Fused elementwise backward kernels vs numpy expressions vs torch, at 1k and 1M float32."""

from __future__ import annotations

import numpy as np
import pytest

from lucid.kernels import elementwise as E

rng = np.random.default_rng(0)
SIZES = {"1k": 1000, "1M": 1_000_000}
DATA = {}
for _k, _n in SIZES.items():
    _x = rng.standard_normal(_n, dtype=np.float32)
    DATA[_k] = (_x, 1 / (1 + np.exp(-_x)), np.tanh(_x), rng.standard_normal(_n, dtype=np.float32))

LUCID = {
    "sigmoid_backward": lambda x, s, t, g: E.sigmoid_backward(s, g),
    "tanh_backward": lambda x, s, t, g: E.tanh_backward(t, g),
    "relu_backward": lambda x, s, t, g: E.relu_backward(x, g),
    "relu": lambda x, s, t, g: E.relu(x),
}
NUMPY = {
    "sigmoid_backward": lambda x, s, t, g: g * s * (1 - s),
    "tanh_backward": lambda x, s, t, g: g * (1 - t * t),
    "relu_backward": lambda x, s, t, g: g * (x > 0),
    "relu": lambda x, s, t, g: np.maximum(x, 0),
}


def _torch_fns(torch):
    aten = torch.ops.aten
    return {
        "sigmoid_backward": lambda x, s, t, g: aten.sigmoid_backward(g, s),
        "tanh_backward": lambda x, s, t, g: aten.tanh_backward(g, t),
        "relu_backward": lambda x, s, t, g: aten.threshold_backward(g, x, 0),
        "relu": lambda x, s, t, g: torch.relu(x),
    }


CASES = [pytest.param(op, size, id=f"{op}-{size}") for op in LUCID for size in SIZES]


@pytest.mark.parametrize("op,size", CASES)
def test_lucid(benchmark, op, size) -> None:
    benchmark.group = f"elementwise {op} {size} f32"
    args = DATA[size]
    out = benchmark(LUCID[op], *args)
    np.testing.assert_allclose(out, NUMPY[op](*args), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op,size", CASES)
def test_numpy(benchmark, op, size) -> None:
    benchmark.group = f"elementwise {op} {size} f32"
    benchmark(NUMPY[op], *DATA[size])


@pytest.mark.parametrize("op,size", CASES)
def test_torch(benchmark, torch_or_skip, op, size) -> None:
    benchmark.group = f"elementwise {op} {size} f32"
    args = [torch_or_skip.from_numpy(a) for a in DATA[size]]
    benchmark(_torch_fns(torch_or_skip)[op], *args)
