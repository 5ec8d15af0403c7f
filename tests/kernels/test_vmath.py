"""``_vmath.wide``: the intrinsic that asks LLVM for 512-bit vectors in the loop calling it."""

from __future__ import annotations

import llvmlite.binding as ll
import numba
import numpy as np
import pytest

from lucid.kernels._vmath import fast_exp, wide


def _exp_loop(x, out):
    for i in range(x.shape[0]):
        out[i] = fast_exp(x[i]) * np.float32(0.5)


def _exp_loop_wide(x, out):
    for i in range(x.shape[0]):
        wide()
        out[i] = fast_exp(x[i]) * np.float32(0.5)


def test_wide_changes_vector_width_not_results() -> None:
    plain = numba.njit(fastmath=True)(_exp_loop)
    wided = numba.njit(fastmath=True)(_exp_loop_wide)
    x = np.linspace(-30, 30, 1003, dtype=np.float32)  # not a multiple of any vector width
    a, b = np.empty_like(x), np.empty_like(x)
    plain(x, a)
    wided(x, b)
    np.testing.assert_allclose(b, 0.5 * np.exp(x.astype(np.float64)), rtol=3e-7)
    np.testing.assert_allclose(b, a, rtol=2e-7)
    if "+avx512f" not in ll.get_host_cpu_features().flatten():
        pytest.skip("no AVX-512 on this CPU: 512-bit vectors do not exist here")
    asm = wided.inspect_asm(wided.signatures[0])
    assert "zmm" in asm  # the attribute reached LLVM's vectoriser

