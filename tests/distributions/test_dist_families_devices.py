"""The distributions added for torch 2.13 parity on every device: samples, log_prob and KL
stay on the parameters' device and agree with the "cpu" results (float32)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from devices import DEVICES

import lucid
import lucid.distributions as D

BUILDERS = {
    "student_t": lambda t: D.StudentT(t([3.0, 4.0]), t([0.0, 1.0]), t([1.0, 2.0])),
    "gumbel": lambda t: D.Gumbel(t([0.0, 1.0]), t([1.0, 2.0])),
    "weibull": lambda t: D.Weibull(t([1.0, 2.0]), t([1.5, 2.0])),
    "von_mises": lambda t: D.VonMises(t([0.0, 1.0]), t([1.0, 2.0])),
    "kumaraswamy": lambda t: D.Kumaraswamy(t([1.0, 2.0]), t([1.5, 2.0])),
    "continuous_bernoulli": lambda t: D.ContinuousBernoulli(t([0.3, 0.6])),
    "logistic_normal": lambda t: D.LogisticNormal(t([0.0, 1.0]), t([1.0, 2.0])),
    "wishart": lambda t: D.Wishart(t(4.0), covariance_matrix=t([[1.0, 0.2], [0.2, 1.0]])),
    "lkj": lambda t: D.LKJCholesky(3, t([1.5])),
    "lowrank": lambda t: D.LowRankMultivariateNormal(t([0.0, 1.0]), t([[1.0], [0.5]]),
                                                     t([1.0, 1.0])),
    "binomial": lambda t: D.Binomial(t([5.0, 7.0]), t([0.3, 0.6])),
    "multinomial": lambda t: D.Multinomial(5, t([0.2, 0.8])),
    "negative_binomial": lambda t: D.NegativeBinomial(t([2.0, 3.0]), t([0.3, 0.5])),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(BUILDERS))
def test_on_device(device: str, name: str) -> None:
    def t(v: object) -> lucid.Tensor:
        return lucid.tensor(np.asarray(v, np.float32), device=device)

    def t_cpu(v: object) -> lucid.Tensor:
        return lucid.tensor(np.asarray(v, np.float32))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d, ref = BUILDERS[name](t), BUILDERS[name](t_cpu)
        x = d.sample((4,))
    assert x.device == t([0.0]).device
    lp = d.log_prob(x)
    want = ref.log_prob(lucid.tensor(x.cpu().numpy()))
    np.testing.assert_allclose(lp.cpu().numpy(), want.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_kl_and_transforms_on_device(device: str) -> None:
    def t(v: object) -> lucid.Tensor:
        return lucid.tensor(np.asarray(v, np.float32), device=device)

    kl = D.kl_divergence(D.Gumbel(t([0.0, 1.0]), t([1.0, 2.0])),
                         D.Normal(t([0.0, 1.0]), t([1.0, 2.0])))
    assert kl.device == t([0.0]).device
    y = D.CorrCholeskyTransform()(t([0.1, 0.2, 0.3]))
    assert y.device == kl.device
    assert bool(D.constraints.corr_cholesky.check(y.cpu()))
