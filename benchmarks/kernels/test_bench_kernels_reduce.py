"""Reductions over a (256, 4096) float32 array: lucid kernel vs numpy vs torch.

Run: python -m pytest benchmarks/kernels --benchmark-enable --benchmark-only
     --benchmark-group-by=group --benchmark-columns=min,median,mean
"""

from __future__ import annotations

import numpy as np
import pytest

from lucid.kernels import reduce as R

X = np.random.default_rng(0).standard_normal((256, 4096), dtype=np.float32)

# (op, numpy call, torch call) for each axis
CASES = {
    "sum": (lambda a, ax: a.sum(ax), lambda t, ax: t.sum(ax)),
    "mean": (lambda a, ax: a.mean(ax), lambda t, ax: t.mean(ax)),
    "max": (lambda a, ax: a.max(ax), lambda t, ax: t.amax(ax)),
    "argmax": (lambda a, ax: a.argmax(ax), lambda t, ax: t.argmax(ax)),
    "var": (lambda a, ax: a.var(ax, ddof=1), lambda t, ax: t.var(ax)),
}
AXES = {"last": -1, "axis0": 0}


def _params():
    for op in CASES:
        for axname in AXES:
            yield pytest.param(op, axname, id=f"{op}-{axname}")


@pytest.mark.parametrize("op,axname", list(_params()))
def test_lucid(benchmark, op, axname) -> None:
    ax = AXES[axname]
    benchmark.group = f"reduce {op} (256,4096) f32 {axname}"
    fn = getattr(R, op)
    fn(X, ax)
    got = benchmark(fn, X, ax)
    exp = CASES[op][0](X.astype(np.float64), ax)
    np.testing.assert_allclose(got, exp, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op,axname", list(_params()))
def test_numpy(benchmark, op, axname) -> None:
    benchmark.group = f"reduce {op} (256,4096) f32 {axname}"
    benchmark(CASES[op][0], X, AXES[axname])


@pytest.mark.parametrize("op,axname", list(_params()))
def test_torch(benchmark, torch_or_skip, op, axname) -> None:
    benchmark.group = f"reduce {op} (256,4096) f32 {axname}"
    benchmark(CASES[op][1], torch_or_skip.from_numpy(X), AXES[axname])
