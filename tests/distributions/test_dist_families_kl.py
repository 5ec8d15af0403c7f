"""kl_divergence for the pairs torch registers that involve the distributions added for
torch 2.13 parity (and the cross-family pairs among the older ones), against torch's
kl_divergence on the same float64 parameters; gradients of a KL against torch's."""

from __future__ import annotations

import numpy as np
import pytest
from family_cases import COV, tensor_fn

import lucid
import lucid.distributions as D

_L = np.linalg.cholesky(COV)

_NORMAL = lambda D, t: D.Normal(t([0.3, -1.0, 0.5]), t([1.0, 0.5, 2.0]))  # noqa: E731
_LAPLACE = lambda D, t: D.Laplace(t([0.3, -1.0, 0.5]), t([1.0, 0.5, 2.0]))  # noqa: E731
_GUMBEL = lambda D, t: D.Gumbel(t([0.3, -1.0, 0.5]), t([1.0, 0.5, 2.0]))  # noqa: E731
_EXP = lambda D, t: D.Exponential(t([0.5, 2.0, 1.5]))  # noqa: E731
_GAMMA = lambda D, t: D.Gamma(t([0.5, 2.0, 3.0]), t([1.0, 0.5, 2.0]))  # noqa: E731
_BETA = lambda D, t: D.Beta(t([0.5, 2.0, 3.0]), t([1.5, 0.5, 2.0]))  # noqa: E731
_UNIT_UNIFORM = lambda D, t: D.Uniform(t([0.1, 0.3, 0.0]), t([0.6, 0.9, 0.5]))  # noqa: E731
_POS_UNIFORM = lambda D, t: D.Uniform(t([0.5, 1.0, 2.0]), t([1.5, 3.0, 2.5]))  # noqa: E731
_WIDE_UNIFORM = lambda D, t: D.Uniform(t([-1.0, 0.0, 0.2]), t([2.0, 3.0, 0.5]))  # noqa: E731
_CB = lambda D, t: D.ContinuousBernoulli(t([0.2, 0.7, 0.4999]))  # noqa: E731
_PARETO = lambda D, t: D.Pareto(t([0.5, 1.0, 0.2]), t([2.5, 0.8, 3.5]))  # noqa: E731
_POISSON = lambda D, t: D.Poisson(t([0.5, 2.0, 1.5]))  # noqa: E731

# name -> (p builder, q builder)
PAIRS: dict[str, tuple] = {
    "binomial": (lambda D, t: D.Binomial(t([10.0, 8.0]), t([0.3, 0.6])),
                 lambda D, t: D.Binomial(t([10.0, 5.0]), t([0.5, 0.2]))),
    "continuous_bernoulli": (_CB, lambda D, t: D.ContinuousBernoulli(t([0.6, 0.1, 0.5002]))),
    "gumbel": (_GUMBEL, lambda D, t: D.Gumbel(t([1.0, 0.0, -0.5]), t([2.0, 1.5, 0.7]))),
    "geometric": (lambda D, t: D.Geometric(t([0.3, 0.8])),
                  lambda D, t: D.Geometric(t([0.6, 0.2]))),
    "half_normal": (lambda D, t: D.HalfNormal(t([1.0, 0.5])),
                    lambda D, t: D.HalfNormal(t([2.0, 0.7]))),
    "pareto": (_PARETO, lambda D, t: D.Pareto(t([0.4, 1.5, 0.1]), t([1.5, 2.0, 0.9]))),
    "cauchy": (lambda D, t: D.Cauchy(t([0.0, 1.0]), t([1.0, 0.5])),
               lambda D, t: D.Cauchy(t([0.5, -1.0]), t([2.0, 0.7]))),
    "lowrank_lowrank": (
        lambda D, t: D.LowRankMultivariateNormal(t([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]]),
                                                 t([[1.0, 0.2], [0.3, -0.5], [0.0, 0.8]]),
                                                 t([0.5, 1.0, 2.0])),
        lambda D, t: D.LowRankMultivariateNormal(t([0.0, 1.0, 0.0]), t([[0.4], [1.0], [0.2]]),
                                                 t([1.0, 0.3, 0.8]))),
    "mvn_lowrank": (
        lambda D, t: D.MultivariateNormal(t([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]]), t(COV)),
        lambda D, t: D.LowRankMultivariateNormal(t([0.0, 1.0, 0.0]), t([[0.4], [1.0], [0.2]]),
                                                 t([1.0, 0.3, 0.8]))),
    "lowrank_mvn": (
        lambda D, t: D.LowRankMultivariateNormal(t([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]]),
                                                 t([[1.0, 0.2], [0.3, -0.5], [0.0, 0.8]]),
                                                 t([0.5, 1.0, 2.0])),
        lambda D, t: D.MultivariateNormal(t([0.0, 1.0, 0.0]), scale_tril=t(_L))),
    "wishart_expfamily": (lambda D, t: D.Wishart(t([4.0, 5.5]), covariance_matrix=t(COV)),
                          lambda D, t: D.Wishart(t(6.0), scale_tril=t(np.eye(3) * 1.5))),
    "bernoulli_poisson": (lambda D, t: D.Bernoulli(t([0.2, 0.7, 0.5])), _POISSON),
    "beta_cb": (_BETA, _CB),
    "beta_pareto": (_BETA, _PARETO),
    "beta_exponential": (_BETA, _EXP),
    "beta_gamma": (_BETA, _GAMMA),
    "beta_normal": (_BETA, _NORMAL),
    "beta_uniform": (_BETA, _WIDE_UNIFORM),
    "cb_pareto": (_CB, _PARETO),
    "cb_exponential": (_CB, _EXP),
    "cb_normal": (_CB, _NORMAL),
    "cb_uniform": (_CB, _WIDE_UNIFORM),
    "exponential_beta": (_EXP, _BETA),
    "exponential_cb": (_EXP, _CB),
    "exponential_pareto": (_EXP, _PARETO),
    "exponential_uniform": (_EXP, _WIDE_UNIFORM),
    "exponential_gamma": (_EXP, _GAMMA),
    "exponential_gumbel": (_EXP, _GUMBEL),
    "exponential_normal": (_EXP, _NORMAL),
    "gamma_beta": (_GAMMA, _BETA),
    "gamma_cb": (_GAMMA, _CB),
    "gamma_pareto": (_GAMMA, _PARETO),
    "gamma_uniform": (_GAMMA, _WIDE_UNIFORM),
    "gamma_exponential": (_GAMMA, _EXP),
    "gamma_gumbel": (_GAMMA, _GUMBEL),
    "gamma_normal": (_GAMMA, _NORMAL),
    "gumbel_beta": (_GUMBEL, _BETA),
    "gumbel_cb": (_GUMBEL, _CB),
    "gumbel_exponential": (_GUMBEL, _EXP),
    "gumbel_gamma": (_GUMBEL, _GAMMA),
    "gumbel_pareto": (_GUMBEL, _PARETO),
    "gumbel_uniform": (_GUMBEL, _WIDE_UNIFORM),
    "gumbel_normal": (_GUMBEL, _NORMAL),
    "laplace_beta": (_LAPLACE, _BETA),
    "laplace_cb": (_LAPLACE, _CB),
    "laplace_exponential": (_LAPLACE, _EXP),
    "laplace_gamma": (_LAPLACE, _GAMMA),
    "laplace_pareto": (_LAPLACE, _PARETO),
    "laplace_uniform": (_LAPLACE, _WIDE_UNIFORM),
    "laplace_normal": (_LAPLACE, _NORMAL),
    "normal_beta": (_NORMAL, _BETA),
    "normal_cb": (_NORMAL, _CB),
    "normal_exponential": (_NORMAL, _EXP),
    "normal_gamma": (_NORMAL, _GAMMA),
    "normal_pareto": (_NORMAL, _PARETO),
    "normal_uniform": (_NORMAL, _WIDE_UNIFORM),
    "normal_gumbel": (_NORMAL, _GUMBEL),
    "normal_laplace": (_NORMAL, _LAPLACE),
    "pareto_beta": (_PARETO, _BETA),
    "pareto_cb": (_PARETO, _CB),
    "pareto_uniform": (_PARETO, _WIDE_UNIFORM),
    "pareto_exponential": (_PARETO, _EXP),
    "pareto_gamma": (_PARETO, _GAMMA),
    "pareto_normal": (_PARETO, _NORMAL),
    "poisson_bernoulli": (_POISSON, lambda D, t: D.Bernoulli(t([0.2, 0.7, 0.5]))),
    "poisson_binomial": (_POISSON, lambda D, t: D.Binomial(5, t([0.2, 0.7, 0.5]))),
    "uniform_beta": (_UNIT_UNIFORM, _BETA),
    "uniform_beta_outside": (_WIDE_UNIFORM, _BETA),
    "uniform_cb": (_UNIT_UNIFORM, _CB),
    "uniform_exponential": (_WIDE_UNIFORM, _EXP),
    "uniform_gamma": (_WIDE_UNIFORM, _GAMMA),
    "uniform_gumbel": (_WIDE_UNIFORM, _GUMBEL),
    "uniform_normal": (_WIDE_UNIFORM, _NORMAL),
    "uniform_pareto": (_POS_UNIFORM, _PARETO),
}


def _build(lib: object, name: str) -> tuple[object, object]:
    p, q = PAIRS[name]
    t = tensor_fn(lib)
    return p(lib, t), q(lib, t)


@pytest.mark.parametrize("name", list(PAIRS))
def test_kl_matches_torch(torch: object, name: str) -> None:
    import torch.distributions as TD

    want = TD.kl_divergence(*_build(TD, name)).detach().numpy()
    got = D.kl_divergence(*_build(D, name))
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-8, atol=1e-10)


def test_kl_gradient_matches_torch(torch: object) -> None:
    import torch.distributions as TD

    def grads(lib: object, tensor: object, t: object) -> list[np.ndarray]:
        loc = tensor(np.array([0.3, -1.0]), requires_grad=True)
        scale = tensor(np.array([1.0, 0.5]), requires_grad=True)
        alpha = tensor(np.array([2.5, 3.0]), requires_grad=True)
        kl = lib.kl_divergence(lib.Gumbel(loc, scale), lib.Normal(t([0.0, 1.0]), alpha))
        kl = kl + lib.kl_divergence(lib.Pareto(scale, alpha), lib.Gamma(alpha, scale))
        kl.sum().backward()
        return [loc.grad.numpy(), scale.grad.numpy(), alpha.grad.numpy()]

    got = grads(D, lambda x, requires_grad: lucid.tensor(x, requires_grad=requires_grad),
                tensor_fn(D))
    want = grads(TD, lambda x, requires_grad: torch.tensor(x, requires_grad=requires_grad),
                 tensor_fn(TD))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9)


def test_binomial_kl_refuses_larger_q_count() -> None:
    p = D.Binomial(3, lucid.tensor([0.5]))
    q = D.Binomial(5, lucid.tensor([0.5]))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(p, q)


def test_expfamily_kl_refuses_different_families() -> None:
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Poisson(lucid.tensor([1.0])),
                        D.ContinuousBernoulli(lucid.tensor([0.3])))
