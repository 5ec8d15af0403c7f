"""The distributions added for torch 2.13 parity, against torch on the same float64
parameters: log_prob / cdf / icdf / entropy / moments / derived parameters, shapes,
constraints, ``has_rsample``, ``expand`` and sample shapes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from family_cases import CASES, tensor_fn

import lucid
import lucid.distributions as D


@pytest.fixture(autouse=True)
def _torch_float64() -> object:
    """torch's GeneralizedPareto compares with a default-dtype constant, so float64
    parameters need float64 as torch's default dtype."""
    torch = pytest.importorskip("torch")
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    lucid.set_default_dtype(lucid.float64)
    yield
    torch.set_default_dtype(old)


def _np(x: object) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach()
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x, dtype=np.float64)


def _pair(torch: object, name: str) -> tuple[object, object]:
    import torch.distributions as TD

    build = CASES[name][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build(D, tensor_fn(D)), build(TD, tensor_fn(TD))


def _close(got: object, want: object, what: str) -> None:
    g, w = _np(got), _np(want)
    assert g.shape == w.shape, f"{what}: shape {g.shape} != {w.shape}"
    np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(torch: object, name: str) -> None:
    ours, theirs = _pair(torch, name)
    _, value, points, what = CASES[name]
    for attr in what:
        if attr in ("log_prob", "cdf"):
            got = getattr(ours, attr)(tensor_fn(D)(value))
            want = getattr(theirs, attr)(tensor_fn(torch.distributions)(value))
        elif attr == "icdf":
            got = ours.icdf(tensor_fn(D)(points))
            want = theirs.icdf(tensor_fn(torch.distributions)(points))
        elif attr == "entropy":
            got, want = ours.entropy(), theirs.entropy()
        else:
            got, want = getattr(ours, attr), getattr(theirs, attr)
        _close(got, want, f"{name}.{attr}")


@pytest.mark.parametrize("name", list(CASES))
def test_shapes_and_flags_match_torch(torch: object, name: str) -> None:
    ours, theirs = _pair(torch, name)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    assert set(ours.arg_constraints) == set(theirs.arg_constraints)
    assert type(ours.support).__name__ == type(theirs.support).__name__
    assert ours.support.event_dim == theirs.support.event_dim
    assert ours.support.is_discrete == theirs.support.is_discrete


@pytest.mark.parametrize("name", list(CASES))
def test_sample_and_expand_shapes(torch: object, name: str) -> None:
    ours, theirs = _pair(torch, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = theirs.sample((4, 2)).shape
        got = ours.sample((4, 2))
        assert tuple(got.shape) == tuple(want)
        assert got.dtype == lucid.float64 or name.startswith("onehot")
        if ours.has_rsample:
            assert tuple(ours.rsample((3,)).shape) == tuple(theirs.rsample((3,)).shape)
        batch = (5,) + tuple(ours.batch_shape)
        big, big_t = ours.expand(batch), theirs.expand(batch)
        assert tuple(big.sample((2,)).shape) == tuple(big_t.sample((2,)).shape)
    assert type(big) is type(ours)
    assert tuple(big.batch_shape) == tuple(big_t.batch_shape)
    value = np.asarray(CASES[name][1])
    lead = value.ndim - len(ours.event_shape) - len(ours.batch_shape)
    if lead > 0:
        value = np.expand_dims(value, lead)
    _close(big.log_prob(tensor_fn(D)(value)),
           big_t.log_prob(tensor_fn(torch.distributions)(value)), f"{name} expanded")


@pytest.mark.parametrize("name", [n for n in CASES if CASES[n][0](D, tensor_fn(D)).support
                                  .__class__.__name__ not in ("_Dependent",)])
def test_samples_lie_in_support(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = CASES[name][0](D, tensor_fn(D))
        x = d.sample((50,))
    assert bool(d.support.check(x).all())
