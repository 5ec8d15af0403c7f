"""The transforms added for torch 2.13 parity and the ``biject_to`` / ``transform_to``
registries, against torch: forward, inverse and log-abs-det-Jacobian values, shapes,
domains and codomains, and the log-Jacobian gradients."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.distributions as D
from lucid.distributions import constraints

RNG = np.random.default_rng(0)
X_VEC = RNG.normal(size=(2, 6))
X_SQ = RNG.normal(size=(2, 3, 3))
X_POS = np.abs(RNG.normal(size=(2, 3))) + 0.2


def _t(lib: object, x: object) -> object:
    return lib.tensor(np.asarray(x, np.float64))


# name -> (builder(T, t), input x)
TRANSFORMS: dict[str, tuple] = {
    "abs": (lambda T, t: T.AbsTransform(), RNG.normal(size=(2, 3))),
    "power": (lambda T, t: T.PowerTransform(t([0.5, 2.0, -1.5])), X_POS),
    "power_scalar": (lambda T, t: T.PowerTransform(t(3.0)), X_POS),
    "softplus": (lambda T, t: T.SoftplusTransform(), RNG.normal(size=(2, 3)) * 10),
    "softmax": (lambda T, t: T.SoftmaxTransform(), X_VEC),
    "stick_breaking": (lambda T, t: T.StickBreakingTransform(), X_VEC),
    "lower_cholesky": (lambda T, t: T.LowerCholeskyTransform(), X_SQ),
    "positive_definite": (lambda T, t: T.PositiveDefiniteTransform(), X_SQ),
    "corr_cholesky": (lambda T, t: T.CorrCholeskyTransform(), X_VEC),
    "independent": (lambda T, t: T.IndependentTransform(T.ExpTransform(), 1), X_SQ),
    "reshape": (lambda T, t: T.ReshapeTransform((6,), (2, 3)), X_VEC),
    "cat": (lambda T, t: T.CatTransform([T.ExpTransform(), T.identity_transform,
                                         T.AffineTransform(1.0, 2.0)], dim=-1,
                                        lengths=[2, 3, 1]), X_VEC),
    "cat_dim0": (lambda T, t: T.CatTransform([T.ExpTransform(), T.SigmoidTransform()], dim=0,
                                             lengths=[1, 1]), X_VEC),
    "stack": (lambda T, t: T.StackTransform([T.ExpTransform(), T.TanhTransform(),
                                             T.AffineTransform(0.5, -1.0)], dim=1),
              RNG.normal(size=(2, 3))),
    "cdf": (lambda T, t: T.CumulativeDistributionTransform(
        _dist(T, t)), RNG.normal(size=(2, 3))),
    "compose_inverse": (lambda T, t: T.ComposeTransform([T.SoftplusTransform(),
                                                         T.PowerTransform(t(2.0))]).inv,
                        X_POS),
}


def _dist(T: object, t: object) -> object:
    lib = D if T is D.transforms else pytest.importorskip("torch").distributions
    return lib.Normal(t([0.0, 1.0, -1.0]), t([1.0, 2.0, 0.5]))


def _both(torch: object, name: str) -> tuple[object, object, object, object]:
    build, x = TRANSFORMS[name]
    ours = build(D.transforms, lambda v: _t(lucid, v))
    theirs = build(torch.distributions.transforms, lambda v: _t(torch, v))
    return ours, theirs, _t(lucid, x), _t(torch, x)


def _close(got: object, want: object, what: str) -> None:
    g = np.asarray(got.detach().numpy(), np.float64)
    w = np.asarray(want.detach().numpy(), np.float64)
    assert g.shape == w.shape, f"{what}: {g.shape} != {w.shape}"
    np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11, err_msg=what)


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transform_matches_torch(torch: object, name: str) -> None:
    ours, theirs, x, xt = _both(torch, name)
    y, yt = ours(x), theirs(xt)
    _close(y, yt, f"{name} forward")
    if name != "abs":
        _close(ours.inv(y), theirs.inv(yt), f"{name} inverse")
    if name not in ("abs", "softmax", "lower_cholesky", "positive_definite"):
        _close(ours.log_abs_det_jacobian(x, y), theirs.log_abs_det_jacobian(xt, yt),
               f"{name} log_abs_det_jacobian")
    assert ours.bijective == theirs.bijective
    assert ours.domain.event_dim == theirs.domain.event_dim
    assert ours.codomain.event_dim == theirs.codomain.event_dim
    shape = tuple(x.shape)
    assert tuple(ours.forward_shape(shape)) == tuple(theirs.forward_shape(shape))
    assert tuple(ours.inverse_shape(tuple(y.shape))) == tuple(theirs.inverse_shape(yt.shape))
    assert bool(ours.codomain.check(y).all())


@pytest.mark.parametrize("name", ["power", "stick_breaking", "corr_cholesky", "softplus",
                                  "cat", "stack", "cdf"])
def test_log_abs_det_jacobian_gradient_matches_torch(torch: object, name: str) -> None:
    ours, theirs, x, xt = _both(torch, name)
    x.requires_grad_(True)
    xt.requires_grad_(True)
    (ours.log_abs_det_jacobian(x, ours(x)).sum() + ours(x).pow(2).sum()).backward()
    (theirs.log_abs_det_jacobian(xt, theirs(xt)).sum() + theirs(xt).pow(2).sum()).backward()
    _close(x.grad, xt.grad, f"{name} gradient")


def test_cache_returns_the_cached_inverse(torch: object) -> None:
    t = D.transforms.StickBreakingTransform().with_cache(1)
    x = lucid.tensor(X_VEC)
    y = t(x)
    assert t.inv(y) is x
    wrapped = D.transforms.IndependentTransform(D.transforms.PowerTransform(
        lucid.tensor(2.0)), 1, cache_size=1)
    xp = lucid.tensor(X_POS)
    assert wrapped.inv(wrapped(xp)) is xp


def test_power_transform_equality_and_sign() -> None:
    a = D.PowerTransform(lucid.tensor([2.0, -1.0]))
    assert a == D.PowerTransform(lucid.tensor([2.0, -1.0]))
    assert a != D.PowerTransform(lucid.tensor([2.0, 1.0]))
    np.testing.assert_array_equal(a.sign.numpy(), [1.0, -1.0])
    assert D.AbsTransform() == D.AbsTransform()
    assert D.SoftplusTransform().sign == 1


def test_reshape_and_cat_errors() -> None:
    with pytest.raises(ValueError):
        D.ReshapeTransform((4,), (3,))
    with pytest.raises(ValueError):
        D.ReshapeTransform((4,), (2, 2)).forward_shape((3, 5))
    with pytest.raises(ValueError):
        D.CorrCholeskyTransform().forward_shape((5,))
    t = D.CatTransform([D.ExpTransform()], dim=0, lengths=[2])
    with pytest.raises(ValueError):
        t(lucid.zeros(3))


CONSTRAINTS = {
    "real": lambda c, t: c.real,
    "positive": lambda c, t: c.positive,
    "nonnegative": lambda c, t: c.nonnegative,
    "greater_than": lambda c, t: c.greater_than(t([1.0, -2.0, 0.5])),
    "greater_than_eq": lambda c, t: c.greater_than_eq(2.0),
    "less_than": lambda c, t: c.less_than(t([1.0, -2.0, 0.5])),
    "interval": lambda c, t: c.interval(t([0.0, -1.0, 2.0]), t([1.0, 3.0, 2.5])),
    "unit_interval": lambda c, t: c.unit_interval,
    "half_open_interval": lambda c, t: c.half_open_interval(-1.0, 2.0),
    "simplex": lambda c, t: c.simplex,
    "real_vector": lambda c, t: c.real_vector,
    "independent_positive": lambda c, t: c.independent(c.positive, 1),
    "lower_cholesky": lambda c, t: c.lower_cholesky,
    "positive_definite": lambda c, t: c.positive_definite,
    "corr_cholesky": lambda c, t: c.corr_cholesky,
    "cat": lambda c, t: c.cat([c.positive, c.real, c.unit_interval], -1, [1, 1, 1]),
    "stack": lambda c, t: c.stack([c.positive, c.real, c.unit_interval], -1),
}
_INPUT = {"simplex": X_VEC[:, :3], "real_vector": X_VEC[:, :3], "lower_cholesky": X_SQ,
          "positive_definite": X_SQ, "corr_cholesky": X_VEC[:, :3]}


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", list(CONSTRAINTS))
def test_registries_match_torch(torch: object, registry: str, name: str) -> None:
    import torch.distributions as TD

    ours_c = CONSTRAINTS[name](constraints, lambda v: _t(lucid, v))
    theirs_c = CONSTRAINTS[name](TD.constraints, lambda v: _t(torch, v))
    try:
        want = getattr(TD, registry)(theirs_c)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            getattr(D, registry)(ours_c)
        return
    got = getattr(D, registry)(ours_c)
    assert type(got).__name__ == type(want).__name__
    x = _INPUT.get(name, RNG.normal(size=(2, 3)))
    y, yt = got(_t(lucid, x)), want(_t(torch, x))
    _close(y, yt, f"{registry}({name})")
    assert bool(ours_c.check(y).all())


def test_new_constraints_check_like_torch(torch: object) -> None:
    import torch.distributions as TD

    values = [np.linalg.cholesky(np.array([[1.0, 0.5], [0.5, 1.0]])), np.eye(2) * 2,
              np.array([[1.0, 0.0], [0.6, 0.8]])]
    for v in values:
        assert bool(constraints.corr_cholesky.check(_t(lucid, v))) == \
            bool(TD.constraints.corr_cholesky.check(_t(torch, v)))
    counts = np.array([[1.0, 2.0, 3.0], [4.0, 4.0, 0.0], [-1.0, 2.0, 2.0]])
    np.testing.assert_array_equal(constraints.multinomial(6).check(_t(lucid, counts)).numpy(),
                                  TD.constraints.multinomial(6).check(_t(torch, counts)).numpy())
    mixed = np.array([[1.0, -3.0, 0.5], [-1.0, 0.0, 2.0]])
    cat = constraints.cat([constraints.positive, constraints.real, constraints.unit_interval],
                          -1, [1, 1, 1])
    cat_t = TD.constraints.cat([TD.constraints.positive, TD.constraints.real,
                                TD.constraints.unit_interval], -1, [1, 1, 1])
    np.testing.assert_array_equal(cat.check(_t(lucid, mixed)).numpy(),
                                  cat_t.check(_t(torch, mixed)).numpy())
    mix = constraints.MixtureSameFamilyConstraint(constraints.positive)
    mix_t = TD.constraints.MixtureSameFamilyConstraint(TD.constraints.positive)
    np.testing.assert_array_equal(mix.check(_t(lucid, mixed)).numpy(),
                                  mix_t.check(_t(torch, mixed)).numpy())
