"""lucid.kernels.matmul against numpy's matmul, including the shared-weight single-GEMM path."""

from __future__ import annotations

import numpy as np
import pytest

from lucid.kernels.matmul import matmul


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "sa,sb",
    [
        ((3, 4), (4, 5)),
        ((2, 3, 4), (4, 5)),
        ((2, 3, 4), (2, 4, 5)),
        ((2, 3, 4), (1, 4, 5)),
        ((6, 2, 3, 4), (2, 4, 5)),
        ((2, 1, 3, 4), (5, 4, 2)),
        ((4,), (4, 5)),
        ((2, 3, 4), (4,)),
        ((0, 3, 4), (4, 5)),
        ((2, 0, 4), (4, 5)),
    ],
)
def test_matches_numpy(rng, dtype, sa, sb) -> None:
    a = rng.standard_normal(sa).astype(dtype)
    b = rng.standard_normal(sb).astype(dtype)
    got, exp = matmul(a, b), a @ b
    assert got.shape == exp.shape and got.dtype == exp.dtype
    np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-5)


def test_expanded_shared_weight_and_views(rng) -> None:
    a = rng.standard_normal((3, 5, 4))
    w = rng.standard_normal((4, 6))
    wb = np.broadcast_to(w, (3, 4, 6))  # batch dims expanded by the caller: stride 0
    np.testing.assert_allclose(matmul(a, wb), a @ w)
    at = rng.standard_normal((3, 4, 5)).transpose(0, 2, 1)
    np.testing.assert_allclose(matmul(at, wb), at @ w)
    np.testing.assert_allclose(matmul(a, w.T.copy().T), a @ w)


def test_shape_error_is_numpys(rng) -> None:
    with pytest.raises(ValueError):
        matmul(np.ones((2, 3, 4)), np.ones((5, 6)))


@pytest.mark.parametrize("ash,bsh", [((2, 3, 4), (4, 5)), ((2, 0, 4), (4, 5)), ((2, 3, 0), (0, 5)),
                                     ((0, 3, 4), (4, 5)), ((2, 3, 4, 6), (6, 2)),
                                     ((2, 3, 0), (1, 0, 5))])
def test_rows_times_a_matrix_and_empty_operands(ash, bsh) -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal(ash).astype(np.float32)
    b = rng.standard_normal(bsh).astype(np.float32)
    got = matmul(a, b)
    want = a @ b
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    bias = rng.standard_normal(bsh[-1]).astype(np.float32)
    np.testing.assert_allclose(matmul(a[..., ::-1, :], b, bias), a[..., ::-1, :] @ b + bias,
                               rtol=1e-5, atol=1e-5)
