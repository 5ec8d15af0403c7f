"""Argument and sample validation: the same ValueError messages as torch, the switches that
turn it off, and the constraints module."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
import lucid.distributions as D
from lucid.distributions import constraints

nan = math.nan

# (builder over a distributions module ``M`` and a tensor factory ``t``, expected message start)
BAD = [
    (lambda M, t: M.Normal(0.0, -1.0),
     "Expected parameter scale (Tensor of shape ()) of distribution Normal(loc: 0.0, scale: "
     "-1.0) to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid values:"),
    (lambda M, t: M.Normal(t([0.0, 1.0]), t([1.0, -1.0])), "Expected parameter scale"),
    (lambda M, t: M.Bernoulli(probs=t([1.5])),
     "Expected parameter probs (Tensor of shape (1,)) of distribution Bernoulli"),
    (lambda M, t: M.Bernoulli(), "Either `probs` or `logits` must be specified, but not both."),
    (lambda M, t: M.Bernoulli(probs=t([0.5]), logits=t([0.0])), "Either `probs` or `logits`"),
    (lambda M, t: M.Categorical(probs=t([0.5, -0.1])), "to satisfy the constraint Simplex()"),
    (lambda M, t: M.Categorical(probs=t(0.5)),
     "`probs` parameter must be at least one-dimensional."),
    (lambda M, t: M.Categorical(logits=t(0.5)),
     "`logits` parameter must be at least one-dimensional."),
    (lambda M, t: M.Uniform(t([1.0]), t([0.0])),
     "Expected parameter low (Tensor of shape (1,)) of distribution Uniform"),
    (lambda M, t: M.Dirichlet(t([1.0, 0.0])),
     "to satisfy the constraint IndependentConstraint(GreaterThan(lower_bound=0.0), 1)"),
    (lambda M, t: M.Dirichlet(t(1.0)),
     "`concentration` parameter must be at least one-dimensional."),
    (lambda M, t: M.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 2.0], [2.0, 1.0]])),
     "Expected parameter covariance_matrix (Tensor of shape (2, 2)) of distribution "
     "MultivariateNormal"),
    (lambda M, t: M.MultivariateNormal(t([0.0, 0.0])),
     "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."),
    (lambda M, t: M.MultivariateNormal(t([0.0, 0.0]), scale_tril=t([[1.0, 1.0], [0.0, 1.0]])),
     "to satisfy the constraint LowerCholesky()"),
    (lambda M, t: M.MultivariateNormal(t([0.0, 0.0]), precision_matrix=t([[1.0, 0.0],
                                                                           [0.0, 0.0]])),
     "to satisfy the constraint PositiveDefinite()"),
    (lambda M, t: M.MultivariateNormal(t(0.0), t([[1.0]])),
     "loc must be at least one-dimensional."),
    (lambda M, t: M.MultivariateNormal(t([0.0]), t([1.0])),
     "covariance_matrix must be at least two-dimensional"),
    (lambda M, t: M.Normal(0.0, 1.0).log_prob(t([nan])),
     "Expected value argument (Tensor of shape (1,)) to be within the support (Real()) of the "
     "distribution Normal(loc: 0.0, scale: 1.0), but found invalid values:"),
    (lambda M, t: M.Exponential(t([1.0])).log_prob(t([-1.0])),
     "to be within the support (GreaterThanEq(lower_bound=0.0))"),
    (lambda M, t: M.Normal(t([0.0, 1.0]), 1.0).log_prob(t([0.0, 1.0, 2.0])),
     "Value is not broadcastable with batch_shape+event_shape: "),
    (lambda M, t: M.Normal(0.0, 1.0).log_prob(1.0),
     "The value argument to log_prob must be a Tensor"),
    (lambda M, t: M.Dirichlet(t([1.0, 1.0])).log_prob(t([0.5, 0.6])),
     "to be within the support (Simplex())"),
    (lambda M, t: M.Dirichlet(t([1.0, 1.0])).log_prob(t([0.5])),
     "The right-most size of value must match event_shape: "),
    (lambda M, t: M.Categorical(t([0.5, 0.5])).log_prob(t([2])),
     "to be within the support (IntegerInterval(lower_bound=0, upper_bound=1))"),
    (lambda M, t: M.Bernoulli(t([0.5])).log_prob(t([0.5])), "(Boolean())"),
    (lambda M, t: M.Beta(t([1.0]), t([1.0])).cdf(t([0.5])) if hasattr(M.Beta, "x") else
     M.Gamma(t([1.0]), t([1.0])).cdf(t([-0.5])), "to be within the support"),
    (lambda M, t: M.Independent(M.Normal(t([0.0]), 1.0), 2),
     "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual 2 vs 1"),
    (lambda M, t: M.Gamma(t([1.0]), t([0.0])), "Expected parameter rate"),
    (lambda M, t: M.Beta(t([1.0]), t([-1.0])), "Expected parameter concentration"),
    (lambda M, t: M.Poisson(t([-1.0])), "GreaterThanEq(lower_bound=0.0)"),
    (lambda M, t: M.Laplace(t([0.0]), t([0.0])), "Expected parameter scale"),
    (lambda M, t: M.LogNormal(t([0.0]), t([0.0])), "Expected parameter scale"),
    (lambda M, t: M.OneHotCategorical(t([0.5, 0.5])).log_prob(t([1.0, 1.0])),
     "to be within the support (OneHot()) of the distribution OneHotCategorical()"),
    (lambda M, t: M.TransformedDistribution(M.Normal(0.0, 1.0), 3),
     "transforms must be a Transform or list, but was 3"),
    (lambda M, t: M.TransformedDistribution(M.Normal(0.0, 1.0), [3]),
     "transforms must be a Transform or a list of Transforms"),
    (lambda M, t: M.Distribution.set_default_validate_args(3), ""),
]


@pytest.mark.parametrize(("make", "match"), BAD)
def test_value_errors(make: object, match: str) -> None:
    with pytest.raises(ValueError) as info:
        make(D, lucid.tensor)
    assert match in str(info.value), str(info.value)


@pytest.mark.parametrize(("make", "match"), BAD)
def test_value_errors_match_torch(torch: object, make: object, match: str) -> None:
    import torch.distributions as TD

    with pytest.raises(ValueError) as want:
        make(TD, torch.tensor)
    with pytest.raises(ValueError) as got:
        make(D, lucid.tensor)
    assert str(got.value) .replace("lucid", "torch") == str(want.value)


def test_validation_switches() -> None:
    D.Normal(0.0, -1.0, validate_args=False)             # no check
    D.Normal(0.0, 1.0, validate_args=False).log_prob(lucid.tensor([nan]))
    assert D.Distribution._validate_args is True
    try:
        D.Distribution.set_default_validate_args(False)
        n = D.Normal(0.0, -1.0)
        assert n._validate_args is False
        with pytest.raises(ValueError, match="Expected parameter scale"):
            D.Normal(0.0, -1.0, validate_args=True)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.Normal(0.0, -1.0)
    e = D.Normal(0.0, 1.0, validate_args=False).expand((2,))
    assert e._validate_args is False
    # lazily derived parameters are not checked (so a logits tensor never needs probs)
    D.Bernoulli(logits=lucid.tensor([50.0]))
    assert "probs" not in D.Bernoulli(logits=lucid.tensor([1.0])).__dict__


def test_unimplemented_parts() -> None:
    class Bare(D.Distribution):
        pass

    with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
        b = Bare()
    with pytest.raises(NotImplementedError, match="does not implement mode"):
        _ = b.mode
    for name in ("mean", "variance", "support"):
        with pytest.raises(NotImplementedError):
            getattr(b, name)
    with pytest.raises(NotImplementedError):
        b.sample()
    with pytest.raises(NotImplementedError, match="Enumeration over cartesian product"):
        D.Independent(D.Bernoulli(lucid.full((2,), 0.5)), 1).enumerate_support()

    class Custom(D.Normal):
        def __init__(self) -> None:
            super().__init__(0.0, 1.0)

    with pytest.raises(NotImplementedError, match="must also define a custom .expand"):
        Custom().expand((2,))


def test_constraints_check() -> None:
    t = lucid.tensor
    assert constraints.positive.check(t([1.0, 0.0, -1.0])).tolist() == [True, False, False]
    assert constraints.nonnegative.check(t([1.0, 0.0, -1.0])).tolist() == [True, True, False]
    assert constraints.unit_interval.check(t([0.0, 1.0, 1.5])).tolist() == [True, True, False]
    assert constraints.half_open_interval(0, 1).check(t([0.0, 1.0])).tolist() == [True, False]
    assert constraints.real.check(t([nan, 1.0])).tolist() == [False, True]
    assert constraints.boolean.check(t([0.0, 1.0, 0.5])).tolist() == [True, True, False]
    assert constraints.nonnegative_integer.check(t([0.0, 2.0, 0.5, -1.0])).tolist() == \
        [True, True, False, False]
    assert constraints.integer_interval(0, 2).check(t([0, 2, 3])).tolist() == [True, True, False]
    assert constraints.simplex.check(t([[0.5, 0.5], [0.7, 0.4]])).tolist() == [True, False]
    assert constraints.one_hot.check(t([[0.0, 1.0], [1.0, 1.0]])).tolist() == [True, False]
    assert constraints.real_vector.check(t([[0.0, nan], [1.0, 1.0]])).tolist() == [False, True]
    m = t([[[2.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]], [[1.0, 0.0], [1.0, 1.0]]])
    assert constraints.positive_definite.check(m[:2]).tolist() == [True, False]
    assert constraints.positive_semidefinite.check(m[:2]).tolist() == [True, False]
    # as in torch: when any matrix is not symmetric, the symmetry verdicts are returned
    assert constraints.positive_definite.check(m).tolist() == [True, True, False]
    assert constraints.symmetric.check(m).tolist() == [True, True, False]
    assert constraints.lower_cholesky.check(m).tolist() == [True, False, True]
    assert constraints.lower_triangular.check(m).tolist() == [True, False, True]
    assert constraints.independent(constraints.positive, 2).check(
        t(np.ones((3, 2, 2)))).tolist() == [True] * 3
    assert constraints.is_dependent(constraints.dependent)
    assert constraints.is_dependent(D.Uniform.support)
    assert not constraints.is_dependent(constraints.real)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        constraints.dependent.check(t([1.0]))
    with pytest.raises(NotImplementedError, match="cannot be determined statically"):
        _ = constraints.dependent.event_dim
    assert constraints.dependent(is_discrete=True, event_dim=1).event_dim == 1


def test_constraint_reprs_match_torch(torch: object) -> None:
    from torch.distributions import constraints as tc

    for name in ("real", "positive", "nonnegative", "unit_interval", "simplex", "boolean",
                 "one_hot", "real_vector", "lower_cholesky", "positive_definite",
                 "nonnegative_integer", "positive_integer", "lower_triangular", "symmetric"):
        lc, t = getattr(constraints, name), getattr(tc, name)
        assert repr(lc) == repr(t), name
        assert (lc.event_dim, lc.is_discrete) == (t.event_dim, t.is_discrete), name
    assert repr(constraints.interval(0, 2)) == repr(tc.interval(0, 2))
    assert repr(constraints.greater_than_eq(1)) == repr(tc.greater_than_eq(1))
    assert repr(constraints.less_than(1)) == repr(tc.less_than(1))
