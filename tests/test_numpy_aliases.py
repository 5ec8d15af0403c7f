"""torch's numpy-style keyword aliases (``axis`` for ``dim``, ``keepdims`` for ``keepdim``,
``x``/``a``/``x1`` for ``input``, ``x2`` for ``other``) on functions and Tensor methods."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import lucid

CALLS = [
    "x.sum(axis=1)", "x.mean(axis=0, keepdims=True)", "m.cat([x, x], axis=1)",
    "x.max(axis=1).values", "m.sum(x, axis=0)", "x.std(axis=1)", "m.argmax(x, axis=1)",
    "x.softmax(axis=1)", "m.stack([x, x], axis=0)", "x.unsqueeze(axis=0)",
    "x.cumsum(axis=1)", "m.add(x=x, other=x)", "m.mul(x, x2=x)", "m.linalg.vector_norm(x=x)",
    "m.linalg.cholesky(x=m.eye(2) * 2)", "x.amax(axis=(0, 1), keepdims=True)",
    "m.logsumexp(x, axis=1)", "m.special.logsumexp(x, axis=0)",
]


@pytest.mark.parametrize("call", CALLS)
def test_alias_gives_torchs_value(torch: Any, call: str) -> None:
    base = np.arange(6.0).reshape(2, 3) / 7
    got = eval(call, {"m": lucid, "x": lucid.tensor(base)})
    want = eval(call, {"m": torch, "x": torch.tensor(base)})
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_alias_and_name_together_refused() -> None:
    with pytest.raises(TypeError, match="multiple values for argument 'dim'"):
        lucid.argmax(lucid.ones(2, 2), dim=0, axis=0)


def test_signatures_keep_torchs_names() -> None:
    assert "axis" not in inspect.signature(lucid.Tensor.argmax).parameters
    assert "dim" in inspect.signature(lucid.argmax).parameters
