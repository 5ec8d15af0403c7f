"""Sampling: shapes, empirical moments against the closed forms, reproducibility under
``lucid.manual_seed``, ``expand``, ``sample_n`` and every device."""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

from devices import DEVICES  # noqa: E402
from distribution_cases import CASES, build  # noqa: E402

import lucid  # noqa: E402
import lucid.distributions as D  # noqa: E402

N = 20000
MOMENT_CASES = ["normal", "uniform", "laplace", "exponential", "gamma", "beta", "lognormal",
                "poisson", "bernoulli_probs", "bernoulli_logits", "onehot", "dirichlet",
                "mvn_cov", "mvn_prec", "mvn_tril"]


@pytest.mark.parametrize("name", MOMENT_CASES)
def test_empirical_moments(name: str) -> None:
    d = build(D, name)
    s = d.sample((N,))
    assert tuple(s.shape) == (N,) + tuple(d.batch_shape) + tuple(d.event_shape)
    x = s.numpy().astype(np.float64)
    mean, var = d.mean.numpy(), d.variance.numpy()
    se = np.sqrt(var / N)
    assert np.all(np.abs(x.mean(0) - mean) < 6 * se + 1e-12), (x.mean(0), mean)
    # the variance estimate's spread: sqrt((m4 - var^2) / N), estimated from the samples
    m4 = ((x - x.mean(0)) ** 4).mean(0)
    assert np.all(np.abs(x.var(0) - var) < 6 * np.sqrt(np.abs(m4 - var ** 2) / N) + 1e-12)


def test_mvn_empirical_covariance() -> None:
    d = build(D, "mvn_cov")
    x = d.sample((N,)).numpy()
    np.testing.assert_allclose(np.cov(x.T), d.covariance_matrix.numpy(), atol=0.1)


def test_categorical_frequencies() -> None:
    d = D.Categorical(lucid.tensor([[0.2, 0.3, 0.5], [0.7, 0.0, 0.3]]))
    s = d.sample((N,))
    assert s.dtype == lucid.int64 and tuple(s.shape) == (N, 2)
    freq = np.stack([(s.numpy() == k).mean(0) for k in range(3)], -1)
    np.testing.assert_allclose(freq, d.probs.numpy(), atol=0.015)
    assert (s.numpy()[:, 1] != 1).all()  # zero probability is never drawn
    oh = D.OneHotCategorical(logits=lucid.tensor([0.0, 1.0])).sample((5, 2))
    assert tuple(oh.shape) == (5, 2, 2) and (oh.sum(-1).numpy() == 1).all()


def test_relaxed_bernoulli_is_in_unit_interval_and_tends_to_bernoulli() -> None:
    d = D.RelaxedBernoulli(lucid.tensor(0.05), probs=lucid.tensor([0.2, 0.9]))
    s = d.rsample((N,)).numpy()
    assert ((s > 0) & (s < 1)).all()
    np.testing.assert_allclose((s > 0.5).mean(0), [0.2, 0.9], atol=0.015)


@pytest.mark.parametrize("name", list(CASES))
def test_manual_seed_reproduces_samples(name: str) -> None:
    d = build(D, name)
    lucid.manual_seed(7)
    a = d.sample((3,))
    lucid.manual_seed(7)
    b = d.sample((3,))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    if d.has_rsample:
        lucid.manual_seed(7)
        np.testing.assert_array_equal(d.rsample((3,)).detach().numpy(), a.numpy())


def test_sample_shapes_and_expand() -> None:
    n = D.Normal(lucid.zeros(2, 1), lucid.ones(3))
    assert tuple(n.batch_shape) == (2, 3) and tuple(n.sample().shape) == (2, 3)
    assert tuple(n.sample((4, 5)).shape) == (4, 5, 2, 3)
    assert tuple(n.sample(lucid.Size([4])).shape) == (4, 2, 3)
    assert tuple(D.Normal(0.0, 1.0).sample((2,)).shape) == (2,)
    assert tuple(D.Normal(0.0, 1.0).batch_shape) == ()
    e = D.Normal(0.0, 1.0).expand((3, 2))
    assert tuple(e.batch_shape) == (3, 2) and tuple(e.sample((4,)).shape) == (4, 3, 2)
    m = build(D, "mvn_cov").expand((2,))
    assert tuple(m.sample((5,)).shape) == (5, 2, 3)
    assert tuple(m.covariance_matrix.shape) == (2, 3, 3)
    i = D.Independent(D.Normal(lucid.zeros(4, 3), lucid.ones(4, 3)), 1).expand((2, 4))
    assert tuple(i.batch_shape) == (2, 4) and tuple(i.event_shape) == (3,)
    assert tuple(i.sample().shape) == (2, 4, 3)
    ln = D.LogNormal(lucid.zeros(2), lucid.ones(2)).expand((3, 2))
    assert type(ln) is D.LogNormal and tuple(ln.sample().shape) == (3, 2)
    rb = D.RelaxedBernoulli(lucid.tensor(0.5), logits=lucid.zeros(2)).expand((3, 2))
    assert tuple(rb.rsample().shape) == (3, 2)


def test_sample_n_warns_and_draws() -> None:
    with pytest.warns(FutureWarning, match="sample_n"):
        s = D.Exponential(lucid.tensor([1.0, 2.0])).sample_n(4)
    assert tuple(s.shape) == (4, 2)


def test_gamma_samples_stay_positive_for_tiny_concentration() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = D.Gamma(lucid.tensor([1e-3]), lucid.tensor([1.0])).sample((1000,))
    assert (s.numpy() > 0).all()


@pytest.mark.filterwarnings("ignore:lucid. no Metal or CUDA device")
@pytest.mark.parametrize("device", DEVICES)
def test_distributions_run_on_every_device(device: str) -> None:
    def t(v: object) -> lucid.Tensor:
        return lucid.tensor(np.asarray(v, np.float32), device=device)

    ds = [D.Normal(t([0.0, 1.0]), t([1.0, 2.0])), D.Gamma(t([2.0, 3.0]), t([1.0, 1.0])),
          D.Beta(t([2.0, 3.0]), t([1.0, 1.5])), D.Categorical(t([0.2, 0.8])),
          D.Bernoulli(t([0.2, 0.8])), D.Dirichlet(t([1.0, 2.0])), D.Poisson(t([1.0, 2.0])),
          D.MultivariateNormal(t([0.0, 1.0]), t([[2.0, 0.5], [0.5, 1.0]])),
          D.LogNormal(t([0.0, 1.0]), t([1.0, 2.0])), D.Laplace(t([0.0, 1.0]), t([1.0, 2.0])),
          D.Uniform(t([0.0, 1.0]), t([1.0, 2.0])), D.Exponential(t([1.0, 2.0])),
          D.RelaxedBernoulli(t([0.5]), t([0.2, 0.8])), D.OneHotCategorical(t([0.2, 0.8]))]
    for d in ds:
        s = d.sample((3,))
        assert s.device == lucid.device(device)
        lp = d.log_prob(s)
        assert lp.device == lucid.device(device) and lp.dtype == lucid.float32
        assert np.isfinite(lp.numpy()).all(), type(d).__name__
