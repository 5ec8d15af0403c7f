"""The op table on the "gpu" device: forward against numpy, float64 gradcheck (where the gpu
stream has float64) and backward shapes, reusing ``tests/test_ops.py``; and every op's values
and gradients on "gpu" against "cpu" in float32."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from op_db import OP_DB
from opinfo import OpInfo, Sample, as_list, bind, cases, lucid_leaves
from reuse import backend_tests

import lucid

globals().update(backend_tests("", "test_ops"))


def _weights(outs: list, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.5, 1.5, tuple(o.shape)).astype(np.float32) for o in outs]


def _run(info: OpInfo, sample: Sample, device: str) -> tuple[list, list]:
    leaves = lucid_leaves(sample, device, dtype=np.float32)
    outs = as_list(bind(info.lucid_fn(), sample)(*leaves))
    vals = [o.detach().numpy() for o in outs]
    grads: list = []
    diff = [o for o in outs if o.requires_grad]
    if diff:
        total = None
        for o, w in zip(diff, _weights(diff, 0)):
            term = (o * lucid.tensor(w, device=device)).sum()
            total = term if total is None else total + term
        total.backward()
        grads = [None if x.grad is None else x.grad.numpy() for x in leaves]
    return vals, grads


def _close(a: np.ndarray, b: np.ndarray, what: str) -> None:
    assert a.shape == b.shape and a.dtype == b.dtype, what
    if a.dtype.kind == "f":
        scale = float(np.max(np.abs(b[np.isfinite(b)]), initial=1.0))
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-5 * scale, err_msg=what)
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


@pytest.mark.parametrize("info,sample", cases(OP_DB))
def test_gpu_matches_cpu(info: OpInfo, sample: Sample) -> None:
    """float32 values and gradients on "gpu" equal those on "cpu" to float32 tolerance."""
    cv, cg = _run(info, sample, "cpu")
    gv, gg = _run(info, sample, "gpu")
    assert len(cv) == len(gv)
    for k, (a, b) in enumerate(zip(gv, cv)):
        _close(a, b, f"output {k}")
    assert len(cg) == len(gg)
    for k, (a, b) in enumerate(zip(gg, cg)):
        assert (a is None) == (b is None), f"grad {k}"
        if a is not None:
            _close(a, b, f"grad of input {k}")


def test_op_table_runs_here() -> Any:
    assert len(cases(OP_DB)) > 300
