"""Findings of the differential fuzz, pinned: each case states torch's result as a numpy
value (so it checks without torch), and checks torch itself where it is installed.

The replayed programs at the end are shrunk findings: they must agree with the reference
(torch, or the numpy backend) on every device.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from typing import Any

import differential as dfz
import numpy as np
import pytest
from devices import DEVICES
from fuzz_harness import Worker

import lucid
import lucid.nn.functional as F


def _grad(fn: Any, x: np.ndarray, dev: str, dtype: Any = lucid.float64) -> tuple[Any, Any]:
    t = lucid.tensor(x, dtype=dtype, device=dev, requires_grad=True)
    y = fn(t)
    y.backward(lucid.ones_like(y))
    return y.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("dev", DEVICES)
def test_logit_gradient_at_and_outside_the_domain(dev: str) -> None:
    x = np.array([-0.3, 0.0, 0.25, 1.0, 1.5])
    y, g = _grad(lucid.logit, x, dev, lucid.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(y, np.log(x / (1 - x)), rtol=1e-6)
        # torch: NaN outside [0, 1], 1 / (x (1 - x)) inside, so +inf at both ends
        np.testing.assert_allclose(g, np.where((x < 0) | (x > 1), np.nan, 1 / (x * (1 - x))),
                                   rtol=1e-6)
    _, g = _grad(lambda t: lucid.logit(t, 0.1), x, dev, lucid.float32)
    np.testing.assert_allclose(g, [0, 0, 1 / (0.25 * 0.75), 0, 0], rtol=1e-6)


@pytest.mark.parametrize("dev", DEVICES)
def test_bincount_result_dtype(dev: str) -> None:
    i = lucid.tensor([0, 2, 2], device=dev)
    for wdt, out in [(lucid.float32, lucid.float32), (lucid.float64, lucid.float64),
                     (lucid.float16, lucid.float64), (lucid.bfloat16, lucid.float64),
                     (lucid.int64, lucid.float64)]:
        r = lucid.bincount(i, lucid.tensor([1, 2, 3], dtype=wdt, device=dev))
        assert r.dtype is out and r.tolist() == [1, 0, 5]
    empty = lucid.bincount(lucid.tensor([], dtype=lucid.int64, device=dev),
                           lucid.tensor([], device=dev), minlength=3)
    assert empty.dtype is lucid.int64 and empty.tolist() == [0, 0, 0]


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("name,shapes", [
    ("addmv", [(1,), (3, 4), (4,)]), ("addr", [(1,), (3,), (4,)]),
    ("baddbmm", [(1, 1), (2, 3, 4), (2, 4, 5)]), ("addbmm", [(1,), (2, 3, 4), (2, 4, 5)])])
def test_beta_zero_ignores_a_broadcast_nan_input(dev: str, name: str, shapes: list) -> None:
    # torch: beta=0 ignores the input's values, NaN included (it was 0 * NaN = NaN here)
    rng = np.random.default_rng(0)
    arrs = [np.full(shapes[0], np.nan)] + [rng.random(s) for s in shapes[1:]]
    ts = [lucid.tensor(a, device=dev, requires_grad=True) for a in arrs]
    out = getattr(lucid, name)(*ts, beta=0, alpha=2)
    prod = {"addmv": lambda a, b: a @ b, "addr": np.outer,
            "baddbmm": lambda a, b: a @ b, "addbmm": lambda a, b: (a @ b).sum(0)}[name]
    np.testing.assert_allclose(out.detach().numpy(), 2 * prod(arrs[1], arrs[2]), rtol=1e-6)
    out.sum().backward()
    np.testing.assert_array_equal(ts[0].grad.numpy(), np.zeros(shapes[0]))


@pytest.mark.parametrize("dev", DEVICES)
def test_quantile_of_a_slice_with_nan_sends_its_gradient_to_a_nan(dev: str) -> None:
    # torch reads the last sorted element of a slice holding NaN (quantile), the first of a
    # slice of NaN only (nanquantile): the NaN result's gradient goes there, not nowhere
    nan = float("nan")
    y, g = _grad(lambda t: lucid.quantile(t, 0.3), np.array([1.0, nan, 3.0, 2.0]), dev)
    assert math.isnan(float(y)) and g.tolist() == [0.0, 1.0, 0.0, 0.0]
    _, g = _grad(lambda t: lucid.nanquantile(t, 0.7, dim=1, interpolation="lower"),
                 np.array([[nan, nan, nan], [1.0, nan, 2.0]]), dev)
    assert g.tolist() == [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    _, g = _grad(lambda t: lucid.quantile(t, 0.5, dim=0), np.array([[nan, 1.0], [nan, 3.0]]),
                 dev)
    assert g.tolist() == [[0.0, 0.5], [1.0, 0.5]]


@pytest.mark.parametrize("dev", DEVICES)
def test_diagonal_is_a_view_that_writes_reach(dev: str) -> None:
    # torch's diagonal() is a view: x.diagonal().fill_() and .add_() write into x (a copy
    # silently dropped the write)
    x = lucid.zeros(3, 4, device=dev)
    x.diagonal(1).fill_(5.0)
    x.diagonal(-1).add_(2.0)
    want = np.zeros((3, 4))
    want[[0, 1, 2], [1, 2, 3]] = 5.0
    want[[1, 2], [0, 1]] = 2.0
    np.testing.assert_array_equal(x.numpy(), want)
    w = lucid.ones(3, 3, device=dev, requires_grad=True)
    z = w * 2.0
    z.diagonal().mul_(3.0)  # in place on the view of a non-leaf: the graph goes through it
    z.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), 2.0 + 4.0 * np.eye(3))
    b = np.arange(24.0).reshape(2, 3, 4)
    d = lucid.tensor(b, device=dev).diagonal(1, 2, 0)
    np.testing.assert_array_equal(d.numpy(), np.diagonal(b, 1, 2, 0))


@pytest.mark.parametrize("dev", DEVICES)
def test_searchsorted_over_boundaries_holding_nan_follows_torchs_search(dev: str) -> None:
    # torch's binary search moves right past a NaN entry (it is not >= anything); numpy
    # sorts NaN last. torch 2.13's answers:
    nan = float("nan")
    bnd = lucid.tensor([1.0, 2.0, nan], device=dev)
    vals = lucid.tensor([0.5, 1.5, 2.5, nan], device=dev)
    assert lucid.searchsorted(bnd, vals).tolist() == [0, 1, 3, 3]
    assert lucid.searchsorted(bnd, vals, right=True).tolist() == [0, 1, 3, 3]
    both = lucid.tensor([nan, nan], device=dev)
    assert lucid.searchsorted(both, lucid.tensor([1.0, nan], device=dev)).tolist() == [2, 2]
    rows = lucid.tensor([[1.0, nan, 3.0], [0.0, 1.0, 2.0]], device=dev)
    got = lucid.searchsorted(rows, lucid.tensor([[2.0, 0.0], [1.0, 5.0]], device=dev))
    assert got.tolist() == [[2, 2], [1, 3]]


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_gradient_goes_to_input_on_ties_and_nan(dev: str, name: str) -> None:
    # torch: input's where input >= other (<= for fmin) or other is NaN; other's elsewhere
    nan = float("nan")
    a = lucid.tensor([1.0, nan, nan, 2.0, 0.0], device=dev, requires_grad=True)
    b = lucid.tensor([1.0, nan, 3.0, nan, 5.0], device=dev, requires_grad=True)
    out = getattr(lucid, name)(a, b)
    out.sum().backward()
    first = [1.0, 1.0, 0.0, 1.0, 0.0 if name == "fmax" else 1.0]
    assert a.grad.tolist() == first
    assert b.grad.tolist() == [1.0 - f for f in first]
    want = [1.0, nan, 3.0, 2.0, 5.0 if name == "fmax" else 0.0]
    np.testing.assert_array_equal(out.detach().numpy(), want)


@pytest.mark.parametrize("dev", DEVICES)
def test_cov_of_one_variable_is_a_scalar(dev: str) -> None:
    x = np.array([[1.0, 2.0, 4.0, 7.0]])
    c = lucid.cov(lucid.tensor(x, device=dev))
    assert c.shape == () and math.isclose(c.item(), np.cov(x).item(), rel_tol=1e-6)
    assert lucid.cov(lucid.tensor(np.ones((2, 3)), device=dev)).shape == (2, 2)


@pytest.mark.parametrize("dev", DEVICES)
def test_zero_size_forward_and_backward(dev: str) -> None:
    w = lucid.ones(3, 0, dtype=lucid.float64, device=dev, requires_grad=True)
    F.embedding(lucid.tensor([0, 1], device=dev), w).sum().backward()
    assert w.grad.shape == (3, 0)
    x = lucid.ones(0, 2, 3, 4, device=dev, requires_grad=True)
    y = F.grid_sample(x, lucid.zeros(0, 2, 3, 2, device=dev), mode="nearest",
                      align_corners=False)
    assert y.shape == (0, 2, 2, 3)
    q = lucid.ones(2, 0, 4, device=dev, requires_grad=True)
    F.scaled_dot_product_attention(q, q, q).sum().backward()
    assert q.grad.shape == (2, 0, 4)
    # an empty head dim: every score is an empty sum, so attention is uniform (torch: the
    # mean of v over the keys)
    q = lucid.ones(2, 3, 0, device=dev, requires_grad=True)
    v = lucid.tensor(np.arange(12.0).reshape(2, 3, 2), dtype=lucid.float32, device=dev,
                     requires_grad=True)
    out = F.scaled_dot_product_attention(q, q, v)
    np.testing.assert_allclose(out.detach().numpy(),
                               np.broadcast_to(v.detach().numpy().mean(1, keepdims=True),
                                               (2, 3, 2)), rtol=1e-6)
    out.sum().backward()
    assert q.grad.shape == (2, 3, 0)
    np.testing.assert_allclose(v.grad.numpy(), np.ones((2, 3, 2)), rtol=1e-6)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dt", [lucid.float16, lucid.bfloat16])
def test_where_and_masked_fill_keep_a_half_dtype_beside_a_python_float(dev: str,
                                                                        dt: Any) -> None:
    x = lucid.tensor([1.0, 2.0, 3.0], dtype=dt, device=dev)
    m = lucid.tensor([True, False, True], device=dev)
    for y in (lucid.where(m, 0.5, x), lucid.where(m, x, 0.5), x.masked_fill(m, 0.5)):
        assert y.dtype is dt
    assert lucid.where(m, 0.5, x).tolist() == [0.5, 2.0, 0.5]
    assert x.masked_fill(m, -1.5).tolist() == [-1.5, 2.0, -1.5]


# ---- shrunk programs ----------------------------------------------------------------------------

PROGRAMS: list[tuple[str, list[dict[str, Any]]]] = [
    ("logit_after_matmul", [
        {"op": "matmul_fn", "sample": 1, "mut": None, "lay": None, "link": False},
        {"op": "logit", "sample": 1, "mut": None, "lay": [None], "link": True}]),
    ("bincount_empty", [{"op": "bincount", "sample": 1, "mut": [9, 0], "lay": None,
                         "link": False}]),
    ("embedding_no_columns", [{"op": "embedding", "sample": 4, "mut": None, "lay": None,
                               "link": False}]),
    ("conv3d_then_view", [
        {"op": "conv3d", "sample": 0, "mut": None, "lay": None, "link": False},
        {"op": "exp", "sample": 0, "mut": None, "lay": None, "link": True}]),
    ("conv3d_same_then_view", [
        {"op": "conv3d", "sample": 3, "mut": None, "lay": None, "link": False},
        {"op": "masked_select", "sample": 1, "mut": None, "lay": None, "link": True}]),
    ("logsigmoid_transposed_then_layer_norm", [
        {"op": "F.logsigmoid", "sample": 1, "mut": None, "lay": ["t"], "link": False},
        {"op": "layer_norm", "sample": 6, "mut": None, "lay": [None, None], "link": True}]),
    ("batch_norm_eval_transposed_then_view", [
        {"op": "batch_norm_eval", "sample": 2, "mut": None, "lay": ["t", None, None],
         "link": False},
        {"op": "add", "sample": 7, "mut": None, "lay": None, "link": True}]),
    ("batch_norm_train_transposed_then_view", [
        {"op": "batch_norm_train", "sample": 0, "mut": None, "lay": ["t", None, None],
         "link": False},
        {"op": "floordiv_scalar", "sample": 3, "mut": None, "lay": None, "link": True}]),
    ("instance_norm_transposed_then_view", [
        {"op": "instance_norm", "sample": 1, "mut": None, "lay": ["t"], "link": False},
        {"op": "igamma", "sample": 1, "mut": None, "lay": None, "link": True}]),
    ("rms_norm_transposed_then_view", [
        {"op": "rms_norm", "sample": 2, "mut": None, "lay": [None, None], "link": False},
        {"op": "cumprod", "sample": 0, "mut": None, "lay": None, "link": True}]),
    ("renorm_transposed_then_view", [
        {"op": "renorm", "sample": 1, "mut": None, "lay": ["t"], "link": False},
        {"op": "ge_scalar", "sample": 1, "mut": None, "lay": [None], "link": True}]),
    ("renorm_gradient_of_a_nan_slice", [
        {"op": "F.tanh", "sample": 1, "mut": None, "lay": None, "link": False},
        {"op": "atanh", "sample": 6, "mut": None, "lay": [None], "link": True},
        {"op": "renorm", "sample": 0, "mut": None, "lay": [None], "link": True}]),
    ("bilinear_empty_batch_and_outputs", [
        {"op": "bilinear", "sample": 1, "mut": [2, 0], "lay": None, "link": False}]),
    ("grid_sample_nearest_reflection", [
        {"op": "grid_sample", "sample": 6, "mut": None, "lay": [None, None], "link": False}]),
    ("adaptive_avg_pool2d_to_one_of_no_width", [
        {"op": "adaptive_avg_pool2d", "sample": 0, "mut": [7, 0], "lay": [None],
         "link": False}]),
    ("cdist_zero_norm_of_nan", [
        {"op": "std", "sample": 10, "mut": [4, 0], "lay": [None], "link": False},
        {"op": "cdist", "sample": 4, "mut": None, "lay": [None, None], "link": True}]),
    ("nanmean_gradient_of_an_all_nan_slice", [
        {"op": "nanmean", "sample": 4, "mut": [4, 1], "lay": None, "link": False}]),
    ("interpolate_area_keeps_a_nan_in_its_window", [
        {"op": "multilabel_soft_margin_loss", "sample": 1, "mut": [4, 0], "lay": None,
         "link": False},
        {"op": "interpolate_bicubic_area", "sample": 4, "mut": None, "lay": [None],
         "link": True},
        {"op": "F.hardswish", "sample": 3, "mut": None, "lay": [None], "link": True}]),
    ("multi_margin_loss_skips_nan_terms", [
        {"op": "std", "sample": 0, "mut": [3, 0], "lay": [None], "link": False},
        {"op": "multi_margin_loss", "sample": 1, "mut": None, "lay": [None, None, None],
         "link": True}]),
    ("embedding_bag_last_bag_to_the_end", [
        {"op": "embedding_bag", "sample": 3, "mut": [3, 2], "lay": None, "link": False}]),
    ("adaptive_avg_pool3d_nan_gradient_stays_in_its_windows", [
        {"op": "adaptive_avg_pool3d", "sample": 2, "mut": None, "lay": [None], "link": False},
        {"op": "erfinv", "sample": 5, "mut": None, "lay": [None], "link": True}]),
    ("embedding_bag_no_offsets_no_columns", [
        {"op": "embedding_bag", "sample": 1, "mut": [3, 0], "lay": [None, None, None],
         "link": False}]),
]


@pytest.fixture(scope="module")
def diff_worker() -> Iterator[Worker]:
    """Programs run in a child process, as in the fuzz run: a hang or a crash fails the test
    with a reason instead of stopping the suite."""
    w = Worker([sys.executable, dfz.__file__, "--worker"])
    yield w
    w.close()


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("name,steps", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_program_agrees_with_reference(diff_worker: Worker, name: str, steps: list,
                                       dev: str) -> None:
    prog = dfz.make_program(0, dev, dtype="float64")
    prog["steps"] = steps
    out = dfz.run_isolated(diff_worker, prog, 300)
    assert out["kind"] in ("ok", "both_raise"), f"{out}\n{dfz.describe(prog)}"
