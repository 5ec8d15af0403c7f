"""Fused elementwise kernels against their numpy expressions."""

from __future__ import annotations

import numpy as np
import pytest

from lucid.kernels import elementwise as E


def _data(rng, shape, dtype):
    x = rng.standard_normal(shape).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    if x.size > 3:
        x.reshape(-1)[:3] = [np.nan, 0.0, -0.0]
    return x, g


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(0,), (1,), (1000,), (3, 1, 257)])
def test_backward_kernels(build, rng, dtype, shape) -> None:
    x, g = _data(rng, shape, dtype)
    y = 1 / (1 + np.exp(-x))
    t = np.tanh(x)
    cases = [
        (E.sigmoid_backward(y, g), g * y * (1 - y)),
        (E.tanh_backward(t, g), g * (1 - t * t)),
        (E.relu_backward(x, g), np.where(np.isnan(x) | (x > 0), g, 0).astype(dtype)),
        (E.relu(x), np.where(np.isnan(x) | (x > 0), x, 0).astype(dtype)),
    ]
    for got, exp in cases:
        assert got.shape == exp.shape and got.dtype == dtype
        np.testing.assert_allclose(got, exp, rtol=1e-6, atol=1e-7, equal_nan=True)


def test_fallbacks_keep_numpy_semantics(rng) -> None:
    y = rng.random((4, 6))
    g = rng.standard_normal((4, 6))
    # strided, broadcast and mixed-dtype inputs take the numpy expression
    np.testing.assert_allclose(E.sigmoid_backward(y[:, ::2], g[:, ::2]), (g * y * (1 - y))[:, ::2])
    np.testing.assert_allclose(E.tanh_backward(y, g[0]), g[0] * (1 - y * y))
    out = E.relu_backward(y.astype(np.float32), g)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(E.relu(np.array([-1, 2])), [0, 2])
    np.testing.assert_array_equal(E.relu(y.T), np.maximum(y.T, 0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1,), (1000,), (3, 1, 257)])
def test_binary_kernels_match_numpy(monkeypatch, rng, dtype, shape) -> None:
    monkeypatch.setattr(E, "BINARY_MIN", 1)  # small arrays through the kernels too
    a, b = _data(rng, shape, dtype)
    b.reshape(-1)[-1] = np.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        quot = a / b
    for got, exp in ((E.add(a, b), a + b), (E.sub(a, b), a - b), (E.mul(a, b), a * b),
                     (E.div(a, b), quot)):
        assert got.shape == exp.shape and got.dtype == dtype
        np.testing.assert_array_equal(got, exp)
    want = a + b
    assert E.binary("add", a, b, a) is a  # in place
    np.testing.assert_array_equal(a, want)


def test_binary_kernels_leave_other_operands_to_numpy(monkeypatch, rng) -> None:
    monkeypatch.setattr(E, "BINARY_MIN", 1)
    a = rng.standard_normal((4, 6))
    # broadcast, strided, mixed dtypes, scalars, integers: numpy's own result
    for x, y in ((a, a[0]), (a[:, ::2], a[:, 1::2]), (a, a.astype(np.float32)),
                 (a, np.float64(2.0)), (a, 3), (np.arange(4), np.arange(4))):
        assert E.binary("add", x, y) is None
    np.testing.assert_array_equal(E.add(a, a[0]), a + a[0])
    np.testing.assert_array_equal(E.mul(a[:, ::2], a[:, 1::2]), a[:, ::2] * a[:, 1::2])
    assert E.add(a.astype(np.float32), a).dtype == np.float64
    np.testing.assert_array_equal(E.sub(np.arange(4), 1), np.arange(4) - 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows", [1, 7, 700])
@pytest.mark.parametrize("row_shape", ["1d", "2d"])
def test_add_row(dtype, rows, row_shape, rng) -> None:
    out = rng.standard_normal((rows, 100)).astype(dtype)
    row = rng.standard_normal(100).astype(dtype)
    want = out + row
    assert E.add_row(out, row if row_shape == "1d" else row[None])
    np.testing.assert_array_equal(out, want)


def test_add_row_refuses_what_it_cannot_take(rng) -> None:
    out = rng.standard_normal((4, 6))
    keep = out.copy()
    for row in (np.ones(5), np.ones(6, np.float32), np.ones((2, 6)), np.ones((4, 1)), 1.0):
        assert not E.add_row(out, row)
    assert not E.add_row(out[:, ::2], np.ones(3))
    np.testing.assert_array_equal(out, keep)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scale_in_place_as_numpy(monkeypatch, rng, dtype) -> None:
    monkeypatch.setattr(E, "BINARY_MIN", 1)
    a = rng.standard_normal((5, 7)).astype(dtype)
    a[0, :3] = [np.nan, np.inf, -0.0]
    c = 0.1234567891234  # rounded to float32 first for float32 arrays, as numpy does
    want = a * c
    assert E.scale_(a, c)
    np.testing.assert_array_equal(a, want)
    keep = a.copy()
    for x, k in ((a, np.float32(2.0)), (a, 2), (a[:, ::2], 2.0), (np.arange(6), 2.0)):
        assert not E.scale_(x, k)
    np.testing.assert_array_equal(a, keep)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_copy_into_slices_of_rows(monkeypatch, rng, dtype) -> None:
    monkeypatch.setattr(E, "BINARY_MIN", 1)
    buf = np.full((2, 5, 12), np.nan, dtype)
    v = rng.standard_normal((2, 5, 4)).astype(dtype)
    assert E.copy_into(buf, (slice(None), slice(None), slice(4, 8)), v)
    np.testing.assert_array_equal(buf[..., 4:8], v)
    assert np.isnan(buf[..., :4]).all() and np.isnan(buf[..., 8:]).all()
    assert E.copy_into(buf, (Ellipsis, slice(8, 12)), v)
    np.testing.assert_array_equal(buf[..., 8:], v)
    assert E.copy_into(buf, 1, v[0].repeat(3, axis=1))  # a whole plane
    np.testing.assert_array_equal(buf[1], v[0].repeat(3, axis=1))


def test_copy_into_leaves_other_writes_to_numpy(monkeypatch, rng) -> None:
    monkeypatch.setattr(E, "BINARY_MIN", 1)
    buf = np.zeros((4, 6, 8))
    v = rng.standard_normal((4, 3, 8))
    for idx, val in (((slice(None, None, 2), slice(0, 3)), v[:2]),  # rows that do not merge
                     ((slice(None), slice(0, 3)), v.astype(np.float32)),  # another dtype
                     ((slice(None), slice(0, 3)), v[:, :, ::-1]),  # a strided value
                     ((np.array([0, 1]),), np.ones((2, 6, 8))),  # an advanced index
                     ((slice(None), slice(0, 3), slice(None, None, -1)), v),  # reversed
                     ((slice(None), slice(0, 2)), v)):  # another shape
        assert not E.copy_into(buf, idx, val)
    assert not buf.any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("s", [0.5, -3, 0.044715, 0.0, -0.0, np.inf, np.nan, 7])
def test_scalar_operands_match_numpy_bit_for_bit(build, monkeypatch, rng, dtype, s) -> None:
    """An array and a Python scalar through ``_axpc`` and ``_div_scalar``: numpy's result,
    signed zeros, inf and NaN included, with the scalar on either side (a division by a
    scalar is no product by its reciprocal: 0.044715 and 7 would show one)."""
    monkeypatch.setattr(E, "BINARY_MIN", 1)
    a, _ = _data(rng, (3, 1, 257), dtype)
    a.reshape(-1)[3:5] = [np.inf, -np.inf]
    with np.errstate(invalid="ignore"):  # inf - inf
        pairs = ((E.mul(a, s), a * s), (E.mul(s, a), s * a), (E.add(a, s), a + s),
                 (E.add(s, a), s + a), (E.sub(a, s), a - s), (E.sub(s, a), s - a))
    with np.errstate(divide="ignore", invalid="ignore"):  # x / 0, 0 / 0
        pairs += ((E.div(a, s), a / s), (E.div(s, a), s / a))
    for got, exp in pairs:
        assert got.dtype == dtype and got.shape == a.shape
        np.testing.assert_array_equal(got, exp)
        num = ~np.isnan(exp)  # a NaN's sign bit is not specified
        np.testing.assert_array_equal(np.signbit(got[num]), np.signbit(exp[num]))


def test_scalar_operands_left_to_numpy(monkeypatch, rng) -> None:
    """Integers, strided arrays, numpy scalars and huge ints keep numpy's own path."""
    monkeypatch.setattr(E, "BINARY_MIN", 1)
    a = rng.standard_normal((4, 6)).astype(np.float32)
    assert E._affine(a[:, ::2], 2.0, 0.0) is None and E._affine(np.arange(4), 2.0, 0.0) is None
    assert E._with_scalar("mul", a, np.float64(2.0)) is None
    assert E._with_scalar("mul", a, 1 << 60) is None and E._with_scalar("mul", a, True) is None
    np.testing.assert_array_equal(E.mul(a[:, ::2], 3.0), a[:, ::2] * 3.0)
    np.testing.assert_array_equal(E.sub(np.arange(4), 1), np.arange(4) - 1)
    assert E.mul(a, np.float64(2.0)).dtype == np.float64  # numpy promotes a numpy float64


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("e", [2, 3, -1, -2, 2.0, 3.0, -2.0])
def test_power_fast_paths(build, rng, dtype, e) -> None:
    """The exponents torch computes as products: against numpy's power in float64 (to ~1 ulp:
    x * x * x rounds twice), and bit for bit against torch where it is installed."""
    x, _ = _data(rng, (3, 1, 257), dtype)
    x.reshape(-1)[3:6] = [np.inf, -np.inf, -2.5]
    with np.errstate(divide="ignore", invalid="ignore"):
        got = E.power(x, e)
        want = np.power(x.astype(np.float64), e)
    assert got.dtype == dtype and got.shape == x.shape
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps, atol=0, equal_nan=True)
    np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)])
    assert np.array_equal(E.power(x[:, :, ::2], e), got[:, :, ::2], equal_nan=True)
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(got, torch.pow(torch.from_numpy(x), e).numpy())


def test_power_leaves_other_exponents_to_numpy(rng) -> None:
    x = rng.standard_normal(10).astype(np.float32)
    for base, e in ((x, 2.5), (x, 0.5), (x, -0.5), (x, np.float32(3.0)), (np.arange(4), 3),
                    (x, True), (x, x)):
        assert E.power(base, e) is None


def test_read_only_operands_compile_no_new_signature(monkeypatch, rng) -> None:
    """Read-only arrays (``np.broadcast_to`` views, frozen buffers) get numpy's result or a
    copy, never a kernel call with a read-only type the warmed signatures do not declare."""
    monkeypatch.setattr(E, "BINARY_MIN", 1)
    x = rng.standard_normal(300).astype(np.float32)
    ro = x.copy()
    ro.setflags(write=False)
    before = {k: len(d.signatures) for k, d in (("powi", E._POWI[0]), ("axpc", E._AXPC[1]),
                                                ("div", E._DIV[0]))}
    np.testing.assert_array_equal(E.power(ro, 3), x * x * x)
    np.testing.assert_array_equal(E.mul(ro, 0.5), x * np.float32(0.5))
    np.testing.assert_array_equal(E.div(ro, ro), x / x)
    np.testing.assert_array_equal(E.div(ro, 3.0), x / np.float32(3.0))
    for k, d in (("powi", E._POWI[0]), ("axpc", E._AXPC[1]), ("div", E._DIV[0])):
        assert all(not t.readonly for sig in d.signatures for t in sig
                   if hasattr(t, "readonly")), k
        assert len(d.signatures) <= before[k] + 1, k
