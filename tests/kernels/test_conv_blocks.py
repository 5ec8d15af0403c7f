"""The conv GEMM kernels with images batched into one product per block (small feature maps),
serial and split over chunks, against the numpy reference (backend/_conv_ref.py)."""

from __future__ import annotations

import numpy as np
import pytest

from lucid.backend import _conv_ref as R
from lucid.kernels import conv as C

CASES = [  # N, C, H, W, OC, K, stride, pad, dilation, groups
    (5, 4, 4, 4, 6, 3, (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    (7, 4, 7, 5, 6, 3, (2, 1), ((1, 0), (2, 1)), (1, 2), 2),
    (3, 2, 6, 6, 4, 2, (2, 2), ((0, 0), (0, 0)), (2, 2), 1),
    (9, 8, 3, 3, 16, 1, (1, 1), ((0, 0), (0, 0)), (1, 1), 4),
    # through the tap table (_tap_index): DCGAN's 4x4 stride-2 layers, a valid 4x4 -> 1x1
    (4, 3, 8, 8, 5, 4, (2, 2), ((1, 1), (1, 1)), (1, 1), 1),
    (3, 6, 4, 4, 1, 4, (1, 1), ((0, 0), (0, 0)), (1, 1), 1),
    # stride 1, narrowed rows of >= 16: the row copies
    (2, 2, 20, 19, 3, 3, (1, 1), ((0, 0), (0, 0)), (1, 1), 1),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("chunks", [1, 2])
@pytest.mark.parametrize("block_cols", [1, 40, 512])
@pytest.mark.parametrize("transposed", [False, True])
def test_blocked_gemm_kernels_match_reference(rng, monkeypatch, case, chunks,
                                              block_cols, transposed) -> None:
    """Every pass against the reference; the weight gradient of blocks of images both ways,
    (OCg, CK) and transposed (CK, OCg)."""
    n, c, h, w, oc, k, s, p, d, g = case
    monkeypatch.setattr(C, "BLOCK_COLS", block_cols)
    monkeypatch.setattr(C, "_transposed_grad_weight", lambda *a: transposed)
    monkeypatch.setattr(C, "_split", lambda items, work, blas=True: min(chunks, items))
    x = rng.standard_normal((n, c, h, w))
    wt = rng.standard_normal((oc, c // g, k, k))
    b = rng.standard_normal(oc)
    y = C.conv2d(x, wt, b, s, p, d, g)
    np.testing.assert_allclose(y, R.conv2d(x, wt, b, s, p, d, g), rtol=1e-10, atol=1e-10)
    gy = rng.standard_normal(y.shape)
    np.testing.assert_allclose(C.conv2d_grad_input(gy, wt, x.shape, s, p, d, g),
                               R.conv2d_grad_input(gy, wt, x.shape, s, p, d, g),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(C.conv2d_grad_weight(x, gy, wt.shape, s, p, d, g),
                               R.conv2d_grad_weight(x, gy, wt.shape, s, p, d, g),
                               rtol=1e-10, atol=1e-10)


def test_transposed_grad_weight_rule() -> None:
    """Transposed where the columns are >= 4x the output channels and the product is small:
    DCGAN's 32->64 and 64->128 4x4 layers, not 1x1 convolutions nor wide 4x4 ones."""
    assert C._transposed_grad_weight(32 * 16, 64, 4 * 64)
    assert C._transposed_grad_weight(64 * 16, 128, 16 * 16)
    assert not C._transposed_grad_weight(128, 256, 4 * 64)  # 1x1
    assert not C._transposed_grad_weight(128 * 16, 256, 16 * 16)  # 512k products
    assert not C._transposed_grad_weight(128 * 16, 100, 16)  # 16 positions a block


def test_block_size() -> None:
    assert C._block(32, 2, 16) == 16  # a 4x4 map: the whole chunk in one product
    assert C._block(32, 1, 64) == 4
    assert C._block(32, 2, 1024) == 1
    assert C._block(3, 2, 4) == 2
