"""The distributions added beside torch's original core set, one row each: a builder that
makes the distribution from either library (float64 parameters), values to score, icdf
points and the methods / properties both libraries must agree on. Shared by the parity,
gradient and sampling tests."""

from __future__ import annotations

from typing import Any

import numpy as np

import lucid

_A = np.array([[1.0, 0.2, -0.3], [0.4, 1.5, 0.1], [-0.2, 0.3, 0.8]])
COV = _A @ _A.T + 0.5 * np.eye(3)
_B = np.array([[0.7, 0.0, 0.1], [-0.3, 1.1, 0.4], [0.2, -0.5, 1.2]])
PD_VALUE = np.stack([_B @ _B.T + np.eye(3), COV * 2.0])
CORR_CHOL = np.linalg.cholesky(np.array([[1.0, 0.3, -0.2], [0.3, 1.0, 0.4],
                                         [-0.2, 0.4, 1.0]]))

MOMENTS = ("mean", "variance", "stddev")


def tensor_fn(lib: Any) -> Any:
    """A maker of float64 tensors (int64 for integer arrays) in ``lib``."""
    if lib.__name__.startswith("torch"):
        import torch

        return lambda x: torch.tensor(np.asarray(x)) if np.asarray(x).dtype.kind == "i" \
            else torch.tensor(np.asarray(x, np.float64))
    return lambda x: lucid.tensor(np.asarray(x)) if np.asarray(x).dtype.kind == "i" \
        else lucid.tensor(np.asarray(x, np.float64))


# name -> (builder(lib, t), value, icdf points or None, what to compare)
CASES: dict[str, tuple] = {
    "cauchy": (lambda D, t: D.Cauchy(t([0.0, 1.0]), t([1.0, 2.0])), [0.5, -1.0], [0.2, 0.7],
               ("log_prob", "cdf", "icdf", "entropy", "mode", "mean", "variance")),
    "half_cauchy": (lambda D, t: D.HalfCauchy(t([1.0, 2.0])), [0.5, 3.0], [0.2, 0.7],
                    ("log_prob", "cdf", "icdf", "entropy", "mode", "mean", "variance")),
    "half_normal": (lambda D, t: D.HalfNormal(t([1.0, 2.0])), [0.5, 3.0], [0.2, 0.7],
                    ("log_prob", "cdf", "icdf", "entropy", "mode") + MOMENTS),
    "student_t": (lambda D, t: D.StudentT(t([0.5, 1.5, 3.0, 5.0]), t([0.0, 1.0, -1.0, 2.0]),
                                          t([1.0, 2.0, 0.5, 1.0])),
                  [0.3, -2.0, 1.0, 2.5], None, ("log_prob", "entropy", "mode") + MOMENTS),
    "student_t_default": (lambda D, t: D.StudentT(t([4.0])), [0.3], None,
                          ("log_prob", "entropy") + MOMENTS),
    "chi2": (lambda D, t: D.Chi2(t([1.0, 3.5])), [0.4, 2.0], None,
             ("log_prob", "cdf", "entropy", "mode", "df") + MOMENTS),
    "inverse_gamma": (lambda D, t: D.InverseGamma(t([1.5, 3.0, 0.5]), t([1.0, 2.0, 1.0])),
                      [0.4, 2.0, 1.0], None,
                      ("log_prob", "cdf", "entropy", "mode") + MOMENTS),
    "fisher_snedecor": (lambda D, t: D.FisherSnedecor(t([1.0, 3.0, 5.0]), t([2.0, 5.0, 10.0])),
                        [0.4, 2.0, 1.0], None, ("log_prob", "mode") + MOMENTS),
    "pareto": (lambda D, t: D.Pareto(t([1.0, 2.0, 0.5]), t([1.5, 3.0, 0.8])), [1.3, 2.5, 4.0],
               [0.2, 0.7, 0.5], ("log_prob", "cdf", "icdf", "entropy", "mode") + MOMENTS),
    "gumbel": (lambda D, t: D.Gumbel(t([0.0, 1.0]), t([1.0, 2.0])), [0.5, -1.0], [0.2, 0.7],
               ("log_prob", "cdf", "icdf", "entropy", "mode") + MOMENTS),
    "gumbel_scalar": (lambda D, t: D.Gumbel(1.0, 2.0), [0.5, -1.0], [0.2, 0.7],
                      ("log_prob", "cdf", "icdf", "entropy")),
    "weibull": (lambda D, t: D.Weibull(t([1.0, 2.0, 0.5]), t([0.7, 1.5, 3.0])),
                [0.5, 2.0, 0.3], [0.2, 0.7, 0.5],
                ("log_prob", "cdf", "icdf", "entropy", "mode") + MOMENTS),
    "generalized_pareto": (lambda D, t: D.GeneralizedPareto(
        t([0.0, 1.0, 0.5, 0.0]), t([1.0, 2.0, 1.0, 0.5]), t([0.2, 0.0, -0.3, 0.7])),
        [0.5, 2.0, 1.5, 0.2], [0.2, 0.7, 0.5, 0.9],
        ("log_prob", "cdf", "icdf", "entropy", "mode") + MOMENTS),
    "kumaraswamy": (lambda D, t: D.Kumaraswamy(t([0.5, 2.0, 3.0]), t([0.7, 1.0, 4.0])),
                    [0.2, 0.5, 0.9], [0.2, 0.5, 0.9],
                    ("log_prob", "cdf", "icdf", "entropy", "mode") + MOMENTS),
    "continuous_bernoulli": (lambda D, t: D.ContinuousBernoulli(t([0.2, 0.5, 0.8, 0.4995])),
                             [0.3, 0.9, 0.1, 0.6], [0.2, 0.5, 0.9, 0.3],
                             ("log_prob", "cdf", "icdf", "entropy", "logits") + MOMENTS),
    "continuous_bernoulli_logits": (
        lambda D, t: D.ContinuousBernoulli(logits=t([-1.0, 0.0, 2.0])), [0.3, 0.9, 0.1],
        [0.2, 0.5, 0.9], ("log_prob", "cdf", "icdf", "entropy", "probs") + MOMENTS),
    "geometric": (lambda D, t: D.Geometric(t([0.2, 0.7, 1.0])), [3.0, 0.0, 0.0], None,
                  ("log_prob", "entropy", "mode", "logits") + MOMENTS),
    "geometric_logits": (lambda D, t: D.Geometric(logits=t([-1.0, 2.0])), [3.0, 1.0], None,
                         ("log_prob", "entropy", "probs") + MOMENTS),
    "binomial": (lambda D, t: D.Binomial(10, t([0.2, 0.7, 0.0])), [3.0, 7.0, 0.0], None,
                 ("log_prob", "entropy", "mode", "logits") + MOMENTS),
    "binomial_logits": (lambda D, t: D.Binomial(t([5.0, 8.0]), logits=t([-1.0, 0.5])),
                        [2.0, 8.0], None, ("log_prob", "mode", "probs") + MOMENTS),
    "negative_binomial": (lambda D, t: D.NegativeBinomial(t([3.0, 2.5]), t([0.2, 0.7])),
                          [3.0, 7.0], None, ("log_prob", "mode", "logits") + MOMENTS),
    "negative_binomial_logits": (
        lambda D, t: D.NegativeBinomial(4.0, logits=t([-1.0, 0.5])), [0.0, 5.0], None,
        ("log_prob", "mode", "probs") + MOMENTS),
    "multinomial": (lambda D, t: D.Multinomial(10, t([[0.2, 0.3, 0.5], [1.0, 1.0, 2.0]])),
                    [[2.0, 3.0, 5.0], [0.0, 4.0, 6.0]], None,
                    ("log_prob", "entropy", "mean", "variance", "probs", "logits")),
    "multinomial_logits": (lambda D, t: D.Multinomial(4, logits=t([0.1, -1.0, 2.0])),
                           [1.0, 0.0, 3.0], None, ("log_prob", "entropy", "probs")),
    "von_mises": (lambda D, t: D.VonMises(t([0.0, 1.0, -2.0]), t([0.5, 4.0, 10.0])),
                  [0.3, 2.0, 3.0], None, ("log_prob", "mean", "mode", "variance")),
    "lowrank_mvn": (lambda D, t: D.LowRankMultivariateNormal(
        t([[1.0, 2.0, 3.0], [0.0, -1.0, 0.5]]), t([[1.0, 0.2], [0.3, -0.5], [0.0, 0.8]]),
        t([0.5, 1.0, 2.0])), [[0.5, 1.0, 2.0], [1.0, 2.0, 3.5]], None,
        ("log_prob", "entropy", "mode", "scale_tril", "covariance_matrix",
         "precision_matrix") + MOMENTS),
    "wishart_cov": (lambda D, t: D.Wishart(t([4.0, 6.5]), covariance_matrix=t(COV)), PD_VALUE,
                    None, ("log_prob", "entropy", "mode", "mean", "variance", "scale_tril",
                           "precision_matrix")),
    "wishart_tril": (lambda D, t: D.Wishart(5.0, scale_tril=t(np.linalg.cholesky(COV))),
                     PD_VALUE, None, ("log_prob", "entropy", "mean", "covariance_matrix")),
    "wishart_prec": (lambda D, t: D.Wishart(t(3.5), precision_matrix=t(np.linalg.inv(COV))),
                     PD_VALUE[:1], None, ("log_prob", "entropy", "mean", "scale_tril")),
    "lkj_cholesky": (lambda D, t: D.LKJCholesky(3, t([0.5, 2.0])), CORR_CHOL, None,
                     ("log_prob",)),
    "lkj_cholesky_scalar": (lambda D, t: D.LKJCholesky(2, 1.5), CORR_CHOL[:2, :2], None,
                            ("log_prob",)),
    "logistic_normal": (lambda D, t: D.LogisticNormal(t([0.0, 1.0, -0.5]), t([1.0, 0.5, 2.0])),
                        [0.2, 0.3, 0.1, 0.4], None, ("log_prob",)),
    "relaxed_one_hot": (lambda D, t: D.RelaxedOneHotCategorical(
        t([0.7]), t([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])), [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]],
        None, ("log_prob", "probs", "logits")),
    "mixture_normal": (lambda D, t: D.MixtureSameFamily(
        D.Categorical(t([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])),
        D.Normal(t([[-1.0, 0.0, 2.0], [0.5, 1.0, -1.0]]), t([[0.5, 1.0, 2.0], [1.0, 0.3, 0.7]]))),
        [0.3, -1.2], None,
        ("log_prob", "cdf") + MOMENTS),
    "mixture_mvn": (lambda D, t: D.MixtureSameFamily(
        D.Categorical(t([0.3, 0.7])),
        D.Independent(D.Normal(t([[0.0, 1.0], [2.0, -1.0]]), t([[1.0, 0.5], [0.3, 2.0]])), 1)),
        [[0.3, -1.2], [1.0, 1.0]], None, ("log_prob", "mean", "variance")),
    "onehot_straight_through": (lambda D, t: D.OneHotCategoricalStraightThrough(
        t([[0.2, 0.3, 0.5]])), [[0.0, 1.0, 0.0]], None, ("log_prob", "entropy", "mean")),
}
