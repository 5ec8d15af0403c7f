"""lucid.nn.utils: gradient clipping and parameter vectors, against numpy and torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.nn import utils

SHAPES = [(5, 3), (3,), (7,), (2, 2, 2)]


def _params(seed: int = 0, dtype: str = "float32", with_grad: bool = True):
    rng = np.random.default_rng(seed)
    ps = [nn.Parameter(lucid.tensor(rng.standard_normal(s).astype(dtype))) for s in SHAPES]
    gs = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    if with_grad:
        for p, g in zip(ps, gs):
            p.grad = lucid.tensor(g)
    return ps, gs


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, 0.5, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_against_numpy(norm_type: float, max_norm: float) -> None:
    ps, gs = _params(dtype="float64")
    flat = np.concatenate([g.ravel() for g in gs])
    expect = np.abs(flat).max() if norm_type == math.inf else \
        (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    keep = [p.grad for p in ps]
    total = utils.clip_grad_norm_(ps, max_norm, norm_type)
    assert isinstance(total, lucid.Tensor) and total.ndim == 0
    assert total.item() == pytest.approx(expect, rel=1e-12)
    coef = min(1.0, max_norm / (expect + 1e-6))
    for p, g, k in zip(ps, gs, keep):
        assert p.grad is k  # scaled in place
        np.testing.assert_allclose(p.grad.numpy(), g * coef, rtol=1e-12)


def test_clip_grad_norm_edge_cases() -> None:
    ps, _ = _params(with_grad=False)
    total = utils.clip_grad_norm_(ps, 1.0)
    assert total.item() == 0.0
    with pytest.warns(UserWarning, match="empty generator"):
        utils.clip_grad_norm_((p for p in []), 1.0)
    ps, gs = _params()
    ps[1].grad = None
    single = utils.clip_grad_norm_(ps[0], 0.1)  # one tensor instead of an iterable
    assert single.item() == pytest.approx(np.linalg.norm(gs[0]), rel=1e-6)
    ps[2].grad = lucid.tensor([np.inf] + [0.0] * 6)
    with pytest.raises(RuntimeError, match="non-finite"):
        utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    assert np.isinf(ps[2].grad.numpy()[0])  # nothing was scaled
    with pytest.warns(FutureWarning, match="deprecated"):
        utils.clip_grad_norm(ps[:1], 1.0)


def test_get_total_norm_and_clip_with_norm() -> None:
    ps, gs = _params(dtype="float64")
    total = utils.get_total_norm([p.grad for p in ps])
    assert total.item() == pytest.approx(np.linalg.norm(np.concatenate([g.ravel() for g in gs])))
    utils.clip_grads_with_norm_(ps, 1.0, total)
    after = utils.get_total_norm([p.grad for p in ps])
    assert after.item() == pytest.approx(1.0, rel=1e-5)


def test_clip_grad_value() -> None:
    ps, gs = _params()
    ps[3].grad = None
    utils.clip_grad_value_(ps, 0.3)
    for p, g in zip(ps[:3], gs):
        np.testing.assert_array_equal(p.grad.numpy(), np.clip(g, -0.3, 0.3))
    assert ps[3].grad is None


def test_parameters_to_vector_and_back() -> None:
    ps, _ = _params(with_grad=False)
    vec = utils.parameters_to_vector(ps)
    assert vec.shape == (sum(int(np.prod(s)) for s in SHAPES),) and vec.requires_grad
    np.testing.assert_array_equal(vec.detach().numpy(),
                                  np.concatenate([p.detach().numpy().ravel() for p in ps]))
    vec.sum().backward()
    assert all(np.all(p.grad.numpy() == 1.0) for p in ps)  # differentiable, as in PyTorch
    new = lucid.arange(vec.shape[0], dtype=lucid.float32)
    utils.vector_to_parameters(new, ps)
    assert ps[0].shape == (5, 3) and ps[1].tolist() == [15.0, 16.0, 17.0]
    with pytest.raises(TypeError, match="expected lucid.Tensor"):
        utils.vector_to_parameters(np.zeros(3), ps)


@pytest.mark.parity
@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.0])
def test_clip_grad_norm_matches_torch(norm_type: float, torch) -> None:
    ps, gs = _params(3)
    tps = [torch.nn.Parameter(torch.tensor(p.detach().numpy())) for p in ps]
    for t, g in zip(tps, gs):
        t.grad = torch.tensor(g)
    a = utils.clip_grad_norm_(ps, 0.7, norm_type)
    b = torch.nn.utils.clip_grad_norm_(tps, 0.7, norm_type)
    assert a.dtype == lucid.float32 and a.item() == pytest.approx(b.item(), rel=1e-6)
    for p, t in zip(ps, tps):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-7)
    for p, t in zip(ps, tps):  # same gradients in, the same clipped gradients out
        p.grad = lucid.tensor(t.grad.numpy())
    utils.clip_grad_value_(ps, 0.05)
    torch.nn.utils.clip_grad_value_(tps, 0.05)
    for p, t in zip(ps, tps):
        np.testing.assert_array_equal(p.grad.numpy(), t.grad.numpy())


@pytest.mark.parity
def test_parameter_vectors_match_torch(torch) -> None:
    ps, _ = _params(4)
    tps = [torch.nn.Parameter(torch.tensor(p.detach().numpy())) for p in ps]
    v = utils.parameters_to_vector(ps)
    tv = torch.nn.utils.parameters_to_vector(tps)
    np.testing.assert_array_equal(v.detach().numpy(), tv.detach().numpy())
    utils.vector_to_parameters(v * 3, ps)
    torch.nn.utils.vector_to_parameters(tv * 3, tps)
    for p, t in zip(ps, tps):
        np.testing.assert_array_equal(p.detach().numpy(), t.detach().numpy())


@pytest.mark.parametrize("dtype", [lucid.float32, lucid.float64, lucid.bfloat16])
def test_clip_scales_each_gradient_in_its_own_memory(dtype) -> None:
    """The clipped gradient is the same tensor, its memory (a numpy view of it sees the new
    values) scaled by max_norm / total, its version bumped."""
    r = np.random.default_rng(3)
    ps = [nn.Parameter(lucid.tensor(r.standard_normal(s), dtype=dtype)) for s in ((4, 5), (7,))]
    raw = [r.standard_normal(p.shape) for p in ps]
    for p, g in zip(ps, raw):
        p.grad = lucid.tensor(g, dtype=dtype)
    grads = [p.grad for p in ps]
    before = [g.float().numpy().astype(np.float64) for g in grads]
    views = [g.numpy() for g in grads] if dtype is not lucid.bfloat16 else None
    versions = [g._version for g in grads]
    total = float(utils.clip_grad_norm_(ps, 0.5))
    want_total = math.sqrt(sum(float((b ** 2).sum()) for b in before))
    assert total == pytest.approx(want_total, rel=1e-2 if dtype is lucid.bfloat16 else 1e-6)
    tol = 1e-2 if dtype is lucid.bfloat16 else 1e-6
    for p, g, b, v in zip(ps, grads, before, versions):
        assert p.grad is g and g.dtype is dtype and g._version > v
        np.testing.assert_allclose(g.float().numpy(), b * 0.5 / (want_total + 1e-6),
                                   rtol=tol, atol=tol)
    if views is not None:
        for g, view in zip(grads, views):
            np.testing.assert_array_equal(view, g.numpy())
