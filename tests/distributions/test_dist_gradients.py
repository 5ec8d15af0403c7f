"""Float64 gradchecks: log_prob, entropy and kl with respect to parameters, and rsample
(reparameterised samples at a fixed seed) with respect to parameters; the implicit gamma
gradient against torch and against the derivative of the mean."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.distributions as D
from lucid.autograd import gradcheck
from lucid.ops.random_gamma import standard_gamma, standard_gamma_grad


def _p(*v: object) -> lucid.Tensor:
    return lucid.tensor(np.asarray(v, np.float64), requires_grad=True)


_A = np.array([[1.0, 0.2, -0.3], [0.4, 1.5, 0.1], [-0.2, 0.3, 0.8]])

# name -> (factory from parameter tensors, parameters, value)
LOG_PROB = {
    "normal": (D.Normal, (_p(0.0, 1.0), _p(1.0, 0.5)), [0.3, -1.0]),
    "uniform": (D.Uniform, (_p(0.0, -1.0), _p(1.0, 3.0)), [0.5, 2.0]),
    "laplace": (D.Laplace, (_p(0.0, 1.0), _p(1.0, 2.5)), [-0.7, 3.0]),
    "exponential": (D.Exponential, (_p(0.5, 2.0),), [0.3, 1.5]),
    "gamma": (D.Gamma, (_p(0.5, 2.0), _p(1.0, 0.5)), [0.2, 3.0]),
    # (concentration 1 is a kink of xlogy's gradient, in torch too: kept away from it)
    "beta": (D.Beta, (_p(0.5, 2.0), _p(0.7, 1.3)), [0.2, 0.5]),
    "dirichlet": (D.Dirichlet, (_p(0.5, 1.5, 2.0),), [0.2, 0.3, 0.5]),
    "lognormal": (D.LogNormal, (_p(0.0, 0.5), _p(1.0, 0.3)), [0.7, 2.0]),
    "poisson": (D.Poisson, (_p(0.5, 3.0),), [0.0, 4.0]),
    "bernoulli": (lambda p: D.Bernoulli(probs=p), (_p(0.2, 0.7),), [0.0, 1.0]),
    "bernoulli_logits": (lambda lg: D.Bernoulli(logits=lg), (_p(-1.0, 2.0),), [0.0, 1.0]),
    "categorical": (lambda p: D.Categorical(probs=p), (_p(0.2, 0.3, 0.5),), None),
    "categorical_logits": (lambda lg: D.Categorical(logits=lg), (_p(0.1, -2.0, 1.0),), None),
    "onehot": (lambda p: D.OneHotCategorical(probs=p), (_p(0.2, 0.3, 0.5),), [0.0, 1.0, 0.0]),
    "mvn_tril": (lambda loc, m: D.MultivariateNormal(loc, scale_tril=lucid.tril(m)),
                 (_p(1.0, 2.0, 3.0), lucid.tensor(np.linalg.cholesky(_A @ _A.T + np.eye(3)),
                                                  requires_grad=True)), [0.5, 1.0, 2.0]),
    "mvn_cov": (lambda loc, m: D.MultivariateNormal(loc, m @ m.mT + lucid.eye(3, dtype=m.dtype)),
                (_p(1.0, 2.0, 3.0), lucid.tensor(_A, requires_grad=True)), [0.5, 1.0, 2.0]),
    "mvn_prec": (lambda loc, m: D.MultivariateNormal(
        loc, precision_matrix=m @ m.mT + lucid.eye(3, dtype=m.dtype)),
        (_p(1.0, 2.0, 3.0), lucid.tensor(_A, requires_grad=True)), [0.5, 1.0, 2.0]),
    "relaxed_bernoulli": (lambda t, p: D.RelaxedBernoulli(t, probs=p),
                          (_p(0.5), _p(0.3, 0.8)), [0.2, 0.9]),
}


@pytest.mark.parametrize("name", list(LOG_PROB))
def test_log_prob_gradcheck(name: str) -> None:
    make, params, v = LOG_PROB[name]
    value = lucid.tensor(np.int64(2)) if v is None else lucid.tensor(np.asarray(v, np.float64))
    assert gradcheck(lambda *ps: make(*ps).log_prob(value), params)


ENTROPY = [n for n in LOG_PROB if n not in ("poisson", "relaxed_bernoulli")]


@pytest.mark.parametrize("name", ENTROPY)
def test_entropy_gradcheck(name: str) -> None:
    make, params, _ = LOG_PROB[name]
    assert gradcheck(lambda *ps: make(*ps).entropy(), params)


RSAMPLE = ["normal", "uniform", "laplace", "exponential", "lognormal", "mvn_tril", "mvn_cov",
           "mvn_prec", "relaxed_bernoulli"]


@pytest.mark.parametrize("name", RSAMPLE)
def test_rsample_gradcheck(name: str) -> None:
    make, params, _ = LOG_PROB[name]

    def draw(*ps: lucid.Tensor) -> lucid.Tensor:
        lucid.manual_seed(3)  # the same noise for every evaluation
        return make(*ps).rsample((4,))

    assert gradcheck(draw, params)


def test_independent_gradcheck() -> None:
    loc, scale = _p([0.0, 1.0], [0.5, -1.0]), _p([1.0, 0.5], [2.0, 0.3])
    v = lucid.tensor(np.array([[0.3, -1.0], [0.1, 0.0]]))

    def lp(a: lucid.Tensor, b: lucid.Tensor) -> lucid.Tensor:
        return D.Independent(D.Normal(a, b), 1).log_prob(v)

    def rs(a: lucid.Tensor, b: lucid.Tensor) -> lucid.Tensor:
        lucid.manual_seed(1)
        return D.Independent(D.Normal(a, b), 2).rsample((3,))

    assert gradcheck(lp, (loc, scale)) and gradcheck(rs, (loc, scale))


def test_kl_gradcheck() -> None:
    assert gradcheck(lambda a, b: D.kl_divergence(D.Gamma(a, b), D.Gamma(b, a)),
                     (_p(0.5, 2.0), _p(1.0, 0.7)))
    assert gradcheck(lambda a, b: D.kl_divergence(D.Dirichlet(a), D.Dirichlet(b)),
                     (_p(0.5, 2.0, 1.0), _p(1.0, 0.7, 3.0)))
    m = lucid.tensor(_A, requires_grad=True)
    eye = lucid.eye(3, dtype=lucid.float64)
    assert gradcheck(
        lambda loc, m: D.kl_divergence(D.MultivariateNormal(loc, m @ m.mT + eye),
                                       D.MultivariateNormal(loc * 0.5, scale_tril=eye * 2)),
        (_p(1.0, 2.0, 3.0), m))


def test_standard_gamma_gradient_matches_torch(torch: object) -> None:
    alpha = np.array([0.3, 1.0, 2.5, 10.0, 150.0])
    a = lucid.tensor(np.tile(alpha, (50, 1)), requires_grad=True)
    x = standard_gamma(a)
    x.sum().backward()
    ta, tx = torch.tensor(a.detach().numpy()), torch.tensor(x.detach().numpy())
    want = torch._standard_gamma_grad(ta, tx).numpy()
    # torch's gradient is a series/asymptotic approximation good to ~1e-4 relative
    np.testing.assert_allclose(a.grad.numpy(), want, rtol=2e-3, atol=1e-6)


def test_standard_gamma_gradient_matches_finite_difference_of_cdf() -> None:
    """At fixed CDF level u, x(alpha) solves P(alpha, x) = u: compare dx/dalpha against a
    finite difference of scipy's inverse (no torch needed)."""
    import scipy.special as sp

    alpha = np.array([0.3, 1.0, 2.5, 10.0, 150.0])
    u = np.array([0.2, 0.5, 0.7, 0.9, 0.4])
    h = 1e-6 * alpha
    fd = (sp.gammaincinv(alpha + h, u) - sp.gammaincinv(alpha - h, u)) / (2 * h)
    x = sp.gammaincinv(alpha, u)
    np.testing.assert_allclose(standard_gamma_grad(x, alpha), fd, rtol=1e-5)


@pytest.mark.parametrize("name", ["gamma", "beta", "dirichlet"])
def test_implicit_rsample_gradient_of_the_mean(name: str) -> None:
    """E[d sample / d params] equals d E[sample] / d params (unbiased pathwise gradient)."""
    n = 20000
    if name == "gamma":
        c, r = _p(2.0), _p(0.5)
        D.Gamma(c, r).rsample((n,)).mean().backward()
        want = [1 / 0.5, -2.0 / 0.25]          # d(c/r)/dc, d(c/r)/dr
        got = [c.grad.item(), r.grad.item()]
    elif name == "beta":
        a, b = _p(2.0), _p(3.0)
        D.Beta(a, b).rsample((n,)).mean().backward()
        want = [3.0 / 25, -2.0 / 25]           # d(a/(a+b))
        got = [a.grad.item(), b.grad.item()]
    else:
        c = _p(1.0, 2.0, 3.0)
        D.Dirichlet(c).rsample((n,))[:, 0].mean().backward()
        want = [5.0 / 36, -1.0 / 36, -1.0 / 36]
        got = list(c.grad.numpy())
    np.testing.assert_allclose(got, want, atol=0.02 * max(abs(w) for w in want) + 3e-3)


def test_rsample_has_grad_fn_and_sample_does_not() -> None:
    loc, scale = _p(0.0), _p(1.0)
    for d in (D.Normal(loc, scale), D.Gamma(scale, scale), D.Beta(scale, scale),
              D.RelaxedBernoulli(scale, logits=loc)):
        assert d.rsample().requires_grad
        assert not d.sample().requires_grad
