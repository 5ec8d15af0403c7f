"""torch's smaller top-level names: ``can_cast`` (every dtype pair against torch),
``typename``, ``trapz`` and ``cumulative_trapezoid`` (values and gradients)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]


def test_can_cast_matches_torch_for_every_pair(torch: Any) -> None:
    for a in DTYPES:
        for b in DTYPES:
            assert lucid.can_cast(getattr(lucid, a), getattr(lucid, b)) == \
                torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)


def test_typename() -> None:
    assert lucid.typename(lucid.zeros(2)) == "lucid.FloatTensor"
    assert lucid.typename(lucid.zeros(2, dtype=lucid.int64)) == "lucid.LongTensor"
    assert lucid.typename(lucid.nn.Linear(2, 2)) == "lucid.nn.modules.linear.Linear"
    assert lucid.typename(lucid.nn.Linear) == "lucid.nn.modules.linear.Linear"
    assert lucid.typename(3) == "int" and lucid.typename(int) == "int"


@pytest.mark.parametrize("kw", [{}, {"dx": 0.5}, {"x": "x"}, {"x": "x2", "dim": 0}])
def test_cumulative_trapezoid_and_trapz_match_torch(torch: Any, kw: dict) -> None:
    rng = np.random.default_rng(0)
    y = rng.standard_normal((4, 5))
    xs = {"x": np.sort(rng.standard_normal(5)), "x2": np.sort(rng.standard_normal((4, 5)), 0)}
    for name in ("cumulative_trapezoid", "trapz"):
        ly, ty = lucid.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
        lk = {k: lucid.tensor(xs[v]) if k == "x" else v for k, v in kw.items()}
        tk = {k: torch.tensor(xs[v]) if k == "x" else v for k, v in kw.items()}
        lo, to = getattr(lucid, name)(ly, **lk), getattr(torch, name)(ty, **tk)
        np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-12)
        w = rng.standard_normal(tuple(to.shape))
        (lo * lucid.tensor(w)).sum().backward()
        (to * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(ly.grad.numpy(), ty.grad.numpy(), rtol=1e-12)


def test_cumulative_trapezoid_of_nothing_and_its_errors() -> None:
    assert lucid.cumulative_trapezoid(lucid.zeros(3, 0)).shape == (3, 0)
    assert lucid.cumulative_trapezoid(lucid.ones(1)).shape == (0,)
    with pytest.raises(TypeError, match="x and dx cannot both be given"):
        lucid.cumulative_trapezoid(lucid.ones(3), lucid.ones(3), dx=1.0)
