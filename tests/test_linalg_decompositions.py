"""lucid.linalg's LU, LDL and eigendecompositions, matrix_exp, solve_ex, tensorinv/tensorsolve,
cond, householder_product and vander: values, pivots, infos and errors as torch.linalg's,
backward equal to torch's backward (float64), batched."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg

import lucid

L = lucid.linalg
rng = np.random.default_rng(0)


def _pair(torch, arrays):
    ours = [lucid.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    return ours, theirs


def _close(a, b, rtol=1e-10, atol=1e-11):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def _check(torch, ours_fn, theirs_fn, *arrays, grad_fn=None, rtol=1e-10, atol=1e-11):
    """Values equal torch's, and the gradient of a random weighting of the output equals
    torch's (of ``grad_fn`` where torch's own op has no backward)."""
    ours, theirs = _pair(torch, arrays)
    o, t = ours_fn(*ours), theirs_fn(*theirs)
    _close(o.detach().numpy(), t.detach().numpy(), rtol, atol)
    if grad_fn is not None:
        theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
        t = grad_fn(*theirs)
    w = rng.standard_normal(tuple(t.shape))
    (o * lucid.tensor(w)).sum().backward()
    (t * torch.tensor(w)).sum().backward()
    for a, b in zip(ours, theirs):
        _close(a.grad.numpy(), b.grad.numpy(), rtol, atol)


# ---- LU ----------------------------------------------------------------------------------------
SHAPES = [(4, 4), (2, 3, 5, 5), (5, 3), (3, 5), (2, 4, 2), (2, 2, 4)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_lu_values_and_gradients(torch, shape):
    a = rng.standard_normal(shape)
    ours, theirs = _pair(torch, [a])
    P, Lo, U = L.lu(ours[0])
    Pt, Lt, Ut = torch.linalg.lu(theirs[0])
    for x, y in ((P, Pt), (Lo, Lt), (U, Ut)):
        _close(x.detach().numpy(), y.detach().numpy())
    assert not P.requires_grad
    wl, wu = rng.standard_normal(tuple(Lt.shape)), rng.standard_normal(tuple(Ut.shape))
    ((Lo * lucid.tensor(wl)).sum() + (U * lucid.tensor(wu)).sum()).backward()
    ((Lt * torch.tensor(wl)).sum() + (Ut * torch.tensor(wu)).sum()).backward()
    _close(ours[0].grad.numpy(), theirs[0].grad.numpy())


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_lu_factor_ex_matches_torch(torch, shape):
    a = rng.standard_normal(shape)
    ours, theirs = _pair(torch, [a])
    LU, piv, info = L.lu_factor_ex(ours[0])
    LUt, pivt, infot = torch.linalg.lu_factor_ex(theirs[0])
    _close(LU.detach().numpy(), LUt.detach().numpy())
    assert piv.dtype == lucid.int32 and info.dtype == lucid.int32
    np.testing.assert_array_equal(piv.numpy(), pivt.numpy())
    np.testing.assert_array_equal(info.numpy(), infot.numpy())
    w = rng.standard_normal(tuple(LUt.shape))
    (LU * lucid.tensor(w)).sum().backward()
    (LUt * torch.tensor(w)).sum().backward()
    _close(ours[0].grad.numpy(), theirs[0].grad.numpy())


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_broadcast_and_gradients(torch, left, adjoint):
    a = rng.standard_normal((2, 4, 4))
    b = rng.standard_normal((3, 1, 4, 2) if left else (3, 1, 2, 4))

    def ours(x, y):
        LU, piv = L.lu_factor(x)
        return L.lu_solve(LU, piv, y, left=left, adjoint=adjoint)

    def theirs(x, y):
        LU, piv = torch.linalg.lu_factor(x)
        return torch.linalg.lu_solve(LU, piv, y, left=left, adjoint=adjoint)

    _check(torch, ours, theirs, a, b, rtol=1e-9, atol=1e-10)


def test_lu_singular_and_errors(torch):
    sing = lucid.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=lucid.float64)
    LU, piv, info = L.lu_factor_ex(sing)
    t = torch.linalg.lu_factor_ex(torch.tensor(sing.numpy()))
    _close(LU.numpy(), t.LU.numpy())
    assert info.item() == t.info.item() == 2
    with pytest.raises(RuntimeError, match=r"^torch.linalg.lu_factor: U\[2,2\] is zero and using "
                                           "it on lu_solve would result in a division by zero"):
        L.lu_factor(sing)
    with pytest.raises(RuntimeError, match=r"\(Batch element 0\): U\[1,1\] is zero"):
        L.lu_factor_ex(lucid.zeros(2, 2, 2), check_errors=True)
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        L.lu(sing, pivot=False)
    P, Lo, U = L.lu(sing)  # singular matrices factorize
    _close((P @ Lo @ U).numpy(), sing.numpy())
    LU, piv = L.lu_factor(lucid.eye(3, dtype=lucid.float64))
    with pytest.raises(RuntimeError, match="pivots should be a Tensor of scalar type torch.int32"):
        L.lu_solve(LU, piv.long(), lucid.ones(3, 1, dtype=lucid.float64))
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        L.lu_solve(LU, piv, lucid.ones(3, dtype=lucid.float64))
    with pytest.raises(RuntimeError, match=r"Incompatible shapes of A and B for the equation "
                                           r"AX = B \(3x3 and 4x2\)"):
        L.lu_solve(LU, piv, lucid.ones(4, 2, dtype=lucid.float64))
    with pytest.raises(RuntimeError, match="Expected LU and B to have the same dtype"):
        L.lu_solve(LU, piv, lucid.ones(3, 2))
    with pytest.raises(RuntimeError, match="must all be greater or equal to 1"):
        L.lu_solve(LU, piv * 0, lucid.ones(3, 2, dtype=lucid.float64))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices"):
        L.lu_solve(lucid.ones(3, 4, dtype=lucid.float64), piv, lucid.ones(3, 2,
                                                                          dtype=lucid.float64))


def test_lu_empty(torch):
    P, Lo, U = L.lu(lucid.zeros(0, 3))
    assert tuple(P.shape) == (0, 0) and tuple(Lo.shape) == (0, 0) and tuple(U.shape) == (0, 3)
    LU, piv = L.lu_factor(lucid.zeros(3, 0))
    assert tuple(LU.shape) == (3, 0) and tuple(piv.shape) == (0,)


# ---- eig ---------------------------------------------------------------------------------------
def _phase_aligned(v: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """``v`` with each column turned by the phase that aligns it with ``ref``'s (eigenvectors
    are unique up to it; LAPACK builds may pick another sign)."""
    c = (np.conj(v) * ref).sum(-2, keepdims=True)
    return v * (c / np.abs(c))


@pytest.mark.parametrize("shape,is_complex", [((4, 4), False), ((2, 3, 3), False),
                                              ((3, 3), True)], ids=["real", "batch", "complex"])
def test_eig_values_and_gradients(torch, shape, is_complex):
    a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if is_complex else 0)
    ours, theirs = _pair(torch, [a])
    w, v = L.eig(ours[0])
    wt, vt = torch.linalg.eig(theirs[0])
    assert w.dtype == lucid.complex128 and v.dtype == lucid.complex128
    _close(w.detach().numpy(), wt.detach().numpy())
    _close(_phase_aligned(v.detach().numpy(), vt.detach().numpy()), vt.detach().numpy())
    # a loss that does not depend on the eigenvectors' phases
    w1 = rng.standard_normal(tuple(wt.shape) + (2,))
    w2 = rng.standard_normal(tuple(vt.shape))
    ((lucid.view_as_real(w) * lucid.tensor(w1)).sum()
     + (lucid.view_as_real(v).pow(2).sum(-1) * lucid.tensor(w2)).sum()).backward()
    ((torch.view_as_real(wt) * torch.tensor(w1)).sum()
     + (torch.view_as_real(vt).pow(2).sum(-1) * torch.tensor(w2)).sum()).backward()
    assert ours[0].grad.dtype == (lucid.complex128 if is_complex else lucid.float64)
    _close(ours[0].grad.numpy(), theirs[0].grad.numpy())
    ours[0].grad = None
    theirs[0].grad = None
    (lucid.view_as_real(L.eigvals(ours[0])) * lucid.tensor(w1)).sum().backward()
    (torch.view_as_real(torch.linalg.eigvals(theirs[0])) * torch.tensor(w1)).sum().backward()
    _close(ours[0].grad.numpy(), theirs[0].grad.numpy())


def test_eig_float32_and_errors(torch):
    a = rng.standard_normal((3, 3)).astype(np.float32)
    w = L.eigvals(lucid.tensor(a))
    assert w.dtype == lucid.complex64
    _close(w.numpy(), torch.linalg.eigvals(torch.tensor(a)).numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="should not contain infs or NaNs"):
        L.eig(lucid.tensor([[math.nan, 0.0], [0.0, 0.0]]))
    assert L.eigvals(lucid.tensor([[math.inf, 0.0], [0.0, 0.0]])).isnan().all()
    with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they are "
                                           "2 by 3 matrices"):
        L.eig(lucid.zeros(2, 3))
    x = lucid.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    _, v = L.eig(x)
    with pytest.raises(RuntimeError, match="specified up to multiplication by e"):
        lucid.view_as_real(v)[..., 1].sum().backward()


# ---- LDL ---------------------------------------------------------------------------------------
LDL_CASES = [rng.standard_normal((4, 4)), rng.standard_normal((2, 3, 3)),
             np.array([[1.0, 2, 3], [2, 1, 0], [3, 0, 1]]), np.array([[0.0, 1], [1, 0]])]


@pytest.mark.parametrize("a", LDL_CASES, ids=["4x4", "batch", "2x2-pivots", "zero-diag"])
def test_ldl_matches_torch(torch, a):
    a = a + np.swapaxes(a, -1, -2)
    ours = L.ldl_factor_ex(lucid.tensor(a))
    theirs = torch.linalg.ldl_factor_ex(torch.tensor(a))
    _close(ours.LD.numpy(), theirs.LD.numpy())
    assert ours.pivots.dtype == lucid.int32
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    np.testing.assert_array_equal(ours.info.numpy(), theirs.info.numpy())
    b = rng.standard_normal(a.shape[:-1] + (2,))
    x = L.ldl_solve(ours.LD, ours.pivots, lucid.tensor(b))
    _close(x.numpy(), torch.linalg.ldl_solve(theirs.LD, theirs.pivots, torch.tensor(b)).numpy())
    # B broadcast over a leading batch dim (torch 2.13 crashes on this one)
    b5 = rng.standard_normal((5,) + a.shape[:-1] + (2,))
    x5 = L.ldl_solve(ours.LD, ours.pivots, lucid.tensor(b5))
    _close((lucid.tensor(a) @ x5).numpy(), b5, rtol=1e-8, atol=1e-9)


def test_ldl_errors_and_no_derivative():
    info = L.ldl_factor_ex(lucid.zeros(2, 2, dtype=lucid.float64)).info
    assert info.item() == 1
    with pytest.raises(L.LinAlgError, match=r"\(Batch element 0\): .*D is singular"):
        L.ldl_factor(lucid.zeros(2, 2, 2))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices"):
        L.ldl_factor(lucid.zeros(2, 3))
    a = lucid.tensor(np.array([[2.0, 1.0], [1.0, 3.0]]), requires_grad=True)
    LD, piv = L.ldl_factor(a)
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not "
                                           "implemented"):
        LD.sum().backward()
    b = lucid.ones(2, 1, dtype=lucid.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve"):
        L.ldl_solve(LD.detach(), piv, b).sum().backward()
    with pytest.raises(RuntimeError, match="Expected pivots to be integers"):
        L.ldl_solve(LD.detach(), piv.double(), b)
    with pytest.raises(RuntimeError, match="each A matrix is 2 by 2 but each b matrix is 3 by 1"):
        L.ldl_solve(LD.detach(), piv, lucid.ones(3, 1, dtype=lucid.float64))


# ---- matrix_exp --------------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [1e-3, 1.0, 20.0, np.array([0.1, 3.0, 30.0])[:, None, None]],
                         ids=["tiny", "unit", "large", "mixed-batch"])
def test_matrix_exp_values_and_gradients(torch, scale):
    a = rng.standard_normal((3, 4, 4)) * scale
    _close(L.matrix_exp(lucid.tensor(a)).numpy(), scipy.linalg.expm(a), rtol=1e-12, atol=0)
    _check(torch, L.matrix_exp, torch.linalg.matrix_exp, a, rtol=1e-11, atol=1e-11)


def test_matrix_exp_double_backward_and_edges(torch):
    a = rng.standard_normal((3, 3))
    (x,), (xt,) = _pair(torch, [a])
    (g,) = lucid.autograd.grad(L.matrix_exp(x).sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad(torch.linalg.matrix_exp(xt).sum(), xt, create_graph=True)
    (gg,) = lucid.autograd.grad((g * g).sum(), x)
    (ggt,) = torch.autograd.grad((gt * gt).sum(), xt)
    _close(gg.numpy(), ggt.numpy(), rtol=1e-10, atol=1e-10)
    _close(L.matrix_exp(lucid.tensor([[0.0, 1.0], [-1.0, 0.0]])).numpy(),
           [[math.cos(1), math.sin(1)], [-math.sin(1), math.cos(1)]], rtol=1e-6)
    assert L.matrix_exp(lucid.tensor([[math.nan, 0.0], [0.0, 1.0]])).isnan().all()
    with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they are "
                                           "2 by 3 matrices"):
        L.matrix_exp(lucid.zeros(2, 3))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
        L.matrix_exp(lucid.zeros(2, 2, dtype=lucid.int64))


# ---- solve_ex, tensorinv, tensorsolve ------------------------------------------------------------
@pytest.mark.parametrize("left", [True, False])
def test_solve_ex(torch, left):
    a = rng.standard_normal((2, 4, 4))
    b = rng.standard_normal((2, 4, 3) if left else (2, 3, 4))
    _check(torch, lambda x, y: L.solve_ex(x, y, left=left).result,
           lambda x, y: torch.linalg.solve_ex(x, y, left=left).result, a, b, rtol=1e-9,
           atol=1e-10)
    res, info = L.solve_ex(lucid.tensor(a), lucid.tensor(b), left=left)
    assert info.dtype == lucid.int32 and not info.numpy().any()


def test_solve_ex_singular():
    A = lucid.tensor(np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 4.0]]]))
    res, info = L.solve_ex(A, lucid.ones(2, 2, dtype=lucid.float64))
    np.testing.assert_array_equal(info.numpy(), [2, 0])
    assert res[0].isnan().all()
    _close(res[1].numpy(), [0.5, 0.25])
    with pytest.raises(L.LinAlgError, match=r"torch.linalg.solve_ex: \(Batch element 0\): The "
                                            "solver failed because the input matrix is singular"):
        L.solve_ex(A, lucid.ones(2, 2, dtype=lucid.float64), check_errors=True)


def test_tensorinv_tensorsolve(torch):
    _check(torch, lambda a: L.tensorinv(a, ind=1), lambda a: torch.linalg.tensorinv(a, ind=1),
           rng.standard_normal((6, 2, 3)), rtol=1e-9, atol=1e-9)
    _check(torch, L.tensorinv, torch.linalg.tensorinv, rng.standard_normal((2, 3, 6)),
           rtol=1e-9, atol=1e-9)
    _check(torch, L.tensorsolve, torch.linalg.tensorsolve, rng.standard_normal((2, 3, 6)),
           rng.standard_normal((2, 3)), rtol=1e-9, atol=1e-9)
    _check(torch, lambda a, b: L.tensorsolve(a, b, dims=(0,)),
           lambda a, b: torch.linalg.tensorsolve(a, b, dims=(0,)),
           rng.standard_normal((6, 2, 3)), rng.standard_normal((2, 3)), rtol=1e-9, atol=1e-9)
    with pytest.raises(RuntimeError, match="but got 2 != 8"):
        L.tensorinv(lucid.zeros(4, 2, 2))
    with pytest.raises(RuntimeError, match="strictly positive integer for 'ind', but got 0"):
        L.tensorinv(lucid.zeros(4, 2, 2), ind=0)
    with pytest.raises(L.LinAlgError, match="^inv: The diagonal element 1 is zero"):
        L.tensorinv(lucid.zeros(2, 2, 4))
    with pytest.raises(RuntimeError, match=r"prod\(self.shape\[other.ndim:\]\) == "
                                           r"prod\(self.shape\[:other.ndim\]\), but got 6 != 4"):
        L.tensorsolve(lucid.zeros(4, 2, 3), lucid.zeros(4))


# ---- cond ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc"], ids=str)
def test_cond(torch, p):
    a = rng.standard_normal((2, 4, 4))
    # torch's own cond has no backward for p other than None/2/-2: compare with its definition
    direct = p is None or p in (2, -2)
    _check(torch, lambda x: L.cond(x, p), lambda x: torch.linalg.cond(x, p), a, rtol=1e-9,
           atol=1e-10, grad_fn=None if direct else (
               lambda x: torch.linalg.matrix_norm(x, p)
               * torch.linalg.matrix_norm(torch.linalg.inv(x), p)))


def test_cond_edges(torch):
    _check(torch, L.cond, torch.linalg.cond, rng.standard_normal((3, 5)), rtol=1e-10)
    sing = lucid.tensor([[1.0, 2.0], [2.0, 4.0]])
    assert L.cond(sing, 1).item() == math.inf
    assert L.cond(sing, "fro").item() == math.inf
    np.testing.assert_array_equal(L.cond(lucid.zeros(2, 0, 0)).numpy(), [0.0, 0.0])
    with pytest.raises(RuntimeError, match="invalid norm type: 3"):
        L.cond(sing, 3)
    with pytest.raises(RuntimeError, match=r"linalg.cond\(ord=1\): A must be batches of square"):
        L.cond(lucid.zeros(2, 3), 1)
    with pytest.raises(RuntimeError, match=r"linalg.cond\(ord=fro\): A must be batches"):
        L.cond(lucid.zeros(2, 3), "fro")
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        L.cond(lucid.zeros(3))


# ---- householder_product, vander ---------------------------------------------------------------
def test_householder_product(torch):
    _check(torch, L.householder_product, torch.linalg.householder_product,
           rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 2)))
    a, tau = torch.geqrf(torch.tensor(rng.standard_normal((4, 4))))
    Q = L.householder_product(lucid.tensor(a.numpy()), lucid.tensor(tau.numpy()))
    _close((Q.mT @ Q).numpy(), np.eye(4))
    with pytest.raises(RuntimeError, match=r"input.shape\[-2\] must be greater than or equal to "):
        L.householder_product(lucid.zeros(2, 3), lucid.zeros(2))
    with pytest.raises(RuntimeError, match=r"input.shape\[-1\] must be greater than or equal to "
                                           r"tau.shape\[-1\]"):
        L.householder_product(lucid.zeros(3, 2), lucid.zeros(3))
    with pytest.raises(RuntimeError, match="Expected tau to have one dimension less than input"):
        L.householder_product(lucid.zeros(3, 2), lucid.zeros(1, 2))
    with pytest.raises(RuntimeError, match=r"Expected batch dimensions of tau to be equal to "
                                           r"input.shape\[:-2\], but got \[3\]"):
        L.householder_product(lucid.zeros(2, 3, 2), lucid.zeros(3, 2))
    with pytest.raises(RuntimeError, match="tau dtype Double does not match input dtype Float"):
        L.householder_product(lucid.zeros(3, 2), lucid.zeros(2, dtype=lucid.float64))


def test_vander(torch):
    _check(torch, L.vander, torch.linalg.vander, rng.standard_normal((2, 4)))
    _check(torch, lambda x: L.vander(x, N=6), lambda x: torch.linalg.vander(x, N=6),
           np.array([0.0, 1.5, -2.0]))
    out = L.vander(lucid.tensor([1, 2, 3], dtype=lucid.int32))
    assert out.dtype == lucid.int64
    np.testing.assert_array_equal(out.numpy(), [[1, 1, 1], [1, 2, 4], [1, 3, 9]])
    with pytest.raises(RuntimeError, match="N must be greater than 1."):
        L.vander(lucid.tensor(2.0))
    with pytest.raises(RuntimeError, match="supports floating point, complex, and integer "
                                           "tensors, but got Bool"):
        L.vander(lucid.tensor([True]))


def test_gpu_device_runs_the_compositions():
    devices = pytest.importorskip("devices")
    if "gpu" not in devices.DEVICES:
        pytest.skip("MLX is not installed")
    devices.gpu_backend()
    a = lucid.tensor(rng.standard_normal((3, 3)).astype(np.float32), device="gpu",
                     requires_grad=True)
    LU, piv = L.lu_factor(a)
    x = L.lu_solve(LU, piv, a.detach())
    (L.matrix_exp(a).sum() + x.sum()).backward()
    assert a.grad.device == a.device
    _close(x.detach().cpu().numpy(), np.eye(3), rtol=1e-4, atol=1e-4)
