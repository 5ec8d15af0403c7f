"""0-d tensors through ops that take a ``dim``: a 0-d input has one implicit dim (0 or -1)
and the result stays 0-d, as in torch: cumsum/cumprod/cummax/cummin/logcumsumexp, prod,
flip, gather, index_select; roll and out-of-range dims raise torch's errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from devices import DEVICES

import lucid


def _zero_dim(m: Any, device: str | None = None) -> Any:
    if m is lucid:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lucid.tensor(2.5, requires_grad=True, device=device)
    return m.tensor(2.5, requires_grad=True)


def _index(m: Any, x: Any, values: Any) -> Any:
    return m.tensor(values, device=x.device) if m is lucid else m.tensor(values)


OPS: dict[str, Callable] = {
    "cumsum": lambda m, x, d: x.cumsum(d),
    "cumprod": lambda m, x, d: x.cumprod(d),
    "cummax": lambda m, x, d: x.cummax(d)[0],
    "cummax_indices": lambda m, x, d: x.cummax(d)[1],
    "cummin": lambda m, x, d: x.cummin(d)[0],
    "logcumsumexp": lambda m, x, d: x.logcumsumexp(d),
    "prod": lambda m, x, d: x.prod(d),
    "prod_keepdim": lambda m, x, d: x.prod(d, keepdim=True),
    "flip": lambda m, x, d: x.flip(d),
    "gather": lambda m, x, d: x.gather(d, _index(m, x, 0)),
    "index_select": lambda m, x, d: x.index_select(d, _index(m, x, [0])),
}
# (value, gradient) for x = 2.5, as torch gives them
WANT = {"cummax_indices": (0, None)}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("op", list(OPS))
def test_result_stays_zero_dim(device: str, op: str, dim: int) -> None:
    x = _zero_dim(lucid, device)
    y = OPS[op](lucid, x, dim)
    assert tuple(y.shape) == ()
    value, grad = WANT.get(op, (2.5, 1.0))
    assert y.item() == pytest.approx(value)
    if grad is not None:
        y.backward()
        assert x.grad.item() == pytest.approx(grad)
    else:
        assert y.dtype == lucid.int64


@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("op", list(OPS))
def test_against_torch(torch: Any, op: str, dim: int) -> None:
    outs = []
    for m in (lucid, torch):
        x = _zero_dim(m)
        y = OPS[op](m, x, dim)
        if y.requires_grad:
            y.backward()
        outs.append((tuple(y.shape), y.item(), None if x.grad is None else x.grad.item()))
    assert outs[0] == outs[1]


ERRORS: dict[str, Callable] = {
    "cumsum": lambda m, x: x.cumsum(1),
    "cumprod": lambda m, x: x.cumprod(1),
    "cummax": lambda m, x: x.cummax(1),
    "cummin": lambda m, x: x.cummin(-2),
    "prod": lambda m, x: x.prod(1),
    "flip": lambda m, x: x.flip(1),
    "roll": lambda m, x: x.roll(1, 0),
    "roll_neg": lambda m, x: x.roll(1, -1),
    "index_select_two": lambda m, x: x.index_select(0, m.tensor([0, 0])),
}
MESSAGES = {
    "cummax": (IndexError, "cummax(): Expected reduction dim -1 or 0 for scalar but got 1"),
    "cummin": (IndexError, "cummin(): Expected reduction dim -1 or 0 for scalar but got -2"),
    "roll": (IndexError, "Dimension specified as 0 but tensor has no dimensions"),
    "roll_neg": (IndexError, "Dimension specified as -1 but tensor has no dimensions"),
    "index_select_two": (RuntimeError, "index_select(): Index to scalar can have only 1 "
                                       "value, got 2 value(s)"),
}


@pytest.mark.parametrize("op", list(ERRORS))
def test_errors(op: str) -> None:
    kind, text = MESSAGES.get(op, (IndexError, "Dimension out of range (expected to be in "
                                               "range of [-1, 0], but got 1)"))
    with pytest.raises(kind) as info:
        ERRORS[op](lucid, lucid.tensor(2.5))
    assert str(info.value) == text


@pytest.mark.parametrize("op", list(ERRORS))
def test_errors_match_torch(torch: Any, op: str) -> None:
    got = []
    for m in (lucid, torch):
        with pytest.raises(Exception) as info:
            ERRORS[op](m, m.tensor(2.5))
        got.append((type(info.value), str(info.value)))
    assert got[0] == got[1]


def test_nonzero_dim_results_unchanged() -> None:
    x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(x.cumprod(0).numpy(), [[1, 2], [3, 8]])
    np.testing.assert_allclose(x.prod(1).numpy(), [2, 12])
