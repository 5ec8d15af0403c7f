"""lucid.linalg against numpy and torch.linalg: values, batching, named tuples, float64
gradchecks and PyTorch's errors; plus the top-level spellings (lucid.det, lucid.svd, ...)
and the Tensor methods."""

from __future__ import annotations

import math

import numpy as np
import pytest
from devices import DEVICES

import lucid
import lucid.linalg as LA
from lucid.autograd import gradcheck

RNG = np.random.default_rng(0)
A33 = RNG.standard_normal((2, 3, 3))
SPD = A33 @ A33.transpose(0, 2, 1) + 3 * np.eye(3)
SYM = A33 + A33.transpose(0, 2, 1)
TALL = RNG.standard_normal((2, 5, 3))
WIDE = RNG.standard_normal((2, 3, 5))


def T(a: np.ndarray, device: str = "cpu", rg: bool = False, dtype=None) -> lucid.Tensor:
    return lucid.tensor(a, device=device, requires_grad=rg, dtype=dtype)


def close(t: lucid.Tensor, ref, rtol: float = 1e-7, atol: float = 1e-9) -> None:
    ref = ref.detach().numpy() if hasattr(ref, "detach") else np.asarray(ref)
    assert tuple(t.shape) == tuple(ref.shape), (t.shape, ref.shape)
    np.testing.assert_allclose(t.detach().numpy(), ref, rtol=rtol, atol=atol)


def f64(x: np.ndarray) -> lucid.Tensor:
    return T(x, rg=True)


# ---- values against numpy, on every device ---------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_values_against_numpy(device: str) -> None:
    tol = {"rtol": 1e-4, "atol": 1e-5}
    a, spd, sym = (x.astype(np.float32) for x in (A33, SPD, SYM))
    close(LA.inv(T(a, device)), np.linalg.inv(a), **tol)
    close(LA.det(T(a, device)), np.linalg.det(a), **tol)
    close(LA.slogdet(T(a, device)).logabsdet, np.linalg.slogdet(a)[1], **tol)
    close(LA.slogdet(T(a, device)).sign, np.linalg.slogdet(a)[0], **tol)
    close(LA.cholesky(T(spd, device)), np.linalg.cholesky(spd), **tol)
    close(LA.solve(T(a, device), T(a[:, 0], device)), np.linalg.solve(a, a[:, 0, :, None])[..., 0],
          **tol)
    close(LA.eigvalsh(T(sym, device)), np.linalg.eigvalsh(sym), **tol)
    close(LA.svdvals(T(a, device)), np.linalg.svd(a, compute_uv=False), **tol)
    close(LA.pinv(T(a, device)), np.linalg.pinv(a), rtol=1e-3, atol=1e-4)
    close(LA.matrix_power(T(a, device), 3), a @ a @ a, **tol)
    close(LA.norm(T(a, device)), np.linalg.norm(a.reshape(-1)), **tol)
    Q, R = LA.qr(T(a, device))
    close(Q @ R, a, **tol)
    assert LA.inv(T(a, device)).device == lucid.device(device)


@pytest.mark.parametrize("ord", ["fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2])
def test_matrix_norm_orders(ord) -> None:
    a = RNG.standard_normal((2, 4, 3))
    ref = np.linalg.norm(a, ord=ord, axis=(-2, -1))
    close(LA.matrix_norm(T(a), ord), ref)
    close(LA.norm(T(a[0]), ord), np.linalg.norm(a[0], ord=ord))
    # other dims and keepdim
    close(LA.matrix_norm(T(a), ord, dim=(0, 2), keepdim=True),
          np.linalg.norm(a, ord=ord, axis=(0, 2), keepdims=True))


@pytest.mark.parametrize("ord", [2, 1, 3.5, 0, math.inf, -math.inf, -1])
def test_vector_norm_orders(ord) -> None:
    x = RNG.standard_normal((3, 4))
    close(LA.vector_norm(T(x), ord, dim=1), np.linalg.norm(x, ord=ord, axis=1))
    close(LA.vector_norm(T(x), ord), np.linalg.norm(x.reshape(-1), ord=ord))
    close(LA.vector_norm(T(x), ord, dim=(0, 1), keepdim=True),
          np.linalg.norm(x.reshape(-1), ord=ord).reshape(1, 1))


def test_vector_norm_dtype() -> None:
    x = T(np.array([3.0, 4.0], np.float32))
    out = LA.vector_norm(x, dtype=lucid.float64)
    assert out.dtype is lucid.float64 and out.item() == 5.0


def test_named_tuples_and_shapes() -> None:
    Q, R = LA.qr(T(TALL))
    assert (LA.qr(T(TALL)).Q.shape, R.shape) == ((2, 5, 3), (2, 3, 3))
    res = LA.qr(T(TALL), mode="complete")
    assert (res.Q.shape, res.R.shape) == ((2, 5, 5), (2, 5, 3))
    res = LA.qr(T(TALL), mode="r")
    assert (res.Q.shape, res.R.shape) == ((0,), (2, 3, 3))
    U, S, Vh = LA.svd(T(WIDE))
    assert (U.shape, S.shape, Vh.shape) == ((2, 3, 3), (2, 3), (2, 5, 5))
    r = LA.svd(T(WIDE), full_matrices=False)
    assert (r.U.shape, r.S.shape, r.Vh.shape) == ((2, 3, 3), (2, 3), (2, 3, 5))
    close((r.U * r.S.unsqueeze(-2)) @ r.Vh, WIDE)
    e = LA.eigh(T(SYM))
    close(e.eigenvectors @ lucid.diag_embed(e.eigenvalues) @ e.eigenvectors.mT, SYM)
    assert type(LA.slogdet(T(A33))).__name__ == "linalg_slogdet"
    assert LA.inv_ex(T(A33)).info.dtype is lucid.int32
    L, info = LA.cholesky_ex(T(SPD))
    assert info.tolist() == [0, 0]
    close(L @ L.mT, SPD)


def test_lstsq() -> None:
    A, B = RNG.standard_normal((2, 6, 3)), RNG.standard_normal((2, 6, 2))
    ref = np.linalg.lstsq(A[0], B[0], rcond=None)
    r = LA.lstsq(T(A), T(B), driver="gelsd")
    close(r.solution[0], ref[0])
    close(r.residuals[0], ref[1])
    assert r.rank.tolist() == [3, 3] and r.rank.dtype is lucid.int64
    close(r.singular_values[0], ref[3])
    d = LA.lstsq(T(A), T(B))  # gelsy: no residuals or singular values
    assert d.residuals.shape == (0,) and d.singular_values.shape == (0,)
    v = LA.lstsq(T(A[0]), T(B[0, :, 0]))
    close(v.solution, ref[0][:, 0])


def test_small_helpers() -> None:
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    close(LA.cross(T(a), T(b)), np.cross(a, b))
    close(LA.cross(T(a.T), T(b.T), dim=0), np.cross(a, b).T)
    close(LA.vecdot(T(a), T(b)), (a * b).sum(-1))
    m = [RNG.standard_normal(s) for s in ((3,), (3, 4), (4, 2), (2,))]
    close(LA.multi_dot([T(x) for x in m]), m[0] @ m[1] @ m[2] @ m[3])
    close(LA.diagonal(T(A33)), np.diagonal(A33, axis1=-2, axis2=-1))
    close(LA.matmul(T(A33), T(A33)), A33 @ A33)
    assert LA.matrix_rank(lucid.ones(3, 3)).item() == 1
    assert LA.matrix_rank(T(SPD)).tolist() == [3, 3]
    assert LA.matrix_rank(lucid.ones(3, 3), atol=5.0).item() == 0
    close(LA.matrix_power(T(A33), 0), np.broadcast_to(np.eye(3), A33.shape))
    close(LA.matrix_power(T(A33), -2), np.linalg.matrix_power(A33, -2))


def test_top_level_and_methods() -> None:
    a = T(A33[0])
    close(lucid.det(a), np.linalg.det(A33[0]))
    close(a.det(), np.linalg.det(A33[0]))
    close(lucid.inverse(a), np.linalg.inv(A33[0]))
    close(a.inverse(), np.linalg.inv(A33[0]))
    close(lucid.cholesky(T(SPD[0]), True), np.linalg.cholesky(SPD[0]).T)
    close(T(SPD[0]).cholesky(), np.linalg.cholesky(SPD[0]))
    U, S, V = lucid.svd(T(TALL[0]))
    assert (U.shape, V.shape) == ((5, 3), (3, 3))
    close(U @ lucid.diag(S) @ V.T, TALL[0])
    r = lucid.svd(T(TALL[0]), some=False, compute_uv=False)
    assert (r.U.shape, r.V.shape) == ((5, 5), (3, 3)) and not r.U.numpy().any()
    Q, R = T(TALL[0]).qr(some=False)
    assert Q.shape == (5, 5)
    sign, logabs = lucid.slogdet(a)
    close(sign * logabs.exp(), np.linalg.det(A33[0]))
    close(lucid.logdet(T(SPD[0])), np.log(np.linalg.det(SPD[0])))
    assert math.isnan(lucid.logdet(-lucid.eye(3)).item())
    assert lucid.logdet(lucid.zeros(3, 3)).item() == -math.inf
    close(lucid.pinverse(T(TALL[0])), np.linalg.pinv(TALL[0]))
    close(lucid.matrix_power(a, 2), A33[0] @ A33[0])
    close(a.matrix_power(2), A33[0] @ A33[0])
    close(a.pinverse(), np.linalg.pinv(A33[0]))
    close(a.logdet(), np.log(np.linalg.det(A33[0])) if np.linalg.det(A33[0]) > 0 else np.nan)


# ---- against torch ------------------------------------------------------------------------
def _torch_pair(torch, fl, ft, a: np.ndarray, post=None) -> None:
    """Forward values and the gradient of a random weighted sum agree with torch."""
    la, ta = T(a, rg=True), torch.tensor(a, requires_grad=True)
    lo, to = fl(la), ft(ta)
    lo = list(lo) if isinstance(lo, tuple) else [lo]
    to = list(to) if isinstance(to, tuple) else [to]
    rng = np.random.default_rng(1)
    ls = ts = 0
    for lt, tt in zip(lo, to):
        if post is not None:
            lt, tt = post(lt), post(tt)
        close(lt, tt, rtol=1e-6, atol=1e-9)
        if tt.requires_grad:
            w = rng.standard_normal(tuple(tt.shape))
            ls = ls + (lt * T(w)).sum()
            ts = ts + (tt * torch.tensor(w)).sum()
    ls.backward()
    ts.backward()
    close(la.grad, ta.grad, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "cholesky", "qr", "svd", "svdvals",
                                  "eigh", "eigvalsh", "pinv", "matrix_exp_free_norms"])
def test_against_torch(torch, name: str) -> None:
    L, TL = LA, torch.linalg
    if name == "inv":
        _torch_pair(torch, L.inv, TL.inv, A33)
    elif name == "det":
        _torch_pair(torch, L.det, TL.det, A33)
    elif name == "slogdet":
        _torch_pair(torch, lambda x: tuple(L.slogdet(x)), lambda x: tuple(TL.slogdet(x)), A33)
    elif name == "cholesky":
        _torch_pair(torch, L.cholesky, TL.cholesky, SPD)
        _torch_pair(torch, lambda x: L.cholesky(x, upper=True),
                    lambda x: TL.cholesky(x, upper=True), SPD)
    elif name == "qr":
        for a in (A33, TALL, WIDE):
            _torch_pair(torch, lambda x: tuple(L.qr(x)), lambda x: tuple(TL.qr(x)), a)
    elif name == "svd":  # singular vectors are defined up to sign: compare |U|, |Vh|
        for a in (A33, TALL, WIDE):
            _torch_pair(torch, lambda x: tuple(L.svd(x, full_matrices=False)),
                        lambda x: tuple(TL.svd(x, full_matrices=False)), a, post=abs)
    elif name == "svdvals":
        _torch_pair(torch, L.svdvals, TL.svdvals, TALL)
    elif name == "eigh":
        _torch_pair(torch, lambda x: tuple(L.eigh(x)), lambda x: tuple(TL.eigh(x)), SYM,
                    post=abs)
        _torch_pair(torch, lambda x: tuple(L.eigh(x, "U")), lambda x: tuple(TL.eigh(x, "U")),
                    A33, post=abs)
    elif name == "eigvalsh":
        _torch_pair(torch, L.eigvalsh, TL.eigvalsh, A33)
    elif name == "pinv":
        _torch_pair(torch, L.pinv, TL.pinv, TALL)
        _torch_pair(torch, lambda x: L.pinv(x, hermitian=True),
                    lambda x: TL.pinv(x, hermitian=True), SPD)
    else:
        for ord in ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf):
            _torch_pair(torch, lambda x, o=ord: L.matrix_norm(x, o),
                        lambda x, o=ord: TL.matrix_norm(x, o), TALL)
        for ord in (2, 1, 3, math.inf):
            _torch_pair(torch, lambda x, o=ord: L.vector_norm(x, o, dim=-1),
                        lambda x, o=ord: TL.vector_norm(x, o, dim=-1), TALL)


def test_solve_and_lstsq_against_torch(torch) -> None:
    A, B = RNG.standard_normal((2, 3, 3)), RNG.standard_normal((3, 2))  # B broadcasts
    la, lb = T(A, rg=True), T(B, rg=True)
    ta, tb = torch.tensor(A, requires_grad=True), torch.tensor(B, requires_grad=True)
    lo, to = LA.solve(la, lb), torch.linalg.solve(ta, tb)
    close(lo, to)
    (lo ** 2).sum().backward()
    (to ** 2).sum().backward()
    close(la.grad, ta.grad)
    close(lb.grad, tb.grad)
    B2 = RNG.standard_normal((4, 3))
    close(LA.solve(T(A), T(B2), left=False),
          torch.linalg.solve(ta, torch.tensor(B2), left=False))
    A, B = RNG.standard_normal((6, 3)), RNG.standard_normal((6, 2))
    for driver in ("gelsy", "gelsd", "gelss", "gels"):
        r, tr = LA.lstsq(T(A), T(B), driver=driver), \
            torch.linalg.lstsq(torch.tensor(A), torch.tensor(B), driver=driver)
        close(r.solution, tr.solution)
        close(r.residuals, tr.residuals)
        close(r.rank, tr.rank)
        close(r.singular_values, tr.singular_values)


def test_torch_names_exist(torch) -> None:
    for name in LA.__all__:
        assert hasattr(torch.linalg, name), name
    for name in ("det", "logdet", "slogdet", "inverse", "cholesky", "svd", "qr", "pinverse",
                 "matrix_power"):
        assert hasattr(torch, name) and hasattr(lucid, name), name
        assert hasattr(torch.Tensor, name) and hasattr(lucid.Tensor, name), name


# ---- float64 gradchecks --------------------------------------------------------------------
def _sym(x: lucid.Tensor) -> lucid.Tensor:
    return x @ x.mT + 3 * lucid.eye(x.shape[-1], dtype=x.dtype, device=x.device)


@pytest.mark.parametrize("backend_name", ["cpu", "numpy"])
def test_gradchecks(backend_name: str) -> None:
    def g(x: np.ndarray) -> lucid.Tensor:
        return T(x, backend_name, True)

    a, tall, wide = A33[:, :2, :2] + 2 * np.eye(2), TALL[:1, :3, :2], WIDE[:1, :2, :3]
    gradcheck(LA.inv, (g(a),))
    gradcheck(LA.det, (g(a),))
    gradcheck(lambda x: LA.slogdet(x).logabsdet, (g(a),))
    gradcheck(lambda x: LA.solve(x, x[..., 0]), (g(a),))
    gradcheck(lambda x: LA.cholesky(_sym(x)), (g(a),))
    gradcheck(lambda x: tuple(LA.qr(x)), (g(tall),))
    gradcheck(lambda x: tuple(LA.qr(x)), (g(wide),))
    gradcheck(lambda x: tuple(v.abs() for v in LA.svd(x, full_matrices=False)), (g(tall),))
    gradcheck(lambda x: tuple(v.abs() for v in LA.svd(x, full_matrices=False)), (g(wide),))
    gradcheck(LA.svdvals, (g(wide),))
    gradcheck(lambda x: tuple(v.abs() for v in LA.eigh(x + x.mT)), (g(A33[:1]),))
    gradcheck(LA.pinv, (g(tall),))
    gradcheck(lambda x: LA.lstsq(x, x.sum(-1, keepdim=True) ** 2).solution, (g(tall),))
    gradcheck(lambda x: LA.matrix_norm(x, "nuc"), (g(tall),))
    gradcheck(lambda x: LA.matrix_norm(x, 1), (g(tall),))
    gradcheck(lambda x: LA.norm(x), (g(tall),))
    gradcheck(lambda x: LA.vector_norm(x, 3, dim=-1), (g(tall),))
    gradcheck(lambda x: LA.matrix_power(x, -2), (g(a),))
    gradcheck(lambda x: LA.cross(x, x.flip(-1) ** 2), (g(RNG.standard_normal((2, 3))),))
    gradcheck(lambda x: lucid.logdet(_sym(x)), (g(a),))


# ---- errors with PyTorch's messages ------------------------------------------------------------
def test_singular_and_not_positive_definite() -> None:
    assert issubclass(LA.LinAlgError, RuntimeError)
    with pytest.raises(LA.LinAlgError, match=r"^linalg.inv: The diagonal element 1 is zero, "
                       "the inversion could not be completed because the input matrix is "
                       r"singular.$"):
        LA.inv(lucid.zeros(3, 3))
    z = np.stack([np.eye(3), [[1, 2, 3], [2, 4, 6], [1, 1, 1]]])
    with pytest.raises(LA.LinAlgError, match=r"\(Batch element 1\): The diagonal element 3 "):
        LA.inv(T(z))
    with pytest.raises(LA.LinAlgError, match=r"^torch.linalg.solve: The solver failed because "
                       "the input matrix is singular."):
        LA.solve(lucid.zeros(3, 3), lucid.ones(3))
    with pytest.raises(LA.LinAlgError, match=r"^linalg.cholesky: \(Batch element 1\): The "
                       "factorization could not be completed because the input is not "
                       r"positive-definite \(the leading minor of order 2 is not "
                       r"positive-definite\).$"):
        LA.cholesky(T(np.stack([np.eye(3), np.diag([1.0, -1.0, 1.0])])))
    inverse, info = LA.inv_ex(T(z))
    assert info.tolist() == [0, 3]
    assert np.isnan(inverse[1].numpy()).all()
    close(inverse[0], np.eye(3))
    assert LA.cholesky_ex(-lucid.eye(3)).info.item() == 1
    with pytest.raises(LA.LinAlgError):
        LA.inv_ex(lucid.zeros(2, 2), check_errors=True)
    assert LA.det(lucid.zeros(3, 3)).item() == 0.0


def test_singular_matches_torch(torch) -> None:
    z = np.stack([np.eye(3), [[1, 2, 3], [2, 4, 6], [1, 1, 1]]])
    for fl, ft in ((LA.inv, torch.linalg.inv), (lambda x: LA.solve(x, x),
                                                 lambda x: torch.linalg.solve(x, x))):
        with pytest.raises(RuntimeError) as le:
            fl(T(z))
        with pytest.raises(RuntimeError) as te:
            ft(torch.tensor(z))
        assert str(le.value) == str(te.value)
    assert LA.inv_ex(T(z)).info.tolist() == torch.linalg.inv_ex(torch.tensor(z)).info.tolist()


@pytest.mark.parametrize("call, message", [
    (lambda: LA.inv(lucid.ones(2, 3)), r"^linalg.inv: A must be batches of square matrices, "
     r"but they are 2 by 3 matrices$"),
    (lambda: LA.det(lucid.ones(3)), r"^linalg.det: The input tensor A must have at least 2 "
     r"dimensions.$"),
    (lambda: LA.inv(lucid.ones(3, 3, dtype=lucid.int64)), r"^linalg.inv: Expected a floating "
     r"point or complex tensor as input. Got Long$"),
    (lambda: LA.inv(lucid.ones(3, 3, dtype=lucid.float16)), "Low precision dtypes not "
     "supported. Got Half"),
    (lambda: LA.solve(lucid.eye(3), lucid.ones(4)), r"Incompatible shapes of A and B for the "
     r"equation AX = B \(3x3 and 4x1\)"),
    (lambda: LA.solve(lucid.eye(3), lucid.ones(3, dtype=lucid.float64)), "Expected A and B "
     "to have the same dtype, but found A of type Float and B of type Double instead"),
    (lambda: LA.qr(lucid.eye(3), mode="x"), "qr received unrecognized mode 'x'"),
    (lambda: LA.eigh(lucid.eye(3), UPLO="X"), "Expected UPLO argument to be 'L' or 'U', "
     "but got X"),
    (lambda: LA.cross(lucid.ones(2), lucid.ones(2)), r"linalg.cross: inputs dimension -1 must "
     r"have length 3. Got 2 and 2"),
    (lambda: LA.multi_dot([lucid.ones(3)]), r"expected at least 2 tensors but got 1"),
    (lambda: LA.multi_dot([lucid.ones(2, 2, 2), lucid.ones(2, 2)]), "the first tensor must "
     "be 1D or 2D but got 3D"),
    (lambda: LA.matrix_norm(lucid.ones(3, 3), 3), r"^linalg.matrix_norm: Order 3 not "
     r"supported.$"),
    (lambda: LA.matrix_norm(lucid.ones(3)), "must have at least 2 dimensions"),
    (lambda: LA.norm(lucid.ones(2, 2, 2), "fro"), r"If dim is not specified but ord is, the "
     r"input must be 1D or 2D. Got 3D."),
    (lambda: LA.vector_norm(lucid.ones(3, dtype=lucid.int64)), "Expected a floating point or "
     "complex tensor as input. Got Long"),
    (lambda: LA.pinv(lucid.ones(3)), r"expected a tensor with 2 or more dimensions"),
    (lambda: LA.lstsq(lucid.ones(4, 3), lucid.ones(3)), r"input.size\(-2\) should match "
     r"other.size\(-1\)"),
    (lambda: LA.lstsq(lucid.ones(4, 3), lucid.ones(4), driver="x"), "parameter `driver`"),
    (lambda: LA.matrix_power(lucid.ones(2, 3), 2), "A must be batches of square matrices"),
])
def test_errors(call, message: str) -> None:
    with pytest.raises(RuntimeError, match=message):
        call()


def test_vector_norm_rejects_string_ord() -> None:
    with pytest.raises(TypeError, match="argument 'ord' must be Number, not str"):
        LA.vector_norm(lucid.ones(3), "fro")


def test_backward_errors() -> None:
    x = T(TALL[0], rg=True)
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and "
                       "nrows > ncols"):
        LA.qr(x, mode="complete").Q.sum().backward()
    with pytest.raises(RuntimeError, match="depends on Q, which is not computed when "
                       "mode='r'"):
        LA.qr(x, mode="r").R.sum().backward()


def test_complex_inputs() -> None:
    z = np.array([[1 + 2j, 3 - 1j], [0.5j, 2]])
    close(LA.vector_norm(T(z)), np.linalg.norm(z.reshape(-1)))
    close(LA.matrix_norm(T(z)), np.linalg.norm(z, "fro"))
    close(LA.matrix_norm(T(z), 1), np.linalg.norm(z, 1))
    close(LA.vecdot(T(z), T(z)), (np.conj(z) * z).sum(-1))
    with pytest.raises(NotImplementedError, match="linalg.inv: complex inputs are not "
                       "supported"):
        LA.inv(T(z))
