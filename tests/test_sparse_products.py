"""Products with sparse COO operands (sparse @ sparse, dense @ sparse, sparse.addmm, smm,
sspaddmm, hspmm, dsmm), the sparse methods every tensor has (indices, values, coalesce,
sparse_dim, sparse_mask, ...) and a GCN with D^-1/2 A D^-1/2 built from sparse products:
values, gradients and errors against torch (float64) and numpy references."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from devices import DEVICES, gpu_float64

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
import lucid.optim as optim
from lucid.ops import sparse_methods as sm

F64 = lucid.float64


def _np(t: lucid.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


def _dtype(device: str) -> Any:
    return F64 if device != "gpu" or gpu_float64() else lucid.float32


def _dense_ref(idx: np.ndarray, vals: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    out = np.zeros(shape, vals.dtype)
    np.add.at(out, tuple(idx), vals)
    return out


def _rand_sparse(n: int, m: int, nnz: int, seed: int, dups: int = 0
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``nnz`` random positions (``dups`` of them repeated: uncoalesced), unsorted."""
    rng = np.random.default_rng(seed)
    lin = rng.choice(n * m, size=nnz, replace=False) if nnz else np.zeros(0, np.int64)
    if dups and nnz:
        lin = np.concatenate([lin, rng.choice(lin, size=dups)])
        rng.shuffle(lin)
    idx = np.stack(np.unravel_index(lin, (n, m))).astype(np.int64).reshape(2, -1)
    return idx, rng.standard_normal(idx.shape[1])


def _pair(torch: Any, idx: np.ndarray, vals: np.ndarray, shape: tuple[int, ...]
          ) -> tuple[Any, Any, Any, Any]:
    """The same sparse matrix in both frameworks, each built on a values tensor that requires
    grad: (lucid sparse, lucid values, torch sparse, torch values)."""
    lv = lucid.tensor(vals, dtype=F64, requires_grad=True)
    tv = torch.tensor(vals, dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = torch.sparse_coo_tensor(torch.tensor(idx).reshape(2, -1), tv, shape)
    return lucid.sparse_coo_tensor(idx, lv, shape), lv, ts, tv


def _same_sparse(a: Any, b: Any) -> None:
    """Equal indices, values, shape and coalesced flag (a: lucid, b: torch)."""
    assert isinstance(a, lucid.sparse.SparseCooTensor) and b.is_sparse
    assert tuple(a.shape) == tuple(b.shape) and a.is_coalesced() == b.is_coalesced()
    np.testing.assert_array_equal(_np(a._indices()), b._indices().numpy())
    np.testing.assert_allclose(_np(a._values()), b._values().detach().numpy(), rtol=1e-12,
                               atol=1e-13)


# ---- sparse @ sparse ---------------------------------------------------------------------------

SPGEMM_CASES = {
    "square": ((6, 6, 10, 0), (6, 6, 12, 0)),
    "rect": ((4, 7, 9, 0), (7, 3, 8, 0)),
    "uncoalesced": ((5, 6, 8, 4), (6, 4, 9, 5)),
    "empty_left": ((3, 4, 0, 0), (4, 2, 5, 0)),
    "empty_right": ((3, 4, 6, 0), (4, 2, 0, 0)),
    "tall_thin": ((9, 1, 5, 2), (1, 8, 4, 1)),
}


@pytest.mark.parametrize("case", sorted(SPGEMM_CASES))
@pytest.mark.parametrize("entry", ["sparse.mm", "mm", "matmul", "@"])
def test_sparse_sparse_matches_torch(torch, case, entry):
    (n, m, nnz_a, da), (m2, k, nnz_b, db) = SPGEMM_CASES[case]
    ia, va = _rand_sparse(n, m, nnz_a, 1, da)
    ib, vb = _rand_sparse(m2, k, nnz_b, 2, db)
    la, lva, ta, tva = _pair(torch, ia, va, (n, m))
    lb, lvb, tb, tvb = _pair(torch, ib, vb, (m2, k))
    fn = {"sparse.mm": (lucid.sparse.mm, torch.sparse.mm), "mm": (lucid.mm, torch.mm),
          "matmul": (lucid.matmul, torch.matmul),
          "@": (lambda a, b: a @ b, lambda a, b: a @ b)}[entry]
    lc, tc = fn[0](la, lb), fn[1](ta, tb)
    _same_sparse(lc, tc)
    rng = np.random.default_rng(3)
    g, x = rng.standard_normal((n, k)), rng.standard_normal((k, 2))
    # the product feeds both a dense use and a sparse @ dense product
    lloss = (lc.to_dense() * lucid.tensor(g)).sum() + (lc @ lucid.tensor(x)).pow(2).sum()
    tloss = (tc.to_dense() * torch.tensor(g)).sum()
    if entry != "sparse.mm":
        # torch.sparse.mm's sparse @ sparse backward fails (an internal assert) when the
        # gradient reaching the product is dense, as from a following sparse @ dense product
        tloss = tloss + (tc @ torch.tensor(x)).pow(2).sum()
    else:
        lloss = (lc.to_dense() * lucid.tensor(g)).sum()
    np.testing.assert_allclose(lloss.item(), tloss.item(), rtol=1e-12)
    lloss.backward()
    tloss.backward()
    for lv, tv in ((lva, tva), (lvb, tvb)):
        ref = tv.grad.numpy() if tv.grad is not None else np.zeros(tv.shape)
        np.testing.assert_allclose(_np(lv.grad), ref, rtol=1e-12, atol=1e-13)


def test_torch_sparse_mm_sparse_backward_needs_a_sparse_gradient(torch):
    """Pins a torch 2.13 bug the comparisons above avoid: torch.sparse.mm(sparse, sparse)
    fails in backward when the gradient reaching the product is dense; lucid's works."""
    t = torch.eye(3, dtype=torch.float64).to_sparse().requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="INTERNAL ASSERT FAILED"):
            (torch.sparse.mm(t, t) @ torch.ones(3, 2, dtype=torch.float64)).sum().backward()
    s = lucid.eye(3, dtype=F64).to_sparse().detach().requires_grad_()
    (lucid.sparse.mm(s, s) @ lucid.ones(3, 2, dtype=F64)).sum().backward()
    assert _np(s.grad._values()).tolist() == [4.0, 4.0, 4.0]


def test_device_mismatch():
    a = lucid.sparse_coo_tensor([[0], [0]], [1.0], (2, 2))
    b = a.to("numpy")
    for fn in (lambda: a @ b, lambda: a @ lucid.ones(2, 2, device="numpy"),
               lambda: lucid.ones(2, 2, device="numpy") @ a, lambda: sm.smm(a, b.to_dense())):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            fn()


def test_structural_zero_stays_stored(torch):
    a = lucid.sparse_coo_tensor([[0, 0], [0, 1]], [1.0, 1.0], (1, 2), dtype=F64)
    b = lucid.sparse_coo_tensor([[0, 1], [0, 0]], [1.0, -1.0], (2, 1), dtype=F64)
    ta = torch.sparse_coo_tensor([[0, 0], [0, 1]], [1.0, 1.0], (1, 2), dtype=torch.float64)
    tb = torch.sparse_coo_tensor([[0, 1], [0, 0]], [1.0, -1.0], (2, 1), dtype=torch.float64)
    _same_sparse(a @ b, ta @ tb)
    assert (a @ b)._nnz() == 1


@pytest.mark.parametrize("device", DEVICES)
def test_sparse_sparse_on_every_device(device):
    dt = _dtype(device)
    ia, va = _rand_sparse(5, 4, 7, 4, dups=3)
    ib, vb = _rand_sparse(4, 6, 9, 5, dups=2)
    lva = lucid.tensor(va, dtype=dt, device=device, requires_grad=True)
    lvb = lucid.tensor(vb, dtype=dt, device=device, requires_grad=True)
    a = lucid.sparse_coo_tensor(ia, lva, (5, 4))
    b = lucid.sparse_coo_tensor(ib, lvb, (4, 6))
    c = a @ b
    assert c.device == a.device and c._indices().device == a.device and c.is_coalesced()
    ad, bd = _dense_ref(ia, va, (5, 4)), _dense_ref(ib, vb, (4, 6))
    tol = 1e-12 if dt is F64 else 1e-5
    np.testing.assert_allclose(_np(c.to_dense()), ad @ bd, rtol=tol, atol=tol)
    g = np.random.default_rng(6).standard_normal((5, 6))
    (c.to_dense() * lucid.tensor(g, dtype=dt, device=device)).sum().backward()
    pattern = (np.abs(ad) > 0).astype(float) @ (np.abs(bd) > 0).astype(float) > 0
    gm = g * pattern  # the gradient reaching the product is masked to its pattern
    np.testing.assert_allclose(_np(lva.grad), (gm @ bd.T)[ia[0], ia[1]], rtol=tol, atol=tol)
    np.testing.assert_allclose(_np(lvb.grad), (ad.T @ gm)[ib[0], ib[1]], rtol=tol, atol=tol)


def test_sparse_sparse_gradcheck():
    ia, va = _rand_sparse(4, 5, 8, 7, dups=2)
    ib, vb = _rand_sparse(5, 3, 7, 8, dups=1)
    x = lucid.randn(3, 2, dtype=F64, requires_grad=True)

    def f(va, vb, x):
        a = lucid.sparse_coo_tensor(ia, va, (4, 5))
        b = lucid.sparse_coo_tensor(ib, vb, (5, 3))
        return (a @ b) @ x

    args = (lucid.tensor(va, requires_grad=True), lucid.tensor(vb, requires_grad=True), x)
    assert lucid.autograd.gradcheck(f, args)


def test_sparse_leaf_gradient_is_torchs_on_its_pattern(torch):
    """A sparse leaf's gradient is masked to its own pattern (PyTorch gives sparse @ sparse
    leaves the unmasked product gradient; the two agree on the pattern)."""
    ia, va = _rand_sparse(5, 4, 8, 9)
    ib, vb = _rand_sparse(4, 5, 8, 10)
    la = lucid.sparse_coo_tensor(ia, va, (5, 4)).coalesce().detach().requires_grad_()
    lb = lucid.sparse_coo_tensor(ib, vb, (4, 5)).coalesce().detach().requires_grad_()
    ta = torch.sparse_coo_tensor(torch.tensor(ia), torch.tensor(va), (5, 4)).coalesce()
    tb = torch.sparse_coo_tensor(torch.tensor(ib), torch.tensor(vb), (4, 5)).coalesce()
    ta.requires_grad_(True)
    tb.requires_grad_(True)
    lucid.sparse.sum(la @ lb @ la).backward()
    torch.sparse.sum(ta @ tb @ ta).backward()
    for lx, tx in ((la, ta), (lb, tb)):
        ref = tx.grad.to_dense().sparse_mask(tx.detach())
        _same_sparse(lx.grad, ref)


# ---- dense @ sparse, sparse @ dense of every rank ----------------------------------------------

def _dense_pair(torch: Any, a: np.ndarray) -> tuple[Any, Any]:
    return (lucid.tensor(a, dtype=F64, requires_grad=True),
            torch.tensor(a, dtype=torch.float64, requires_grad=True))


@pytest.mark.parametrize("shape", [(3,), (2, 3), (4, 2, 3)])
def test_dense_at_sparse_matches_torch(torch, shape):
    idx, vals = _rand_sparse(3, 5, 7, 11, dups=2)
    ls, lv, ts, tv = _pair(torch, idx, vals, (3, 5))
    a = np.random.default_rng(12).standard_normal(shape)
    lx, tx = _dense_pair(torch, a)
    lo, to = lx @ ls, tx @ ts
    assert not isinstance(lo, lucid.sparse.SparseCooTensor) and tuple(lo.shape) == to.shape
    np.testing.assert_allclose(_np(lo), to.detach().numpy(), rtol=1e-12)
    (lo * lo).sum().backward()
    (to * to).sum().backward()
    np.testing.assert_allclose(_np(lx.grad), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(_np(lv.grad), tv.grad.numpy(), rtol=1e-12)
    if len(shape) == 2:
        for lf, tf in ((lucid.sparse.mm, torch.sparse.mm), (sm.dsmm, torch.dsmm)):
            np.testing.assert_allclose(_np(lf(lx, ls)), tf(tx, ts).detach().numpy(),
                                       rtol=1e-12)


@pytest.mark.parametrize("shape", [(5,), (5, 2), (3, 5, 2)])
def test_sparse_at_dense_of_every_rank_matches_torch(torch, shape):
    idx, vals = _rand_sparse(4, 5, 9, 13, dups=2)
    ls, lv, ts, tv = _pair(torch, idx, vals, (4, 5))
    lx, tx = _dense_pair(torch, np.random.default_rng(14).standard_normal(shape))
    lo, to = lucid.matmul(ls, lx), torch.matmul(ts, tx)
    np.testing.assert_allclose(_np(lo), to.detach().numpy(), rtol=1e-12)
    (lo * lo).sum().backward()
    (to * to).sum().backward()
    np.testing.assert_allclose(_np(lx.grad), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(_np(lv.grad), tv.grad.numpy(), rtol=1e-12)


def test_dense_sparse_through_lucid_matmul_and_mm(torch):
    """``lucid.matmul`` / ``lucid.mm`` / ``Tensor.mm`` with the sparse operand on the right
    (lucid.ops.matmul hands it to ``SparseCooTensor._sparse_rmatmul``)."""
    idx, vals = _rand_sparse(3, 4, 6, 15)
    ls, _, ts, _ = _pair(torch, idx, vals, (3, 4))
    lx, tx = _dense_pair(torch, np.random.default_rng(16).standard_normal((2, 3)))
    ref = (tx @ ts).detach().numpy()
    w = nn.Parameter(lx.detach())  # a Tensor subclass on the left: no reflected-operand rule
    for out in (lucid.matmul(lx, ls), lucid.mm(lx, ls), lx.mm(ls), lx.matmul(ls), w @ ls):
        np.testing.assert_allclose(_np(out), ref, rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_dense_at_sparse_on_every_device(device):
    dt = _dtype(device)
    idx, vals = _rand_sparse(4, 3, 6, 17, dups=2)
    v = lucid.tensor(vals, dtype=dt, device=device, requires_grad=True)
    s = lucid.sparse_coo_tensor(idx, v, (4, 3))
    a = np.random.default_rng(18).standard_normal((2, 4))
    x = lucid.tensor(a, dtype=dt, device=device, requires_grad=True)
    out = x @ s
    sd = _dense_ref(idx, vals, (4, 3))
    tol = 1e-12 if dt is F64 else 1e-5
    np.testing.assert_allclose(_np(out), a @ sd, rtol=tol, atol=tol)
    out.sum().backward()
    np.testing.assert_allclose(_np(x.grad), np.ones((2, 3)) @ sd.T, rtol=tol, atol=tol)
    np.testing.assert_allclose(_np(v.grad), (a.T @ np.ones((2, 3)))[idx[0], idx[1]],
                               rtol=tol, atol=tol)


# ---- a GCN with symmetric normalisation built from sparse products ----------------------------

def _gcn_graph(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    e = rng.integers(0, n, size=(2, 3 * n))
    return np.concatenate([e, e[::-1], np.stack([np.arange(n)] * 2)], axis=1)  # uncoalesced


def _gcn_run(lib: Any, nn_: Any, fn: Any, optim_: Any, idx: np.ndarray, x: np.ndarray,
             y: np.ndarray, ws: list[np.ndarray], edge_w: np.ndarray, steps: int) -> list:
    n = x.shape[0]
    edge = nn_.Parameter(lib.tensor(edge_w))
    w1, w2 = nn_.Parameter(lib.tensor(ws[0])), nn_.Parameter(lib.tensor(ws[1]))
    feats = lib.tensor(x, requires_grad=True)
    opt = optim_.SGD([w1, w2, edge], lr=0.2, momentum=0.9)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        a = lib.sparse_coo_tensor(lib.tensor(idx), edge, (n, n))
        deg = lib.sparse.sum(a, 1).to_dense()
        d = lib.diag(deg.pow(-0.5)).to_sparse()
        a_hat = d @ a @ d
        h = fn.relu(lib.sparse.mm(a_hat, feats) @ w1)
        out = a_hat @ (h @ w2)
        loss = fn.cross_entropy(out, lib.tensor(y))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    a_hat_c = a_hat.coalesce()
    return losses + [feats.grad.numpy(), w1.detach().numpy(), w2.detach().numpy(),
                     edge.detach().numpy(), a_hat_c.indices().numpy(),
                     a_hat_c.values().detach().numpy()]


def test_gcn_normalised_adjacency_training_matches_torch(torch):
    n, f, h, c = 24, 6, 8, 3
    rng = np.random.default_rng(19)
    idx = _gcn_graph(n, 20)
    x, y = rng.standard_normal((n, f)), rng.integers(0, c, n)
    ws = [rng.standard_normal((f, h)) * 0.4, rng.standard_normal((h, c)) * 0.4]
    edge_w = rng.uniform(0.5, 1.5, idx.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = _gcn_run(torch, torch.nn, torch.nn.functional, torch.optim, idx, x, y, ws,
                       edge_w, 5)
    got = _gcn_run(lucid, nn, F, optim, idx, x, y, ws, edge_w, 5)
    assert ref[4] < ref[0]  # it learns
    np.testing.assert_allclose(got[:5], ref[:5], rtol=1e-10, atol=1e-12)
    for a, b in zip(got[5:], ref[5:], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# ---- sparse.addmm, smm, sspaddmm, hspmm --------------------------------------------------------

def test_sparse_addmm_matches_torch(torch):
    idx, vals = _rand_sparse(4, 3, 6, 21, dups=1)
    rng = np.random.default_rng(22)
    x = rng.standard_normal((3, 2))
    for mat, kw in ((rng.standard_normal((4, 2)), {"beta": 0.5, "alpha": 2.0}),
                    (rng.standard_normal(2), {}), (np.full((4, 2), np.nan), {"beta": 0})):
        ls, lv, ts, tv = _pair(torch, idx, vals, (4, 3))
        lx, tx = _dense_pair(torch, x)
        lm, tm = _dense_pair(torch, mat)
        lo, to = lucid.sparse.addmm(lm, ls, lx, **kw), torch.sparse.addmm(tm, ts, tx, **kw)
        np.testing.assert_allclose(_np(lo), to.detach().numpy(), rtol=1e-12)
        lo.sum().backward()
        to.sum().backward()
        for a, b in ((lx, tx), (lv, tv)):
            np.testing.assert_allclose(_np(a.grad), b.grad.numpy(), rtol=1e-12)


def _legacy_cases(torch: Any) -> list:
    return [("smm", lambda s, i, x: sm.smm(s, x), lambda s, i, x: torch.smm(s, x)),
            ("hspmm", lambda s, i, x: sm.hspmm(s, x), lambda s, i, x: torch.hspmm(s, x)),
            ("hsmm", lambda s, i, x: sm.hsmm(s, x), lambda s, i, x: torch.hsmm(s, x)),
            ("sspaddmm", lambda s, i, x: sm.sspaddmm(i, s, x, beta=0.5, alpha=3.0),
             lambda s, i, x: torch.sspaddmm(i, s, x, beta=0.5, alpha=3.0)),
            ("saddmm", lambda s, i, x: sm.saddmm(i, s, x),
             lambda s, i, x: torch.saddmm(i, s, x)),
            ("dsmm", lambda s, i, x: sm.dsmm(s, x), lambda s, i, x: torch.dsmm(s, x))]


@pytest.mark.parametrize("nnz", [0, 1, 7])
def test_legacy_products_match_torch(torch, nnz):
    idx, vals = _rand_sparse(5, 4, nnz, 23, dups=2 if nnz > 1 else 0)
    ls, _, ts, _ = _pair(torch, idx, vals, (5, 4))
    ii, iv = _rand_sparse(5, 3, 4, 24, dups=1)
    li, _, ti, _ = _pair(torch, ii, iv, (5, 3))
    x = np.random.default_rng(25).standard_normal((4, 3))
    for name, lf, tf in _legacy_cases(torch):
        lo = lf(ls, li, lucid.tensor(x))
        with torch.no_grad():
            to = tf(ts, ti, torch.tensor(x))
        if name == "dsmm":
            np.testing.assert_allclose(_np(lo), to.numpy(), rtol=1e-12)
        else:
            _same_sparse(lo, to)


def test_legacy_products_gradients():
    """PyTorch has no derivative for smm / sspaddmm / hspmm; lucid's equal the dense ones."""
    idx, vals = _rand_sparse(5, 4, 8, 26, dups=2)
    ii, iv = _rand_sparse(5, 3, 4, 27, dups=1)
    x = lucid.randn(4, 3, dtype=F64, requires_grad=True)
    v = lucid.tensor(vals, requires_grad=True)
    w = lucid.tensor(iv, requires_grad=True)

    def f(v, w, x):
        s = lucid.sparse_coo_tensor(idx, v, (5, 4))
        i = lucid.sparse_coo_tensor(ii, w, (5, 3))
        return (sm.sspaddmm(i, s, x, beta=0.5, alpha=2.0).to_dense()
                + sm.hspmm(s, x).to_dense() + sm.smm(s, x).to_dense())

    assert lucid.autograd.gradcheck(f, (v, w, x))
    f(v, w, x).sum().backward()
    sd = _dense_ref(idx, vals, (5, 4))
    np.testing.assert_allclose(_np(x.grad), 4.0 * sd.T @ np.ones((5, 3)), rtol=1e-12)
    np.testing.assert_allclose(_np(w.grad), np.full(5, 0.5))


@pytest.mark.parametrize("device", DEVICES)
def test_sspaddmm_on_every_device(device):
    dt = _dtype(device)
    idx, vals = _rand_sparse(4, 3, 5, 28, dups=1)
    s = lucid.sparse_coo_tensor(idx, lucid.tensor(vals, dtype=dt), (4, 3)).to(device)
    i = lucid.sparse_coo_tensor([[1], [0]], lucid.tensor([2.0], dtype=dt), (4, 2)).to(device)
    x = np.random.default_rng(29).standard_normal((3, 2))
    out = sm.sspaddmm(i, s, lucid.tensor(x, dtype=dt, device=device), beta=2.0)
    assert out.device == s.device
    ref = _dense_ref(idx, vals, (4, 3)) @ x
    ref[1, 0] += 4.0
    tol = 1e-12 if dt is F64 else 1e-5
    np.testing.assert_allclose(_np(out.to_dense()), ref, rtol=tol, atol=tol)


# ---- the sparse methods every tensor has ----------------------------------------------------

DENSE_ERRORS = [("indices", r"indices expected sparse coordinate tensor layout but got Strided"),
                ("values", r"values expected sparse tensor layout but got Strided"),
                ("coalesce", r"coalesce expected sparse coordinate tensor layout but got "
                             r"Strided"),
                ("is_coalesced", r"is_coalesced expected sparse coordinate tensor layout but "
                                 r"got Strided")]


@pytest.mark.parametrize("name,msg", DENSE_ERRORS)
def test_dense_tensor_sparse_accessors_raise_as_torch(torch, name, msg):
    with pytest.raises(RuntimeError, match=msg):
        getattr(sm, name)(lucid.ones(2, 3))
    with pytest.raises(RuntimeError, match=msg):
        getattr(torch.ones(2, 3), name)()


def test_dense_and_sparse_dims(torch):
    for shape in [(), (4,), (2, 3, 5)]:
        x, tx = lucid.ones(shape), torch.ones(shape)
        assert (sm.sparse_dim(x), sm.dense_dim(x)) == (tx.sparse_dim(), tx.dense_dim())
    s = lucid.sparse_coo_tensor([[0, 1]], lucid.ones(2, 3))
    assert (sm.sparse_dim(s), sm.dense_dim(s)) == (1, 1)
    c = lucid.sparse_coo_tensor([[1, 0, 1]], [1.0, 2.0, 3.0])
    assert not sm.is_coalesced(c) and sm.is_coalesced(sm.coalesce(c))
    assert _np(sm.values(sm.coalesce(c))).tolist() == [2.0, 4.0]
    assert _np(sm.indices(sm.coalesce(c))).tolist() == [[0, 1]]


def test_indices_and_values_copy():
    """torch 2.13's indices_copy / values_copy raise NotImplementedError for every sparse COO
    input; lucid's return copies."""
    v = lucid.tensor([1.0, 2.0, 3.0], dtype=F64, requires_grad=True)
    s = lucid.sparse_coo_tensor([[0, 1, 2], [2, 0, 1]], v, (3, 3)).coalesce()
    i, w = sm.indices_copy(s), sm.values_copy(s)
    assert _np(i).tolist() == [[0, 1, 2], [2, 0, 1]] and i is not s.indices()
    (w * 2).sum().backward()
    assert _np(v.grad).tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="values expected sparse tensor layout"):
        sm.values_copy(lucid.ones(2))


def test_torch_indices_copy_is_broken_for_sparse(torch):
    s = torch.sparse_coo_tensor([[0, 1]], [1.0, 2.0]).coalesce()
    with pytest.raises(NotImplementedError):
        torch.indices_copy(s)
    with pytest.raises(NotImplementedError):
        torch.values_copy(s)


MASKS = {"uncoalesced": ([[1, 0, 1, 0], [2, 1, 2, 0]], None),
         "coalesced": ([[0, 0, 1], [0, 1, 2]], None),
         "hybrid": ([[1, 0]], 3),
         "empty": (np.zeros((2, 0), np.int64), None)}


def _mask_pair(torch: Any, name: str) -> tuple[Any, Any]:
    idx, dense = MASKS[name]
    idx = np.asarray(idx, np.int64)
    vals = np.ones((idx.shape[1],) + ((dense,) if dense else ()))
    ls = lucid.sparse_coo_tensor(idx, vals, (2, 3))
    ts = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), (2, 3))
    if name == "coalesced":
        ls, ts = ls.coalesce(), ts.coalesce()
    return ls, ts


@pytest.mark.parametrize("mask", sorted(MASKS))
def test_dense_sparse_mask_matches_torch(torch, mask):
    lm, tm = _mask_pair(torch, mask)
    a = np.arange(6.0).reshape(2, 3) + 1
    lx, tx = _dense_pair(torch, a)
    lo, to = sm.sparse_mask(lx, lm), tx.sparse_mask(tm)
    _same_sparse(lo, to)
    w = np.random.default_rng(30).standard_normal((2, 3))
    (lo.to_dense() * lucid.tensor(w)).sum().backward()
    (to.to_dense() * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(_np(lx.grad), tx.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("mask", ["uncoalesced", "coalesced", "empty"])
def test_sparse_sparse_mask_matches_torch(torch, mask):
    lm, tm = _mask_pair(torch, mask)
    idx = np.array([[1, 0, 1, 1, 0], [2, 1, 2, 0, 2]])
    ls, lv, ts, tv = _pair(torch, idx, np.arange(1.0, 6.0), (2, 3))
    lo, to = sm.sparse_mask(ls, lm), ts.sparse_mask(tm)
    _same_sparse(lo, to)
    w = np.random.default_rng(31).standard_normal((2, 3))
    (lo.to_dense() * lucid.tensor(w)).sum().backward()
    (to.to_dense() * torch.tensor(w)).sum().backward()
    ref = tv.grad.numpy() if tv.grad is not None else np.zeros(5)
    np.testing.assert_allclose(_np(lv.grad), ref, rtol=1e-12)


# ---- errors, as torch's --------------------------------------------------------------------------

def _sp(lib: Any, idx: Any, n: int, size: tuple[int, ...], dtype: str = "float64") -> Any:
    vals = lib.ones(n, dtype=getattr(lib, dtype))
    return lib.sparse_coo_tensor(lib.tensor(idx), vals, size)


def _error_cases() -> list:
    a = ([[1, 0, 1, 0], [2, 1, 2, 0]], 4, (2, 3))
    return [
        ("sparse@sparse shapes", lambda L: _sp(L, *a) @ _sp(L, [[0], [0]], 1, (2, 2)),
         RuntimeError, r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x2\)"),
        ("sparse.mm shapes", lambda L: L.sparse.mm(_sp(L, *a), _sp(L, [[0], [0]], 1, (2, 2))),
         RuntimeError, r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x2\)"),
        ("sparse@sparse dtype", lambda L: _sp(L, *a) @ _sp(L, [[0], [0]], 1, (3, 2), "float32"),
         RuntimeError, "mat1 dtype Double does not match mat2 dtype Float"),
        ("sparse@hybrid", lambda L: _sp(L, *a) @ L.sparse_coo_tensor(
            L.tensor([[0, 1]]), L.ones(2, 2, dtype=L.float64), (3, 2)),
         RuntimeError, "sparse_sparse_matmul_cpu: scalar values expected, got 1D values"),
        ("dense@sparse shapes", lambda L: L.ones(2, 4, dtype=L.float64) @ _sp(L, *a),
         RuntimeError, r"addmm: Argument #3 \(dense\): Expected dim 0 size 2, got 4"),
        ("batch@sparse shapes", lambda L: L.ones(4, 2, 4, dtype=L.float64) @ _sp(L, *a),
         RuntimeError, r"addmm: Argument #3 \(dense\): Expected dim 0 size 2, got 4"),
        ("vec@sparse shapes", lambda L: L.ones(3, dtype=L.float64) @ _sp(L, *a),
         RuntimeError, r"addmm: Argument #3 \(dense\): Expected dim 0 size 2, got 3"),
        ("sparse@vec shapes", lambda L: _sp(L, *a) @ L.ones(4, dtype=L.float64),
         RuntimeError, r"mv: expected self.size\(-1\) == vec.size\(-1\)"),
        ("sparse@dense shapes", lambda L: _sp(L, *a) @ L.ones(4, 2, dtype=L.float64),
         RuntimeError, r"addmm: Argument #3 \(dense\): Expected dim 0 size 3, got 4"),
        ("dense@sparse dtype", lambda L: L.ones(2, 2) @ _sp(L, *a),
         RuntimeError, "expected scalar type Double but found Float"),
        ("sparse.mm dense vec", lambda L: L.sparse.mm(_sp(L, *a), L.ones(3, dtype=L.float64)),
         IndexError, r"Dimension out of range \(expected to be in range of \[-1, 0\], but got "
                     r"1\)"),
        ("addmm sparse mat2", lambda L: L.sparse.addmm(L.ones(2, 2, dtype=L.float64),
                                                       _sp(L, *a), _sp(L, *a).t()),
         RuntimeError, "addmm_sparse_dense: expected either 'mat1' to have sparse layout and "
                       "'mat2' to have strided layout, got 'mat1' with layout Sparse and 'mat2' "
                       "with layout Sparse"),
        ("addmm mat shape", lambda L: L.sparse.addmm(L.ones(3, 2, dtype=L.float64),
                                                     _sp(L, *a), L.ones(3, 2, dtype=L.float64)),
         RuntimeError, r"The expanded size of the tensor \(2\) must match the existing size "
                       r"\(3\) at non-singleton dimension 0"),
        ("smm shapes", lambda L: L.smm(_sp(L, *a), L.ones(2, 2, dtype=L.float64)),
         RuntimeError, "sspaddmm: Argument #3: Expected dim 0 size 3, got 2"),
        ("smm dense", lambda L: L.smm(L.ones(2, 3, dtype=L.float64), L.ones(3, 2)),
         RuntimeError, r"tensor.sspaddmm\(...\) can only be called on sparse tensors"),
        ("smm dtype", lambda L: L.smm(_sp(L, *a), L.ones(3, 2)),
         RuntimeError, "expected scalar type Double but found Float"),
        ("smm vec", lambda L: L.smm(_sp(L, *a), L.ones(3, dtype=L.float64)),
         RuntimeError, "sspaddmm: Argument #3: matrices expected, got 1D tensor"),
        ("sspaddmm input", lambda L: L.sspaddmm(_sp(L, [[0], [0]], 1, (2, 3)), _sp(L, *a),
                                                L.ones(3, 2, dtype=L.float64)),
         RuntimeError, "sspaddmm: Argument #1: Expected dim 1 size 2, got 3"),
        ("sspaddmm dense mat1", lambda L: L.sspaddmm(_sp(L, [[0], [0]], 1, (2, 2)),
                                                     L.ones(2, 3, dtype=L.float64),
                                                     L.ones(3, 2, dtype=L.float64)),
         RuntimeError, "sspaddmm: expected 'mat1' to have sparse layout, got 'mat1' with "
                       "layout Strided"),
        ("hspmm shapes", lambda L: L.hspmm(_sp(L, *a), L.ones(2, 2, dtype=L.float64)),
         RuntimeError, "hspmm: Argument #3: Expected dim 0 size 3, got 2"),
        ("hspmm hybrid", lambda L: L.hspmm(L.sparse_coo_tensor(
            L.tensor([[0, 1]]), L.ones(2, 2, dtype=L.float64), (3, 2)),
            L.ones(2, 2, dtype=L.float64)),
         RuntimeError, "hspmm: Argument #2: matrices expected, got 1D tensor"),
        ("sparse_mask sizes", lambda L: L.sparse_mask(L.ones(3, 2, dtype=L.float64),
                                                      _sp(L, *a)),
         RuntimeError, r"sparse_mask\(\): operands have incompatible sizes; self has size "
                       r"\[3, 2\] but mask has size \[2, 3\]"),
        ("sparse_mask sparse dims", lambda L: L.sparse_mask(_sp(L, *a), L.sparse_coo_tensor(
            L.tensor([[0]]), L.ones(1, 3, dtype=L.float64), (2, 3))),
         RuntimeError, r"sparse_mask\(\): the number of sparse dimensions in `self` should "
                       r"match that of the `mask`. Got `self.sparse_dim\(\) == 2` != "
                       r"`mask.sparse_dim\(\) == 1`."),
    ]


class _Lucid:
    """lucid's namespace with the functions the coordinator binds as top-level names and Tensor
    methods, called as functions (torch's side: ``_Torch``)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(lucid, name)

    smm, sspaddmm, hspmm = staticmethod(sm.smm), staticmethod(sm.sspaddmm), staticmethod(sm.hspmm)
    sparse_mask = staticmethod(sm.sparse_mask)


class _Torch:
    def __init__(self, torch: Any) -> None:
        self.torch = torch

    def __getattr__(self, name: str) -> Any:
        return getattr(self.torch, name)

    @staticmethod
    def sparse_mask(x: Any, mask: Any) -> Any:
        return x.sparse_mask(mask)


@pytest.mark.parametrize("case", range(len(_error_cases())))
def test_errors_match_torch(torch, case):
    _, fn, exc, msg = _error_cases()[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=msg):
            fn(_Torch(torch))
    with pytest.raises(exc, match=msg):
        fn(_Lucid())
