"""The fused pointwise activation kernels against float64 numpy references, torch's values
at NaN and infinities, and the composed reference of every backend."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
from lucid.kernels import pointwise as P

PARAMS = {"softplus": (1.5, 10.0), "elu": (0.7, 1.0507, 0.5), "hardtanh": (-1.5, 2.0)}


def _sig(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _sp(z):
    return np.logaddexp(0, z)


def _ref(name: str, x: np.ndarray, p: tuple) -> np.ndarray:
    """float64 numpy formulas, written independently of the kernels'."""
    if name == "exp":
        return np.exp(x)
    if name == "log":
        return np.log(x)
    if name == "log1p":
        return np.log1p(x)
    if name == "expm1":
        return np.expm1(x)
    if name == "sigmoid":
        return _sig(x)
    if name == "tanh":
        return np.tanh(x)
    if name == "silu":
        return x * _sig(x)
    if name == "mish":
        return x * np.tanh(_sp(x))
    if name == "softplus":
        beta, th = p
        return np.where(x * beta > th, x, _sp(x * beta) / beta)
    if name == "logsigmoid":
        return -_sp(-x)
    if name == "elu":
        a, s, i = p
        return s * np.where(x <= 0, a * np.expm1(x * i), x)
    if name == "hardswish":
        return x * np.clip(x + 3, 0, 6) / 6
    if name == "hardsigmoid":
        return np.clip(x + 3, 0, 6) / 6
    lo, hi = p
    return np.clip(x, lo, hi)


def _dref(name: str, x: np.ndarray, p: tuple) -> np.ndarray:
    """f'(x) in float64."""
    s = _sig(x)
    if name == "silu":
        return s * (1 + x * (1 - s))
    if name == "mish":
        t = np.tanh(_sp(x))
        return t + x * s * (1 - t * t)
    if name == "softplus":
        beta, th = p
        return np.where(x * beta > th, 1.0, _sig(x * beta))
    if name == "logsigmoid":
        return 1 - s
    if name == "elu":
        a, sc, i = p
        return sc * np.where(x <= 0, a * i * np.exp(x * i), 1.0)
    if name == "hardswish":
        return np.where(x <= -3, 0.0, np.where(x < 3, x / 3 + 0.5, 1.0))
    if name == "hardsigmoid":
        return np.where((x > -3) & (x < 3), 1 / 6, 0.0)
    lo, hi = p
    return np.where((x <= lo) | (x >= hi), 0.0, 1.0)


def _inputs(rng, n: int = 3000) -> np.ndarray:
    """Normal values spread over +-30, the branch points exactly, and tiny magnitudes."""
    x = rng.standard_normal(n) * 8
    x[:40] = [-3, 3, -1.5, 2, 0, -0.0, 10 / 1.5, 20, -20, 30, -30, 88, -88, 1e-4, -1e-4,
              1e-8, -1e-8, 0.49, -0.49, 0.51, -0.51, 15, -15, 9, -9, 17, -17, 6.6, 6.7, -2.99,
              2.99, -3.01, 3.01, 1.99, 2.01, -1.49, -1.51, 100, -100, 0.25]
    return x


@pytest.mark.parametrize("name", sorted(P.KINDS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_and_backward_match_float64_references(build, rng, name, dtype) -> None:
    p = PARAMS.get(name, ())
    x64 = _inputs(rng).astype(dtype).astype(np.float64)  # the values the kernel sees
    x = x64.astype(dtype).reshape(30, 100)
    with np.errstate(all="ignore"):  # log of negatives, exp beyond float32's range
        want = _ref(name, x64, p).astype(dtype).astype(np.float64)
    got = P.forward(name, x, p)
    assert got.shape == x.shape and got.dtype == dtype
    # float32: the exp/log1p polynomials are ~1e-7 relative, and the float32 rounding of a
    # scaled argument (softplus's beta x, elu's x / alpha) costs up to |z| 6e-8 more; below
    # 1e-30 (subnormals of exp(-88) inside softplus) absolute
    rtol, atol = (1e-13, 1e-300) if dtype == np.float64 else (4e-6, 1e-30)
    np.testing.assert_allclose(got.ravel(), want, rtol=rtol, atol=atol)
    if name in P.GRADS:
        g = rng.standard_normal(x.shape).astype(dtype)
        want_g = g.astype(np.float64).ravel() * _dref(name, x64, p)
        got_g = P.backward(name, x, g, p)
        assert got_g.dtype == dtype
        scale = np.abs(g.astype(np.float64).ravel()) * (1 + np.abs(x64))  # f' cancels near 0
        tol = 1e-13 if dtype == np.float64 else 1e-6
        assert np.all(np.abs(got_g.ravel() - want_g) <= tol * scale + 1e-30)


# torch 2.13's values (float64 and float32 alike) at NaN, +inf and -inf: f, then f'
NONFINITE = {
    "exp": ([math.nan, math.inf, 0], None),
    "log": ([math.nan, math.inf, math.nan], None),
    "log1p": ([math.nan, math.inf, math.nan], None),
    "expm1": ([math.nan, math.inf, -1], None),
    "sigmoid": ([math.nan, 1, 0], None),
    "tanh": ([math.nan, 1, -1], None),
    "silu": ([math.nan, math.inf, math.nan], [math.nan, math.nan, math.nan]),
    "mish": ([math.nan, math.inf, math.nan], [math.nan, math.nan, math.nan]),
    "softplus": ([math.nan, math.inf, 0], [math.nan, 1, 0]),
    "logsigmoid": ([math.nan, 0, -math.inf], [math.nan, 0, 1]),
    "elu": ([math.nan, math.inf, -0.7 * 1.0507], [1.0507, 1.0507, 0]),
    "hardswish": ([math.nan, math.inf, math.nan], [1, 1, 0]),
    "hardsigmoid": ([math.nan, 1, 0], [0, 0, 0]),
    "hardtanh": ([math.nan, 2.0, -1.5], [1, 0, 0]),
}


@pytest.mark.parametrize("name", sorted(P.KINDS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_and_infinities_as_torch(build, name, dtype) -> None:
    p = PARAMS.get(name, ())
    x = np.array([math.nan, math.inf, -math.inf], dtype)
    want, dwant = NONFINITE[name]
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(P.forward(name, x, p), np.array(want, dtype), rtol=1e-6)
        if dwant is not None:
            np.testing.assert_allclose(P.backward(name, x, np.ones_like(x), p),
                                       np.array(dwant, dtype), rtol=1e-6)


def test_kernels_take_strided_inputs_and_decline_others(rng) -> None:
    x = rng.standard_normal((6, 8)).astype(np.float32)
    np.testing.assert_array_equal(P.forward("silu", x.T), P.forward("silu", x).T)
    np.testing.assert_array_equal(P.backward("mish", x.T, x.T), P.backward("mish", x, x).T)
    assert P.forward("silu", x.astype(np.float16)) is None
    assert P.forward("silu", np.arange(4)) is None
    assert P.backward("silu", x, x.astype(np.float64)) is None
    assert P.backward("silu", x, x[:3]) is None
    assert P.forward("silu", np.empty((0, 3), np.float32)).shape == (0, 3)
    with pytest.raises(TypeError, match="softplus takes 2 parameters"):
        P.forward("softplus", x)
    with pytest.raises(ValueError, match="no input-side gradient"):
        P.backward("sigmoid", x, x)


def test_torch_parity_of_the_functional_ops(rng) -> None:
    """``lucid.nn.functional`` (these kernels on "cpu") against torch, value and gradient,
    float32, over the parameter forms torch offers."""
    torch = pytest.importorskip("torch")
    x = (rng.standard_normal((64, 33)) * 6).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    cases = [("silu", {}), ("mish", {}), ("softplus", {}),
             ("softplus", dict(beta=2.0, threshold=5.0)), ("logsigmoid", {}),
             ("elu", dict(alpha=0.5)), ("selu", {}), ("celu", dict(alpha=2.0)),
             ("hardswish", {}), ("hardsigmoid", {}), ("hardtanh", dict(min_val=-2.0, max_val=0.5)),
             ("relu6", {}), ("sigmoid", {}), ("tanh", {})]
    for name, kw in cases:
        a = lucid.tensor(x, requires_grad=True)
        t = torch.tensor(x, requires_grad=True)
        f = getattr(lucid.nn.functional, name)
        ft = getattr(torch.nn.functional, name)
        y, yt = f(a, **kw), ft(t, **kw)
        y.backward(lucid.tensor(g))
        yt.backward(torch.tensor(g))
        np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=2e-6, atol=1e-6,
                                   err_msg=name)
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=2e-5, atol=2e-6,
                                   err_msg=name)


def test_float32_exp_and_log_over_their_whole_range() -> None:
    """exp from its subnormal results to its largest finite ones and log of subnormal,
    normal and huge inputs, within 4e-7 of float64 (numpy's float32 results rounded
    differently by a few ulps at most), with numpy's 0, inf and NaN."""
    x = np.linspace(-110, 90, 200001).astype(np.float32)
    got, want = P.forward("exp", x), np.exp(x.astype(np.float64))
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(got, want.astype(np.float32), rtol=4e-7, atol=3e-45)
    assert got[x > 88.73].tolist() == [math.inf] * int((x > 88.73).sum())
    assert np.isfinite(P.forward("exp", np.array([88.72], np.float32))).all()
    y = np.concatenate([np.logspace(-45, 38.5, 100001), [1.0, 2.0, 0.5]]).astype(np.float32)
    y = y[y > 0]
    got = P.forward("log", y).astype(np.float64)
    want = np.log(y.astype(np.float64))
    assert np.all(np.abs(got - want) <= 1.2e-7 * np.abs(want) + 1e-7)
    assert got[-3] == 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        special = np.array([0.0, -0.0, -1.0, -math.inf], np.float32)
        np.testing.assert_array_equal(P.forward("log", special), np.log(special))


def test_float32_log1p_and_expm1_keep_tiny_arguments_exact() -> None:
    """log1p and expm1 near 0 (where 1 + x and exp(x) - 1 would cancel) and over their whole
    range, within 2.5e-7 of float64; log1p(-1) = -inf, below -1 NaN."""
    tiny = np.concatenate([np.logspace(-38, 0, 20001), -np.logspace(-38, np.log10(0.999), 20001)])
    x = np.concatenate([tiny, np.linspace(-0.999, 50, 20001), np.logspace(0, 38, 2001)])
    x = x.astype(np.float32)
    got = P.forward("log1p", x).astype(np.float64)
    want = np.log1p(x.astype(np.float64))
    assert np.all(np.abs(got - want) <= 2.5e-7 * np.abs(want) + 1e-45)
    with np.errstate(divide="ignore", invalid="ignore"):
        special = np.array([-1.0, -2.0], np.float32)
        np.testing.assert_array_equal(P.forward("log1p", special), np.log1p(special))
    y = np.concatenate([tiny, np.linspace(-110, 88.7, 20001)]).astype(np.float32)
    got = P.forward("expm1", y).astype(np.float64)
    want = np.expm1(y.astype(np.float64))
    assert np.all(np.abs(got - want) <= 4e-7 * np.abs(want) + 1e-45)
