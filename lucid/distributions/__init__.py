"""Probability distributions, as ``torch.distributions``: parameterised distributions with
``sample`` / ``rsample`` (reparameterised, differentiable), ``log_prob``, ``entropy``, moments
and, where defined, ``cdf`` / ``icdf``; constraints, transforms and ``kl_divergence``.

Sampling draws from lucid's generator, so ``lucid.manual_seed`` reproduces samples.

Example::

    import lucid.distributions as D

    p = D.Normal(lucid.zeros(3), lucid.ones(3))
    x = p.rsample((5,))                 # (5, 3), differentiable in loc and scale
    D.kl_divergence(p, D.Normal(1.0, 2.0))
"""

from . import constraints, transforms
from .constraints import Constraint
from .continuous import Exponential, Laplace, Normal, Uniform
from .discrete import Bernoulli, Categorical, OneHotCategorical, Poisson
from .distribution import Distribution, ExponentialFamily
from .gamma_family import Beta, Dirichlet, Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .transformed import LogitRelaxedBernoulli, LogNormal, RelaxedBernoulli, TransformedDistribution
from .transforms import (
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    SigmoidTransform,
    TanhTransform,
    Transform,
)

__all__ = [
    "AffineTransform", "Bernoulli", "Beta", "Categorical", "ComposeTransform", "Constraint",
    "Dirichlet", "Distribution", "ExpTransform", "Exponential", "ExponentialFamily", "Gamma",
    "Independent", "Laplace", "LogNormal", "LogitRelaxedBernoulli", "MultivariateNormal",
    "Normal", "OneHotCategorical", "Poisson", "RelaxedBernoulli", "SigmoidTransform",
    "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "constraints",
    "kl_divergence", "register_kl", "transforms",
]
