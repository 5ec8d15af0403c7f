"""lucid.special's Bessel family, erfcx, zeta and orthogonal polynomials: values as
torch.special's (and scipy's), gradients as torch's backward (float64, twice differentiable
where torch is), no gradient where torch has none, torch's errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import scipy.special as sp

import lucid

S = lucid.special
X = np.concatenate([np.linspace(-30, 30, 241),
                    [-math.inf, -0.0, 0.0, 1e-300, 1e-8, 5.0, 8.0, 700.0, 800.0, math.inf,
                     math.nan]])

# name -> scipy reference
UNARY = {
    "airy_ai": lambda x: sp.airy(x)[0], "bessel_j0": sp.j0, "bessel_j1": sp.j1,
    "bessel_y0": sp.y0, "bessel_y1": sp.y1, "modified_bessel_i0": sp.i0,
    "modified_bessel_i1": sp.i1, "modified_bessel_k0": sp.k0, "modified_bessel_k1": sp.k1,
    "scaled_modified_bessel_k0": sp.k0e, "scaled_modified_bessel_k1": sp.k1e,
    "spherical_bessel_j0": lambda x: sp.spherical_jn(0, x), "erfcx": sp.erfcx, "i0e": sp.i0e,
    "i1": sp.i1, "i1e": sp.i1e,
}
# torch's CPU kernels for these are accurate to ~3e-6 only (lucid's to double precision)
TORCH_LOOSE = {"airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values(torch, name):
    with np.errstate(all="ignore"):
        ref = UNARY[name](X)
    out = getattr(S, name)(lucid.tensor(X))
    assert out.dtype == lucid.float64
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-14, atol=0)
    theirs = getattr(torch.special, name)(torch.tensor(X)).numpy()
    if name in TORCH_LOOSE:
        np.testing.assert_allclose(out.numpy(), theirs, rtol=1e-5, atol=5e-6)
    else:
        np.testing.assert_allclose(out.numpy(), theirs, rtol=1e-13, atol=1e-300)
    x32 = getattr(S, name)(lucid.tensor(X.astype(np.float32)))
    assert x32.dtype == lucid.float32
    assert getattr(S, name)(lucid.tensor([1, 2])).dtype == lucid.float32


@pytest.mark.parametrize("name", sorted(set(UNARY) - {"erfcx", "i0e", "i1", "i1e"}))
def test_no_gradient_like_torch(torch, name):
    x = lucid.tensor([0.5, 1.5], dtype=lucid.float64, requires_grad=True)
    out = getattr(S, name)(x)
    assert not out.requires_grad
    assert not getattr(torch.special, name)(torch.tensor([0.5], requires_grad=True)).requires_grad


@pytest.mark.parametrize("name", ["erfcx", "i0e", "i1", "i1e"])
def test_gradients_and_double_backward(torch, name):
    x = np.array([-3.0, -0.5, 0.0, 1e-20, 0.7, 2.0, 9.0])
    xl = lucid.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    (gl,) = lucid.autograd.grad(getattr(S, name)(xl).sum(), xl, create_graph=True)
    (gt,) = torch.autograd.grad(getattr(torch.special, name)(xt).sum(), xt, create_graph=True)
    np.testing.assert_allclose(gl.detach().numpy(), gt.detach().numpy(), rtol=1e-13, atol=1e-15)
    (ggl,) = lucid.autograd.grad((gl * gl).sum(), xl)
    (ggt,) = torch.autograd.grad((gt * gt).sum(), xt)
    np.testing.assert_allclose(ggl.numpy(), ggt.numpy(), rtol=1e-12, atol=1e-14)
    assert lucid.autograd.gradcheck(getattr(S, name), [lucid.tensor(x[[0, 1, 4, 5]],
                                                                    requires_grad=True)])


def test_errors():
    with pytest.raises(TypeError, match=r"special_bessel_j0\(\): argument 'input' \(position 1\) "
                                        "must be Tensor, not list"):
        S.bessel_j0([1.0])
    with pytest.raises(TypeError, match="special_zeta"):
        S.zeta(2, 3)
    with pytest.raises(TypeError, match="chebyshev_polynomial_t"):
        S.chebyshev_polynomial_t(0.5, 3)


# ---- zeta ----------------------------------------------------------------------------------------
def test_zeta_values(torch):
    x = np.array([-3, -2.5, -1, 0, 0.5, 1, 1.5, 2, 3, 10, 50, math.inf, math.nan])
    q = np.array([-3, -2.5, -1, -0.5, 0, 1e-3, 0.5, 1, 2, 10, 1e5, math.inf, math.nan])
    xx, qq = np.meshgrid(x, q)
    ours = S.zeta(lucid.tensor(xx), lucid.tensor(qq)).numpy()
    theirs = torch.special.zeta(torch.tensor(xx), torch.tensor(qq)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=0)
    np.testing.assert_allclose(S.zeta(2, lucid.tensor([1.0, 2.0])).numpy(),
                               [math.pi ** 2 / 6, math.pi ** 2 / 6 - 1], rtol=1e-6)
    assert S.zeta(lucid.tensor([2.0]), 1.0).dtype == lucid.float32


def test_zeta_gradients(torch):
    x, q = np.array([2.0, 3.0, 4.5]), np.array([[0.5], [1.5], [3.0]])
    ql = lucid.tensor(q, requires_grad=True)
    qt = torch.tensor(q, requires_grad=True)
    (gl,) = lucid.autograd.grad(S.zeta(lucid.tensor(x), ql).sum(), ql, create_graph=True)
    (gt,) = torch.autograd.grad(torch.special.zeta(torch.tensor(x), qt).sum(), qt,
                                create_graph=True)
    np.testing.assert_allclose(gl.detach().numpy(), gt.detach().numpy(), rtol=1e-13)
    (ggl,) = lucid.autograd.grad(gl.sum(), ql)
    (ggt,) = torch.autograd.grad(gt.sum(), qt)
    np.testing.assert_allclose(ggl.numpy(), ggt.numpy(), rtol=1e-12)
    xl = lucid.tensor(x, requires_grad=True)
    with pytest.raises(RuntimeError, match="the derivative for 'zeta' is not implemented."):
        S.zeta(xl, 1.0).sum().backward()


# ---- orthogonal polynomials ----------------------------------------------------------------------
POLYS = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p",
]
PX = np.concatenate([np.linspace(-2, 2, 81), [1, -1, 0, 0.5, math.inf, -math.inf, 1e10, 3.5]])
PN = np.array([-3, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 20, 50, 130, 200, 513, 600, 2.7,
               -0.5, math.nan, math.inf])


@pytest.mark.parametrize("name", POLYS)
def test_polynomials_match_torch(torch, name):
    xx, nn = np.meshgrid(PX, PN)
    ours = getattr(S, name)(lucid.tensor(xx), lucid.tensor(nn))
    theirs = getattr(torch.special, name)(torch.tensor(xx), torch.tensor(nn)).numpy()
    assert ours.dtype == lucid.float64
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-10, atol=1e-13)
    # scalar degree, integer degree tensor, broadcasting, float32
    x = lucid.tensor([[0.3], [-0.7]], dtype=lucid.float32)
    n = lucid.tensor([0, 1, 4], dtype=lucid.int64)
    out = getattr(S, name)(x, n)
    assert out.dtype == lucid.float32 and tuple(out.shape) == (2, 3)
    ref = getattr(torch.special, name)(torch.tensor(x.numpy()), torch.tensor(n.numpy()))
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(getattr(S, name)(x, 3).numpy(),
                               getattr(torch.special, name)(torch.tensor(x.numpy()), 3).numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(getattr(S, name)(0.5, n).numpy(),
                               getattr(torch.special, name)(0.5, torch.tensor(n.numpy())).numpy(),
                               rtol=1e-6, atol=1e-6)
    xg = lucid.tensor([0.5], dtype=lucid.float64, requires_grad=True)
    assert not getattr(S, name)(xg, 3).requires_grad


def test_polynomials_against_scipy():
    x = np.linspace(-0.95, 0.95, 7)
    for k in range(6):
        xt = lucid.tensor(x)
        np.testing.assert_allclose(S.chebyshev_polynomial_t(xt, k).numpy(), sp.eval_chebyt(k, x),
                                   atol=1e-13)
        np.testing.assert_allclose(S.chebyshev_polynomial_u(xt, k).numpy(), sp.eval_chebyu(k, x),
                                   atol=1e-13)
        np.testing.assert_allclose(S.hermite_polynomial_h(xt, k).numpy(),
                                   sp.eval_hermite(k, x), atol=1e-12)
        np.testing.assert_allclose(S.hermite_polynomial_he(xt, k).numpy(),
                                   sp.eval_hermitenorm(k, x), atol=1e-12)
        np.testing.assert_allclose(S.laguerre_polynomial_l(xt, k).numpy(),
                                   sp.eval_laguerre(k, x), atol=1e-12)
        np.testing.assert_allclose(S.legendre_polynomial_p(xt, k).numpy(),
                                   sp.eval_legendre(k, x), atol=1e-13)
        np.testing.assert_allclose(S.shifted_chebyshev_polynomial_t(xt, k).numpy(),
                                   sp.eval_sh_chebyt(k, x), atol=1e-12)


def test_every_torch_special_name_exists(torch):
    public = {n for n in dir(torch.special) if not n.startswith("_")}
    missing = public - set(S.__all__) - {"Tensor", "common_args", "multi_dim_common", "torch"}
    assert not missing


def test_gpu_device():
    devices = pytest.importorskip("devices")
    if "gpu" not in devices.DEVICES:
        pytest.skip("MLX is not installed")
    devices.gpu_backend()
    x = lucid.tensor([0.5, 1.5], device="gpu", requires_grad=True)
    for fn in (S.bessel_j0, S.i1, S.erfcx, S.airy_ai):
        assert fn(x).device == x.device
    S.i1e(x).sum().backward()
    assert x.grad.device == x.device
    assert S.chebyshev_polynomial_t(x, 3).device == x.device
    np.testing.assert_allclose(S.zeta(x.detach() + 1, x.detach()).cpu().numpy(),
                               sp.zeta([1.5, 2.5], [0.5, 1.5]), rtol=1e-5)


def test_gammaincc_keeps_the_far_tail(torch: Any) -> None:
    """Q(a, x) is computed directly: 1 - P(a, x) would round e^-50 to 0."""
    a, x = [1.0, 2.0, 0.5, 3.0], [50.0, 0.3, 2.0, 80.0]
    lx = lucid.tensor(x, dtype=lucid.float64, requires_grad=True)
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    lq = lucid.special.gammaincc(lucid.tensor(a, dtype=lucid.float64), lx)
    tq = torch.special.gammaincc(torch.tensor(a, dtype=torch.float64), tx)
    np.testing.assert_allclose(lq.detach().numpy(), tq.detach().numpy(), rtol=1e-12)
    assert lq[0].item() > 0
    lq.sum().backward()
    tq.sum().backward()
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    t = lucid.tensor(a, dtype=lucid.float64)
    assert t.igammac_(lucid.tensor(x, dtype=lucid.float64)) is t
    np.testing.assert_allclose(t.numpy(), tq.detach().numpy(), rtol=1e-12)
