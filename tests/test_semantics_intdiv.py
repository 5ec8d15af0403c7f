"""Integer division by zero raises ``RuntimeError("ZeroDivisionError")`` as torch does on cpu,
for ``//``, ``%``, ``fmod`` and rounded ``div``, tensor or scalar divisor, on every device;
float results (true division, a float operand) keep IEEE inf/nan."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest

import lucid

DEVICES = ("cpu", "numpy", "gpu")


def _t(values: list, device: str, dtype: object = lucid.int64) -> lucid.Tensor:
    if device == "gpu":
        pytest.importorskip("mlx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lucid.tensor(values, dtype=dtype, device=device)


def _raising(lib: object, a: object, z: object, u8: tuple) -> dict[str, Callable]:
    L = lib
    return {
        "floordiv_op": lambda: a // z, "mod_op": lambda: a % z,
        "floor_divide": lambda: L.floor_divide(a, z), "remainder": lambda: L.remainder(a, z),
        "fmod": lambda: L.fmod(a, z),
        "div_floor": lambda: L.div(a, z, rounding_mode="floor"),
        "div_trunc": lambda: L.div(a, z, rounding_mode="trunc"),
        "floordiv_scalar": lambda: a // 0, "mod_scalar": lambda: a % 0,
        "fmod_scalar": lambda: L.fmod(a, 0),
        "div_floor_scalar": lambda: L.div(a, 0, rounding_mode="floor"),
        "div_trunc_scalar": lambda: L.div(a, 0, rounding_mode="trunc"),
        "scalar_dividend": lambda: L.remainder(5, z), "rfloordiv": lambda: 7 // z,
        "one_zero_among_many": lambda: a // (z + L.tensor([0, 1, 2])),
        "uint8": lambda: u8[0] // u8[1], "int32": lambda: a.int() % 0,
        "inplace_floor_divide": lambda: a.clone().floor_divide_(z),
        "inplace_remainder": lambda: a.clone().remainder_(0),
    }


@pytest.mark.parametrize("device", DEVICES)
def test_integer_division_by_zero_raises(device: str) -> None:
    a = _t([5, -3, 0], device)
    z = _t([0, 0, 0], device)
    u8 = (_t([5], device, lucid.uint8), _t([0], device, lucid.uint8))
    cases = _raising(lucid, a, z, u8)
    if device != "cpu":  # the helper's lucid.tensor([0, 1, 2]) lives on "cpu"
        cases["one_zero_among_many"] = lambda: a // _t([0, 1, 2], device)
    for name, fn in cases.items():
        with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
            fn()
            pytest.fail(name)
    np.testing.assert_array_equal(a.numpy(), [5, -3, 0])  # in-place attempts changed nothing


@pytest.mark.parametrize("device", DEVICES)
def test_float_results_keep_ieee_values(device: str) -> None:
    a = _t([5, -3, 0], device)
    z = _t([0, 0, 0], device)
    np.testing.assert_array_equal(lucid.div(a, z).numpy(), [np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal((a // 0.0).numpy(), [np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal((_t([5.0], device, lucid.float32) // 0).numpy(), [np.inf])
    np.testing.assert_array_equal((_t([5.0, -5.0], device, lucid.float32) % 0).numpy(),
                                  [np.nan, np.nan])
    e = _t([], device)
    assert (e // e).shape == (0,) and (e % e).dtype is lucid.int64
    np.testing.assert_array_equal((a // _t([2, 2, 2], device)).numpy(), [2, -2, 0])
    np.testing.assert_array_equal((a % _t([2, 2, 2], device)).numpy(), [1, 1, 0])
    np.testing.assert_array_equal(lucid.fmod(a, _t([2, 2, 2], device)).numpy(), [1, -1, 0])
    np.testing.assert_array_equal(
        lucid.div(a, _t([2, 2, 2], device), rounding_mode="trunc").numpy(), [2, -1, 0])


@pytest.mark.parity
def test_same_error_as_torch(torch: object) -> None:
    ta, tz = torch.tensor([5, -3, 0]), torch.zeros(3, dtype=torch.int64)  # type: ignore
    tu = (torch.tensor([5], dtype=torch.uint8), torch.tensor([0], dtype=torch.uint8))  # type: ignore
    la, lz = lucid.tensor([5, -3, 0]), lucid.zeros(3, dtype=lucid.int64)
    lu = (lucid.tensor([5], dtype=lucid.uint8), lucid.tensor([0], dtype=lucid.uint8))
    theirs, ours = _raising(torch, ta, tz, tu), _raising(lucid, la, lz, lu)
    for name in theirs:
        with pytest.raises(RuntimeError) as t_err:
            theirs[name]()
        with pytest.raises(RuntimeError) as l_err:
            ours[name]()
        assert str(l_err.value) == str(t_err.value), name
