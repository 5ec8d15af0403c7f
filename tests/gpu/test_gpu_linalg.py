"""The linear-algebra helpers of ``tests/test_linalg.py`` (tril/triu, diag, trace, addmm,
lerp, einsum) on the "gpu" device: float32 values and gradients against "cpu", and float64
gradchecks where the gpu stream has float64."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from gpu_util import same

import lucid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_linalg import CASES  # noqa: E402


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_linalg_gpu_matches_cpu(name: str, fn: object, arrays: tuple) -> None:
    same(lambda *xs: fn(lucid, *xs), *[np.asarray(a, np.float32) for a in arrays])


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_linalg_gradcheck_on_gpu(name: str, fn: object, arrays: tuple) -> None:
    ts = [lucid.tensor(a, requires_grad=True, device="gpu") for a in arrays]
    assert lucid.autograd.gradcheck(lambda *xs: fn(lucid, *xs), ts)
