"""The math tail (``lucid.ops.math_extra``, ``reduce_extra``, ``layout_extra``): values against
numpy (always) and torch (where installed), float64 gradchecks, and torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
from devices import DEVICES

import lucid
from lucid.autograd import gradcheck

RNG = np.random.default_rng(7)
X = np.array([[-2.5, -0.0, 0.0, 0.3, 1.7, np.inf, -np.inf, np.nan]])
Y = np.array([[1.0, -1.0, -1.0, 2.0, -0.5, 1.0, 3.0, 1.0]])

BINARY = {  # name: numpy reference
    "atan2": np.arctan2, "hypot": np.hypot, "logaddexp": np.logaddexp,
    "logaddexp2": np.logaddexp2, "copysign": np.copysign, "fmax": np.fmax, "fmin": np.fmin,
    "nextafter": np.nextafter, "xlogy": lambda a, b: np.where(
        (a == 0) & ~np.isnan(b), 0.0, a * np.log(np.where(a == 0, 1.0, b))),
}
UNARY = {
    "deg2rad": np.deg2rad, "rad2deg": np.rad2deg, "exp2": np.exp2, "sinc": np.sinc,
    "signbit": np.signbit, "isposinf": np.isposinf, "isneginf": np.isneginf, "i0": np.i0,
    "frac": lambda a: a - np.trunc(a), "asinh": np.arcsinh,
}


def _t(a: np.ndarray, backend: str = "cpu") -> lucid.Tensor:
    return lucid.tensor(a, device=backend)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_against_numpy(name, backend):
    out = getattr(lucid, name)(_t(X, backend), _t(Y, backend)).numpy()
    np.testing.assert_allclose(out, BINARY[name](X, Y), rtol=1e-12, equal_nan=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_against_numpy(name, backend):
    x = X[np.isfinite(X)].reshape(1, -1) if name == "i0" else X
    out = getattr(lucid, name)(_t(x, backend)).numpy()
    np.testing.assert_allclose(out, UNARY[name](x), rtol=1e-12, equal_nan=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", sorted(BINARY) + sorted(UNARY) + [
    "sgn", "logit", "acosh", "atanh", "isreal", "heaviside"])
def test_against_torch(name, torch):
    x, y = X, Y
    if name == "acosh":
        x = np.abs(X) + 1
    if name == "i0":
        x = X[np.isfinite(X)].reshape(1, -1)
    two = name in BINARY or name == "heaviside"
    args = (x, y) if two else (x,)
    out = getattr(lucid, name)(*(lucid.tensor(a) for a in args))
    ref = getattr(torch, name)(*(torch.tensor(a) for a in args))
    assert str(out.dtype).split(".")[1] == str(ref.dtype).split(".")[1]
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name,args", [
    ("atan2", 2), ("hypot", 2), ("logaddexp", 2), ("logaddexp2", 2), ("xlogy", 2),
    ("copysign", 2), ("logit", 1), ("sinc", 1), ("acosh", 1), ("asinh", 1), ("atanh", 1),
    ("exp2", 1), ("deg2rad", 1), ("frac", 1), ("fmax", 2), ("fmin", 2),
])
def test_gradcheck(name, args):
    lo, hi = {"acosh": (1.2, 3.0), "atanh": (-0.8, 0.8), "logit": (0.1, 0.9),
              "xlogy": (0.2, 2.0)}.get(name, (-2.0, 2.0))
    ins = [lucid.tensor(RNG.uniform(lo, hi, (3, 4)), requires_grad=True) for _ in range(args)]
    assert gradcheck(getattr(lucid, name), tuple(ins))


def test_integer_functions(torch):
    a, b = np.array([12, -18, 0, 7]), np.array([8, 12, 0, 21])
    assert lucid.gcd(lucid.tensor(a), lucid.tensor(b)).tolist() == np.gcd(a, b).tolist()
    assert lucid.lcm(lucid.tensor(a), lucid.tensor(b)).tolist() == \
        torch.lcm(torch.tensor(a), torch.tensor(b)).tolist()
    with pytest.raises(RuntimeError, match="\"gcd_cpu\" not implemented for 'Float'"):
        lucid.gcd(lucid.tensor([1.0]), lucid.tensor([2.0]))
    with pytest.raises(RuntimeError, match="\"frac_cpu\" not implemented for 'Long'"):
        lucid.frac(lucid.tensor([1]))
    m, e = lucid.frexp(lucid.tensor([-2.5, 0.3, 8.0]))
    assert e.dtype is lucid.int32 and np.allclose((m * 2.0 ** e.double()).numpy(),
                                                  [-2.5, 0.3, 8.0])
    assert lucid.float_power(lucid.tensor([2, 3]), 2).dtype is lucid.float64


# ---- reductions ---------------------------------------------------------------------------------


def _nan_data() -> np.ndarray:
    x = RNG.standard_normal((4, 7))
    x[1, 2] = np.nan
    x[3, :] = np.nan
    return x


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_reductions_against_numpy(backend):
    x = _nan_data()
    t = _t(x, backend)
    np.testing.assert_allclose(lucid.nansum(t, 1).numpy(), np.nansum(x, 1))
    np.testing.assert_allclose(lucid.nanmean(t, 0).numpy(), np.nanmean(x, 0))
    np.testing.assert_allclose(lucid.nanquantile(t, 0.3, dim=1).numpy(),
                               np.nanquantile(x, 0.3, axis=1), equal_nan=True)
    assert lucid.count_nonzero(lucid.tensor([[0, 1, 2], [0, 0, 3]]), 1).tolist() == [2, 1]


@pytest.mark.parametrize("interp", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_against_numpy(interp):
    x = RNG.standard_normal((5, 9))
    q = np.array([0.1, 0.5, 0.95])
    out = lucid.quantile(lucid.tensor(x), lucid.tensor(q), dim=1, keepdim=True,
                         interpolation=interp)
    ref = np.quantile(x, q, axis=1, keepdims=True, method=interp)
    np.testing.assert_allclose(out.numpy(), ref)
    np.testing.assert_allclose(lucid.quantile(lucid.tensor(x), 0.4, interpolation=interp)
                               .numpy(), np.quantile(x, 0.4, method=interp))


def test_quantile_gradcheck_and_errors():
    x = lucid.tensor(RNG.standard_normal((3, 6)), requires_grad=True)
    assert gradcheck(lambda t: lucid.quantile(t, 0.35, dim=1), (x,))
    with pytest.raises(RuntimeError, match=r"q must be in the range \[0, 1\] but got 1.5"):
        lucid.quantile(x, 1.5)
    with pytest.raises(RuntimeError, match=r"q values must be in the range \[0, 1\]"):
        lucid.quantile(x, lucid.tensor([0.5, 1.5]))
    with pytest.raises(RuntimeError, match="input tensor must be either float or double"):
        lucid.quantile(lucid.tensor([1, 2]), 0.5)


def test_reductions_against_torch(torch):
    x, y = _nan_data(), RNG.standard_normal((4, 7))
    fw, aw = np.array([1, 2, 1, 3, 1, 1, 2]), RNG.random(7)
    L, T = lucid.tensor, torch.tensor
    pairs = [
        (lucid.nanmedian(L(x), 1).values, torch.nanmedian(T(x), 1).values),
        (lucid.nanmedian(L(x)), torch.nanmedian(T(x))),
        (lucid.quantile(L(y), L(np.array([0.25, 0.75])), dim=0),
         torch.quantile(T(y), T(np.array([0.25, 0.75])), dim=0)),
        (lucid.cov(L(y)), torch.cov(T(y))),
        (lucid.cov(L(y), correction=0, fweights=L(fw), aweights=L(aw)),
         torch.cov(T(y), correction=0, fweights=T(fw), aweights=T(aw))),
        (lucid.corrcoef(L(y)), torch.corrcoef(T(y))),
        (lucid.dist(L(y), L(y[::-1].copy()), 3), torch.dist(T(y), T(y[::-1].copy()), 3)),
        (lucid.renorm(L(y), 2, 0, 2.0), torch.renorm(T(y), 2, 0, 2.0)),
        (lucid.msort(L(y)), torch.msort(T(y))),
        (lucid.aminmax(L(y), dim=1).max, torch.aminmax(T(y), dim=1).max),
    ]
    for a, b in pairs:
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, equal_nan=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("device", DEVICES)
def test_nan_reduction_gradients_at_nan(device):
    """torch's nansum backward is ``grad * (x is not NaN)``: 0 at a NaN for a finite grad,
    NaN for a non-finite one, so nanmean of an all-NaN slice (0 / 0) has NaN gradients."""
    nan, inf = np.nan, np.inf
    x = np.array([[nan, 1.0, 2.0], [nan, nan, nan], [1.0, 2.0, 3.0]])
    t = lucid.tensor(x, device=device, requires_grad=True)
    lucid.nansum(t, 1).backward(lucid.tensor([inf, 1.0, nan], device=device))
    np.testing.assert_array_equal(t.grad.numpy(), [[nan, inf, inf], [0, 0, 0], [nan] * 3])
    t.grad = None
    lucid.nanmean(t, 1).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), [[0, 0.5, 0.5], [nan] * 3, [1 / 3] * 3],
                               rtol=1e-12)
    t.grad = None
    lucid.nanmean(t).backward()
    np.testing.assert_allclose(t.grad.numpy(), np.where(np.isnan(x), 0, 0.2), rtol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_reduction_gradients_match_torch(torch):
    nan, inf = np.nan, np.inf
    x = np.array([[nan, 1.0, 2.0], [nan, nan, nan], [1.0, 2.0, 3.0]])
    for name, kw, g in [("nansum", {"dim": 1}, [inf, 1.0, nan]), ("nansum", {}, inf),
                        ("nanmean", {"dim": 1}, [1.0, 2.0, 3.0]), ("nanmean", {"dim": 0}, 1.0),
                        ("nanmean", {}, -1.0)]:
        t, r = lucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        y, yr = getattr(lucid, name)(t, **kw), getattr(torch, name)(r, **kw)
        y.backward(lucid.tensor(np.broadcast_to(g, y.shape).copy()))
        yr.backward(torch.tensor(np.broadcast_to(g, yr.shape).copy()))
        np.testing.assert_allclose(t.grad.numpy(), r.grad.numpy(), rtol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("device", DEVICES)
def test_renorm_gradient_passes_unscaled_slices_exactly(device):
    """torch's renorm backward selects: a slice whose norm is not above maxnorm (a NaN norm
    included) gets ``grad`` exactly, whatever its norm's gradient would hold; a scaled one
    differentiates the scale too. The result is row-major for a transposed input."""
    nan, inf = np.nan, np.inf
    x = np.array([[1.0, 2.0, inf, 0.5], [0.1, 0.2, 0.3, 0.1], [nan, 1.0, 1.0, 1.0],
                  [3.0, 0.0, 4.0, 0.0]])
    t = lucid.tensor(x, device=device, requires_grad=True)
    y = lucid.renorm(t, 2, 0, 1.0)
    g = np.arange(16.0).reshape(4, 4) / 8
    y.backward(lucid.tensor(g, device=device))
    out, grad = y.detach().numpy(), t.grad.numpy()
    np.testing.assert_array_equal(np.isnan(out[0]), [False, False, True, False])
    np.testing.assert_allclose(out[1:3], x[1:3], rtol=1e-12)
    np.testing.assert_allclose(grad[1:3], g[1:3], rtol=1e-12)  # unscaled, NaN norm included
    assert np.isnan(grad[0]).all()
    n = 5.0  # row 3: scale s = 1 / (n + 1e-7), d(x s) = s g - s^2 x (x . g) / n
    s = 1 / (n + 1e-7)
    np.testing.assert_allclose(out[3], x[3] * s, rtol=1e-12)
    np.testing.assert_allclose(grad[3], s * g[3] - s * s * x[3] * (x[3] @ g[3]) / n,
                               rtol=1e-10)
    tt = lucid.tensor(x[1:].T.copy(), device=device).t()
    r = lucid.renorm(tt, 2, 0, 0.5)
    assert r.is_contiguous()
    norms = np.linalg.norm(x[1:], axis=1, keepdims=True)
    np.testing.assert_allclose(r.view(-1).numpy(), (x[1:] * np.where(
        norms > 0.5, 0.5 / (norms + 1e-7), 1.0)).reshape(-1), rtol=1e-12)


def test_renorm_gradcheck_and_second_derivative():
    x = lucid.tensor(RNG.standard_normal((3, 4)) * 2, requires_grad=True)
    for p in (1.0, 2.0, 3.0, 0.5):
        assert gradcheck(lambda t, p=p: lucid.renorm(t, p, 1, 1.0), (x,))
    assert lucid.autograd.gradgradcheck(lambda t: lucid.renorm(t, 2, 0, 1.0), (x,))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, 0.5, 1.5, np.inf])
def test_renorm_gradient_at_special_points_matches_torch(torch, p):
    nan, inf = np.nan, np.inf
    x = np.array([[1.0, 2.0, inf, 0.5], [0.1, 0.2, 0.3, 0.1], [nan, 1.0, 1.0, 1.0],
                  [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, -4.0, 0.0]])
    g = RNG.standard_normal(x.shape)
    for dim, maxnorm in ((0, 1.0), (1, 0.5), (0, 0.0)):
        t, r = lucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        y, yr = lucid.renorm(t, p, dim, maxnorm), torch.renorm(r, p, dim, maxnorm)
        y.backward(lucid.tensor(g))
        yr.backward(torch.tensor(g))
        np.testing.assert_allclose(y.detach().numpy(), yr.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(t.grad.numpy(), r.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_cov_gradcheck():
    x = lucid.tensor(RNG.standard_normal((3, 5)), requires_grad=True)
    assert gradcheck(lucid.cov, (x,))
    assert gradcheck(lucid.corrcoef, (x,))


# ---- layout and matrix helpers --------------------------------------------------------------


def test_splits_against_numpy():
    x = RNG.standard_normal((4, 6, 3))
    t = lucid.tensor(x)
    for ios in (3, 4, [1, 4], [2, -1], [5, 2]):
        got = [p.numpy() for p in lucid.tensor_split(t, ios, 1)]
        ref = np.array_split(x, ios, 1) if isinstance(ios, int) else \
            [x[:, a:b] for a, b in zip([0] + ios, ios + [None])]
        assert len(got) == len(ref)
        for g, r in zip(got, ref):
            np.testing.assert_array_equal(g, r)
    for name in ("hsplit", "vsplit", "dsplit"):
        for g, r in zip(getattr(lucid, name)(t, 2 if name == "vsplit" else 3),
                        getattr(np, name)(x, 2 if name == "vsplit" else 3)):
            np.testing.assert_array_equal(g.numpy(), r)
    with pytest.raises(RuntimeError, match="is not divisible by the split_size 4"):
        lucid.hsplit(t, 4)


def test_shape_helpers_against_numpy(backend):
    a, b = np.arange(3.0), np.ones((3, 2))
    L = lambda v: _t(v, backend)  # noqa: E731
    np.testing.assert_array_equal(lucid.column_stack([L(a), L(b)]).numpy(),
                                  np.column_stack([a, b]))
    np.testing.assert_array_equal(lucid.dstack([L(a), L(a)]).numpy(), np.dstack([a, a]))
    for n in (1, 2, 3):
        for v in (np.float64(2.0), a, b):
            got = getattr(lucid, f"atleast_{n}d")(L(np.asarray(v)))
            assert tuple(got.shape) == getattr(np, f"atleast_{n}d")(v).shape
    i = RNG.integers(0, 3, (3, 2))
    np.testing.assert_array_equal(lucid.take_along_dim(L(b), L(i), 0).numpy(),
                                  np.take_along_axis(b, i, 0))
    np.testing.assert_array_equal(lucid.diagflat(L(a), 1).numpy(), np.diagflat(a, 1))
    np.testing.assert_array_equal(lucid.tril_indices(4, 3, -1).numpy(),
                                  np.stack(np.tril_indices(4, -1, 3)))
    np.testing.assert_array_equal(lucid.vander(L(a), 4).numpy(), np.vander(a, 4))
    r, c = lucid.unravel_index(lucid.tensor([3, 7]), (2, 4))
    assert r.tolist() == [0, 1] and c.tolist() == [3, 3]


def test_windows_against_numpy():
    for name, ref in (("hann", np.hanning), ("hamming", np.hamming),
                      ("blackman", np.blackman), ("bartlett", np.bartlett)):
        np.testing.assert_allclose(getattr(lucid, f"{name}_window")(7, False).numpy(),
                                   ref(7), atol=1e-6)
        np.testing.assert_allclose(getattr(lucid, f"{name}_window")(7).numpy(),
                                   ref(8)[:7], atol=1e-6)
    np.testing.assert_allclose(lucid.kaiser_window(6, False, beta=5.0).numpy(),
                               np.kaiser(6, 5.0), atol=1e-6)


def test_matrix_helpers_against_torch(torch):
    v, m, i = RNG.standard_normal(5), RNG.standard_normal((3, 5)), RNG.standard_normal(3)
    b1, b2, c = (RNG.standard_normal(s) for s in ((2, 3, 4), (2, 4, 5), (2, 3, 5)))
    L, T = lucid.tensor, torch.tensor
    pairs = [
        (lucid.vdot(L(v), L(v)), torch.vdot(T(v), T(v))),
        (lucid.addmv(L(i), L(m), L(v), beta=0.5, alpha=2),
         torch.addmv(T(i), T(m), T(v), beta=0.5, alpha=2)),
        (lucid.addr(L(m), L(i), L(v)), torch.addr(T(m), T(i), T(v))),
        (lucid.baddbmm(L(c), L(b1), L(b2), beta=0, alpha=0.5),
         torch.baddbmm(T(c), T(b1), T(b2), beta=0, alpha=0.5)),
        (lucid.addbmm(L(c[0]), L(b1), L(b2)), torch.addbmm(T(c[0]), T(b1), T(b2))),
        (lucid.chain_matmul(L(m), L(m.T.copy()), L(m)),
         torch.linalg.multi_dot([T(m), T(m.T.copy()), T(m)])),
    ]
    for a, b in pairs:
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_against_torch(reduce, include_self, torch):
    src, idx, inp = RNG.standard_normal((3, 4)), RNG.integers(0, 2, (3, 4)), \
        RNG.standard_normal((2, 4))
    out = lucid.scatter_reduce(lucid.tensor(inp), 0, lucid.tensor(idx), lucid.tensor(src),
                               reduce, include_self=include_self)
    ref = torch.scatter_reduce(torch.tensor(inp), 0, torch.tensor(idx), torch.tensor(src),
                               reduce, include_self=include_self)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12)


def test_index_put_and_fill_diagonal(torch):
    inp = RNG.standard_normal((2, 4))
    idx = (np.array([0, 1, 0]), np.array([2, 3, 2]))
    vals = np.array([1.0, 2.0, 3.0])
    for acc in (False, True):
        a = lucid.index_put(lucid.tensor(inp), tuple(lucid.tensor(k) for k in idx),
                            lucid.tensor(vals), acc)
        b = torch.index_put(torch.tensor(inp), tuple(torch.tensor(k) for k in idx),
                            torch.tensor(vals), acc)
        np.testing.assert_allclose(a.numpy(), b.numpy())
    for shape, wrap in (((3, 3), False), ((5, 3), False), ((7, 3), True), ((3, 3, 3), False)):
        a = lucid.zeros(*shape, dtype=lucid.float64).fill_diagonal_(2.5, wrap)
        b = torch.zeros(shape, dtype=torch.float64).fill_diagonal_(2.5, wrap)
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_index_put_accumulate_gradient():
    w = lucid.tensor(RNG.standard_normal(4), requires_grad=True)
    base = lucid.zeros(5, dtype=lucid.float64)
    out = lucid.index_put(base, (lucid.tensor([1, 3, 1, 0]),), w, accumulate=True)
    out.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.ones(4))


def test_inplace_forms_match_their_functions():
    x = lucid.tensor(RNG.uniform(0.1, 0.9, (3, 4)))
    for name in ("logit", "sinc", "exp2", "asinh", "frac", "deg2rad", "cosh", "tan", "log2"):
        y = x.clone()
        getattr(y, name + "_")()
        np.testing.assert_allclose(y.numpy(), getattr(lucid, name)(x).numpy())
    y = x.clone()
    y.atan2_(x + 1)
    np.testing.assert_allclose(y.numpy(), np.arctan2(x.numpy(), x.numpy() + 1))
    z = lucid.ones(2, 3)
    z.lt_(lucid.tensor([[0.0, 2.0, 1.0], [2.0, 0.0, 2.0]]))
    assert z.dtype is lucid.float32 and z.tolist() == [[0, 1, 0], [1, 0, 1]]
    t = lucid.arange(6.0).reshape(2, 3)
    assert t.transpose_(0, 1).shape == (3, 2) and t.tolist() == [[0, 3], [1, 4], [2, 5]]


def test_inplace_gradient_flows():
    a = lucid.tensor(RNG.uniform(0.2, 0.8, (3,)), requires_grad=True)
    b = a * 1.0
    b.logit_()
    b.sum().backward()
    x = a.detach().numpy()
    np.testing.assert_allclose(a.grad.numpy(), 1 / (x * (1 - x)))


def test_cross_default_dim_and_explicit(torch):
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        out = lucid.cross(lucid.tensor(a), lucid.tensor(b))
    np.testing.assert_allclose(out.numpy(), np.cross(a, b))
    np.testing.assert_allclose(lucid.tensor(a).cross(lucid.tensor(b), dim=1).numpy(),
                               torch.cross(torch.tensor(a), torch.tensor(b), dim=1).numpy())
