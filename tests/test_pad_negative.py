"""Negative padding crops, with torch's errors where the crop leaves less than nothing:
constant padding narrows first ("narrow(): length must be non-negative."), circular checks
the output size, reflect / replicate check the input as given and report an output too small;
reflect and replicate read the input's own borders, circular wraps what the crop left."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from devices import DEVICES

import lucid
import lucid.nn.functional as F

ERRORS = [
    ((0,), (-1, 0), "constant", "narrow(): length must be non-negative."),
    ((0,), (0, -1), "constant", "narrow(): length must be non-negative."),
    ((0,), (1, -1), "constant", "narrow(): length must be non-negative."),
    ((2, 0), (-1, 0), "constant", "narrow(): length must be non-negative."),
    ((0, 3), (0, 0, -1, 0), "constant", "narrow(): length must be non-negative."),
    ((3,), (-2, -2), "constant", "narrow(): length must be non-negative."),
    ((3,), (-4, 1), "constant", "narrow(): length must be non-negative."),
    ((1, 0), (-1, 0), "circular", "Negative padding value is resulting in an empty dimension"),
    ((1, 3), (-2, -2), "circular", "Negative padding value is resulting in an empty dimension"),
    ((1, 3), (-2, -2), "reflect", "input (W: 3) is too small. Calculated output W: -1"),
    ((1, 3), (-3, 0), "replicate", "input (W: 3) is too small. Calculated output W: 0"),
    ((1, 3, 3), (-2, -1, -3, 0), "reflect",
     "input (H: 3, W: 3) is too small. Calculated output H: 0 W: 0"),
    ((1, 3, 3), (-2, -1, -3, 0), "replicate",
     "input (H: 3, W: 3 ) is too small. Calculated output H: 0 W: 0"),
    ((1, 3, 3, 3), (-2, -1, -3, 0, -3, 0), "reflect",
     "input (D: 3 H: 3, W: 3) is too small. Calculated output D: 0 H: 0 W: 0"),
    ((1, 3), (-1, 3), "reflect", "Argument #4: Padding size should be less than the "
     "corresponding input dimension, but got: padding (-1, 3) at dimension 1 of input [1, 3]"),
    ((1, 3, 3), (0, 0, -1, 3), "reflect", "Argument #6: Padding size should be less than the "
     "corresponding input dimension, but got: padding (-1, 3) at dimension 1 of input "
     "[1, 3, 3]"),
]
IDS = [f"{m}-{s}-{p}" for s, p, m, _ in ERRORS]


def _zeros(shape: tuple, device: str) -> lucid.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lucid.zeros(shape, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,pad,mode,message", ERRORS, ids=IDS)
def test_errors(device: str, shape: tuple, pad: tuple, mode: str, message: str) -> None:
    with pytest.raises(RuntimeError) as info:
        F.pad(_zeros(shape, device), pad, mode=mode)
    assert str(info.value) == message


@pytest.mark.parametrize("shape,pad,mode,message", ERRORS, ids=IDS)
def test_errors_match_torch(torch: Any, shape: tuple, pad: tuple, mode: str,
                            message: str) -> None:
    with pytest.raises(RuntimeError) as info:
        torch.nn.functional.pad(torch.zeros(shape), pad, mode=mode)
    assert str(info.value) == message


VALUES = [
    ((1, 5), (-3, 2), "reflect", [[3, 4, 3, 2]]),
    ((1, 5), (2, -3), "reflect", [[2, 1, 0, 1]]),
    ((1, 5), (-3, 2), "replicate", [[3, 4, 4, 4]]),
    ((1, 5), (-1, -1), "reflect", [[1, 2, 3]]),
    ((1, 3), (-1, 2), "circular", [[1, 2, 1, 2]]),
    ((1, 3), (2, -1), "circular", [[0, 1, 0, 1]]),
    ((1, 3), (-4, 1), "circular", np.zeros((1, 0))),
    ((3,), (-3, 0), "constant", np.zeros((0,))),
    ((4,), (-1, 2), "constant", [1, 2, 3, 0, 0]),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,pad,mode,want", VALUES,
                         ids=[f"{m}-{s}-{p}" for s, p, m, _ in VALUES])
def test_values(device: str, shape: tuple, pad: tuple, mode: str, want: Any) -> None:
    x = _zeros(shape, device) + lucid.arange(shape[-1], device=device).float()
    out = F.pad(x, pad, mode=mode)
    np.testing.assert_array_equal(out.numpy(), np.asarray(want, np.float32))


@pytest.mark.parametrize("shape,pad,mode,want", VALUES,
                         ids=[f"{m}-{s}-{p}" for s, p, m, _ in VALUES])
def test_values_match_torch(torch: Any, shape: tuple, pad: tuple, mode: str, want: Any) -> None:
    x = np.zeros(shape, np.float32) + np.arange(shape[-1], dtype=np.float32)
    a = F.pad(lucid.tensor(x), pad, mode=mode).numpy()
    b = torch.nn.functional.pad(torch.tensor(x), pad, mode=mode).numpy()
    assert a.shape == b.shape
    np.testing.assert_array_equal(a, b)
