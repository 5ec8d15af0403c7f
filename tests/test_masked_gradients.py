"""Gradients that torch fills into a mask stay exactly 0 outside it, even when the incoming
gradient is NaN or inf: ``x.max()``/``x.min()`` over the tied extremes, the inf-norm over
its maxima (a NaN one included), ``nll_loss`` on ignored targets, and ``cov`` of one
weighted observation (whose deviation torch sets to 0). Also the running index of
``cummax``/``cummin`` over NaN in every float dtype. Each case on every device, with the
expected values written out and checked against torch where it is installed."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import lucid

NAN, INF = float("nan"), float("inf")
DEVICES = ("cpu", "numpy", "gpu")


def _dev(device: str) -> str:
    if device == "gpu":
        pytest.importorskip("mlx")
    return device


def _grad(mod: Any, fn: Any, x: list, device: str | None = None, dtype: str = "float64") -> list:
    kw = {"device": device} if device else {}
    leaf = mod.tensor(x, dtype=getattr(mod, dtype), requires_grad=True, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn(mod, leaf * 1).backward()
    return np.asarray(leaf.grad.cpu().numpy() if mod is not lucid else leaf.grad.numpy(),
                      np.float64).tolist()


def _same(got: list, want: list) -> None:
    np.testing.assert_array_equal(np.array(got), np.array(want))


FULL = [  # (fn, input, expected gradient)
    (lambda m, x: (x.min() * INF), [[1.0, 1.0, 3.0], [NAN, 2.0, NAN]], [[0, 0, 0], [INF, 0, INF]]),
    (lambda m, x: (x.max() * NAN), [[1.0, 3.0, 3.0]], [[0, NAN, NAN]]),
    (lambda m, x: x.max() * 2, [[1.0, 3.0, 3.0]], [[0, 1, 1]]),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(FULL)))
def test_full_max_min_fill_their_extremes_only(device: str, case: int) -> None:
    fn, x, want = FULL[case]
    _same(_grad(lucid, fn, x, _dev(device)), want)


def test_full_max_min_match_torch(torch: Any) -> None:
    for fn, x, want in FULL:
        _same(_grad(torch, fn, x), want)


def _inf_norm(m: Any, x: Any) -> Any:
    return (x.norm(p=INF, dim=1) * m.tensor([1.5], dtype=x.dtype, device=x.device)).sum()


NORM = [([[NAN, 2.0, 1.0]], [[0, 0, 0]]), ([[NAN, INF, 1.0]], [[0, 0, 0]]),
        ([[INF, -INF, 3.0]], [[0.75, -0.75, 0]]), ([[3.0, -3.0, 1.0]], [[0.75, -0.75, 0]])]


@pytest.mark.parametrize("device", DEVICES)
def test_inf_norm_gradient_with_nan_and_inf(device: str) -> None:
    for x, want in NORM:
        _same(_grad(lucid, _inf_norm, x, _dev(device)), want)


def test_inf_norm_gradient_matches_torch(torch: Any) -> None:
    for x, want in NORM:
        _same(_grad(torch, _inf_norm, x), want)


def _nll(reduction: str) -> Any:
    def fn(m: Any, x: Any) -> Any:
        t = m.tensor([0, 2, -100], device=x.device)
        w = m.tensor([1.0, 2.0, 3.0], dtype=x.dtype, device=x.device)
        loss = m.nn.functional.nll_loss(x, t, weight=w, reduction=reduction)
        if reduction == "none":
            return (loss * m.tensor([1.0, NAN, NAN], dtype=x.dtype, device=x.device)).sum()
        return loss * NAN
    return fn


NLL_X = [[0.1, 0.2, 0.3], [0.3, 0.1, 0.2], [1.0, 2.0, 3.0]]
NLL = {"sum": [[NAN, 0, 0], [0, 0, NAN], [0, 0, 0]], "mean": [[NAN, 0, 0], [0, 0, NAN], [0, 0, 0]],
       "none": [[-1, 0, 0], [0, 0, NAN], [0, 0, 0]]}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", sorted(NLL))
def test_nll_loss_ignored_targets_get_zero_under_nan(device: str, reduction: str) -> None:
    _same(_grad(lucid, _nll(reduction), NLL_X, _dev(device)), NLL[reduction])


def test_nll_loss_ignored_targets_match_torch(torch: Any) -> None:
    for reduction, want in NLL.items():
        _same(_grad(torch, _nll(reduction), NLL_X), want)


def _cov(weights: str) -> Any:
    def fn(m: Any, x: Any) -> Any:
        kw = {"fweights": m.tensor([1], device=x.device)} if weights == "f" else \
            {"aweights": m.tensor([0.5], dtype=x.dtype, device=x.device)}
        c = m.cov(x, **kw)
        assert bool(c.isnan().all())
        return (c * m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=x.dtype, device=x.device)).sum()
    return fn


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("weights", ["f", "a"])
def test_cov_of_one_weighted_observation(device: str, weights: str) -> None:
    _same(_grad(lucid, _cov(weights), [[0.3], [0.7]], _dev(device)), [[0], [0]])


def test_cov_of_one_weighted_observation_matches_torch(torch: Any) -> None:
    for weights in "fa":
        _same(_grad(torch, _cov(weights), [[0.3], [0.7]]), [[0], [0]])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_cumulative_extremes_index_the_latest_nan(device: str, dtype: str) -> None:
    x = lucid.tensor([1.0, NAN, 2.0, NAN, 0.0], dtype=getattr(lucid, dtype), device=_dev(device))
    for op in ("cummax", "cummin"):
        assert getattr(x, op)(0).indices.tolist() == [0, 1, 1, 3, 3], op


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction,want", [("mean", [NAN]), ("sum", [0.0]), ("none", [0.0] * 3)])
def test_cross_entropy_over_no_classes_with_smoothing(device: str, reduction: str,
                                                      want: list) -> None:
    x = lucid.zeros(3, 0, dtype=lucid.float64, requires_grad=True, device=_dev(device))
    t = lucid.zeros(3, 0, dtype=lucid.float64, device=device)
    loss = lucid.nn.functional.cross_entropy(x, t, weight=lucid.zeros(0, device=device),
                                             label_smoothing=0.2, reduction=reduction)
    _same(np.atleast_1d(loss.detach().numpy()).tolist(), want)
    loss.sum().backward()
    assert x.grad.shape == (3, 0)


def test_grid_sample_clipped_coordinates_keep_a_nan_gradient(torch: Any) -> None:
    """Outside the border torch multiplies the coordinate's gradient by 0: a NaN reaching it
    (from a NaN input) stays NaN, as 0 * NaN."""
    grid = np.random.default_rng(0).uniform(-1.2, 1.2, (1, 2, 2, 2))
    got = []
    for m in (lucid, torch):
        x = m.full((1, 1, 3, 3), NAN, dtype=m.float64, requires_grad=True)
        g = m.tensor(grid, requires_grad=True)
        m.nn.functional.grid_sample(x, g, "bilinear", "border", align_corners=False).sum() \
            .backward()
        got.append(np.isnan(g.grad.numpy()))
    np.testing.assert_array_equal(got[0], got[1])
    assert got[0].all()


def test_nan_to_num_multiplies_the_gradient(torch: Any) -> None:
    """torch's ``grad * isfinite(x)``: a NaN gradient stays NaN even on a replaced element."""
    for m in (lucid, torch):
        x = m.tensor([NAN, 1.0, INF], dtype=m.float64, requires_grad=True)
        m.nan_to_num(x).backward(m.tensor([NAN, 2.0, 3.0], dtype=m.float64))
        _same(np.isnan(x.grad.numpy()).tolist(), [True, False, False])
        assert x.grad.numpy()[1] == 2.0 and x.grad.numpy()[2] == 0.0


def test_logcumsumexp_drops_a_nan_gradient_as_torch(torch: Any) -> None:
    x = np.random.default_rng(0).standard_normal((3, 5))
    g = np.zeros((3, 5))
    g[0, 0], g[2, 3] = NAN, 0.7
    got = []
    for m in (lucid, torch):
        t = m.tensor(x, requires_grad=True)
        m.logcumsumexp(t, 0).backward(m.tensor(g))
        got.append(t.grad.numpy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-12)
    assert not np.isnan(got[0]).any()


def test_cdist_inf_norm_passes_over_nan_as_torch(torch: Any) -> None:
    got = []
    for m in (lucid, torch):
        a = m.tensor([[NAN, 1.0], [NAN, NAN], [2.0, -3.0]], dtype=m.float64, requires_grad=True)
        b = m.tensor([[0.0, 0.0]], dtype=m.float64, requires_grad=True)
        d = m.cdist(a, b, p=INF)
        d.sum().backward()
        got.append((d.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    for x, y in zip(got[0], got[1]):
        np.testing.assert_array_equal(x, y)


def test_grid_sample_reads_nothing_outside_the_input(torch: Any) -> None:
    """A tap outside the input is skipped, not multiplied by 0: a NaN input there gives 0,
    and no NaN reaches that point's grid gradient."""
    got = []
    for m in (lucid, torch):
        x = m.full((1, 1, 3, 3), NAN, dtype=m.float64, requires_grad=True)
        g = m.tensor([[[[1.5, 0.2], [0.1, -0.3]]]], dtype=m.float64, requires_grad=True)
        y = m.nn.functional.grid_sample(x, g, "bilinear", "zeros", align_corners=False)
        y.sum().backward()
        got.append((y.detach().numpy(), g.grad.numpy()))
    np.testing.assert_array_equal(got[0][0], got[1][0])
    np.testing.assert_array_equal(got[0][1], got[1][1])
