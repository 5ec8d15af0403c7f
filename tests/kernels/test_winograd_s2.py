"""Winograd F(2x2, 2x2) over the input's phases for 4x4, stride-2 convolutions (DCGAN's
layers): forward and weight gradient against the numpy reference (backend/_conv_ref.py),
serial and split over chunks, blocks of 1 to many images, odd maps and every padding from 0
to 2; which convolutions take the path; the conv kernels dispatch to it (the input gradient
stays on im2col); a float64 gradcheck through F.conv2d; torch parity through nn.Conv2d and
nn.ConvTranspose2d."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.backend import _conv_ref as R
from lucid.kernels import conv as C
from lucid.kernels import winograd as W

S2, D1 = (2, 2), (1, 1)

CASES = [  # N, C, K, H, W, padding ((top, bottom), (left, right))
    (3, 16, 32, 16, 16, ((1, 1), (1, 1))),   # DCGAN's geometry
    (2, 16, 20, 9, 11, ((0, 2), (2, 1))),    # odd maps, asymmetric padding: partial tiles
    (2, 17, 32, 8, 8, ((2, 2), (0, 0))),
    (4, 16, 33, 13, 12, ((1, 0), (1, 2))),
    (5, 16, 32, 4, 4, ((1, 1), (1, 1))),     # one 2x2 block of outputs
    (1, 16, 32, 2, 3, ((1, 1), (1, 1))),     # a map smaller than the window
]


def _inputs(rng, case, dtype):
    n, c, k, h, w, p = case
    (pt, pb), (pl, pr) = p
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    wt = rng.standard_normal((k, c, 4, 4)).astype(dtype)
    b = rng.standard_normal(k).astype(dtype)
    oh, ow = (h + pt + pb - 4) // 2 + 1, (w + pl + pr - 4) // 2 + 1
    gy = rng.standard_normal((n, k, oh, ow)).astype(dtype)
    return x, wt, b, p, gy


def _pair(x, w, b, p, gy):
    return W.forward_s2(x, w, b, p), W.grad_weight_s2(x, gy, p)


def _reference(x, w, b, p, gy):
    return R.conv2d(x, w, b, S2, p, D1, 1), R.conv2d_grad_weight(x, gy, w.shape, S2, p, D1, 1)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("chunks", [1, 2, 3])
@pytest.mark.parametrize("images, floats", [(1, 1), (2, 5000), (4, 300_000)])
def test_winograd_s2_matches_reference_float64(rng, monkeypatch, case, chunks, images,
                                               floats) -> None:
    monkeypatch.setattr(W, "S2_FORWARD_IMAGES", images)
    monkeypatch.setattr(W, "S2_BLOCK_GRAD_WEIGHT", floats)
    monkeypatch.setattr(W, "_split", lambda n, work: min(chunks, n))
    args = _inputs(rng, case, np.float64)
    for got, want in zip(_pair(*args), _reference(*args)):
        assert got.shape == want.shape and got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", CASES[:4] + [(2, 64, 128, 8, 8, ((1, 1), (1, 1)))])
def test_winograd_s2_float32_error_is_bounded(rng, case) -> None:
    """Coefficients 0 and +-1: float32 rounds like the direct sum (measured <= 7e-7 of the
    largest output)."""
    args32 = _inputs(rng, case, np.float32)
    args64 = tuple(a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args32)
    for got, want in zip(_pair(*args32), _reference(*args64)):
        assert got.dtype == np.float32
        assert np.abs(got - want).max() <= 2e-6 * np.abs(want).max()


P1 = ((1, 1), (1, 1))


@pytest.mark.parametrize(
    "w_shape, stride, padding, dilation, groups, out_hw, in_hw, gw, expected",
    [
        ((64, 32, 4, 4), S2, P1, D1, 1, (8, 8), (16, 16), False, True),    # DCGAN forward
        ((64, 32, 4, 4), S2, P1, D1, 1, (8, 8), (16, 16), True, False),    # 32 in: im2col
        ((128, 64, 4, 4), S2, P1, D1, 1, (16, 16), (32, 32), True, True),
        ((128, 64, 4, 4), S2, P1, D1, 1, (4, 4), (8, 8), False, False),    # 4x4 outputs
        ((128, 64, 4, 4), S2, P1, D1, 1, (4, 4), (8, 8), True, False),
        ((256, 128, 4, 4), S2, P1, D1, 1, (8, 8), (16, 16), False, False),  # wide forward
        ((256, 128, 4, 4), S2, P1, D1, 1, (8, 8), (16, 16), True, True),
        ((16, 16, 4, 4), S2, P1, D1, 1, (8, 8), (16, 16), False, False),   # 16 out
        ((32, 3, 4, 4), S2, P1, D1, 1, (16, 16), (32, 32), False, False),  # RGB input
        ((64, 32, 4, 4), S2, P1, D1, 1, (1, 1), (2, 2), False, False),     # one output
        ((64, 32, 3, 3), S2, P1, D1, 1, (8, 8), (16, 16), False, False),
        ((64, 32, 4, 4), (1, 1), P1, D1, 1, (15, 15), (16, 16), False, False),
        ((64, 32, 4, 4), S2, P1, (2, 2), 1, (7, 7), (16, 16), False, False),
        ((64, 16, 4, 4), S2, P1, D1, 2, (8, 8), (16, 16), False, False),
        ((64, 32, 4, 4), S2, ((3, 3), (1, 1)), D1, 1, (9, 8), (16, 16), False, False),
        # a transposed convolution's output_padding row: the window never reads it
        ((64, 32, 4, 4), S2, P1, D1, 1, (8, 8), (17, 16), False, True),
        ((64, 32, 4, 4), S2, P1, D1, 1, (9, 8), (16, 16), False, False),
    ],
)
def test_which_convolutions_take_the_s2_path(w_shape, stride, padding, dilation, groups,
                                             out_hw, in_hw, gw, expected) -> None:
    assert W.applies_s2(w_shape, stride, padding, dilation, groups, out_hw, in_hw,
                        gw) is expected


def _spy(monkeypatch) -> list[str]:
    calls: list[str] = []
    for name in ("forward_s2", "grad_weight_s2"):
        real = getattr(W, name)
        monkeypatch.setattr(W, name, lambda *a, _r=real, _n=name: calls.append(_n) or _r(*a))
    return calls


def test_conv_kernels_dispatch_to_s2(rng, monkeypatch) -> None:
    calls = _spy(monkeypatch)
    x, w, b, p, gy = _inputs(rng, (2, 64, 128, 16, 16, P1), np.float64)
    got = (C.conv2d(x, w, b, S2, p, D1, 1), C.conv2d_grad_input(gy, w, x.shape, S2, p, D1, 1),
           C.conv2d_grad_weight(x, gy, w.shape, S2, p, D1, 1))
    assert calls == ["forward_s2", "grad_weight_s2"]
    want = _reference(x, w, b, p, gy)
    want = (want[0], R.conv2d_grad_input(gy, w, x.shape, S2, p, D1, 1), want[1])
    for g, ref in zip(got, want):
        np.testing.assert_allclose(g, ref, rtol=1e-10, atol=1e-10)


def test_conv2d_gradcheck_through_s2(rng, monkeypatch) -> None:
    """float64 central differences through F.conv2d with both passes on this path."""
    monkeypatch.setattr(W, "S2_GRAD_WEIGHT_CHANNELS", 16)
    monkeypatch.setattr(W, "S2_MIN_OUTPUTS", 16)
    calls = _spy(monkeypatch)
    x = lucid.tensor(rng.standard_normal((1, 16, 8, 8)), requires_grad=True)
    w = lucid.tensor(rng.standard_normal((32, 16, 4, 4)) * 0.2, requires_grad=True)
    b = lucid.tensor(rng.standard_normal(32), requires_grad=True)
    r = lucid.tensor(rng.standard_normal((1, 32, 4, 4)))
    fn = lambda x, w, b: (lucid.nn.functional.conv2d(x, w, b, stride=2, padding=1)  # noqa: E731
                          * r).sum()
    assert lucid.autograd.gradcheck(fn, (x, w, b), atol=1e-6, rtol=1e-5)
    assert {"forward_s2", "grad_weight_s2"} <= set(calls)


@pytest.mark.parametrize("transposed", [False, True])
def test_dcgan_layers_on_s2_match_torch(rng, monkeypatch, transposed) -> None:
    """A DCGAN discriminator layer (Conv2d 64 -> 128) and generator layer (ConvTranspose2d
    128 -> 64: its input gradient is a stride-2 forward, its weight gradient the conv's),
    float32, against torch."""
    torch = pytest.importorskip("torch")
    calls = _spy(monkeypatch)
    cin, cout, hw = (128, 64, 8) if transposed else (64, 128, 16)
    cls_l = lucid.nn.ConvTranspose2d if transposed else lucid.nn.Conv2d
    cls_t = torch.nn.ConvTranspose2d if transposed else torch.nn.Conv2d
    lconv, tconv = cls_l(cin, cout, 4, 2, 1), cls_t(cin, cout, 4, 2, 1)
    with torch.no_grad():
        tconv.weight.copy_(torch.from_numpy(lconv.weight.detach().numpy()))
        tconv.bias.copy_(torch.from_numpy(lconv.bias.detach().numpy()))
    x = rng.standard_normal((8, cin, hw, hw)).astype(np.float32)
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
    assert sorted(calls) == ["forward_s2", "grad_weight_s2"]
