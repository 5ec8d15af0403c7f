"""Memory formats (``lucid.channels_last`` & co.): the layout torch gives, the same values,
gradients through the copy, and torch's errors."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

import lucid

SHAPES = [(2, 3, 4, 5), (1, 3, 1, 5), (2, 1, 4, 4), (2, 3, 4, 5, 2)]


def _fmt(mod: Any, ndim: int) -> Any:
    return mod.channels_last if ndim == 4 else mod.channels_last_3d


@pytest.mark.parametrize("shape", SHAPES)
def test_channels_last_strides_and_flags_match_torch(torch: Any, shape: tuple) -> None:
    a = np.random.default_rng(0).standard_normal(shape)
    for make in (lambda m, x: x.contiguous(memory_format=_fmt(m, len(shape))),
                 lambda m, x: x.to(memory_format=_fmt(m, len(shape))),
                 lambda m, x: x.clone(memory_format=_fmt(m, len(shape)))):
        got, want = make(lucid, lucid.tensor(a)), make(torch, torch.tensor(a))
        assert got.stride() == want.stride()
        np.testing.assert_array_equal(got.numpy(), a)
        for fmt in ("contiguous_format", "channels_last" if len(shape) == 4 else
                    "channels_last_3d"):
            assert got.is_contiguous(memory_format=getattr(lucid, fmt)) == \
                want.is_contiguous(memory_format=getattr(torch, fmt))
    # back to row-major
    cl = lucid.tensor(a).contiguous(memory_format=_fmt(lucid, len(shape)))
    back = cl.contiguous()
    assert back.stride() == torch.tensor(a).stride()


def test_gradient_flows_through_the_layout_copy() -> None:
    x = lucid.tensor(np.ones((2, 3, 2, 2)), requires_grad=True)
    (x.contiguous(memory_format=lucid.channels_last) * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3, 2, 2), 3.0))


def test_errors_and_identity() -> None:
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
        lucid.zeros(2, 3).contiguous(memory_format=lucid.channels_last)
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d"):
        lucid.zeros(2, 3, 4, 5).contiguous(memory_format=lucid.channels_last_3d)
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
        lucid.zeros(2).contiguous(memory_format=lucid.preserve_format)
    x = lucid.zeros(2, 3, 4, 5).contiguous(memory_format=lucid.channels_last)
    assert x.contiguous(memory_format=lucid.channels_last) is x
    assert repr(lucid.channels_last) == "lucid.channels_last"
    assert isinstance(lucid.channels_last, lucid.memory_format)
    assert pickle.loads(pickle.dumps(lucid.channels_last)) is lucid.channels_last
    assert lucid.zeros(2, 3).to(memory_format=lucid.preserve_format).is_contiguous()
