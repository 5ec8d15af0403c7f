"""``cat`` and ``stack``: the checked path (promotion, torch's errors) and the direct one for
tensors of one dtype whose shapes agree, with values, gradients and second derivatives
against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck, gradgradcheck


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def _t(rng, *shape, dtype=np.float64, grad=True):
    return lucid.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=grad)


@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_stack_values_and_gradients(rng, dim) -> None:
    xs = [_t(rng, 3, 4) for _ in range(3)]
    y = lucid.stack(xs, dim)
    want = np.stack([x.detach().numpy() for x in xs], dim)
    np.testing.assert_array_equal(y.detach().numpy(), want)
    g = rng.standard_normal(want.shape)
    y.backward(lucid.tensor(g))
    for i, x in enumerate(xs):
        np.testing.assert_array_equal(x.grad.numpy(), np.take(g, i, dim))


def test_stack_and_cat_second_derivatives() -> None:
    rng = np.random.default_rng(1)
    a, b = _t(rng, 2, 3), _t(rng, 2, 3)
    assert gradcheck(lambda p, q: lucid.stack([p * q, p], 1), (a, b))
    assert gradgradcheck(lambda p, q: lucid.stack([p * q, q * q], 0), (a, b))
    assert gradgradcheck(lambda p, q: lucid.cat([p * q, q * p * p], -1), (a, b))


def test_parameters_and_tensors_without_grad_join(rng) -> None:
    p = lucid.nn.Parameter(lucid.tensor(rng.standard_normal((2, 3))))
    c = lucid.tensor(rng.standard_normal((2, 3)))
    y = lucid.cat([p, c], 0)
    y.sum().backward()
    np.testing.assert_array_equal(p.grad.numpy(), np.ones((2, 3)))
    assert c.grad is None
    s = lucid.stack((c, p))  # a tuple, the parameter second
    np.testing.assert_array_equal(s.detach().numpy(), np.stack([c.numpy(), p.detach().numpy()]))


def test_mixed_dtypes_promote_and_generators_are_taken(rng) -> None:
    a = _t(rng, 2, 2, dtype=np.float32, grad=False)
    b = _t(rng, 2, 2, grad=False)
    assert lucid.cat([a, b]).dtype is lucid.float64
    assert lucid.stack([a, b]).dtype is lucid.float64
    i = lucid.tensor([[1, 2]])
    assert lucid.cat([i, a[:1]]).dtype is lucid.float32
    assert lucid.stack(t for t in (a, a)).shape == (2, 2, 2)
    assert lucid.cat(t for t in (a, a)).shape == (4, 2)


def test_legacy_empty_1d_tensors_are_skipped_by_cat(rng) -> None:
    a = _t(rng, 2, 3, grad=False)
    y = lucid.cat([lucid.tensor([]), a, lucid.tensor([])], 0)
    np.testing.assert_array_equal(y.numpy(), a.numpy())


def test_errors_name_what_was_wrong(rng) -> None:
    a, b = _t(rng, 2, 3, grad=False), _t(rng, 2, 4, grad=False)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        lucid.cat([a, b], 0)
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        lucid.stack([a, b])
    with pytest.raises(IndexError, match="Dimension out of range"):
        lucid.cat([a, a], 2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        lucid.stack([a, a], 3)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        lucid.cat([a, a[0]], 0)
    with pytest.raises(TypeError, match="dim must be an int"):
        lucid.cat([a, a], 0.5)
    with pytest.raises(RuntimeError, match="stack expects a non-empty TensorList"):
        lucid.stack([])
