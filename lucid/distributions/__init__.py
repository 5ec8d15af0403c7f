"""Probability distributions, as ``torch.distributions``: parameterised distributions with
``sample`` / ``rsample`` (reparameterised, differentiable), ``log_prob``, ``entropy``, moments
and, where defined, ``cdf`` / ``icdf``; constraints, transforms, the ``biject_to`` /
``transform_to`` registries and ``kl_divergence``.

Sampling draws from lucid's generator, so ``lucid.manual_seed`` reproduces samples.

Example::

    import lucid.distributions as D

    p = D.Normal(lucid.zeros(3), lucid.ones(3))
    x = p.rsample((5,))                 # (5, 3), differentiable in loc and scale
    D.kl_divergence(p, D.Normal(1.0, 2.0))
"""

from . import constraints, kl_cross, transforms  # noqa: F401  (kl_cross registers pairs)
from .circular import VonMises
from .constraint_registry import biject_to, transform_to
from .constraints import Constraint
from .continuous import Exponential, Laplace, Normal, Uniform
from .counts import Binomial, Geometric, Multinomial, NegativeBinomial
from .discrete import (
    Bernoulli,
    Categorical,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
    Poisson,
)
from .distribution import Distribution, ExponentialFamily
from .extreme_value import GeneralizedPareto, Gumbel, Weibull
from .folded import HalfCauchy, HalfNormal
from .gamma_family import Beta, Chi2, Dirichlet, Gamma, InverseGamma
from .heavy_tailed import Cauchy, FisherSnedecor, Pareto, StudentT
from .independent import Independent
from .kl import kl_divergence, register_kl
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .matrix_variate import LKJCholesky, Wishart
from .mixture import MixtureSameFamily
from .multivariate_normal import MultivariateNormal
from .relaxed_categorical import RelaxedOneHotCategorical
from .transformed import (
    LogisticNormal,
    LogitRelaxedBernoulli,
    LogNormal,
    RelaxedBernoulli,
    TransformedDistribution,
)
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .unit_interval import ContinuousBernoulli, Kumaraswamy

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform",
    "Categorical", "Cauchy", "Chi2", "ComposeTransform", "Constraint", "ContinuousBernoulli",
    "CorrCholeskyTransform", "CumulativeDistributionTransform", "Dirichlet", "Distribution",
    "ExpTransform", "Exponential", "ExponentialFamily",
    "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy",
    "HalfNormal", "Independent", "IndependentTransform", "InverseGamma", "Kumaraswamy",
    "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal", "LogitRelaxedBernoulli",
    "LowRankMultivariateNormal", "LowerCholeskyTransform", "MixtureSameFamily", "Multinomial",
    "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "PositiveDefiniteTransform",
    "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical", "ReshapeTransform",
    "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StackTransform",
    "StickBreakingTransform", "StudentT", "TanhTransform", "Transform",
    "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart", "biject_to",
    "constraints", "identity_transform", "kl_divergence", "register_kl", "transform_to",
    "transforms",
]
