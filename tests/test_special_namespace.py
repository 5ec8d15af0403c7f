"""``lucid.special``: torch.special's names, against scipy references and torch."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import lucid

X = np.array([-2.5, -0.3, 0.0, 0.7, 3.0])
P = np.array([0.1, 0.5, 0.9])
A = np.array([1.5, 2.5, 4.0])

REFS = {
    "expit": sp.expit, "ndtr": sp.ndtr, "log_ndtr": sp.log_ndtr, "erf": sp.erf,
    "erfc": sp.erfc, "gammaln": sp.gammaln, "psi": sp.psi, "digamma": sp.digamma,
    "i0": sp.i0, "exp2": np.exp2, "expm1": np.expm1, "sinc": np.sinc,
}


@pytest.mark.parametrize("name", sorted(REFS))
def test_unary_against_scipy(name: str) -> None:
    x = X if name not in ("gammaln", "psi", "digamma") else A
    out = getattr(lucid.special, name)(lucid.tensor(x))
    np.testing.assert_allclose(out.numpy(), REFS[name](x), rtol=1e-6, atol=1e-7)


def test_compositions_against_scipy() -> None:
    t = lucid.tensor
    np.testing.assert_allclose(lucid.special.ndtri(t(P)).numpy(), sp.ndtri(P), rtol=1e-6)
    np.testing.assert_allclose(lucid.special.entr(t(np.abs(X))).numpy(), sp.entr(np.abs(X)),
                               rtol=1e-6)
    np.testing.assert_allclose(lucid.special.xlog1py(t(X[:3]), t(P)).numpy(),
                               sp.xlog1py(X[:3], P), rtol=1e-6)
    np.testing.assert_allclose(lucid.special.multigammaln(t(A), 3).numpy(),
                               [sp.multigammaln(a, 3) for a in A], rtol=1e-6)
    np.testing.assert_allclose(lucid.special.gammaincc(t(A), t(P)).numpy(),
                               sp.gammaincc(A, P), rtol=1e-6)
    with pytest.raises(ValueError, match="p has to be greater"):
        lucid.special.multigammaln(t(A), 0)


def test_differentiable_second_order() -> None:
    x = lucid.tensor([0.3, -0.8], dtype=lucid.float64, requires_grad=True)
    (g,) = lucid.autograd.grad(lucid.special.ndtr(x).sum(), x, create_graph=True)
    pdf = np.exp(-np.array([0.3, -0.8]) ** 2 / 2) / np.sqrt(2 * np.pi)
    np.testing.assert_allclose(g.detach().numpy(), pdf, rtol=1e-10)
    (h,) = lucid.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), -np.array([0.3, -0.8]) * pdf, rtol=1e-10)


def test_matches_torch(torch) -> None:
    for name in ("expit", "ndtr", "log_ndtr", "entr", "erfinv", "logit", "sinc"):
        x = P if name in ("erfinv", "logit") else X
        a = getattr(lucid.special, name)(lucid.tensor(x)).numpy()
        b = getattr(torch.special, name)(torch.tensor(x)).numpy()
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=name)
