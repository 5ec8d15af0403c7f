"""``kl_divergence(p, q)`` and the ``register_kl`` registry, as
``torch.distributions.kl``: the most specific registered pair of types (by MRO) wins, and an
ambiguous pair warns. This module holds the divergences within one family (and the Bregman
divergence of any exponential family with itself); ``kl_cross`` holds those between
families."""

from __future__ import annotations

import math
import warnings
from functools import total_ordering
from typing import Any

from .. import ops as _ops
from .._tensor import Tensor
from ..autograd import enable_grad, grad
from ..ops import activation as _act
from ..ops import special as _special
from ..ops._util import broadcast_shapes
from ..ops.triangular import solve_triangular
from .continuous import Exponential, Laplace, Normal, Uniform
from .counts import Binomial, Geometric
from .discrete import Bernoulli, Categorical, OneHotCategorical, Poisson
from .distribution import Distribution, ExponentialFamily
from .extreme_value import Gumbel
from .folded import HalfNormal
from .gamma_family import Beta, Dirichlet, Gamma
from .heavy_tailed import Cauchy, Pareto
from .independent import Independent
from .lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _batch_lowrank_logdet,
    _batch_lowrank_mahalanobis,
    _batch_trace_XXT,
)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .transformed import TransformedDistribution
from .unit_interval import ContinuousBernoulli
from .utils import _sum_rightmost, euler_constant

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict[tuple[type, type], Any] = {}
_KL_MEMOIZE: dict[tuple[type, type], Any] = {}


def register_kl(type_p: type, type_q: type) -> Any:
    """A decorator registering a pairwise KL divergence ``fn(p, q)`` for ``p`` of
    ``type_p`` and ``q`` of ``type_q`` (subclasses included).

    Example::

        @register_kl(Normal, Normal)
        def kl_normal_normal(p, q):
            ...
    """
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun: Any) -> Any:
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


@total_ordering
class _Match:
    __slots__ = ["types"]

    def __init__(self, *types: type) -> None:
        self.types = types

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Match) and self.types == other.types

    def __le__(self, other: _Match) -> bool:
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p: type, type_q: type) -> Any:
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY
               if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please "
                      f"register_kl({left_p.__name__}, {right_q.__name__})", RuntimeWarning,
                      stacklevel=3)
    return left_fun


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """``KL(p || q)``, batched over the distributions' batch shape.

    Example::

        kl_divergence(Normal(0.0, 1.0), Normal(1.0, 2.0))
    """
    key = (type(p), type(q))
    try:
        fun = _KL_MEMOIZE[key]
    except KeyError:
        fun = _dispatch_kl(*key)
        _KL_MEMOIZE[key] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


def _mask(t: Tensor, cond: Tensor, value: float) -> Tensor:
    return _ops.where(cond, value, t)


def _check_event_shapes(p: Distribution, q: Distribution, families: str) -> None:
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise ValueError(f"KL-divergence between two {families} with different event shapes "
                         "cannot be computed")


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (_act.softplus(-q.logits) - _act.softplus(-p.logits))
    t1 = _mask(_mask(t1, q.probs == 0, math.inf), p.probs == 0, 0.0)
    t2 = (1 - p.probs) * (_act.softplus(q.logits) - _act.softplus(p.logits))
    t2 = _mask(_mask(t2, q.probs == 1, math.inf), p.probs == 1, 0.0)
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    lg, dg = _special.lgamma, _special.digamma
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = lg(q.concentration1) + lg(q.concentration0) + lg(sum_p)
    t2 = lg(p.concentration1) + lg(p.concentration0) + lg(sum_q)
    t3 = (p.concentration1 - q.concentration1) * dg(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * dg(p.concentration0)
    t5 = (sum_q - sum_p) * dg(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    shape = tuple(t.shape)
    t = _mask(t, (q.probs == 0).expand(shape), math.inf)
    t = _mask(t, (p.probs == 0).expand(shape), 0.0)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p: OneHotCategorical, q: OneHotCategorical
                                            ) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    lg, dg = _special.lgamma, _special.digamma
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = lg(sum_p) - lg(sum_q)
    t2 = (lg(p.concentration) - lg(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = dg(p.concentration) - dg(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    t1 = q.concentration * _ops.log(p.rate / q.rate)
    t2 = _special.lgamma(q.concentration) - _special.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * _special.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * _ops.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _mask(result, (q.low > p.low) | (q.high < p.high), math.inf)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p: MultivariateNormal, q: MultivariateNormal
                                              ) -> Tensor:
    _check_event_shapes(p, q, "Multivariate Normals")
    pL, qL = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = (_ops.diagonal(qL, 0, -2, -1).log().sum(-1)
                  - _ops.diagonal(pL, 0, -2, -1).log().sum(-1))
    batch = tuple(broadcast_shapes(tuple(qL.shape[:-2]), tuple(pL.shape[:-2])))
    n = p.event_shape[0]
    x = solve_triangular(qL.expand(batch + (n, n)), pL.expand(batch + (n, n)), upper=False)
    term2 = x.pow(2).sum((-2, -1))
    term3 = _batch_mahalanobis(qL, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: TransformedDistribution, q: TransformedDistribution
                                ) -> Tensor:
    if p.transforms != q.transforms:
        raise NotImplementedError
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Binomial, q: Binomial) -> Tensor:
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count "
                                  "is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return _mask(kl, p.total_count > q.total_count, math.inf)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p: ContinuousBernoulli,
                                                  q: ContinuousBernoulli) -> Tensor:
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + _ops.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - _ops.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p: ExponentialFamily, q: ExponentialFamily) -> Tensor:
    """The Bregman divergence of the log normaliser, for two members of one family."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    p_nparams = [n.detach().requires_grad_() for n in p._natural_params]
    q_nparams = q._natural_params
    with enable_grad():
        lg_normal = p._log_normalizer(*p_nparams)
        # NOTE: torch asks for create_graph=True, but p's natural parameters are detached
        # leaves here, so a graph through the gradients reaches nothing a caller holds; a
        # first-order gradient gives the same values and the same gradients for q (and
        # needs no double backward of the linear-algebra ops)
        gradients = grad(lg_normal.sum(), p_nparams)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        result = result - _sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Gumbel, q: Gumbel) -> Tensor:
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = _ops.exp(ct2 + _special.lgamma(1 + ct1) - ct3)
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Geometric, q: Geometric) -> Tensor:
    return -p.entropy() - _ops.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: HalfNormal, q: HalfNormal) -> Tensor:
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(
        p: LowRankMultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    _check_event_shapes(p, q, "Low Rank Multivariate Normals")
    pW, pD = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    qW, qD = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    term1 = (_batch_lowrank_logdet(qW, qD, q._capacitance_tril)
             - _batch_lowrank_logdet(pW, pD, p._capacitance_tril))
    term3 = _batch_lowrank_mahalanobis(qW, qD, q.loc - p.loc, q._capacitance_tril)
    A = solve_triangular(q._capacitance_tril, qW.mT / qD.unsqueeze(-2), upper=False)
    term21 = (pD / qD).sum(-1)
    term22 = _batch_trace_XXT(pW * qD.rsqrt().unsqueeze(-1))
    term23 = _batch_trace_XXT(A * pD.sqrt().unsqueeze(-2))
    term24 = _batch_trace_XXT(A.matmul(pW))
    term2 = term21 + term22 - term23 - term24
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Pareto, q: Pareto) -> Tensor:
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return _mask(result, p.support.lower_bound < q.support.lower_bound, math.inf)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Cauchy, q: Cauchy) -> Tensor:
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2
