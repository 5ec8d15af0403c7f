"""BLAS and numba interleaved, as in a training step: matmul -> reductions -> fused backward.

One step: h = a @ b (256x784 @ 784x512, numpy BLAS); row sums of h (131k elements) and of a
(256, 4096) array (1M); relu_backward(h, h). The thread policy (lucid/kernels/_threads.py) keeps
OpenBLAS's and numba's workers from stealing each other's core; ``interleaved.py`` next to this
file compares the policy applied before/after numpy's import and without it.
"""

from __future__ import annotations

import numpy as np
import pytest

from lucid.kernels import _threads
from lucid.kernels import elementwise as E
from lucid.kernels import reduce as R

rng = np.random.default_rng(0)
A = rng.standard_normal((256, 784), dtype=np.float32)
B = rng.standard_normal((784, 512), dtype=np.float32)
BIG = rng.standard_normal((256, 4096), dtype=np.float32)
GROUP = "interleaved matmul -> row sums -> relu_backward"


def _lucid_step():
    h = A @ B
    return R.sum(h, 1), R.sum(BIG, 1), E.relu_backward(h, h)


def _numpy_step():
    h = A @ B
    return h.sum(1), BIG.sum(1), h * (h > 0)


@pytest.fixture
def all_parallel():
    """Every kernel on its parallel build, whatever its size."""
    saved = dict(_threads._THRESHOLD_CACHE)
    _threads._THRESHOLD_CACHE.update({k: 0 for k in _threads.THRESHOLDS})
    yield
    _threads._THRESHOLD_CACHE.clear()
    _threads._THRESHOLD_CACHE.update(saved)


def test_lucid(benchmark) -> None:
    benchmark.group = GROUP
    _lucid_step()
    benchmark(_lucid_step)


def test_lucid_all_parallel(benchmark, all_parallel) -> None:
    benchmark.group = GROUP
    _lucid_step()
    benchmark(_lucid_step)


def test_numpy(benchmark) -> None:
    benchmark.group = GROUP
    benchmark(_numpy_step)


def test_torch(benchmark, torch_or_skip) -> None:
    torch = torch_or_skip
    benchmark.group = GROUP
    a, b, big = (torch.from_numpy(t) for t in (A, B, BIG))

    def step():
        h = a @ b
        return h.sum(1), big.sum(1), torch.ops.aten.threshold_backward(h, h, 0)

    benchmark(step)
