"""Sparse COO tensors (lucid.sparse): construction, coalescing, sparse @ dense and its
gradients, a 2-layer GCN step, bad input; against numpy references and torch."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from devices import DEVICES, gpu_float64

import lucid
import lucid.nn.functional as F


def _dtype(device: str) -> Any:
    return lucid.float64 if device != "gpu" or gpu_float64() else lucid.float32


def _graph(n: int, m: int, nnz: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random unique (row, col) pairs, unsorted, with random values."""
    rng = np.random.default_rng(seed)
    lin = rng.choice(n * m, size=nnz, replace=False)
    idx = np.stack(np.unravel_index(lin, (n, m))).astype(np.int64)
    return idx, rng.standard_normal(nnz)


def _dense_ref(idx: np.ndarray, vals: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    out = np.zeros(shape, vals.dtype)
    np.add.at(out, tuple(idx), vals)
    return out


def _np(t: lucid.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


# ---- construction and structure ---------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_construct_properties_and_to_dense(device):
    idx, vals = _graph(5, 4, 7)
    s = lucid.sparse_coo_tensor(idx.tolist(), vals, (5, 4), device=device)
    assert isinstance(s, lucid.Tensor) and isinstance(s, lucid.sparse.SparseCooTensor)
    assert s.is_sparse and s.layout is lucid.sparse_coo and s.layout == lucid.sparse_coo
    assert s.shape == lucid.Size([5, 4]) and s.size() == (5, 4) and s.size(1) == 4
    assert s.dtype is lucid.float64 and s.device == s._values().device
    assert (s._nnz(), s.sparse_dim(), s.dense_dim(), s.dim(), s.ndim) == (7, 2, 0, 2, 2)
    assert s._indices().dtype is lucid.int64 and not s.is_coalesced()
    np.testing.assert_allclose(_np(s.to_dense()), _dense_ref(idx, vals, (5, 4)))
    c = s.coalesce()
    assert c.is_coalesced() and c.coalesce() is c
    lin = np.ravel_multi_index(tuple(_np(c.indices())), (5, 4))
    assert (np.diff(lin) > 0).all()
    np.testing.assert_allclose(_np(c.to_dense()), _dense_ref(idx, vals, (5, 4)))
    assert not lucid.randn(2, device=device).is_sparse
    assert lucid.randn(2, device=device).layout is lucid.strided


def test_inferred_size_dtype_and_hybrid():
    s = lucid.sparse_coo_tensor([[0, 2], [1, 0]], [1, 2])
    assert s.shape == (3, 2) and s.dtype is lucid.int64
    s = lucid.sparse_coo_tensor([[0, 1]], lucid.ones(2, 3), dtype=lucid.float64)
    assert s.shape == (2, 3) and (s.sparse_dim(), s.dense_dim()) == (1, 1)
    assert s.dtype is lucid.float64 and s.is_coalesced() is False
    e = lucid.sparse_coo_tensor(lucid.zeros(2, 0, dtype=lucid.int64), lucid.zeros(0), (2, 3))
    assert e._nnz() == 0 and _np(e.to_dense()).tolist() == [[0.0] * 3] * 2
    assert lucid.sparse_coo_tensor([[1]], [1.0], (2,)).is_coalesced()  # nnz <= 1
    assert lucid.sparse_coo_tensor([[0, 1]], [1.0, 2.0], is_coalesced=True).is_coalesced()


def test_coalesce_sums_duplicates_and_backprops():
    idx = np.array([[1, 0, 1, 0], [2, 1, 2, 0]])
    v = lucid.tensor([1.0, 2.0, 3.0, 4.0], dtype=lucid.float64, requires_grad=True)
    c = lucid.sparse_coo_tensor(idx, v, (2, 3)).coalesce()
    assert _np(c.indices()).tolist() == [[0, 0, 1], [0, 1, 2]]
    assert _np(c.values()).tolist() == [4.0, 2.0, 4.0]
    (c.values() * lucid.tensor([1.0, 10.0, 100.0], dtype=lucid.float64)).sum().backward()
    assert _np(v.grad).tolist() == [100.0, 10.0, 100.0, 1.0]


def test_uncoalesced_accessors_raise():
    s = lucid.sparse_coo_tensor([[1, 0]], [1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"Cannot get indices on an uncoalesced tensor, "
                                           r"please call \.coalesce\(\) first"):
        s.indices()
    with pytest.raises(RuntimeError, match="Cannot get values on an uncoalesced tensor"):
        s.values()
    assert _np(s._values()).tolist() == [1.0, 2.0]


def test_to_sparse_roundtrip():
    a = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -3.0]])
    s = lucid.tensor(a).to_sparse()
    assert s.is_coalesced() and s._nnz() == 3
    assert _np(s.indices()).tolist() == [[0, 1, 1], [1, 0, 2]]
    np.testing.assert_array_equal(_np(s.to_dense()), a)
    s1 = lucid.tensor(a).to_sparse(1)
    assert (s1.sparse_dim(), s1.dense_dim(), s1._nnz()) == (1, 1, 2)
    np.testing.assert_array_equal(_np(s1.to_dense()), a)
    assert lucid.tensor(a).to_sparse_coo()._nnz() == 3 and s.to_sparse() is s


def test_transpose_scale_add_sum():
    idx, vals = _graph(4, 3, 5, seed=3)
    s = lucid.sparse_coo_tensor(idx, vals, (4, 3))
    ref = _dense_ref(idx, vals, (4, 3))
    np.testing.assert_allclose(_np(s.t().to_dense()), ref.T)
    np.testing.assert_allclose(_np((s * 2.5).to_dense()), 2.5 * ref)
    np.testing.assert_allclose(_np((3 * s).to_dense()), 3 * ref)
    np.testing.assert_allclose(_np(s.mul(lucid.tensor(2.0)).to_dense()), 2 * ref)
    t = lucid.sparse_coo_tensor([[0, 3], [2, 0]], [1.0, 1.0], (4, 3), dtype=lucid.float64)
    out = s + t
    assert isinstance(out, lucid.sparse.SparseCooTensor) and out.is_coalesced()
    np.testing.assert_allclose(_np(out.to_dense()), ref + _np(t.to_dense()))
    np.testing.assert_allclose(_np(lucid.sparse.sum(s)), ref.sum())
    np.testing.assert_allclose(_np(s.sum()), ref.sum())
    np.testing.assert_allclose(_np(lucid.sparse.sum(s, 0).to_dense()), ref.sum(0))
    np.testing.assert_allclose(_np(lucid.sparse.sum(s, dim=-1).to_dense()), ref.sum(1))
    np.testing.assert_allclose(_np(lucid.sparse.sum(s, dim=(0, 1))), ref.sum())


# ---- sparse @ dense ------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_spmm_values_and_gradients(device):
    dt = _dtype(device)
    idx, vals = _graph(7, 6, 15, seed=1)
    rng = np.random.default_rng(2)
    dense, g = rng.standard_normal((6, 3)), rng.standard_normal((7, 3))
    v = lucid.tensor(vals, dtype=dt, device=device, requires_grad=True)
    d = lucid.tensor(dense, dtype=dt, device=device, requires_grad=True)
    s = lucid.sparse_coo_tensor(idx, v, (7, 6))
    out = lucid.sparse.mm(s, d)
    a = _dense_ref(idx, vals, (7, 6))
    tol = 1e-12 if dt is lucid.float64 else 1e-5
    np.testing.assert_allclose(_np(out), a @ dense, rtol=tol, atol=tol)
    out.backward(lucid.tensor(g, dtype=dt, device=device))
    np.testing.assert_allclose(_np(d.grad), a.T @ g, rtol=tol, atol=tol)
    np.testing.assert_allclose(_np(v.grad), (g @ dense.T)[idx[0], idx[1]], rtol=tol, atol=tol)
    for other in (s @ d, lucid.mm(s, d), lucid.matmul(s, d), lucid.spmm(s, d), s.mm(d)):
        np.testing.assert_allclose(_np(other), a @ dense, rtol=tol, atol=tol)
    np.testing.assert_allclose(_np(s @ d[:, 0]), a @ dense[:, 0], rtol=tol, atol=tol)
    bias = rng.standard_normal((7, 3))
    am = lucid.sparse.addmm(lucid.tensor(bias, dtype=dt, device=device), s, d, beta=0.5,
                            alpha=2.0)
    np.testing.assert_allclose(_np(am), 0.5 * bias + 2 * a @ dense, rtol=tol, atol=tol)


@pytest.mark.parametrize("device", DEVICES)
def test_to_dense_gradient_and_device_moves(device):
    dt = _dtype(device)
    idx = np.array([[0, 2, 0], [1, 1, 1]])
    v = lucid.tensor([1.0, 2.0, 3.0], dtype=dt, requires_grad=True)
    s = lucid.sparse_coo_tensor(idx, v, (3, 2)).to(device)
    assert s._indices().device == s._values().device == s.device
    w = np.arange(6.0).reshape(3, 2)
    (s.to_dense() * lucid.tensor(w, dtype=dt, device=device)).sum().backward()
    assert _np(v.grad).tolist() == [1.0, 5.0, 1.0]
    back = s.to("cpu")
    assert back.device.type == "cpu" and _np(back.to_dense()).tolist() == [[0, 4], [0, 0], [0, 2]]


def test_sparse_leaf_gets_a_gradient_on_its_pattern():
    idx, vals = _graph(5, 5, 8, seed=4)
    s = lucid.sparse_coo_tensor(idx, vals, (5, 5), requires_grad=True)
    assert s.requires_grad and s.is_leaf and s.grad is None
    d = lucid.randn(5, 2, dtype=lucid.float64)
    (s @ d).pow(2).sum().backward()
    g = s.grad
    assert isinstance(g, lucid.sparse.SparseCooTensor) and g._nnz() == 8
    out = _dense_ref(idx, vals, (5, 5)) @ _np(d)
    np.testing.assert_allclose(_np(g._values()), (2 * out @ _np(d).T)[idx[0], idx[1]])


def test_gradcheck_float64():
    idx, vals = _graph(4, 5, 9, seed=5)
    v = lucid.tensor(vals, dtype=lucid.float64, requires_grad=True)
    d = lucid.randn(5, 3, dtype=lucid.float64, requires_grad=True)

    def spmm(v, d):
        return lucid.sparse.mm(lucid.sparse_coo_tensor(idx, v, (4, 5)), d)

    def dense(v):
        return lucid.sparse_coo_tensor(idx, v, (4, 5)).coalesce().to_dense()

    def soft(v):
        return lucid.sparse.softmax(lucid.sparse_coo_tensor(idx, v, (4, 5)), 1).to_dense()

    def rowsum(v):
        return lucid.sparse.sum(lucid.sparse_coo_tensor(idx, v, (4, 5)), 1).to_dense()

    assert lucid.autograd.gradcheck(spmm, (v, d))
    assert lucid.autograd.gradcheck(dense, (v,))
    assert lucid.autograd.gradcheck(soft, (v,))
    assert lucid.autograd.gradcheck(rowsum, (v,))

    def logsoft(v):
        return lucid.sparse.log_softmax(lucid.sparse_coo_tensor(idx, v, (4, 5)), 0)._values()

    assert lucid.autograd.gradcheck(logsoft, (v,))


@pytest.mark.parametrize("device", DEVICES)
def test_duplicates_on_every_device(device):
    dt = _dtype(device)
    idx = np.array([[2, 0, 2, 1, 0], [1, 0, 1, 1, 0]])
    v = lucid.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=dt, device=device, requires_grad=True)
    s = lucid.sparse_coo_tensor(idx, v, (3, 2))
    c = s.coalesce()
    assert _np(c.indices()).tolist() == [[0, 1, 2], [0, 1, 1]]
    assert _np(c.values()).tolist() == [7.0, 4.0, 4.0]
    d = lucid.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=dt, device=device)
    np.testing.assert_allclose(_np(s @ d), _dense_ref(idx, _np(v), (3, 2)) @ _np(d))
    (c @ d).sum().backward()
    np.testing.assert_allclose(_np(v.grad), [7.0, 3.0, 7.0, 7.0, 3.0])


def test_legacy_constructor_and_dense_fallback():
    s = lucid.sparse.FloatTensor(lucid.tensor([[0, 1], [1, 0]]), lucid.tensor([1.0, 2.0]),
                                 lucid.Size([2, 2]))
    assert s.dtype is lucid.float32 and _np(s.to_dense()).tolist() == [[0, 1], [2, 0]]
    assert lucid.sparse.DoubleTensor([[0]], [1.0], (1,)).dtype is lucid.float64
    out = lucid.sparse.mm(lucid.ones(2, 2), lucid.ones(2, 3))  # dense operands: a plain mm
    assert _np(out).tolist() == [[2.0] * 3] * 2


def test_softmax_reference():
    idx, vals = _graph(4, 6, 10, seed=6)
    out = _np(lucid.sparse.softmax(lucid.sparse_coo_tensor(idx, vals, (4, 6)), 1).to_dense())
    for r in range(4):
        m = idx[0] == r
        if m.any():
            e = np.exp(vals[m] - vals[m].max())
            np.testing.assert_allclose(out[r, idx[1][m]], e / e.sum())


def test_large_graph_is_never_densified():
    n, nnz = 100_000, 200_000
    rng = np.random.default_rng(0)
    idx = rng.integers(0, n, size=(2, nnz))
    s = lucid.sparse_coo_tensor(idx, np.ones(nnz, np.float32), (n, n))
    x = lucid.ones(n, 4, requires_grad=True)
    out = s @ x
    out.sum().backward()
    deg = np.bincount(idx[0], minlength=n)
    np.testing.assert_allclose(_np(out)[:, 0], deg)
    np.testing.assert_allclose(_np(x.grad)[:, 0], np.bincount(idx[1], minlength=n))


# ---- bad input -------------------------------------------------------------------------------

def _bad_cases():
    i = [[0, 1, 1], [2, 0, 2]]
    v = [3.0, 4.0, 5.0]
    return [
        ((i, v, (2, 2)), r"size is inconsistent with indices: for dim 1, size is 2 but found "
                         r"index 2"),
        (([[0, -1, 1], [2, 0, 2]], v, (2, 3)), "found negative index -1 for dim 0"),
        (([[0, -1, 1], [2, 0, 2]], v, None), "found negative index -1 for dim 0"),
        (([0, 1, 1], v, None), r"indices must be sparse_dim x nnz, but got: \[3\]"),
        (([[[0, 1, 1]]], v, None), r"indices must be sparse_dim x nnz, but got: \[1, 1, 3\]"),
        ((i, [1.0, 2.0, 3.0, 4.0], (2, 3)), "indices and values must have same nnz, but got "
                                            "nnz from indices: 3, nnz from values: 4"),
        ((i, v, (2,)), r"'len\(size\) == sparse_dim \+ dense_dim' is not satisfied: len\(size\)"
                       r" = 1, sparse_dim = 2, dense_dim = 0"),
        ((i, np.ones((3, 2)), (2, 3, 4)), r"values has incorrect size, expected \[3, 4\], got "
                                          r"\[3, 2\]"),
    ]


@pytest.mark.parametrize("case", range(8))
def test_bad_construction(case):
    args, msg = _bad_cases()[case]
    with pytest.raises(RuntimeError, match=msg):
        lucid.sparse_coo_tensor(*args)


@pytest.mark.parametrize("case", range(8))
def test_bad_construction_matches_torch(torch, case):
    args, msg = _bad_cases()[case]
    ti, tv, size = args
    targs = (torch.tensor(ti), torch.tensor(tv)) + ((size,) if size is not None else ())
    with pytest.raises(RuntimeError, match=msg):
        torch.sparse_coo_tensor(*targs, check_invariants=True)


def test_bad_products_and_ops():
    s = lucid.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
    with pytest.raises(RuntimeError, match="addmm: Argument #3 \\(dense\\): Expected dim 0 "
                                           "size 3, got 4"):
        lucid.sparse.mm(s, lucid.ones(4, 2))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        lucid.sparse.mm(s, lucid.ones(3, 2, dtype=lucid.float64))
    with pytest.raises(IndexError, match="Dimension out of range"):
        lucid.sparse.mm(s, lucid.ones(3))
    with pytest.raises(RuntimeError, match=r"add: expected sizes of 'self' and 'other' to "
                                           r"match, but \[2, 3\] != \[3, 3\]"):
        s + lucid.sparse_coo_tensor([[0], [0]], [1.0], (3, 3))
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        lucid.sparse_coo_tensor([[0]], [1], (2,), requires_grad=True)
    with pytest.raises(NotImplementedError, match="'SparseCPU' backend"):
        lucid.relu(s)
    with pytest.raises(NotImplementedError, match="'SparseCPU' backend"):
        s.exp()


# ---- against torch ---------------------------------------------------------------------------

def test_repr_matches_torch(torch):
    i = [[0, 1, 1], [2, 0, 2]]
    cases = [(i, [3.0, 4.0, 5.0], (2, 3), {}), (i, [1, 2, 3], None, {}),
             (i, [[0.5, -1.0], [2.0, 3.0], [1.0, 0.0]], (2, 3, 2), {}),
             (i, [1.0, 2.0, 3.0], (2, 3), {"dtype": "float64"}),
             (i, [1.0, 2.0, 3.0], (2, 3), {"requires_grad": True})]
    for ix, v, size, kw in cases:
        lk = {k: getattr(lucid, w) if k == "dtype" else w for k, w in kw.items()}
        tk = {k: getattr(torch, w) if k == "dtype" else w for k, w in kw.items()}
        a = lucid.sparse_coo_tensor(ix, v, size, **lk)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b = torch.sparse_coo_tensor(ix, v, *([size] if size else []), **tk)
        assert repr(a) == repr(b).replace("torch.", "lucid.")
    e = lucid.sparse_coo_tensor(lucid.zeros(2, 0, dtype=lucid.int64), lucid.zeros(0), (2, 3))
    te = torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long), torch.zeros(0), (2, 3))
    assert repr(e) == repr(te).replace("torch.", "lucid.")


def test_sparse_mm_gradients_match_torch(torch):
    idx, vals = _graph(6, 5, 12, seed=7)
    dense = np.random.default_rng(8).standard_normal((5, 4))
    ls = lucid.sparse_coo_tensor(idx, vals, (6, 5), requires_grad=True)
    ld = lucid.tensor(dense, requires_grad=True)
    ts = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), (6, 5),
                                 requires_grad=True)
    td = torch.tensor(dense, requires_grad=True)
    lo, to = lucid.sparse.mm(ls, ld), torch.sparse.mm(ts, td)
    np.testing.assert_allclose(_np(lo), to.detach().numpy(), rtol=1e-12)
    (lo * lo).sum().backward()
    (to * to).sum().backward()
    np.testing.assert_allclose(_np(ld.grad), td.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(_np(ls.grad.to_dense()), ts.grad.to_dense().numpy(), rtol=1e-12)


def test_structure_ops_match_torch(torch):
    idx = np.array([[1, 0, 1, 0, 2], [2, 1, 2, 0, 0]])
    vals = np.arange(1.0, 6.0)
    ls = lucid.sparse_coo_tensor(idx, vals, (3, 3))
    ts = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), (3, 3))
    lc, tc = ls.coalesce(), ts.coalesce()
    np.testing.assert_array_equal(_np(lc.indices()), tc.indices().numpy())
    np.testing.assert_array_equal(_np(lc.values()), tc.values().numpy())
    for lf, tf in [(lambda s: s.t(), lambda s: s.t()),
                   (lambda s: s * 2, lambda s: s * 2),
                   (lambda s: s + s, lambda s: s + s),
                   (lambda s: lucid.sparse.sum(s, 1), lambda s: torch.sparse.sum(s, 1)),
                   (lambda s: lucid.sparse.softmax(s, 1), lambda s: torch.sparse.softmax(s, 1)),
                   (lambda s: lucid.sparse.softmax(s, 0), lambda s: torch.sparse.softmax(s, 0)),
                   (lambda s: lucid.sparse.log_softmax(s, 1),
                    lambda s: torch.sparse.log_softmax(s, 1))]:
        np.testing.assert_allclose(_np(lf(ls).to_dense()), tf(ts).to_dense().numpy(),
                                   rtol=1e-12)
    a = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
    np.testing.assert_array_equal(_np(lucid.tensor(a).to_sparse().indices()),
                                  torch.tensor(a).to_sparse().indices().numpy())


def _normalized_adjacency(n: int, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """D^-1/2 (A + I) D^-1/2 of an undirected graph, as (indices, values)."""
    both = np.concatenate([edges, edges[::-1], np.stack([np.arange(n)] * 2)], axis=1)
    both = np.unique(both, axis=1)
    deg = np.bincount(both[0], minlength=n).astype(np.float64)
    return both, 1.0 / np.sqrt(deg[both[0]] * deg[both[1]])


def test_two_layer_gcn_step_matches_torch(torch):
    n, f, h, c = 30, 8, 16, 3
    rng = np.random.default_rng(9)
    idx, vals = _normalized_adjacency(n, rng.integers(0, n, size=(2, 60)))
    x, y = rng.standard_normal((n, f)), rng.integers(0, c, n)
    w1, b1 = rng.standard_normal((f, h)) * 0.3, rng.standard_normal(h) * 0.1
    w2, b2 = rng.standard_normal((h, c)) * 0.3, rng.standard_normal(c) * 0.1

    def run(lib, fn):
        adj = lib.sparse_coo_tensor(lib.tensor(idx), lib.tensor(vals), (n, n))
        ps = [lib.tensor(p, requires_grad=True) for p in (w1, b1, w2, b2)]
        hid = fn.relu(lib.sparse.mm(adj, lib.tensor(x) @ ps[0]) + ps[1])
        out = adj @ (hid @ ps[2]) + ps[3]
        loss = fn.cross_entropy(out, lib.tensor(y))
        loss.backward()
        return [loss.item()] + [p.grad.detach().numpy() for p in ps]

    for a, b in zip(run(lucid, F), run(torch, torch.nn.functional), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
