"""``_vmath.wide``: the intrinsic that asks LLVM for 512-bit vectors in the loop calling it."""

from __future__ import annotations

import llvmlite.binding as ll
import numba
import numpy as np
import pytest

from lucid.kernels import _vmath
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



def test_fast_exp_over_float32_range() -> None:
    jexp = numba.njit(lambda v: fast_exp(v))
    x = np.linspace(-86.99, 88.3, 6001, dtype=np.float32)
    vals = np.array([jexp(v) for v in x], np.float32)
    np.testing.assert_allclose(vals, np.exp(x.astype(np.float64)), rtol=3.5e-7)
    assert [jexp(np.float32(v)) for v in (-np.inf, -100.0, -87.0, np.inf)] == [0, 0, 0, np.inf]
    assert np.isnan(jexp(np.float32(np.nan)))
    if _vmath._EXP32 is not _vmath._exp32_scalef:
        pytest.skip("the bit-built 2**k body: it overflows from ~88.4 (no AVX-512 or older LLVM)")
    top = np.linspace(88.3, 88.72, 401, dtype=np.float32)  # float32's largest exps stay finite
    got = np.array([jexp(v) for v in top], np.float32)
    np.testing.assert_allclose(got, np.exp(top.astype(np.float64)), rtol=3.5e-7)
    assert jexp(np.float32(88.73)) == np.inf
