"""Winograd F(2x2, 3x3) and F(4x4, 3x3) convolution kernels against the numpy reference
(backend/_conv_ref.py): forward, grad input and grad weight, serial and split over chunks,
blocks of images, odd map sizes and every padding from 0 to 2; which convolutions take the
path and which algorithm; the conv kernels dispatch to it; and torch parity through
nn.Conv2d."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.backend import _conv_ref as R
from lucid.kernels import conv as C
from lucid.kernels import winograd as W

S1, D1 = (1, 1), (1, 1)

CASES = [  # N, C, K, H, W, padding ((top, bottom), (left, right))
    (3, 16, 16, 8, 8, ((1, 1), (1, 1))),
    (2, 16, 20, 9, 7, ((1, 1), (1, 1))),     # odd maps: partial tiles
    (4, 17, 16, 10, 12, ((0, 0), (0, 0))),   # valid convolution
    (2, 16, 16, 9, 11, ((2, 1), (0, 2))),    # asymmetric padding
    (5, 16, 18, 3, 4, ((2, 2), (2, 2))),     # map smaller than the window's reach
    (1, 24, 16, 1, 1, ((1, 1), (1, 1))),     # a single pixel
]


def _call(x, w, b, p, gy):
    return (W.forward(x, w, b, p), W.grad_input(gy, w, x.shape, p), W.grad_weight(x, gy, p))


# F43_MIN_SIDE, F43_WIDE that force one algorithm on every map
ALGORITHMS = {"F(2x2,3x3)": (10**9, 10**9), "F(4x4,3x3)": (1, 1)}


def _force(monkeypatch, algorithm):
    side, wide = ALGORITHMS[algorithm]
    monkeypatch.setattr(W, "F43_MIN_SIDE", side)
    monkeypatch.setattr(W, "F43_WIDE", wide)


def _reference(x, w, b, p, gy):
    return (R.conv2d(x, w, b, S1, p, D1, 1), R.conv2d_grad_input(gy, w, x.shape, S1, p, D1, 1),
            R.conv2d_grad_weight(x, gy, w.shape, S1, p, D1, 1))


def _inputs(rng, case, dtype):
    n, c, k, h, w, p = case
    (pt, pb), (pl, pr) = p
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    wt = rng.standard_normal((k, c, 3, 3)).astype(dtype)
    b = rng.standard_normal(k).astype(dtype)
    gy = rng.standard_normal((n, k, h + pt + pb - 2, w + pl + pr - 2)).astype(dtype)
    return x, wt, b, p, gy


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("chunks", [1, 2, 3])
@pytest.mark.parametrize("block_tiles", [1, 16, 256])
def test_winograd_matches_reference_float64(rng, monkeypatch, algorithm, case, chunks,
                                            block_tiles) -> None:
    _force(monkeypatch, algorithm)
    monkeypatch.setattr(W, "BLOCK_TILES", block_tiles)
    monkeypatch.setattr(W, "_split", lambda n, work: min(chunks, n))
    args = _inputs(rng, case, np.float64)
    for got, want in zip(_call(*args), _reference(*args)):
        assert got.shape == want.shape and got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


# float32 error bound per algorithm, relative to the largest output: F(2x2, 3x3)'s transforms
# round like the direct sum; F(4x4, 3x3)'s (coefficients up to 8 and 1/24) measured ~7e-6
# on 64-256 channels, ~20x F(2x2, 3x3)'s
FLOAT32_BOUND = {"F(2x2,3x3)": 2e-6, "F(4x4,3x3)": 2.5e-5}


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("case", CASES[:4] + [(2, 64, 64, 16, 16, ((1, 1), (1, 1)))])
def test_winograd_float32_error_is_bounded(rng, monkeypatch, algorithm, case) -> None:
    _force(monkeypatch, algorithm)
    args32 = _inputs(rng, case, np.float32)
    args64 = tuple(a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args32)
    for got, want in zip(_call(*args32), _reference(*args64)):
        assert got.dtype == np.float32
        assert np.abs(got - want).max() <= FLOAT32_BOUND[algorithm] * np.abs(want).max()


@pytest.mark.parametrize(
    "oh, ow, k, c, expected",
    [(32, 32, 64, 64, 36), (14, 14, 32, 16, 36), (12, 40, 16, 16, 36), (11, 32, 512, 512, 36),
     (11, 32, 64, 64, 16), (8, 8, 256, 256, 36), (8, 8, 64, 64, 16), (8, 8, 128, 64, 16),
     (4, 4, 512, 512, 16), (7, 7, 512, 512, 16)],
)
def test_which_algorithm_takes_a_map(oh, ow, k, c, expected) -> None:
    """F(4x4, 3x3) from 12 outputs a side, or 8 for layers of 128+ channels each way."""
    assert W.planes(oh, ow, k, c) == expected


def test_winograd_bias_none_and_strided_inputs(rng) -> None:
    x = rng.standard_normal((2, 8, 16, 10)).transpose(0, 2, 3, 1)[:, :, :, ::2]  # (2,16,10,4)
    x = x.transpose(0, 1, 3, 2)  # a strided (2, 16, 4, 10) view
    w = rng.standard_normal((16, 16, 3, 3))
    p = ((1, 1), (1, 1))
    np.testing.assert_allclose(W.forward(x, w, None, p), R.conv2d(x, w, None, S1, p, D1, 1),
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    "w_shape, stride, padding, dilation, groups, out_hw, in_hw, gi, expected",
    [
        ((64, 64, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1, (8, 8), (8, 8), False, True),
        ((64, 64, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1, (8, 8), (8, 8), True, True),
        ((16, 16, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1, (8, 8), (8, 8), False, True),
        ((16, 16, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1, (8, 8), (8, 8), True, False),
        ((64, 64, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1, (4, 4), (4, 4), False, False),
        ((256, 256, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1, (4, 4), (4, 4), True, True),
        ((512, 256, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1, (2, 2), (2, 2), False, False),
        ((64, 64, 3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), 1, (8, 8), (16, 16), False, False),
        ((64, 64, 3, 3), (1, 1), ((2, 2), (2, 2)), (2, 2), 1, (8, 8), (8, 8), False, False),
        ((64, 32, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 2, (8, 8), (8, 8), False, False),
        ((64, 64, 5, 5), (1, 1), ((2, 2), (2, 2)), (1, 1), 1, (8, 8), (8, 8), False, False),
        ((64, 64, 3, 3), (1, 1), ((3, 3), (1, 1)), (1, 1), 1, (12, 8), (8, 8), False, False),
        ((8, 64, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1, (8, 8), (8, 8), False, False),
        # a transposed convolution's larger output (rows no window reaches) stays on im2col
        ((64, 64, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1, (8, 8), (9, 8), True, False),
    ],
)
def test_which_convolutions_take_the_winograd_path(w_shape, stride, padding, dilation, groups,
                                                   out_hw, in_hw, gi, expected) -> None:
    assert W.applies(w_shape, stride, padding, dilation, groups, out_hw, in_hw, gi) is expected


def test_conv_kernels_dispatch_to_winograd(rng, monkeypatch) -> None:
    calls: list[str] = []
    for name in ("forward", "grad_input", "grad_weight"):
        real = getattr(W, name)
        monkeypatch.setattr(W, name, lambda *a, _r=real, _n=name: calls.append(_n) or _r(*a))
    x, w, b, p, gy = _inputs(rng, (2, 64, 64, 8, 8, ((1, 1), (1, 1))), np.float64)
    got = (C.conv2d(x, w, b, S1, p, D1, 1), C.conv2d_grad_input(gy, w, x.shape, S1, p, D1, 1),
           C.conv2d_grad_weight(x, gy, w.shape, S1, p, D1, 1))
    assert calls == ["forward", "grad_input", "grad_weight"]
    for g, want in zip(got, _reference(x, w, b, p, gy)):
        np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-10)
    calls.clear()
    C.conv2d(x, w, b, (2, 2), p, D1, 1)  # strided: im2col
    assert calls == []


def test_conv2d_layer_on_winograd_matches_torch(rng) -> None:
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((4, 32, 12, 12)).astype(np.float32)
    lconv = lucid.nn.Conv2d(32, 64, 3, padding=1)
    tconv = torch.nn.Conv2d(32, 64, 3, padding=1)
    with torch.no_grad():
        tconv.weight.copy_(torch.from_numpy(lconv.weight.detach().numpy()))
        tconv.bias.copy_(torch.from_numpy(lconv.bias.detach().numpy()))
    lx = lucid.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    ly, ty = lconv(lx), tconv(tx)
    g = rng.standard_normal(ly.shape).astype(np.float32)
    ly.backward(lucid.tensor(g))
    ty.backward(torch.from_numpy(g))
    np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(lconv.weight.grad.numpy(), tconv.weight.grad.numpy(),
                               rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_conv2d_gradcheck_through_winograd(rng, monkeypatch, algorithm) -> None:
    """float64 central differences through F.conv2d on the Winograd path (every pass)."""
    _force(monkeypatch, algorithm)
    monkeypatch.setattr(W, "MIN_CHANNELS_GRAD_INPUT", 16)
    calls: list[str] = []
    for name in ("forward", "grad_input", "grad_weight"):
        real = getattr(W, name)
        monkeypatch.setattr(W, name, lambda *a, _r=real, _n=name: calls.append(_n) or _r(*a))
    x = lucid.tensor(rng.standard_normal((1, 16, 8, 8)), requires_grad=True)
    w = lucid.tensor(rng.standard_normal((16, 16, 3, 3)) * 0.2, requires_grad=True)
    b = lucid.tensor(rng.standard_normal(16), requires_grad=True)
    r = lucid.tensor(rng.standard_normal((1, 16, 8, 8)))
    fn = lambda x, w, b: (lucid.nn.functional.conv2d(x, w, b, padding=1) * r).sum()  # noqa: E731
    assert lucid.autograd.gradcheck(fn, (x, w, b), atol=1e-6, rtol=1e-5)
    assert {"forward", "grad_input", "grad_weight"} <= set(calls)
