"""Samples of the distributions added for torch 2.13 parity, with a fixed seed: sample
moments against the analytic ones, empirical CDFs against the exact CDF (for heavy tails),
and the structural properties of matrix-valued samples."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import lucid
import lucid.distributions as D

N = 20000


def _t(x: object) -> lucid.Tensor:
    return lucid.tensor(np.asarray(x, np.float64))


# name -> distribution with finite mean and variance (float64 parameters)
MOMENT_CASES = {
    "half_normal": lambda: D.HalfNormal(_t([1.0, 2.5])),
    "student_t": lambda: D.StudentT(_t([5.0, 8.0]), _t([1.0, -2.0]), _t([0.5, 2.0])),
    "chi2": lambda: D.Chi2(_t([1.0, 4.5])),
    "inverse_gamma": lambda: D.InverseGamma(_t([5.0, 7.0]), _t([2.0, 1.0])),
    "fisher_snedecor": lambda: D.FisherSnedecor(_t([3.0, 10.0]), _t([12.0, 20.0])),
    "pareto": lambda: D.Pareto(_t([1.0, 0.5]), _t([5.0, 6.0])),
    "gumbel": lambda: D.Gumbel(_t([0.0, 3.0]), _t([1.0, 0.5])),
    "weibull": lambda: D.Weibull(_t([1.0, 2.0]), _t([0.8, 3.0])),
    "generalized_pareto": lambda: D.GeneralizedPareto(_t([0.0, 1.0, 0.5]), _t([1.0, 2.0, 1.0]),
                                                      _t([0.1, 0.0, -0.4])),
    "kumaraswamy": lambda: D.Kumaraswamy(_t([0.5, 2.0]), _t([0.7, 3.0])),
    "continuous_bernoulli": lambda: D.ContinuousBernoulli(_t([0.1, 0.5, 0.85])),
    "geometric": lambda: D.Geometric(_t([0.2, 0.7])),
    "binomial": lambda: D.Binomial(_t([10.0, 1000.0, 3.0, 0.0]), _t([0.3, 0.01, 1.0, 0.5])),
    "binomial_large": lambda: D.Binomial(_t([123456.0]), _t([0.37])),
    "negative_binomial": lambda: D.NegativeBinomial(_t([3.0, 2.5]), _t([0.2, 0.7])),
    "multinomial": lambda: D.Multinomial(12, _t([0.2, 0.3, 0.5])),
    "lowrank_mvn": lambda: D.LowRankMultivariateNormal(
        _t([1.0, -1.0, 0.5]), _t([[1.0, 0.2], [0.3, -0.5], [0.0, 0.8]]), _t([0.5, 1.0, 2.0])),
    "relaxed_one_hot": lambda: D.RelaxedOneHotCategorical(_t(2.0), _t([0.2, 0.3, 0.5])),
    "logistic_normal": lambda: D.LogisticNormal(_t([0.0, 1.0]), _t([0.5, 0.3])),
    "mixture": lambda: D.MixtureSameFamily(D.Categorical(_t([0.3, 0.7])),
                                           D.Normal(_t([-2.0, 1.0]), _t([0.5, 1.5]))),
    "wishart": lambda: D.Wishart(_t(6.0), covariance_matrix=_t([[1.0, 0.3], [0.3, 2.0]])),
}


@pytest.mark.parametrize("name", list(MOMENT_CASES))
def test_sample_moments(name: str) -> None:
    d = MOMENT_CASES[name]()
    x = d.sample((N,)).numpy().astype(np.float64)
    assert x.shape == (N,) + tuple(d.batch_shape) + tuple(d.event_shape)
    if name in ("relaxed_one_hot", "logistic_normal"):
        # no closed-form moments: compare with the mean of the same construction in numpy
        return _check_simplex(name, x)
    mean = np.broadcast_to(d.mean.numpy(), x.shape[1:])
    var = np.broadcast_to(d.variance.numpy(), x.shape[1:])
    se = np.sqrt(var / N)
    np.testing.assert_array_less(np.abs(x.mean(0) - mean), 5 * se + 1e-12)
    # the variance of the sample variance needs the fourth moment; use a loose bound
    np.testing.assert_allclose(x.var(0), var, rtol=0.1, atol=1e-12)


def _check_simplex(name: str, x: np.ndarray) -> None:
    np.testing.assert_allclose(x.sum(-1), 1.0, atol=1e-9)
    assert (x >= 0).all()
    rng = np.random.default_rng(1)
    if name == "relaxed_one_hot":
        g = -np.log(-np.log(rng.uniform(size=(N, 3))))
        s = (np.log([0.2, 0.3, 0.5]) + g) / 2.0
        ref = np.exp(s - s.max(-1, keepdims=True))
        ref /= ref.sum(-1, keepdims=True)
    else:
        z = rng.normal([0.0, 1.0], [0.5, 0.3], size=(N, 2))
        e = np.exp(z - np.log([2.0, 1.0]))
        z1 = e[:, 0] / (1 + e[:, 0])
        z2 = e[:, 1] / (1 + e[:, 1])
        ref = np.stack([z1, (1 - z1) * z2, (1 - z1) * (1 - z2)], -1)
    np.testing.assert_allclose(x.mean(0), ref.mean(0), atol=6 * ref.std(0).max() / math.sqrt(N))


# name -> (distribution, points where the empirical CDF is compared with the exact one)
CDF_CASES = {
    "cauchy": (lambda: D.Cauchy(_t([0.0, 2.0]), _t([1.0, 0.5])), [-3.0, -0.5, 0.3, 2.1, 8.0]),
    "half_cauchy": (lambda: D.HalfCauchy(_t([1.0, 3.0])), [0.1, 0.5, 1.0, 4.0, 20.0]),
    "student_t_heavy": (lambda: D.StudentT(_t([0.7, 1.5])), [-5.0, -1.0, 0.0, 0.5, 3.0]),
    "pareto_heavy": (lambda: D.Pareto(_t([1.0, 2.0]), _t([0.8, 1.5])), [2.1, 3.0, 5.0, 20.0]),
    "generalized_pareto_heavy": (lambda: D.GeneralizedPareto(0.0, 1.0, 1.2),
                                 [0.1, 1.0, 3.0, 30.0]),
}


@pytest.mark.parametrize("name", list(CDF_CASES))
def test_empirical_cdf(name: str) -> None:
    make, points = CDF_CASES[name]
    d = make()
    x = d.sample((N,)).numpy()
    for p in points:
        if name == "student_t_heavy":
            scipy_stats = pytest.importorskip("scipy.stats")
            exact = scipy_stats.t.cdf(p, d.df.numpy())
        else:
            exact = d.cdf(_t(p).expand(tuple(d.batch_shape))).numpy()
        np.testing.assert_allclose((x <= p).mean(0), exact, atol=0.015)


def test_von_mises_circular_moments() -> None:
    d = D.VonMises(_t([0.5, -2.0, 3.0]), _t([0.3, 2.0, 20.0]))
    x = d.sample((N,)).numpy()
    assert (x >= -math.pi).all() and (x < math.pi).all()
    resultant = np.cos(x - d.loc.numpy()).mean(0)
    np.testing.assert_allclose(resultant, 1 - d.variance.numpy(), atol=0.015)
    np.testing.assert_allclose(np.sin(x - d.loc.numpy()).mean(0), 0.0, atol=0.015)
    assert d.sample((2,)).dtype == lucid.float64
    assert D.VonMises(0.0, 1.0).sample((2,)).dtype == lucid.get_default_dtype()


def test_lkj_cholesky_samples() -> None:
    d = D.LKJCholesky(4, _t([0.5, 3.0]))
    L = d.sample((N // 4,)).numpy()
    assert bool(D.constraints.corr_cholesky.check(_t(L)).all())
    corr = L @ np.swapaxes(L, -1, -2)
    np.testing.assert_allclose(np.diagonal(corr, 0, -2, -1), 1.0, atol=1e-9)
    off = corr[..., 1, 0]
    np.testing.assert_allclose(off.mean(0), 0.0, atol=0.03)
    # each correlation is 2 * Beta(eta - 1 + d/2, same) - 1: variance 1 / (2 eta + d - 1)
    np.testing.assert_allclose(off.var(0), 1 / (2 * np.array([0.5, 3.0]) + 3), rtol=0.08)


def test_wishart_rsample_is_positive_definite_and_warns_only_when_singular() -> None:
    d = D.Wishart(_t(5.0), covariance_matrix=_t([[1.0, 0.3], [0.3, 2.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = d.rsample((100,))
    assert bool(d.support.check(x).all())


def test_geometric_and_binomial_are_integer_valued() -> None:
    for d in (D.Geometric(_t([0.3])), D.Binomial(_t([7.0]), _t([0.4])),
              D.NegativeBinomial(_t([2.0]), _t([0.5]))):
        x = d.sample((100,)).numpy()
        np.testing.assert_array_equal(x, np.round(x))
    b = D.Binomial(_t([7.0]), _t([0.4])).sample((2000,)).numpy()
    assert b.min() >= 0 and b.max() <= 7


def test_binomial_enumerate_support_and_entropy(torch: object) -> None:
    d = D.Binomial(4, _t([0.3, 0.6]))
    np.testing.assert_array_equal(d.enumerate_support().numpy(),
                                  np.repeat(np.arange(5.0)[:, None], 2, 1))
    with pytest.raises(NotImplementedError):
        D.Binomial(_t([3.0, 4.0]), _t([0.3, 0.6])).entropy()
