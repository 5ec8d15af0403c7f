"""The ops the distributions need: special functions (lgamma, digamma, polygamma, erf, erfc,
erfinv, igamma), triangular solves and the gamma / poisson samplers, against scipy and torch,
with float64 gradchecks on every backend."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import lucid
from lucid.autograd import gradcheck
from lucid.ops.triangular import solve_triangular

X = np.array([0.05, 0.5, 1.0, 2.5, 7.0, 30.0])
U = np.array([-0.95, -0.3, 0.0, 0.4, 0.99])

UNARY = {
    "lgamma": (lucid.lgamma, sp.gammaln, X),
    "digamma": (lucid.digamma, sp.digamma, X),
    "polygamma1": (lambda t: lucid.polygamma(1, t), lambda a: sp.polygamma(1, a), X),
    "polygamma3": (lambda t: lucid.polygamma(3, t), lambda a: sp.polygamma(3, a), X),
    "erf": (lucid.erf, sp.erf, np.array([-3.0, -0.5, 0.0, 0.7, 2.0])),
    "erfc": (lucid.erfc, sp.erfc, np.array([-3.0, -0.5, 0.0, 0.7, 6.0])),
    "erfinv": (lucid.erfinv, sp.erfinv, U),
}


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_values_and_gradcheck(backend: str, name: str) -> None:
    fn, ref, x = UNARY[name]
    t = lucid.tensor(x, device=backend, requires_grad=True)
    out = fn(t)
    assert out.device == lucid.device(backend) and out.dtype == lucid.float64
    np.testing.assert_allclose(out.detach().numpy(), ref(x), rtol=1e-12)
    assert gradcheck(fn, (t,))
    f32 = fn(lucid.tensor(x.astype(np.float32), device=backend))
    assert f32.dtype == lucid.float32
    np.testing.assert_allclose(f32.numpy(), ref(x), rtol=1e-5)


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_matches_torch(torch: object, name: str) -> None:
    fn, _, x = UNARY[name]
    tfn = {"polygamma1": lambda t: torch.polygamma(1, t),
           "polygamma3": lambda t: torch.polygamma(3, t)}.get(name, getattr(torch, name, None))
    t = torch.tensor(x, requires_grad=True)
    tfn(t).sum().backward()
    lt = lucid.tensor(x, requires_grad=True)
    fn(lt).sum().backward()
    # torch's trigamma is good to ~1e-9 (scipy's to ~1e-15: pi^2/6 at 1)
    np.testing.assert_allclose(lt.grad.numpy(), t.grad.numpy(), rtol=1e-8)
    # integer input promotes to the default float dtype, as torch
    got = fn(lucid.tensor([1, 2, 3]))
    assert got.dtype == lucid.float32 and str(tfn(torch.tensor([1, 2, 3])).dtype) == \
        "torch.float32"


def test_tensor_methods_and_errors() -> None:
    t = lucid.tensor([0.5, 2.0])
    np.testing.assert_allclose(t.lgamma().numpy(), sp.gammaln([0.5, 2.0]), rtol=1e-6)
    np.testing.assert_allclose(t.digamma().numpy(), sp.digamma([0.5, 2.0]), rtol=1e-6)
    np.testing.assert_allclose(t.polygamma(2).numpy(), sp.polygamma(2, [0.5, 2.0]), rtol=1e-6)
    np.testing.assert_allclose((t / 4).erfinv().numpy(), sp.erfinv([0.125, 0.5]), rtol=1e-6)
    assert lucid.polygamma(0, t).numpy() == pytest.approx(sp.digamma([0.5, 2.0]))
    with pytest.raises(RuntimeError, match="polygamma\\(n, x\\) does not support negative n"):
        lucid.polygamma(-1, t)
    with pytest.raises(TypeError, match="must be Tensor"):
        lucid.lgamma([1.0])
    assert np.isposinf(lucid.erfinv(lucid.tensor([1.0])).item())


def test_igamma(backend: str, torch: object) -> None:
    a, x = np.array([0.5, 2.0, 5.0]), np.array([0.3, 2.5, 1.0])
    tx = lucid.tensor(x, device=backend, requires_grad=True)
    out = lucid.igamma(lucid.tensor(a, device=backend), tx)
    np.testing.assert_allclose(out.detach().numpy(), sp.gammainc(a, x), rtol=1e-12)
    np.testing.assert_allclose(out.detach().numpy(),
                               torch.special.gammainc(torch.tensor(a), torch.tensor(x)).numpy(),
                               rtol=1e-12)
    assert gradcheck(lambda v: lucid.igamma(lucid.tensor(a, device=backend), v), (tx,))
    ta = lucid.tensor(a, requires_grad=True)
    y = lucid.igamma(ta, lucid.tensor(x))
    with pytest.raises(RuntimeError, match="derivative for 'igamma: input' is not implemented"):
        y.sum().backward()


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular(backend: str, torch: object, upper: bool, left: bool,
                          unit: bool) -> None:
    rng = np.random.default_rng(0)
    a = np.tril(rng.standard_normal((2, 3, 3))) + 3 * np.eye(3)
    if upper:
        a = np.swapaxes(a, -1, -2).copy()
    b = rng.standard_normal((3, 2) if left else (2, 3))       # broadcast over A's batch
    A = lucid.tensor(a, device=backend, requires_grad=True)
    B = lucid.tensor(b, device=backend, requires_grad=True)
    got = solve_triangular(A, B, upper=upper, left=left, unitriangular=unit)
    want = torch.linalg.solve_triangular(torch.tensor(a), torch.tensor(b), upper=upper,
                                         left=left, unitriangular=unit)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    assert gradcheck(lambda x, y: solve_triangular(x, y, upper=upper, left=left,
                                                   unitriangular=unit), (A, B))


def test_solve_triangular_errors() -> None:
    a, b = lucid.eye(3), lucid.ones(2, 4)
    with pytest.raises(RuntimeError, match="Incompatible shapes of A and B for the equation "
                                           "AX = B \\(3x3 and 2x4\\)"):
        solve_triangular(a, b, upper=False)
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        solve_triangular(lucid.ones(3), b, upper=False)
    with pytest.raises(RuntimeError, match="Expected A and B to have the same dtype"):
        solve_triangular(a, lucid.ones(3, 1, dtype=lucid.float64), upper=False)


def test_samplers() -> None:
    from lucid.ops.random_gamma import standard_gamma

    lucid.manual_seed(0)
    a = standard_gamma(lucid.full((20000,), 3.0, dtype=lucid.float64))
    assert abs(a.mean().item() - 3.0) < 0.1 and abs(a.var().item() - 3.0) < 0.2
    lucid.manual_seed(0)
    assert lucid.equal(standard_gamma(lucid.full((20000,), 3.0, dtype=lucid.float64)), a)
    p = lucid.poisson(lucid.full((20000,), 4.0))
    assert p.dtype == lucid.float32 and abs(p.mean().item() - 4.0) < 0.1
    assert (p.numpy() == np.round(p.numpy())).all()
    with pytest.raises(RuntimeError, match="invalid Poisson rate"):
        lucid.poisson(lucid.tensor([-1.0]))
    with pytest.raises(TypeError, match="floating point"):
        standard_gamma(lucid.tensor([1, 2]))
