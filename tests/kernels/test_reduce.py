"""lucid.kernels.reduce against numpy: every op, axis form, layout and both kernel builds."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from lucid.kernels import reduce as R

OPS = ("sum", "mean", "var", "max", "min")
ARG_OPS = ("argmax", "argmin")


def ref(op: str, x: np.ndarray, axis, keepdims: bool = False, correction: int = 1):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if op == "var":
            return np.var(x, axis=axis, ddof=correction, keepdims=keepdims)
        return getattr(np, op)(x, axis=axis, keepdims=keepdims)


def call(op: str, x: np.ndarray, axis, keepdims: bool = False):
    return getattr(R, op)(x, axis, keepdims=keepdims)


def check(op: str, x: np.ndarray, axis, keepdims: bool = False) -> None:
    got = call(op, x, axis, keepdims)
    exp = np.asarray(ref(op, x, axis, keepdims))
    assert isinstance(got, np.ndarray)
    assert got.shape == exp.shape, (op, x.shape, axis, keepdims)
    assert got.dtype == (np.int64 if op.startswith("arg") else x.dtype)
    if op in ("sum", "mean", "var"):
        tol = 1e-10 if x.dtype == np.float64 else 2e-5
        np.testing.assert_allclose(got, exp, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, exp)


def all_axes(ndim: int) -> list:
    out: list = [None]
    out += list(range(-ndim, ndim))
    for r in range(2, ndim + 1):
        out += list(itertools.combinations(range(ndim), r))
    out.append(tuple(range(ndim))[::-1][:2] if ndim >= 2 else ())
    return out


LAYOUTS = {
    "c": lambda x: x,
    "transposed": lambda x: x.T,
    "strided": lambda x: x[..., ::2],
    "fortran": lambda x: np.asfortranarray(x),
    "reversed": lambda x: x[::-1],
}


@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4), (1, 6, 1), (3, 1, 4, 2)])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_axis_and_layout_float64(build, rng, shape, layout) -> None:
    x = LAYOUTS[layout](rng.standard_normal(shape))
    for axis in all_axes(x.ndim):
        for keepdims in (False, True):
            for op in OPS:
                check(op, x, axis, keepdims)
            if axis is None or isinstance(axis, int):
                for op in ARG_OPS:
                    check(op, x, axis, keepdims)


@pytest.mark.parametrize(
    "shape,axis",
    [
        ((256, 4096), 1),
        ((256, 4096), 0),
        ((256, 4096), None),
        ((3, 70001), -1),
        ((7, 5, 900), (0, 2)),
        ((40, 30, 20), (0, 1)),
    ],
)
def test_float32_against_float64_reference(build, rng, shape, axis) -> None:
    x = rng.standard_normal(shape, dtype=np.float32) + 0.5
    x64 = x.astype(np.float64)
    for op in ("sum", "mean", "var"):
        got = call(op, x, axis)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, ref(op, x64, axis), rtol=1e-5, atol=1e-5)
    for op in ("max", "min"):
        np.testing.assert_array_equal(call(op, x, axis), ref(op, x, axis))
    if axis is None or isinstance(axis, int):
        for op in ARG_OPS:
            np.testing.assert_array_equal(call(op, x, axis), ref(op, x, axis))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape,axis", [((4, 300), 1), ((4, 300), 0), ((9000,), None), ((30, 3, 5), 1)]
)
def test_nan_and_inf(build, rng, dtype, shape, axis) -> None:
    x = rng.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, 4, replace=False)] = np.nan
    flat[rng.choice(flat.size, 3, replace=False)] = np.inf
    flat[rng.choice(flat.size, 3, replace=False)] = -np.inf
    for op in OPS + ARG_OPS:
        check(op, x, axis)


def test_ties_and_all_nan_rows(build) -> None:
    x = np.array([[np.nan, np.nan, 1.0], [2.0, 2.0, 1.0], [-np.inf, -np.inf, -np.inf]])
    for op in ("max", "min") + ARG_OPS:
        for axis in (0, 1, None):
            check(op, x, axis)


@pytest.mark.parametrize("shape", [(40, 513), (9, 4095), (3, 256)])
def test_short_rows_share_a_task(build, rng, shape) -> None:
    # rows shorter than one 4096-element chunk are grouped into tasks with shared scratch lanes
    x = np.round(rng.standard_normal(shape) * 2)  # many ties
    x[1, 7] = np.nan
    x[2, -1] = np.nan
    for op in ("max", "min") + ARG_OPS:
        check(op, x, 1)
        check(op, x.astype(np.float32), -1)


def test_first_index_across_chunks(build) -> None:
    # the extreme occurs in several 4096-element chunks: the earliest one wins
    x = np.zeros((2, 3 * 4096 + 5))
    x[:, [5000, 9000, 12000]] = 3.0
    x[1, 10] = np.nan
    x[1, 9000] = np.nan
    np.testing.assert_array_equal(R.argmax(x, 1), [5000, 10])
    np.testing.assert_array_equal(R.argmin(-x, 1), [5000, 10])


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4)])
def test_empty(shape) -> None:
    x = np.zeros(shape)
    for axis in [None, *range(len(shape))]:
        for op in OPS + ARG_OPS:
            try:
                ref(op, x, axis)
            except ValueError:
                with pytest.raises(ValueError):
                    call(op, x, axis)
                continue
            check(op, x, axis)


def test_zero_dim_and_empty_axis_tuple(rng) -> None:
    x0 = np.array(2.5)
    for op in OPS:
        got = call(op, x0, None)
        assert got.shape == () and got.dtype == x0.dtype
    x = rng.standard_normal((3, 4))
    np.testing.assert_array_equal(R.sum(x, ()), x)
    np.testing.assert_array_equal(R.max(x, ()), x)


def test_correction_and_dof() -> None:
    x = np.arange(6.0).reshape(2, 3)
    for c in (0, 1, 2):
        np.testing.assert_allclose(R.var(x, 1, correction=c), np.var(x, axis=1, ddof=c))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(R.var(x, 1, correction=3), np.var(x, axis=1, ddof=3))
        np.testing.assert_array_equal(R.var(np.ones((2, 1)), 1), np.var(np.ones((2, 1)), 1, ddof=1))


def test_errors() -> None:
    x = np.zeros((2, 3))
    with pytest.raises(TypeError):
        R.sum(np.zeros(3, np.int64))
    with pytest.raises(TypeError):
        R.sum(np.zeros(3, np.dtype(">f4")))
    with pytest.raises(np.exceptions.AxisError):
        R.sum(x, 2)
    with pytest.raises(np.exceptions.AxisError):
        R.max(x, -3)
    with pytest.raises(ValueError):
        R.sum(x, (0, -2))
    assert R.supports(x) and not R.supports(x.astype(np.float16))


def test_result_is_fresh_contiguous(rng) -> None:
    x = rng.standard_normal((4, 5, 6)).transpose(2, 0, 1)
    for op in OPS:
        got = call(op, x, 1)
        assert got.flags.c_contiguous and not np.shares_memory(got, x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(128, 2), (129, 3), (700, 384), (1024, 1024), (2, 640, 5)])
def test_column_sums_of_tall_blocks(build, rng, dtype, shape) -> None:
    # one (n, inner) block summed over its rows: split into row blocks (a bias gradient)
    x = rng.standard_normal(shape).astype(dtype) + 0.25
    axis = tuple(range(x.ndim - 1))
    x64 = x.astype(np.float64)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for op in ("sum", "mean"):
        got = call(op, x, axis)
        assert got.dtype == dtype and got.shape == shape[-1:]
        np.testing.assert_allclose(got, ref(op, x64, axis), rtol=tol, atol=tol)
    x.reshape(-1, shape[-1])[5, 0] = np.nan
    x.reshape(-1, shape[-1])[-1, 1] = np.inf
    got = call("sum", x, axis)
    assert np.isnan(got[0]) and got[1] == np.inf
