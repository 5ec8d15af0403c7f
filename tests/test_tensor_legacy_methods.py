"""Tensor methods torch keeps beside its functions or from its older API: ``new``, ``put_``,
``index_reduce_``, ``slice_scatter`` / ``select_scatter``, ``H`` / ``mH`` / ``adjoint``, the
in-place special functions, ``dim_order``, ``get_device`` and the aliases of ``split`` and
``chunk``; values and gradients against numpy and, where installed, torch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid


def _pair(torch: Any, a: np.ndarray, grad: bool = False) -> tuple[Any, Any]:
    return (lucid.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad))


def test_put_writes_row_major_positions_of_any_layout() -> None:
    x = lucid.zeros(2, 3).t()  # (3, 2), not contiguous
    x.put_(lucid.tensor([1, 3, -1]), lucid.tensor([9.0, 8.0, 7.0]))
    np.testing.assert_array_equal(x.numpy(), [[0, 9], [0, 8], [0, 7]])
    y = lucid.zeros(4)
    y.put_(lucid.tensor([1, 1, 2]), lucid.tensor([1.0, 2.0, 3.0]), accumulate=True)
    np.testing.assert_array_equal(y.numpy(), [0, 3, 3, 0])
    s = lucid.tensor(5.0)
    s.put_(lucid.tensor([0]), lucid.tensor([2.0]))
    assert s.item() == 2.0
    with pytest.raises(IndexError, match="tried to access index 7 on a tensor of 6 elements"):
        lucid.zeros(2, 3).put_(lucid.tensor([7]), lucid.tensor([1.0]))
    with pytest.raises(RuntimeError, match="same number of elements"):
        lucid.zeros(3).put_(lucid.tensor([0, 1]), lucid.tensor([1.0]))


def test_put_gradients_match_torch(torch: Any) -> None:
    rng = np.random.default_rng(0)
    a, src = rng.standard_normal((3, 4)), rng.standard_normal(3)
    for acc in (False, True):
        la, ta = _pair(torch, a, True)
        ls, ts = _pair(torch, src, True)
        idx = [5, 0, 11]
        lo = la.put(lucid.tensor(idx), ls, accumulate=acc)
        to = ta.put(torch.tensor(idx), ts, accumulate=acc)
        w = rng.standard_normal((3, 4))
        (lo * lucid.tensor(w)).sum().backward()
        (to * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy())
        np.testing.assert_allclose(la.grad.numpy(), ta.grad.numpy())
        np.testing.assert_allclose(ls.grad.numpy(), ts.grad.numpy())


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1])
def test_index_reduce_matches_torch(torch: Any, reduce: str, include_self: bool,
                                    dim: int) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 5))
    src = rng.standard_normal((3, 5) if dim == 0 else (4, 3))
    idx = [2, 0, 2]
    got = lucid.tensor(x).index_reduce_(dim, lucid.tensor(idx), lucid.tensor(src), reduce,
                                        include_self=include_self)
    want = torch.tensor(x).index_reduce_(dim, torch.tensor(idx), torch.tensor(src), reduce,
                                         include_self=include_self)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    out = lucid.tensor(x).index_reduce(dim, lucid.tensor(idx), lucid.tensor(src), reduce)
    assert out.shape == (4, 5)


def test_index_reduce_checks_its_reduction() -> None:
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax"):
        lucid.zeros(3).index_reduce_(0, lucid.tensor([0]), lucid.ones(1), "sum")


def test_slice_and_select_scatter_values_and_gradients(torch: Any) -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 3))
    cases = [
        ("slice_scatter", rng.standard_normal((2, 3)), dict(dim=0, start=1, end=3)),
        ("slice_scatter", rng.standard_normal((4, 2)), dict(dim=1, start=0, end=3, step=2)),
        ("select_scatter", rng.standard_normal(3), dict(dim=0, index=-1)),
    ]
    for name, s, kw in cases:
        la, ta = _pair(torch, a, True)
        ls, ts = _pair(torch, s, True)
        lo = getattr(lucid, name)(la, ls, **kw)
        to = getattr(torch, name)(ta, ts, **kw)
        assert np.array_equal(getattr(la, name)(ls, **kw).detach().numpy(), lo.detach().numpy())
        w = rng.standard_normal(a.shape)
        (lo * lucid.tensor(w)).sum().backward()
        (to * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy())
        np.testing.assert_allclose(la.grad.numpy(), ta.grad.numpy())
        np.testing.assert_allclose(ls.grad.numpy(), ts.grad.numpy())
        np.testing.assert_array_equal(la.detach().numpy(), a)  # the input is not written


def test_conjugate_transposes() -> None:
    z = np.array([[1 + 2j, 3 - 1j, 0.5j]])
    t = lucid.tensor(z)
    np.testing.assert_array_equal(t.H.numpy(), z.conj().T)
    np.testing.assert_array_equal(t.mH.numpy(), z.conj().T)
    b = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(lucid.tensor(b).adjoint().numpy(), b.transpose(0, 2, 1))
    np.testing.assert_array_equal(lucid.adjoint(lucid.tensor(b)).numpy(), b.transpose(0, 2, 1))
    with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices .* consider "
                                           "using tensor.mH"):
        _ = lucid.tensor(b).H
    with pytest.raises(RuntimeError, match=r"tensor.mH is only supported .* Got 1-D tensor"):
        _ = lucid.zeros(3).mH
    with pytest.raises(RuntimeError, match=r"adjoint\(\) is only supported"):
        lucid.zeros(3).adjoint()


def test_legacy_new_and_device_facts() -> None:
    x = lucid.zeros(2, dtype=lucid.float64)
    assert x.new().shape == (0,) and x.new().dtype is lucid.float64
    assert x.new(2, 3).shape == (2, 3) and x.new(lucid.Size([4])).shape == (4,)
    d = x.new((2, 3))  # a tuple of numbers is data, as in torch
    assert d.tolist() == [2.0, 3.0] and d.dtype is lucid.float64
    assert lucid.zeros(2, dtype=lucid.int64).new([1.5, 2]).tolist() == [1, 2]
    with pytest.raises(TypeError, match="must be tuple of ints"):
        x.new(2, 1.5)
    assert x.get_device() == -1
    assert x.to_dense() is x and x.resolve_neg() is x and x.pin_memory() is x
    assert not x.is_pinned() and not x.is_neg() and not x.is_inference()
    assert lucid.zeros(2, 3, 4).permute(2, 0, 1).dim_order() == (1, 2, 0)
    assert lucid.zeros(2, 3).dim_order() == (0, 1)


def test_split_and_chunk_aliases_and_narrow_copy() -> None:
    x = lucid.arange(10.0)
    assert [p.tolist() for p in x.split_with_sizes([3, 7])] == [list(range(3)),
                                                                list(range(3, 10))]
    assert [len(p) for p in x.unsafe_split(4)] == [4, 4, 2]
    assert [len(p) for p in x.unsafe_chunk(3)] == [4, 4, 2]
    n = x.narrow_copy(0, 2, 3)
    n[0] = 100.0
    assert n.tolist() == [100.0, 3.0, 4.0] and x[2].item() == 2.0  # a copy, not a view


def test_inplace_special_functions_and_closeness() -> None:
    v = np.array([0.1, 0.5, 0.9])
    for name in ("erf", "erfc", "erfinv", "lgamma", "digamma"):
        t = lucid.tensor(v)
        out = getattr(t, name + "_")()
        assert out is t
        np.testing.assert_allclose(t.numpy(), getattr(lucid, name)(lucid.tensor(v)).numpy())
    a = lucid.tensor([1.0, float("nan")])
    assert not a.allclose(a) and a.allclose(a, equal_nan=True)
    assert a.isclose(a, equal_nan=True).tolist() == [True, True]
    assert a[:1].equal(lucid.tensor([1.0])) and not a[:1].equal(lucid.tensor([1.0, 2.0]))
    assert lucid.tensor([1.0, 2.0]).cfloat().dtype is lucid.complex64
    assert lucid.tensor([1.0, 2.0]).cdouble().dtype is lucid.complex128
    np.testing.assert_allclose(lucid.tensor([-1.0, 0.2, 2.0]).hardshrink(0.5).numpy(),
                               [-1.0, 0.0, 2.0])
