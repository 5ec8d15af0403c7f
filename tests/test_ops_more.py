"""Tests beyond the op table for searching/counting ops, scans, combining ops, index writes,
random fills, legacy tensor types and runtime settings: error messages against torch,
in-place forms, printing, threads, constructors and flags."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from devices import DEVICES

import lucid

# ---- bad inputs: the same exception type and message as torch ----------------------------------

ERRORS = [
    ("searchsorted_side", lambda m: m.searchsorted(m.tensor([1, 3]), m.tensor([2]), side="mid")),
    ("searchsorted_opposite", lambda m: m.searchsorted(m.tensor([1, 3]), m.tensor([2]),
                                                       side="left", right=True)),
    ("searchsorted_shape", lambda m: m.searchsorted(m.tensor([[1, 2]]), m.tensor([1, 2]))),
    ("bucketize_2d", lambda m: m.bucketize(m.tensor([1]), m.tensor([[1, 2]]))),
    ("histc_int", lambda m: m.histc(m.tensor([1, 2]), bins=3)),
    ("histc_range", lambda m: m.histc(m.tensor([1.0]), bins=3, min=3, max=1)),
    ("histc_inf", lambda m: m.histc(m.tensor([1.0, float("inf")]))),
    ("bincount_neg", lambda m: m.bincount(m.tensor([-1, 2]))),
    ("bincount_2d", lambda m: m.bincount(m.tensor([[1]]))),
    ("bincount_float", lambda m: m.bincount(m.tensor([1.0]))),
    ("bincount_minlength", lambda m: m.bincount(m.tensor([1]), minlength=-1)),
    ("bincount_weights", lambda m: m.bincount(m.tensor([1, 2]), weights=m.tensor([1.0]))),
    ("kthvalue_k", lambda m: m.kthvalue(m.tensor([1.0, 2.0]), 3)),
    ("mode_empty", lambda m: m.mode(m.zeros(0))),
    ("diff_0d", lambda m: m.diff(m.tensor(1.0))),
    ("diff_order", lambda m: m.diff(m.tensor([1.0]), n=-1)),
    ("diff_prepend", lambda m: m.diff(m.tensor([[1.0]]), append=m.tensor([1.0]))),
    ("logcumsumexp_int", lambda m: m.logcumsumexp(m.tensor([1, 2]), 0)),
    ("rot90_dims", lambda m: m.rot90(m.zeros(2, 2), 1, [0])),
    ("rot90_1d", lambda m: m.rot90(m.zeros(2), 1)),
    ("rot90_same", lambda m: m.rot90(m.zeros(2, 2), 1, [0, 0])),
    ("meshgrid_indexing", lambda m: m.meshgrid(m.zeros(2), indexing="foo")),
    ("combinations_2d", lambda m: m.combinations(m.zeros(2, 2))),
    ("combinations_r", lambda m: m.combinations(m.zeros(2), r=-1)),
    ("cartesian_2d", lambda m: m.cartesian_prod(m.zeros(2, 2), m.zeros(2))),
    ("tensordot_size", lambda m: m.tensordot(m.zeros(2, 3, 4), m.zeros(4, 3), dims=([1], [0]))),
    ("tensordot_neg", lambda m: m.tensordot(m.zeros(2), m.zeros(2), dims=-1)),
    ("tensordot_len", lambda m: m.tensordot(m.zeros(2, 3), m.zeros(3, 2), dims=([1, 0], [0]))),
    ("block_diag_3d", lambda m: m.block_diag(m.zeros(1, 1, 1))),
    ("cdist_int", lambda m: m.cdist(m.tensor([[1, 2]]), m.tensor([[1, 2]]))),
    ("cdist_cols", lambda m: m.cdist(m.zeros(2, 2), m.zeros(2, 3))),
    ("cdist_1d", lambda m: m.cdist(m.zeros(2), m.zeros(2, 2))),
    ("cdist_p", lambda m: m.cdist(m.zeros(2, 2), m.zeros(2, 2), p=-1)),
    ("index_add_dtype", lambda m: m.zeros(3, 2).index_add(0, m.tensor([0]),
                                                          m.zeros(1, 2, dtype=m.float64))),
    ("index_add_float_index", lambda m: m.zeros(3, 2).index_add(0, m.tensor([0.0]),
                                                                m.zeros(1, 2))),
    ("index_add_bounds", lambda m: m.zeros(3, 2).index_add(0, m.tensor([5]), m.zeros(1, 2))),
    ("index_add_count", lambda m: m.zeros(3, 2).index_add(0, m.tensor([0, 1, 0]),
                                                          m.zeros(2, 2))),
    ("index_add_2d_index", lambda m: m.zeros(3, 2).index_add(0, m.tensor([[0]]), m.zeros(1, 2))),
    ("index_copy_dtype", lambda m: m.zeros(3, 2).index_copy(0, m.tensor([0]),
                                                            m.zeros(1, 2, dtype=m.float64))),
    ("index_copy_bounds", lambda m: m.zeros(3, 2).index_copy(0, m.tensor([5]), m.zeros(1, 2))),
    ("index_copy_count", lambda m: m.zeros(3, 2).index_copy(0, m.tensor([0, 1]),
                                                            m.zeros(1, 2))),
    ("index_fill_bounds", lambda m: m.zeros(3, 2).index_fill(0, m.tensor([5]), 1.0)),
    ("index_fill_value", lambda m: m.zeros(3, 2).index_fill(0, m.tensor([0]), m.ones(2))),
    ("index_fill_float_index", lambda m: m.zeros(3, 2).index_fill(0, m.tensor([0.0]), 1.0)),
    ("masked_scatter_short", lambda m: m.zeros(3).masked_scatter(m.tensor([True, True, False]),
                                                                 m.ones(1))),
    ("masked_scatter_mask", lambda m: m.zeros(2).masked_scatter(m.tensor([1, 0]), m.ones(2))),
    ("masked_scatter_dtype", lambda m: m.zeros(2).masked_scatter(
        m.tensor([True, False]), m.ones(2, dtype=m.float64))),
    ("exponential_int", lambda m: m.zeros(3, dtype=m.int64).exponential_()),
    ("exponential_lambda", lambda m: m.zeros(3).exponential_(-1)),
    ("geometric_p", lambda m: m.zeros(3).geometric_(1.5)),
    ("cauchy_sigma", lambda m: m.zeros(3).cauchy_(sigma=0)),
    ("log_normal_std", lambda m: m.zeros(3).log_normal_(std=0)),
    ("random_range", lambda m: m.zeros(3).random_(5, 2)),
    ("random_uint8", lambda m: m.zeros(3, dtype=m.uint8).random_(300)),
    ("rand_like_int", lambda m: m.rand_like(m.zeros(2, dtype=m.int64))),
    ("randn_like_int", lambda m: m.randn_like(m.zeros(2, dtype=m.int64))),
    ("is_nonzero_empty", lambda m: m.is_nonzero(m.tensor([]))),
    ("is_nonzero_many", lambda m: m.is_nonzero(m.tensor([1, 2]))),
    ("zeros_size_twice", lambda m: m.zeros(2, size=(2, 3))),
    ("fliplr_1d", lambda m: m.fliplr(m.zeros(2))),
    ("flipud_0d", lambda m: m.flipud(m.zeros(()))),
    ("roll_align", lambda m: m.roll(m.zeros(2, 3), (1, 1), (0,))),
    ("set_num_threads", lambda m: m.set_num_threads(0)),
]


@pytest.mark.parametrize("name,call", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name: str, call: Any, torch: Any) -> None:
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(Exception) as ours:
        call(lucid)
    assert ours.type is theirs.type, (ours.value, theirs.value)
    first = str(theirs.value).split("\n")[0]
    assert str(ours.value).split("\n")[0] == first


@pytest.mark.parametrize("name,call", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_raised(name: str, call: Any) -> None:
    """Without torch: every bad call fails with a clear error (no crash, no garbage)."""
    with pytest.raises((RuntimeError, TypeError, ValueError, IndexError,
                        NotImplementedError)):
        call(lucid)


# ---- searching and counting on every device ------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_counting_ops_on_devices(device: str) -> None:
    t = lambda v: lucid.tensor(v, device=device)  # noqa: E731
    u, inv, cnt = lucid.unique(t([3, 1, 2, 3, 1]), return_inverse=True, return_counts=True)
    assert u.device.type == device
    assert u.tolist() == [1, 2, 3] and inv.tolist() == [2, 0, 1, 2, 0]
    assert cnt.tolist() == [2, 1, 2]
    assert lucid.searchsorted(t([1, 3, 5]), t([3, 6])).tolist() == [1, 3]
    assert lucid.bucketize(t([1, 5]), t([1, 3, 5]), right=True).tolist() == [1, 3]
    assert lucid.bincount(t([1, 1, 3])).tolist() == [0, 2, 0, 1]
    assert lucid.isin(t([1, 2, 3]), t([2, 3])).tolist() == [False, True, True]
    assert lucid.histc(t([1.0, 2.0, 1.0]), bins=4, min=0, max=3).tolist() == [0, 2, 1, 0]
    v, i = lucid.kthvalue(t([3.0, 1.0, 2.0]), 2)
    assert v.item() == 2.0 and i.item() == 2
    v, i = lucid.mode(t([1, 2, 2, 1, 3]))
    assert v.item() == 1 and i.item() == 3


def test_kthvalue_ties_take_the_stable_order() -> None:
    v, i = lucid.kthvalue(lucid.tensor([[2.0, 1.0, 2.0, 1.0]]), 3, 1)
    assert v.tolist() == [2.0] and i.tolist() == [0]
    v, i = lucid.kthvalue(lucid.tensor([[2.0, 1.0, 2.0, 1.0]]), 2, 1)
    assert v.tolist() == [1.0] and i.tolist() == [3]


def test_unique_numpy_reference() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 6, (5, 7))
    u, inv, cnt = lucid.unique(lucid.tensor(a), return_inverse=True, return_counts=True)
    ru, rinv, rcnt = np.unique(a, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(u.numpy(), ru)
    np.testing.assert_array_equal(inv.numpy(), rinv.reshape(a.shape))
    np.testing.assert_array_equal(cnt.numpy(), rcnt)
    np.testing.assert_array_equal(lucid.unique(lucid.tensor(a), dim=1).numpy(),
                                  np.unique(a, axis=1))


def test_unique_has_no_derivative(torch: Any) -> None:
    x = lucid.tensor([3.0, 1.0, 3.0], requires_grad=True)
    u = lucid.unique(x)
    assert u.requires_grad == torch.unique(torch.tensor([3.0, 1.0], requires_grad=True)
                                           ).requires_grad
    with pytest.raises(RuntimeError, match="derivative for 'unique' is not implemented"):
        u.sum().backward()


def test_unique_nan_each_distinct(torch: Any) -> None:
    x = [float("nan"), 1.0, float("nan")]
    np.testing.assert_array_equal(lucid.unique(lucid.tensor(x)).numpy(),
                                  torch.unique(torch.tensor(x)).numpy())


def test_histogram_matches_torch(torch: Any) -> None:
    x = [1.0, 2.0, 1.0, 4.0, 7.0, -1.0]
    for kw in ({"bins": 4}, {"bins": 3, "range": (0.0, 3.0), "density": True}):
        ours = lucid.histogram(lucid.tensor(x), **kw)
        theirs = torch.histogram(torch.tensor(x), **kw)
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    h, e = lucid.histogram(lucid.tensor(x), bins=lucid.tensor([0.0, 1.0, 2.0, 5.0]))
    assert h.tolist() == [0.0, 2.0, 2.0] and e.tolist() == [0.0, 1.0, 2.0, 5.0]


def test_searchsorted_sorter_and_scalar(torch: Any) -> None:
    seq, vals, order = [5, 1, 3], [2, 4], [1, 2, 0]
    ours = lucid.searchsorted(lucid.tensor(seq), lucid.tensor(vals), sorter=lucid.tensor(order))
    theirs = torch.searchsorted(torch.tensor(seq), torch.tensor(vals), sorter=torch.tensor(order))
    assert ours.tolist() == theirs.tolist()
    s = lucid.searchsorted(lucid.tensor([1, 3, 5]), 5)
    assert s.shape == () and s.item() == 2
    assert lucid.searchsorted(lucid.tensor([1, 3]), lucid.tensor([2]), out_int32=True).dtype \
        is lucid.int32


# ---- scans, combining ops ---------------------------------------------------------------------


def test_cummax_nan_and_ties(torch: Any) -> None:
    for x in ([1.0, float("nan"), 3.0], [1.0, 3.0, 3.0, 2.0, 5.0, 5.0]):
        for fn in ("cummax", "cummin"):
            a = getattr(lucid, fn)(lucid.tensor(x), 0)
            b = getattr(torch, fn)(torch.tensor(x), 0)
            np.testing.assert_array_equal(a.values.numpy(), b.values.numpy())
            assert a.indices.tolist() == b.indices.tolist()


def test_logcumsumexp_is_stable() -> None:
    x = lucid.tensor([-1000.0, 0.0, 1.0, 1000.0], dtype=lucid.float64)
    np.testing.assert_allclose(lucid.logcumsumexp(x, 0).numpy(),
                               np.logaddexp.accumulate(x.numpy()))


def test_meshgrid_warns_without_indexing() -> None:
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        a, b = lucid.meshgrid(lucid.arange(2), lucid.arange(3))
    assert a.shape == (2, 3) and b.shape == (2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lucid.meshgrid([lucid.arange(2), lucid.arange(3)], indexing="ij")


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, float("inf")])
def test_cdist_grads_match_torch(p: float, torch: Any) -> None:
    """Ties and zero distances included: PyTorch's gradient there is zero."""
    a = np.array([[0.0, 0.0], [1.0, 2.0], [1.0, 2.0]])
    b = np.array([[1.0, 2.0], [3.0, 0.5]])
    la, lb = (lucid.tensor(v, requires_grad=True) for v in (a, b))
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    lucid.cdist(la, lb, p).sum().backward()
    torch.cdist(ta, tb, p).sum().backward()
    np.testing.assert_allclose(la.grad.numpy(), ta.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(lb.grad.numpy(), tb.grad.numpy(), atol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf arithmetic
@pytest.mark.parametrize("device", DEVICES)
def test_cdist_zero_norm_propagates_nan_and_answers_row_major(device: str) -> None:
    """p=0 counts the coordinates that differ, as torch's min(ceil(|d|), 1): a NaN
    difference makes the distance NaN, an infinite one counts 1. A transposed x1 still gives
    a row-major result (torch's)."""
    nan, inf = math.nan, math.inf
    a = np.array([[0.0, 1.0, nan], [2.0, inf, 0.0], [1.0, 1.0, 1.0]])
    b = np.array([[0.0, 1.0, 3.0], [inf, inf, 0.0]])
    d = lucid.cdist(lucid.tensor(a, device=device), lucid.tensor(b, device=device), 0.0)
    np.testing.assert_array_equal(d.numpy(), [[nan, nan], [3.0, nan], [2.0, 3.0]])
    x = np.random.default_rng(0).standard_normal((4, 3))
    for p in (0.0, 1.0, 2.0, 3.0, math.inf):
        r = lucid.cdist(lucid.tensor(x.T.copy(), device=device).t(),
                        lucid.tensor(x[:2], device=device), p)
        assert r.is_contiguous()
        ref = np.linalg.norm(x[:, None] - x[None, :2], ord=p, axis=-1)
        np.testing.assert_allclose(r.view(-1).numpy(), ref.reshape(-1), rtol=1e-10, atol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_cdist_zero_norm_nan_matches_torch(torch: Any) -> None:
    nan, inf = math.nan, math.inf
    a = np.array([[0.0, 1.0, nan], [2.0, inf, 0.0], [1.0, 1.0, 1.0], [-inf, 0.0, 0.0]])
    b = np.array([[0.0, 1.0, 3.0], [inf, inf, 0.0], [-inf, 0.0, 0.0]])
    np.testing.assert_array_equal(
        lucid.cdist(lucid.tensor(a), lucid.tensor(b), 0.0).numpy(),
        torch.cdist(torch.tensor(a), torch.tensor(b), 0.0).numpy())


def test_combining_shapes(torch: Any) -> None:
    assert tuple(lucid.block_diag().shape) == tuple(torch.block_diag().shape)
    assert tuple(lucid.combinations(lucid.tensor([1, 2]), r=0).shape) == \
        tuple(torch.combinations(torch.tensor([1, 2]), r=0).shape)
    c = lucid.cartesian_prod(lucid.tensor([1, 2]), lucid.tensor([3, 4]))
    assert c.tolist() == [[1, 3], [1, 4], [2, 3], [2, 4]]


# ---- index writes in place --------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_index_writes_in_place(device: str) -> None:
    x = lucid.zeros(3, 2, device=device)
    assert x.index_add_(0, lucid.tensor([0, 2, 0], device=device), lucid.ones(3, 2,
                        device=device), alpha=2) is x
    assert x.tolist() == [[4.0, 4.0], [0.0, 0.0], [2.0, 2.0]]
    x.index_copy_(1, lucid.tensor([1], device=device), lucid.full((3, 1), 7.0, device=device))
    assert x[:, 1].tolist() == [7.0, 7.0, 7.0]
    x.index_fill_(0, lucid.tensor([-1], device=device), -1.0)
    assert x[2].tolist() == [-1.0, -1.0]
    x.masked_scatter_(lucid.tensor([True, False], device=device),
                      lucid.tensor([9.0, 8.0, 6.0], device=device))
    assert x[:, 0].tolist() == [9.0, 8.0, 6.0]
    v = lucid.zeros(4, 2, device=device)
    v[1:3].index_fill_(1, lucid.tensor([0], device=device), 5.0)  # through a view
    assert v[:, 0].tolist() == [0.0, 5.0, 5.0, 0.0]


def test_index_add_inplace_grads_match_torch(torch: Any) -> None:
    rng = np.random.default_rng(0)
    base, src = rng.standard_normal((4, 3)), rng.standard_normal((3, 3))
    idx = [0, 2, 0]
    res = []
    for m in (lucid, torch):
        b = m.tensor(base, requires_grad=True)
        s = m.tensor(src, requires_grad=True)
        y = b * 2
        y.index_add_(0, m.tensor(idx), s, alpha=3)
        y.index_fill_(1, m.tensor([1]), 0.5)
        (y * m.tensor(np.arange(12.0).reshape(4, 3))).sum().backward()
        res.append((y.detach().numpy(), b.grad.numpy(), s.grad.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_index_fill_tensor_value_gets_grad(torch: Any) -> None:
    out = []
    for m in (lucid, torch):
        v = m.tensor(2.0, dtype=m.float64, requires_grad=True)
        x = m.zeros(3, 4, dtype=m.float64)
        (x.index_fill(1, m.tensor([0, 3]), v) * 3).sum().backward()
        out.append(v.grad.item())
    assert out[0] == out[1] == 18.0


def test_nan_to_num_in_place_and_grad(torch: Any) -> None:
    x = lucid.tensor([float("nan"), float("inf"), -float("inf"), 1.0])
    assert x.nan_to_num_(nan=1.0, posinf=2.0, neginf=-2.0) is x
    assert x.tolist() == [1.0, 2.0, -2.0, 1.0]
    a = lucid.tensor([float("nan"), float("inf"), 1.0], requires_grad=True)
    lucid.nan_to_num(a).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 1.0]
    assert lucid.nan_to_num(lucid.tensor([float("inf")], dtype=lucid.float16)).item() == 65504.0


# ---- random fills and *_like --------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_random_fills(device: str) -> None:
    lucid.manual_seed(0)
    x = lucid.empty(4000, device=device)
    assert x.random_(3, 7) is x
    assert set(np.unique(x.numpy()).tolist()) == {3.0, 4.0, 5.0, 6.0}
    assert set(np.unique(x.random_(2).numpy()).tolist()) == {0.0, 1.0}
    b = lucid.empty(100, dtype=lucid.bool, device=device).random_()
    assert b.dtype is lucid.bool
    i = lucid.empty(1000, dtype=lucid.uint8, device=device).random_()
    assert 200 < i.numpy().max() <= 255
    assert abs(x.exponential_(2.0).numpy().mean() - 0.5) < 0.05
    g = x.geometric_(0.25).numpy()
    assert g.min() >= 1 and abs(g.mean() - 4.0) < 0.3
    assert abs(float(np.median(x.cauchy_(1.0, 2.0).numpy())) - 1.0) < 0.2
    ln = x.log_normal_(0.0, 0.5).numpy()
    assert ln.min() > 0 and abs(np.log(ln).std() - 0.5) < 0.05


def test_random_fill_is_reproducible() -> None:
    lucid.manual_seed(3)
    a = lucid.empty(5).exponential_().numpy()
    lucid.manual_seed(3)
    np.testing.assert_array_equal(lucid.empty(5).exponential_().numpy(), a)


def test_random_fill_refuses_leaf_requiring_grad() -> None:
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        lucid.zeros(3, requires_grad=True).exponential_()


def test_like_factories() -> None:
    x = lucid.zeros(2, 3, dtype=lucid.float64)
    for fn in (lucid.rand_like, lucid.randn_like, lucid.zeros_like, lucid.ones_like,
               lucid.empty_like):
        y = fn(x)
        assert y.shape == (2, 3) and y.dtype is lucid.float64 and not y.requires_grad
        z = fn(x, dtype=lucid.float32, requires_grad=True, device="numpy")
        assert z.dtype is lucid.float32 and z.requires_grad and z.device.type == "numpy"
    r = lucid.randint_like(x, 5)
    assert r.dtype is lucid.float64 and 0 <= r.numpy().min() and r.numpy().max() < 5
    r = lucid.randint_like(lucid.zeros(200, dtype=lucid.int32), 3, 5)
    assert r.dtype is lucid.int32 and set(np.unique(r.numpy()).tolist()) == {3, 4}
    assert lucid.full_like(x, 7, dtype=lucid.int64).tolist() == [[7] * 3] * 2


def test_size_keyword_and_randint_forms() -> None:
    for fn in (lucid.zeros, lucid.ones, lucid.empty, lucid.rand, lucid.randn):
        assert fn(size=(2, 3)).shape == (2, 3)
        assert fn(size=[4]).shape == (4,)
    assert lucid.randint(3, 10, (2,)).shape == (2,)
    assert lucid.randint(10, (2, 2)).shape == (2, 2)
    assert lucid.randint(5, size=(3,)).numpy().max() < 5
    r = lucid.randint(low=2, high=5, size=(50,)).numpy()
    assert r.min() >= 2 and r.max() < 5
    assert lucid.randint(high=5, size=(2,)).shape == (2,)


# ---- legacy types, facts and flags ------------------------------------------------------------


def test_constants(torch: Any) -> None:
    assert lucid.inf == math.inf and math.isnan(lucid.nan)
    assert lucid.pi == torch.pi and lucid.e == torch.e and lucid.newaxis is None
    assert lucid.zeros(3)[lucid.newaxis].shape == (1, 3)


def test_legacy_constructors() -> None:
    assert lucid.FloatTensor(2, 3).dtype is lucid.float32
    assert lucid.FloatTensor(2, 3).shape == (2, 3)
    assert lucid.LongTensor([1, 2]).tolist() == [1, 2]
    assert lucid.LongTensor([1, 2]).dtype is lucid.int64
    assert lucid.DoubleTensor([0.5]).dtype is lucid.float64
    assert lucid.IntTensor(lucid.Size([2])).shape == (2,)
    assert lucid.BoolTensor([True]).dtype is lucid.bool
    assert lucid.ByteTensor([1]).dtype is lucid.uint8
    assert lucid.HalfTensor([1.0]).dtype is lucid.float16
    assert lucid.FloatTensor().shape == (0,)
    x = lucid.ones(2)
    assert isinstance(x, lucid.FloatTensor) and not isinstance(x, lucid.LongTensor)
    assert isinstance(x.long(), lucid.LongTensor)
    assert not isinstance(np.zeros(2), lucid.FloatTensor)
    with pytest.raises(TypeError, match=r"expected Float \(got Long\)"):
        lucid.FloatTensor(lucid.tensor([1]))


def test_type_names_and_casts(torch: Any) -> None:
    x = lucid.ones(2)
    assert x.type() == "lucid.FloatTensor"
    assert x.long().type() == "lucid.LongTensor"
    assert torch.ones(2).type() == "torch.FloatTensor"  # the same scheme, lucid's prefix
    assert x.type(lucid.float64).dtype is lucid.float64
    assert x.type("torch.LongTensor").dtype is lucid.int64
    assert x.type("lucid.IntTensor").dtype is lucid.int32
    assert x.type(lucid.LongTensor).dtype is lucid.int64
    assert x.type(lucid.float32) is x
    with pytest.raises(ValueError, match="invalid type"):
        x.type("torch.NoSuchTensor")


def test_data_ptr() -> None:
    x = lucid.arange(6.0)
    assert x.data_ptr() == x.data_ptr() == x.detach().data_ptr()
    assert x[2:].data_ptr() - x.data_ptr() == 2 * x.element_size()
    assert x.view(2, 3).data_ptr() == x.data_ptr()
    assert x.clone().data_ptr() != x.data_ptr()
    assert lucid.zeros(0).data_ptr() == 0


@pytest.mark.parametrize("device", DEVICES)
def test_flags(device: str) -> None:
    x = lucid.zeros(2, device=device)
    assert x.is_cpu == (device != "gpu") and x.is_cuda == (device == "gpu")
    for flag in ("is_xpu", "is_mps", "is_meta", "is_sparse", "is_quantized", "is_nested"):
        assert getattr(x, flag) is False


def test_is_nonzero_view_as_reshape_as() -> None:
    assert lucid.is_nonzero(lucid.tensor([1.0])) and not lucid.tensor([[0]]).is_nonzero()
    x = lucid.arange(6.0)
    assert x.view_as(lucid.zeros(2, 3)).shape == (2, 3)
    assert x.view(2, 3).t().reshape_as(x).shape == (6,)
    assert lucid.is_tensor(x) and lucid.is_floating_point(x) and lucid.numel(x) == 6


def test_range_index(torch: Any) -> None:
    a = np.arange(10.0).reshape(5, 2)
    for idx in (range(3), range(1, 5, 2), range(0)):
        np.testing.assert_array_equal(lucid.tensor(a)[idx].numpy(),
                                      torch.tensor(a)[idx].numpy())
    x = lucid.zeros(4)
    x[range(2)] = 1.0
    assert x.tolist() == [1.0, 1.0, 0.0, 0.0]


# ---- runtime settings -------------------------------------------------------------------------


@pytest.fixture
def default_printoptions() -> Any:
    yield
    lucid.set_printoptions(profile="default")


PRINT_CASES = [
    ({"precision": 2}, [1.23456, 2.0]),
    ({"sci_mode": True}, [1.23456, 2.0]),
    ({"sci_mode": False}, [1e-8, 2e9]),
    ({"threshold": 5, "edgeitems": 1}, list(range(10))),
    ({"threshold": 5, "edgeitems": 1}, np.arange(12).reshape(3, 4)),
    ({"linewidth": 20}, [float(i) for i in range(10)]),
    ({"profile": "short"}, np.linspace(0, 1, 1200).tolist()),
    ({"profile": "full"}, list(range(1200))),
    ({"profile": "short", "precision": 6}, [1.0 / 3.0]),
]


@pytest.mark.parametrize("opts,data", PRINT_CASES)
def test_printoptions_match_torch(opts: dict, data: Any, torch: Any,
                                  default_printoptions: Any) -> None:
    lucid.set_printoptions(**opts)
    torch.set_printoptions(**opts)
    try:
        ours = repr(lucid.tensor(data))
        theirs = repr(torch.tensor(data))
    finally:
        torch.set_printoptions(profile="default")
    assert ours == theirs


def test_printoptions_reset(default_printoptions: Any) -> None:
    lucid.set_printoptions(precision=1)
    assert repr(lucid.tensor([1.25])) == "tensor([1.2])"
    lucid.set_printoptions(profile="default")
    assert repr(lucid.tensor([1.23456])) == "tensor([1.2346])"


def test_num_threads() -> None:
    before = lucid.get_num_threads()
    try:
        lucid.set_num_threads(1)
        assert lucid.get_num_threads() == 1
        assert lucid.ones(1000).sum().item() == 1000.0
    finally:
        lucid.set_num_threads(before)
    assert lucid.get_num_threads() == before
    assert lucid.get_num_interop_threads() >= 1


def test_deterministic_switch() -> None:
    assert lucid.are_deterministic_algorithms_enabled() is False
    with pytest.raises(TypeError, match="must be bool, not str"):
        lucid.use_deterministic_algorithms("x")  # type: ignore[arg-type]
    try:
        lucid.use_deterministic_algorithms(True, warn_only=True)
        assert lucid.are_deterministic_algorithms_enabled() is True
        assert lucid.is_deterministic_algorithms_warn_only_enabled() is True
    finally:
        lucid.use_deterministic_algorithms(False)
    assert lucid.are_deterministic_algorithms_enabled() is False
