"""KL divergences between distributions of different families, registered with
``register_kl`` as torch registers them (an infinite divergence where ``p``'s support is not
inside ``q``'s)."""

from __future__ import annotations

import math

from .. import ops as _ops
from .._tensor import Tensor
from ..ops import special as _special
from ..ops._util import broadcast_shapes
from ..ops.triangular import solve_triangular
from .continuous import Exponential, Laplace, Normal, Uniform
from .counts import Binomial
from .discrete import Bernoulli, Poisson
from .extreme_value import Gumbel
from .gamma_family import Beta, Gamma, _xlogy
from .heavy_tailed import Pareto
from .kl import _check_event_shapes, register_kl
from .lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _batch_lowrank_logdet,
    _batch_lowrank_mahalanobis,
    _batch_trace_XXT,
)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .unit_interval import ContinuousBernoulli
from .utils import euler_constant

__all__: list[str] = []

_INF = math.inf


def _infinite_like(t: Tensor) -> Tensor:
    return _ops.full_like(t, _INF)


def _x_log_x(t: Tensor) -> Tensor:
    return _xlogy(t, t)


def _inf_where(result: Tensor, cond: Tensor) -> Tensor:
    return _ops.where(cond, _INF, result)


def _half_log_det(L: Tensor) -> Tensor:
    return _ops.diagonal(L, 0, -2, -1).log().sum(-1)


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(
        p: MultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    qW, qD, pL = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, \
        p._unbroadcasted_scale_tril
    term1 = _batch_lowrank_logdet(qW, qD, q._capacitance_tril) - 2 * _half_log_det(pL)
    term3 = _batch_lowrank_mahalanobis(qW, qD, q.loc - p.loc, q._capacitance_tril)
    A = solve_triangular(q._capacitance_tril, qW.mT / qD.unsqueeze(-2), upper=False)
    term21 = _batch_trace_XXT(pL * qD.rsqrt().unsqueeze(-1))
    term22 = _batch_trace_XXT(A.matmul(pL))
    return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(
        p: LowRankMultivariateNormal, q: MultivariateNormal) -> Tensor:
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    pW, pD, qL = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, \
        q._unbroadcasted_scale_tril
    term1 = 2 * _half_log_det(qL) - _batch_lowrank_logdet(pW, pD, p._capacitance_tril)
    term3 = _batch_mahalanobis(qL, q.loc - p.loc)
    batch = tuple(broadcast_shapes(tuple(qL.shape[:-2]), tuple(pW.shape[:-2])))
    n = p.event_shape[0]
    q_scale_tril = qL.expand(batch + (n, n))
    p_cov_factor = pW.expand(batch + (n, pW.shape[-1]))
    p_cov_diag = _ops.diag_embed(pD.sqrt()).expand(batch + (n, n))
    term21 = _batch_trace_XXT(solve_triangular(q_scale_tril, p_cov_factor, upper=False))
    term22 = _batch_trace_XXT(solve_triangular(q_scale_tril, p_cov_diag, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - n)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p: Bernoulli, q: Poisson) -> Tensor:
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, ContinuousBernoulli)
@register_kl(Uniform, ContinuousBernoulli)
def _kl_to_continuous_bernoulli(p: Beta | Uniform, q: ContinuousBernoulli) -> Tensor:
    result = -p.entropy() - p.mean * q.logits - _ops.log1p(-q.probs) - q._cont_bern_log_norm()
    if isinstance(p, Uniform):
        result = _inf_where(result, (p.high >= 1) | (p.low <= 0))
    return result


@register_kl(Beta, Pareto)
def _kl_beta_infinity(p: Beta, q: Pareto) -> Tensor:
    return _infinite_like(p.concentration1)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p: Beta, q: Exponential) -> Tensor:
    c1, c0 = p.concentration1, p.concentration0
    return -p.entropy() - q.rate.log() + q.rate * (c1 / (c1 + c0))


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p: Beta, q: Gamma) -> Tensor:
    c1, c0 = p.concentration1, p.concentration0
    t1 = -p.entropy()
    t2 = _special.lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (_special.digamma(c1) - _special.digamma(c1 + c0))
    t4 = q.rate * c1 / (c1 + c0)
    return t1 + t2 - t3 + t4


@register_kl(Beta, Normal)
def _kl_beta_normal(p: Beta, q: Normal) -> Tensor:
    c1, c0 = p.concentration1, p.concentration0
    E_beta = c1 / (c1 + c0)
    var_normal = q.scale.pow(2)
    t1 = -p.entropy()
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (E_beta * (1 - E_beta) / (c1 + c0 + 1) + E_beta.pow(2)) * 0.5
    t4 = q.loc * E_beta
    t5 = q.loc.pow(2) * 0.5
    return t1 + t2 + (t3 - t4 + t5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p: Beta, q: Uniform) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where(result, (q.low > 0) | (q.high < 1))


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_infinity(p: ContinuousBernoulli, q: Pareto) -> Tensor:
    return _infinite_like(p.probs)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p: ContinuousBernoulli, q: Exponential) -> Tensor:
    return -p.entropy() - _ops.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p: ContinuousBernoulli, q: Normal) -> Tensor:
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + _ops.log(q.scale)
    t3 = (p.variance + p.mean.square() - 2.0 * q.loc * p.mean) / (2.0 * q.scale.square())
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p: ContinuousBernoulli, q: Uniform) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where(result, (q.low >= 0) | (q.high <= 1))


@register_kl(Exponential, Beta)
@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Exponential, Pareto)
@register_kl(Exponential, Uniform)
def _kl_exponential_infinity(p: Exponential, q: object) -> Tensor:
    return _infinite_like(p.rate)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p: Exponential, q: Gamma) -> Tensor:
    ratio = q.rate / p.rate
    t1 = -q.concentration * _ops.log(ratio)
    return (t1 + ratio + _special.lgamma(q.concentration) + q.concentration * euler_constant
            - (1 + euler_constant))


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p: Exponential, q: Gumbel) -> Tensor:
    scale_rate_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = scale_rate_prod.log() - 1
    t2 = _ops.exp(loc_scale_ratio) * scale_rate_prod / (scale_rate_prod + 1)
    t3 = scale_rate_prod.reciprocal()
    return t1 - loc_scale_ratio + t2 + t3


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p: Exponential, q: Normal) -> Tensor:
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * _ops.log(rate_sqr * var_normal * 2 * math.pi)
    t2 = rate_sqr.reciprocal()
    t3 = q.loc / p.rate
    t4 = q.loc.pow(2) * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


@register_kl(Gamma, Beta)
@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gamma, Pareto)
@register_kl(Gamma, Uniform)
def _kl_gamma_infinity(p: Gamma, q: object) -> Tensor:
    return _infinite_like(p.concentration)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p: Gamma, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p: Gamma, q: Gumbel) -> Tensor:
    c = p.concentration
    beta_scale_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = (c - 1) * _special.digamma(c) - _special.lgamma(c) - c
    t2 = beta_scale_prod.log() + c / beta_scale_prod
    t3 = (_ops.exp(loc_scale_ratio) * (1 + beta_scale_prod.reciprocal()).pow(-c)
          - loc_scale_ratio)
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p: Gamma, q: Normal) -> Tensor:
    c = p.concentration
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    t1 = 0.5 * _ops.log(beta_sqr * var_normal * 2 * math.pi) - c - _special.lgamma(c)
    t2 = 0.5 * (c.pow(2) + c) / beta_sqr
    t3 = q.loc * c / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return t1 + (c - 1) * _special.digamma(c) + (t2 - t3 + t4) / var_normal


@register_kl(Gumbel, Beta)
@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Gamma)
@register_kl(Gumbel, Pareto)
@register_kl(Gumbel, Uniform)
@register_kl(Laplace, Beta)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Gamma)
@register_kl(Laplace, Pareto)
@register_kl(Laplace, Uniform)
@register_kl(Normal, Beta)
@register_kl(Normal, ContinuousBernoulli)
@register_kl(Normal, Exponential)
@register_kl(Normal, Gamma)
@register_kl(Normal, Pareto)
@register_kl(Normal, Uniform)
def _kl_real_line_infinity(p: Gumbel | Laplace | Normal, q: object) -> Tensor:
    return _infinite_like(p.loc)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p: Gumbel, q: Normal) -> Tensor:
    param_ratio = p.scale / q.scale
    t1 = (param_ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * param_ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * euler_constant - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (euler_constant + 1)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p: Laplace, q: Normal) -> Tensor:
    var_normal = q.scale.pow(2)
    scale_sqr_var_ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * _ops.log(2 * scale_sqr_var_ratio / math.pi)
    t2 = 0.5 * p.loc.pow(2)
    t3 = p.loc * q.loc
    t4 = 0.5 * q.loc.pow(2)
    return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p: Normal, q: Gumbel) -> Tensor:
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = _ops.exp(-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio)
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p: Normal, q: Laplace) -> Tensor:
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = _ops.log(scale_ratio)
    t2 = math.sqrt(2 / math.pi) * p.scale * _ops.exp(-0.5 * loc_diff_scale_ratio.pow(2))
    t3 = loc_diff * _special.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Pareto, Beta)
@register_kl(Pareto, ContinuousBernoulli)
@register_kl(Pareto, Uniform)
def _kl_pareto_infinity(p: Pareto, q: object) -> Tensor:
    return _infinite_like(p.scale)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p: Pareto, q: Exponential) -> Tensor:
    scale_rate_prod = p.scale * q.rate
    t1 = (p.alpha / scale_rate_prod).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * scale_rate_prod / (p.alpha - 1)
    return _inf_where(t1 - t2 + t3 - 1, p.alpha <= 1)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p: Pareto, q: Gamma) -> Tensor:
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = _special.lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _inf_where(t1 + t2 + t3 + t4 - 1, p.alpha <= 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p: Pareto, q: Normal) -> Tensor:
    var_normal = 2 * q.scale.pow(2)
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).pow(2)
    return _inf_where(t1 - t2 + (t3 + t4) / var_normal - 1, p.alpha <= 2)


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p: Poisson, q: object) -> Tensor:
    return _infinite_like(p.rate)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p: Uniform, q: Beta) -> Tensor:
    common_term = p.high - p.low
    t1 = _ops.log(common_term)
    t2 = ((q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term)
          / common_term)
    t3 = ((q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + common_term)
          / common_term)
    t4 = (_special.lgamma(q.concentration1) + _special.lgamma(q.concentration0)
          - _special.lgamma(q.concentration1 + q.concentration0))
    return _inf_where(t3 + t4 - t1 - t2, (p.high > 1) | (p.low < 0))


@register_kl(Uniform, Exponential)
def _kl_uniform_exponetial(p: Uniform, q: Exponential) -> Tensor:
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _inf_where(result, p.low < 0)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p: Uniform, q: Gamma) -> Tensor:
    common_term = p.high - p.low
    t1 = common_term.log()
    t2 = _special.lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = ((1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term)
          / common_term)
    t4 = q.rate * (p.high + p.low) / 2
    return _inf_where(-t1 + t2 + t3 + t4, p.low < 0)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p: Uniform, q: Gumbel) -> Tensor:
    common_term = q.scale / (p.high - p.low)
    high_loc_diff = (p.high - q.loc) / q.scale
    low_loc_diff = (p.low - q.loc) / q.scale
    t1 = common_term.log() + 0.5 * (high_loc_diff + low_loc_diff)
    t2 = common_term * (_ops.exp(-high_loc_diff) - _ops.exp(-low_loc_diff))
    return t1 - t2


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p: Uniform, q: Normal) -> Tensor:
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p: Uniform, q: Pareto) -> Tensor:
    support_uniform = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * support_uniform).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - support_uniform) / support_uniform
    return _inf_where(t2 * (q.alpha + 1) - t1, p.low < q.support.lower_bound)
