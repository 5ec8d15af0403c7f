"""Matmul: lucid.kernels.matmul (numpy BLAS + shared-weight single GEMM) vs numpy vs torch."""

from __future__ import annotations

import numpy as np
import pytest

from lucid.kernels.matmul import matmul

rng = np.random.default_rng(0)
SHAPES = {
    "256x784@784x512": ((256, 784), (784, 512)),
    "32x(64x64@64x64)": ((32, 64, 64), (32, 64, 64)),
    "32x128x256@256x128 shared": ((32, 128, 256), (256, 128)),
}
DATA = {
    k: (rng.standard_normal(a, dtype=np.float32), rng.standard_normal(b, dtype=np.float32))
    for k, (a, b) in SHAPES.items()
}


@pytest.mark.parametrize("case", list(SHAPES))
def test_lucid(benchmark, case) -> None:
    benchmark.group = f"matmul {case} f32"
    a, b = DATA[case]
    out = benchmark(matmul, a, b)
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("case", list(SHAPES))
def test_numpy(benchmark, case) -> None:
    benchmark.group = f"matmul {case} f32"
    a, b = DATA[case]
    benchmark(np.matmul, a, b)


@pytest.mark.parametrize("case", list(SHAPES))
def test_torch(benchmark, torch_or_skip, case) -> None:
    benchmark.group = f"matmul {case} f32"
    a, b = (torch_or_skip.from_numpy(t) for t in DATA[case])
    benchmark(torch_or_skip.matmul, a, b)
