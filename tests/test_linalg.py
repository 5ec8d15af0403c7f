"""tril/triu, diag/diagonal/trace, addmm, lerp, einsum: values vs PyTorch, float64 gradchecks;
addmm with beta=0 ignores its input's values."""

from __future__ import annotations

import numpy as np
import pytest
from devices import DEVICES

import lucid

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((4, 5))
C = rng.standard_normal((2, 3, 4))
S = rng.standard_normal((4, 4))
Q4 = rng.standard_normal((2, 2, 3, 4))
S4 = rng.standard_normal((3, 3, 4))

CASES = [
    ("tril", lambda m, x: m.tril(x, -1), (S,)),
    ("triu", lambda m, x: m.triu(x, 1), (A,)),
    ("diag2d", lambda m, x: m.diag(x, 1), (S,)),
    ("diag1d", lambda m, x: m.diag(x, -1), (S[0],)),
    ("diagonal", lambda m, x: m.diagonal(x, 0, 1, 2), (C,)),
    ("trace", lambda m, x: m.trace(x), (S,)),
    ("addmm", lambda m, b, x, y: m.addmm(b, x, y, beta=0.5, alpha=2.0), (B[0], A, B)),
    ("lerp", lambda m, x, y: m.lerp(x, y, 0.3), (A, A[::-1])),
    ("einsum-mm", lambda m, x, y: m.einsum("ij,jk->ik", x, y), (A, B)),
    ("einsum-batch", lambda m, x, y: m.einsum("bij,jk->bki", x, y), (C, B)),
    ("einsum-diag", lambda m, x: m.einsum("ii->i", x), (S,)),
    ("einsum-outer", lambda m, x, y: m.einsum("i,j", x, y), (A[0], B[0])),
    ("einsum-3", lambda m, x, y, z: m.einsum("ij,jk,kl->il", x, y, z), (A, B, B.T)),
    # two-operand contractions run as one (batched) matmul
    ("einsum-bmm", lambda m, x, y: m.einsum("bij,bjk->bik", x, y), (C, C.transpose(0, 2, 1))),
    ("einsum-attn", lambda m, x, y: m.einsum("bhid,bhjd->bhij", x, y), (Q4, Q4[:, :, ::-1])),
    ("einsum-permuted-out", lambda m, x, y: m.einsum("ijk,jl->lik", x, y), (C, B[:3])),
    ("einsum-summed-first", lambda m, x, y: m.einsum("xij,jk->xk", x, y), (C, B)),
    ("einsum-broadcast-batch", lambda m, x, y: m.einsum("bij,bj->bi", x, y), (C, A[:1, :4])),
    ("einsum-dot", lambda m, x, y: m.einsum("i,i->", x, y), (A[0], A[1])),
    ("einsum-rowdot", lambda m, x, y: m.einsum("bi,bi->b", x, y), (A, A[::-1])),
    ("einsum-keep-contracted", lambda m, x, y: m.einsum("ij,jk->ijk", x, y), (A, B)),
    ("einsum-diag-then-mm", lambda m, x, y: m.einsum("iij,jk->ik", x, y), (S4, B)),
]


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_gradcheck(name, fn, arrays):
    ts = [lucid.tensor(a, requires_grad=True) for a in arrays]
    assert lucid.autograd.gradcheck(lambda *xs: fn(lucid, *xs), ts)


@pytest.mark.parity
@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, fn, arrays):
    torch = pytest.importorskip("torch")
    ours = fn(lucid, *[lucid.tensor(a.astype(np.float32)) for a in arrays])
    theirs = fn(torch, *[torch.tensor(a.astype(np.float32)) for a in arrays])
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)


def test_methods_and_softmax():
    x = lucid.tensor(A.astype(np.float32))
    np.testing.assert_allclose(x.tril().numpy(), np.tril(A).astype(np.float32))
    np.testing.assert_allclose(x.softmax(1).sum(1).numpy(), np.ones(3), rtol=1e-6)
    np.testing.assert_allclose(lucid.log_softmax(x, 1).exp().sum(1).numpy(), np.ones(3),
                               rtol=1e-6)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        lucid.tril(lucid.ones(3))


COMPOSED = [
    ("addcmul", lambda m, x, y, z: m.addcmul(x, y, z, value=0.5), (A, A, A[::-1])),
    ("addcdiv", lambda m, x, y, z: m.addcdiv(x, y, m.abs(z) + 1, value=2.0), (A, A, A[::-1])),
    ("median-dim", lambda m, x: m.median(x, 1).values, (A,)),
    ("median-keepdim", lambda m, x: m.median(x, 0, keepdim=True).values, (A,)),
    ("unfold", lambda m, x: x.unfold(1, 2, 1) * 1.0, (A,)),
]


@pytest.mark.parametrize("name,fn,arrays", COMPOSED, ids=[c[0] for c in COMPOSED])
def test_composed_gradcheck(name, fn, arrays):
    ts = [lucid.tensor(np.ascontiguousarray(a), requires_grad=True) for a in arrays]
    assert lucid.autograd.gradcheck(lambda *xs: fn(lucid, *xs), ts)


@pytest.mark.parity
@pytest.mark.parametrize("name,fn,arrays", COMPOSED, ids=[c[0] for c in COMPOSED])
def test_composed_matches_torch(name, fn, arrays):
    torch = pytest.importorskip("torch")
    arrs = [np.ascontiguousarray(a).astype(np.float32) for a in arrays]
    ours = fn(lucid, *[lucid.tensor(a) for a in arrs])
    theirs = fn(torch, *[torch.tensor(a) for a in arrs])
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


def test_median_all_and_indices_and_stride():
    torch = pytest.importorskip("torch")
    a = np.array([[3.0, 1.0, 2.0, 4.0], [0.0, 5.0, 5.0, -1.0]], np.float32)
    assert lucid.tensor(a).median().item() == torch.tensor(a).median().item()
    assert lucid.tensor(a).median(1).indices.tolist() == torch.tensor(a).median(1).indices.tolist()
    x = lucid.zeros(2, 3, 4)
    assert x.stride() == (12, 4, 1) and x.transpose(0, 2).stride() == (1, 4, 12)
    assert x.stride(-1) == 1
    y = lucid.tensor(a)
    y.addcmul_(y, y)
    np.testing.assert_allclose(y.numpy(), a + a * a)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf arithmetic
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(3, 5), (5,), (1, 5)])
def test_addmm_with_beta_zero_ignores_the_input(device, shape):
    """torch: at beta=0 the input's values are ignored (NaN and inf included), but its
    gradient is still ``grad * beta`` summed to its shape, NaN where grad is not finite."""
    inp = np.full(shape, np.nan)
    inp.flat[0] = np.inf
    x, m1, m2 = (lucid.tensor(a, device=device, requires_grad=True) for a in (inp, A, B))
    y = lucid.addmm(x, m1, m2, beta=0, alpha=2.0)
    np.testing.assert_allclose(y.detach().numpy(), 2 * A @ B, rtol=1e-12)
    g = np.ones((3, 5))
    g[1, 2] = np.inf
    y.backward(lucid.tensor(g, device=device))
    gx = (g * 0).sum(0) if len(shape) == 1 else (g * 0).sum(0, keepdims=True) \
        if shape[0] == 1 else g * 0
    np.testing.assert_array_equal(x.grad.numpy(), gx)
    np.testing.assert_allclose(m1.grad.numpy(), 2 * g @ B.T, rtol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("beta", [0, 0.5, 1])
def test_addmm_special_points_match_torch(torch, beta):
    inp = np.array([[np.nan, 1.0, np.inf, 0.0, -np.inf]] * 3)
    g = np.ones((3, 5))
    g[0, 1], g[2, 0] = np.inf, np.nan
    ours = [lucid.tensor(a, requires_grad=True) for a in (inp, A, B)]
    ref = [torch.tensor(a, requires_grad=True) for a in (inp, A, B)]
    y, r = lucid.addmm(*ours, beta=beta, alpha=2.0), torch.addmm(*ref, beta=beta, alpha=2.0)
    np.testing.assert_allclose(y.detach().numpy(), r.detach().numpy(), rtol=1e-12)
    y.backward(lucid.tensor(g))
    r.backward(torch.tensor(g))
    for a, t in zip(ours, ref):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12)
