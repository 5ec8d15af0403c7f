"""Every distribution against torch.distributions on the same float64 parameters:
log_prob, cdf/icdf, entropy, moments, mode, derived parameters, shapes and support."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

from distribution_cases import CASES, build, numpy_of, value  # noqa: E402

import lucid.distributions as D  # noqa: E402


def _pairs() -> list[tuple[str, str]]:
    return [(name, m) for name, row in CASES.items() for m in row[4]]


@pytest.mark.parametrize(("name", "method"), _pairs())
def test_matches_torch(torch: object, name: str, method: str) -> None:
    import torch.distributions as TD

    ld, td = build(D, name), build(TD, name)
    if method in ("log_prob", "cdf"):
        got, want = getattr(ld, method)(value(D, name)), getattr(td, method)(value(TD, name))
    elif method == "icdf":
        got, want = ld.icdf(value(D, name, 3)), td.icdf(value(TD, name, 3))
    elif method == "entropy":
        got, want = ld.entropy(), td.entropy()
    else:
        got, want = getattr(ld, method), getattr(td, method)
    g, w = numpy_of(got), numpy_of(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-10, equal_nan=True)


@pytest.mark.parametrize("name", list(CASES))
def test_shapes_and_support_match_torch(torch: object, name: str) -> None:
    import torch.distributions as TD

    ld, td = build(D, name), build(TD, name)
    assert tuple(ld.batch_shape) == tuple(td.batch_shape)
    assert tuple(ld.event_shape) == tuple(td.event_shape)
    assert ld.has_rsample == td.has_rsample
    assert ld.has_enumerate_support == td.has_enumerate_support
    assert repr(ld.support).split("(")[0] == repr(td.support).split("(")[0]
    assert ld.support.event_dim == td.support.event_dim
    assert ld.support.is_discrete == td.support.is_discrete
    s = ld.sample((4,))
    assert tuple(s.shape) == tuple(td.sample((4,)).shape)
    assert bool(ld.support.check(s).all())
    e = ld.expand((5,) + tuple(ld.batch_shape))
    assert tuple(e.batch_shape) == tuple(td.expand((5,) + tuple(td.batch_shape)).batch_shape)
    v = e.sample()
    np.testing.assert_allclose(numpy_of(e.log_prob(v)),
                               numpy_of(td.expand((5,) + tuple(td.batch_shape))
                                        .log_prob(torch.tensor(numpy_of(v)))), rtol=1e-7)


def test_repr_matches_torch(torch: object) -> None:
    import torch.distributions as TD

    for name in ("normal", "bernoulli_probs", "categorical_logits", "mvn_cov"):
        assert repr(build(D, name)).replace("lucid", "torch") == repr(build(TD, name))
    n = D.Normal(0.0, 1.0)
    assert repr(n) == repr(TD.Normal(0.0, 1.0)).replace("torch", "lucid")
    assert repr(D.Independent(n.expand((3,)), 1)).startswith("Independent(Normal(loc: ")


def test_enumerate_support_matches_torch(torch: object) -> None:
    import torch.distributions as TD

    for name in ("bernoulli_probs", "categorical_probs", "onehot"):
        for expand in (True, False):
            got = build(D, name).enumerate_support(expand)
            want = build(TD, name).enumerate_support(expand)
            np.testing.assert_array_equal(numpy_of(got), numpy_of(want))


def test_transformed_distribution_matches_torch(torch: object) -> None:
    import torch.distributions as TD
    import torch.distributions.transforms as TT

    import lucid

    loc, scale = np.array([0.2, -0.5]), np.array([1.0, 0.7])
    ld = D.TransformedDistribution(
        D.Normal(lucid.tensor(loc), lucid.tensor(scale)),
        [D.AffineTransform(1.0, 2.0), D.TanhTransform()])
    td = TD.TransformedDistribution(
        TD.Normal(torch.tensor(loc), torch.tensor(scale)),
        [TT.AffineTransform(1.0, 2.0), TT.TanhTransform()])
    v = np.array([0.3, -0.9])
    np.testing.assert_allclose(numpy_of(ld.log_prob(lucid.tensor(v))),
                               numpy_of(td.log_prob(torch.tensor(v))), rtol=1e-7)
    np.testing.assert_allclose(numpy_of(ld.cdf(lucid.tensor(v))),
                               numpy_of(td.cdf(torch.tensor(v))), rtol=1e-7)
    # a decreasing transform flips the cdf
    ld2 = D.TransformedDistribution(D.Normal(lucid.tensor(loc), lucid.tensor(scale)),
                                    D.AffineTransform(0.5, -3.0))
    td2 = TD.TransformedDistribution(TD.Normal(torch.tensor(loc), torch.tensor(scale)),
                                     TT.AffineTransform(0.5, -3.0))
    for m in ("cdf", "log_prob"):
        np.testing.assert_allclose(numpy_of(getattr(ld2, m)(lucid.tensor(v))),
                                   numpy_of(getattr(td2, m)(torch.tensor(v))), rtol=1e-7)
    p = np.array([0.2, 0.7])
    np.testing.assert_allclose(numpy_of(ld2.icdf(lucid.tensor(p))),
                               numpy_of(td2.icdf(torch.tensor(p))), rtol=1e-7)
    # event-dim affine: Independent base with a vector event
    ld3 = D.TransformedDistribution(D.Normal(lucid.tensor(loc), lucid.tensor(scale)),
                                    D.AffineTransform(lucid.tensor([1.0, 2.0]),
                                                      lucid.tensor([2.0, 3.0]), event_dim=1))
    td3 = TD.TransformedDistribution(TD.Normal(torch.tensor(loc), torch.tensor(scale)),
                                     TT.AffineTransform(torch.tensor([1.0, 2.0]),
                                                        torch.tensor([2.0, 3.0]), event_dim=1))
    assert tuple(ld3.event_shape) == tuple(td3.event_shape) == (2,)
    np.testing.assert_allclose(numpy_of(ld3.log_prob(lucid.tensor(v))),
                               numpy_of(td3.log_prob(torch.tensor(v))), rtol=1e-7)


def test_transforms_match_torch(torch: object) -> None:
    import torch.distributions.transforms as TT

    import lucid

    x = np.array([-2.0, -0.3, 0.0, 0.8, 3.0])
    pairs = [(D.ExpTransform(), TT.ExpTransform()),
             (D.SigmoidTransform(), TT.SigmoidTransform()),
             (D.TanhTransform(), TT.TanhTransform()),
             (D.AffineTransform(0.5, -2.0), TT.AffineTransform(0.5, -2.0)),
             (D.ComposeTransform([D.AffineTransform(1.0, 0.5), D.SigmoidTransform()]),
              TT.ComposeTransform([TT.AffineTransform(1.0, 0.5), TT.SigmoidTransform()]))]
    for lt, tt in pairs:
        lx, tx = lucid.tensor(x), torch.tensor(x)
        ly, ty = lt(lx), tt(tx)
        np.testing.assert_allclose(numpy_of(ly), numpy_of(ty), rtol=1e-7)
        np.testing.assert_allclose(numpy_of(lt.inv(ly)), numpy_of(tt.inv(ty)), rtol=1e-6,
                                   atol=1e-12)
        np.testing.assert_allclose(numpy_of(lt.log_abs_det_jacobian(lx, ly)),
                                   numpy_of(tt.log_abs_det_jacobian(tx, ty)), rtol=1e-7)
        assert lt.sign == tt.sign and lt.bijective == tt.bijective
        assert repr(lt.domain) == repr(tt.domain) and repr(lt.codomain) == repr(tt.codomain)
