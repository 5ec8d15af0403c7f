"""Parameter and Buffer."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from nn_util import catch

import lucid
import lucid.nn as nn


def test_parameter_is_a_leaf_tensor_that_requires_grad():
    p = nn.Parameter(lucid.randn(2, 3))
    assert isinstance(p, lucid.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None


def test_parameter_unwraps_a_computed_tensor():
    x = lucid.randn(3, requires_grad=True)
    y = x * 2
    p = nn.Parameter(y)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    (p * 3).sum().backward()
    assert x.grad is None  # no graph shared with y
    np.testing.assert_allclose(p.grad.numpy(), np.full(3, 3.0))


def test_parameter_shares_memory_with_its_source():
    t = lucid.zeros(3)
    p = nn.Parameter(t)
    t.add_(1.0)
    np.testing.assert_array_equal(p.detach().numpy(), np.ones(3))


def test_parameter_requires_grad_under_no_grad():
    with lucid.no_grad():
        p = nn.Parameter(lucid.zeros(2))
    assert p.requires_grad


def test_parameter_requires_grad_false_and_default_data():
    p = nn.Parameter(lucid.tensor([1, 2]), requires_grad=False)
    assert not p.requires_grad and p.dtype == lucid.int64
    e = nn.Parameter()
    assert tuple(e.shape) == (0,) and e.requires_grad


def test_parameter_dtype_and_device_arguments():
    p = nn.Parameter(lucid.zeros(2), dtype=lucid.float64, device="numpy")
    assert p.dtype == lucid.float64 and p.device == "numpy"
    q = nn.Parameter([[1.0, 2.0]])
    assert tuple(q.shape) == (1, 2) and q.dtype == lucid.float32


def test_only_floating_parameters_require_grad():
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
        nn.Parameter(lucid.tensor([1, 2]))


def test_parameter_ops_return_plain_tensors():
    p = nn.Parameter(lucid.ones(2))
    assert type(p * 2) is lucid.Tensor


def test_parameter_repr():
    assert repr(nn.Parameter(lucid.zeros(2))) == (
        "Parameter containing:\ntensor([0., 0.], requires_grad=True)")


def test_parameter_deepcopy_keeps_type_and_requires_grad():
    p = nn.Parameter(lucid.randn(2))
    p.grad = lucid.ones(2)
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q.grad is None
    assert not np.shares_memory(p.detach().numpy(), q.detach().numpy())
    np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    r = copy.deepcopy(nn.Parameter(lucid.zeros(1), requires_grad=False))
    assert not r.requires_grad


def test_buffer_never_requires_grad_nor_joins_the_graph():
    b = nn.Buffer(lucid.zeros(3))
    assert isinstance(b, lucid.Tensor) and not b.requires_grad and b.persistent
    x = lucid.ones(3, requires_grad=True)
    b.add_(x * 2)  # an in-place update from a tensor that requires grad
    assert not b.requires_grad and b.grad_fn is None
    np.testing.assert_array_equal(b.numpy(), np.full(3, 2.0))
    with pytest.raises(RuntimeError, match="never requires grad"):
        b.requires_grad_(True)
    b.requires_grad_(False)


def test_buffer_unwraps_and_keeps_persistence_on_deepcopy():
    x = lucid.ones(2, requires_grad=True)
    b = nn.Buffer(x * 3, persistent=False)
    assert not b.requires_grad and not b.persistent
    c = copy.deepcopy(b)
    assert type(c) is nn.Buffer and c.persistent is False


def test_parameter_messages_match_torch(both):
    def scenario(fw, nn_):
        return [
            catch(lambda: nn_.Parameter(fw.tensor([1, 2]))),
            repr(nn_.Parameter(fw.zeros(2))),
            repr(nn_.Parameter()),
            repr(nn_.Parameter(fw.tensor([1, 2]), requires_grad=False)),
            repr(nn_.Buffer(fw.zeros(2))),
        ]

    both(scenario)
