"""Integer powers with negative exponents, as torch: a tensor to a negative Python int
raises "Integers to negative integer powers are not allowed."; a tensor of negative integer
exponents computes (``1 ** -n = 1``, ``(-1) ** -n = +-1`` by parity, anything else 0, 0
included) on every device, where numpy would raise and MLX would answer 0."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from devices import DEVICES

import lucid

BASE = [2, 3, 1, -1, -1, 0, -2, 5]
EXP = [-1, 2, -3, -3, -2, -1, -1, 0]
WANT = [0, 9, 1, -1, 1, 0, 0, 1]


def _t(x: Any, device: str, dtype: Any = lucid.int64) -> lucid.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lucid.tensor(x, device=device, dtype=dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [lucid.int8, lucid.int16, lucid.int32, lucid.int64])
def test_tensor_exponents(device: str, dtype: Any) -> None:
    out = _t(BASE, device, dtype) ** _t(EXP, device, dtype)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.numpy(), WANT)


@pytest.mark.parametrize("device", DEVICES)
def test_broadcast_scalar_base_and_zero_dim_exponent(device: str) -> None:
    np.testing.assert_array_equal((2 ** _t([-1, 2, 3], device)).numpy(), [0, 4, 8])
    np.testing.assert_array_equal((_t([[1], [-1]], device) ** _t([-1, -2, 3], device)).numpy(),
                                  [[1, 1, 1], [-1, 1, -1]])
    np.testing.assert_array_equal((_t([2, 1], device) ** _t(-1, device)).numpy(), [0, 1])
    np.testing.assert_array_equal(lucid.pow(_t([4, -1], device), _t([-2, -5], device)).numpy(),
                                  [0, -1])


@pytest.mark.parametrize("device", DEVICES)
def test_python_negative_exponent_raises(device: str) -> None:
    for fn in (lambda: _t([2], device) ** -1, lambda: lucid.pow(_t([2], device), -3),
               lambda: _t([2], device).pow_(-1), lambda: _t([2], device, lucid.int8) ** -2):
        with pytest.raises(RuntimeError, match=r"^Integers to negative integer powers are not "
                                               r"allowed\.$"):
            fn()


@pytest.mark.parametrize("device", DEVICES)
def test_shapes_that_do_not_broadcast_still_say_so(device: str) -> None:
    with pytest.raises(RuntimeError, match="must match the size"):
        _t([1, 2], device) ** _t([-1, 2, 3], device)


def test_float_and_unsigned_powers_unchanged() -> None:
    np.testing.assert_allclose((lucid.tensor([2.0, 4.0]) ** lucid.tensor([-1, -2])).numpy(),
                               [0.5, 0.0625])
    u8 = lucid.tensor([2, 3], dtype=lucid.uint8)
    np.testing.assert_array_equal((u8 ** u8).numpy(), [4, 27])


CASES = {
    "tensor_tensor": lambda m: m.tensor(BASE) ** m.tensor(EXP),
    "scalar_base": lambda m: 2 ** m.tensor([-1, 2]),
    "zero_dim_exponent": lambda m: m.tensor([2, 1, -1]) ** m.tensor(-1),
    "int32": lambda m: m.tensor([2, -1], dtype=m.int32) ** m.tensor([-2, -3], dtype=m.int32),
    "python_negative": lambda m: m.tensor(2) ** -1,
    "python_negative_pow": lambda m: m.pow(m.tensor([2, 3]), -2),
}


@pytest.mark.parametrize("name", list(CASES))
def test_against_torch(torch: Any, name: str) -> None:
    got = []
    for m in (lucid, torch):
        try:
            r = CASES[name](m)
            got.append((r.tolist(), str(r.dtype).rsplit(".", 1)[-1]))
        except RuntimeError as e:
            got.append(("RuntimeError", str(e)))
    assert got[0] == got[1]
