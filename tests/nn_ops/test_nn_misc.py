"""dropout, embedding, attention and interpolation beyond the op table (``op_db_nn.py`` holds
their references, gradchecks, parity and errors): dropout's scaling, seeding, edges and channel
forms, embedding's max_norm and scale_grad_by_freq, seeded attention dropout, grid_sample in
half dtypes, one_hot's layout, and interpolation modes and scale tuples against torch."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as M
from lucid.autograd import gradcheck


def _t(a, backend, rg=False):
    return lucid.tensor(np.asarray(a), device=backend, requires_grad=rg)


# ---- dropout ------------------------------------------------------------------------------------


def test_dropout_scale_seed_and_grad(backend):
    lucid.manual_seed(3)
    x = _t(np.ones((200, 50), np.float32), backend, True)
    y = M.dropout(x, 0.3)
    vals = np.unique(y.detach().numpy())
    np.testing.assert_allclose(vals, [0.0, 1 / 0.7], rtol=1e-6)
    assert abs((y.detach().numpy() == 0).mean() - 0.3) < 0.02
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())
    lucid.manual_seed(3)
    np.testing.assert_array_equal(M.dropout(x, 0.3).detach().numpy(), y.detach().numpy())


def test_dropout_edges(backend):
    x = lucid.randn(4, 5, device=backend)
    assert M.dropout(x, 0.5, training=False) is x
    assert M.dropout(x, 0.0) is x
    assert (M.dropout(x, 1.0).numpy() == 0).all()
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        M.dropout(x, 1.5)


def test_dropout_inplace(backend):
    lucid.manual_seed(0)
    x = lucid.ones(10, 10, device=backend)
    out = M.dropout(x, 0.5, inplace=True)
    assert out is x and x._version == 1 and set(np.unique(x.numpy())) <= {0.0, 2.0}


def test_channel_dropout(backend):
    lucid.manual_seed(1)
    y = M.dropout2d(lucid.ones(6, 8, 3, 3, device=backend), 0.5).numpy().reshape(6, 8, 9)
    assert (y.std(-1) == 0).all() and set(np.unique(y)) == {0.0, 2.0}
    y1 = M.dropout1d(lucid.ones(8, 5, device=backend), 0.5).numpy()
    assert (y1.std(-1) == 0).all()
    y3 = M.dropout3d(lucid.ones(2, 4, 2, 2, 2, device=backend), 0.5).numpy().reshape(2, 4, 8)
    assert (y3.std(-1) == 0).all()
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        M.dropout2d(lucid.ones(2, 3, 4, device=backend), 0.5)
    with pytest.raises(RuntimeError, match="Expected 2D or 3D input"):
        M.dropout1d(lucid.ones(2, 3, 4, 5, device=backend))


# ---- embedding ----------------------------------------------------------------------------------


def test_embedding_options(backend):
    w = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    wt = _t(w.copy(), backend, True)
    M.embedding(_t([0, 1], backend), wt, max_norm=1.0)
    np.testing.assert_allclose(np.linalg.norm(wt.detach().numpy(), axis=1), [1.0, 0.5, 10.0],
                               rtol=1e-6)
    wt = _t(w, backend, True)
    M.embedding(_t([0, 0, 1], backend), wt, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(wt.grad.numpy(), [[1, 1], [1, 1], [0, 0]])
    assert gradcheck(lambda w: M.embedding(_t([[2, 0], [2, 2]], backend), w, padding_idx=1),
                     (_t(w, backend, True),))


# ---- attention ----------------------------------------------------------------------------------


def test_sdpa_dropout_is_seeded(backend):
    q = lucid.randn(2, 4, 8, device=backend)
    lucid.manual_seed(5)
    a = M.scaled_dot_product_attention(q, q, q, dropout_p=0.5).numpy()
    lucid.manual_seed(5)
    b = M.scaled_dot_product_attention(q, q, q, dropout_p=0.5).numpy()
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("offsets", [[0, 2], [0, 2, 4], [0, 3, 3], [0, 1, 2, 6]])
def test_embedding_bag_last_bag_runs_to_the_end(backend, mode, offsets):
    """torch's include_last_offset=True reads the bags from all offsets but the last, and
    the last bag ends at the input's end whatever the last offset holds."""
    idx = np.array([1, 2, 4, 5, 4, 3])
    w = np.random.default_rng(10).standard_normal((6, 3))
    wt = _t(w, backend, True)
    y = M.embedding_bag(_t(idx, backend), wt, _t(offsets, backend), mode=mode,
                        include_last_offset=True, padding_idx=4)
    bounds = [*offsets[:-1], len(idx)]
    ref = []
    for s, e in zip(bounds[:-1], bounds[1:]):
        rows = w[[i for i in idx[s:e] if i != 4]]
        ref.append(np.zeros(3) if not len(rows) else getattr(rows, mode)(0))
    np.testing.assert_allclose(y.detach().numpy(), np.stack(ref), rtol=1e-12)
    y.sum().backward()
    assert wt.grad.shape == (6, 3) and not wt.grad.numpy()[[0, 4]].any()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_embedding_bag_keeps_a_nan_row_in_its_bag(backend):
    """Bags reduce as torch's segment loops: a NaN row reaches only the bags that hold it,
    and in max mode only as a bag's first row (a later NaN is never greater)."""
    w = np.arange(18.0).reshape(6, 3)
    w[2, 1] = np.nan
    idx, offs = _t([1, 2, 3, 2, 1, 4], backend), _t([0, 2, 4], backend)
    for mode in ("sum", "mean", "max"):
        wt = _t(w, backend, True)
        y = M.embedding_bag(idx, wt, offs, mode=mode)
        bags = [[1, 2], [3, 2], [1, 4]]
        ref = np.stack([getattr(w[b], mode)(0) for b in bags])
        if mode == "max":  # a later NaN is dropped
            ref[0, 1], ref[1, 1] = w[1, 1], w[3, 1]
        np.testing.assert_array_equal(y.detach().numpy(), ref)
        g = np.ones((3, 3))
        g[2, 0] = np.nan
        y.backward(_t(g, backend))
        # bag 2's NaN gradient reaches its rows (1 and 4; in max mode its maximum, 4) only
        nan_at = np.argwhere(np.isnan(wt.grad.numpy())).tolist()
        assert nan_at == ([[4, 0]] if mode == "max" else [[1, 0], [4, 0]])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize(("idx", "offsets", "dim", "shape"), [
    ([1, 2, 4, 5], [], 2, (0, 2)), ([], [0, 0], 2, (2, 2)), ([1, 2, 4], [0, 3], 0, (2, 0)),
    ([], [0], 0, (1, 0))])
def test_embedding_bag_without_bags_rows_or_columns(backend, mode, idx, offsets, dim, shape):
    """No offsets (no bags), an empty input (every bag empty: zeros), no embedding columns:
    zero-size results with the weight's zero gradient, as torch's."""
    w = _t(np.arange(6.0 * dim).reshape(6, dim), backend, True)
    y = M.embedding_bag(_t(np.asarray(idx, np.int64), backend), w,
                        _t(np.asarray(offsets, np.int64), backend), mode=mode)
    assert tuple(y.shape) == shape and not y.detach().numpy().any()
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.zeros((6, dim)))


# ---- grid_sample and one_hot ----------------------------------------------------------------


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "reflection"])
def test_grid_sample_keeps_half_dtypes(backend, half, mode, padding_mode):
    """grid_sample answers in the input's dtype for every mode (torch's), the nearest mode's
    in-bounds mask included; at pixel centres every mode reads the pixel itself."""
    d = getattr(lucid, half)
    x = np.arange(9.0).reshape(1, 1, 3, 3) / 4
    grid = np.array([[[[-1.0, -1.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]]])
    y = M.grid_sample(_t(x, backend).to(d), _t(grid, backend).to(d), mode=mode,
                      padding_mode=padding_mode, align_corners=True)
    assert y.dtype is d
    np.testing.assert_allclose(y.float().numpy(), [[[[0.0, 1.0], [1.25, 1.75]]]], atol=1e-2)


def test_one_hot_of_a_transposed_index_is_row_major(backend):
    i = _t(np.array([[0, 2], [1, 1]]).T.copy(), backend).t()  # stored transposed
    y = M.one_hot(i, 3)
    assert y.is_contiguous()
    np.testing.assert_array_equal(y.view(-1).numpy(), np.eye(3, dtype=np.int64)[
        [[0, 2], [1, 1]]].reshape(-1))


# ---- interpolate at non-finite points -----------------------------------------------------------


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(("shape", "size"), [((1, 2, 7), 3), ((2, 1, 5, 7), (3, 4)),
                                             ((1, 2, 4, 5, 6), (2, 3, 4)), ((2, 1, 5, 7), 1)])
def test_interpolate_area_is_the_adaptive_average_pool(backend, shape, size):
    """torch's "area" mode is the adaptive average pool: a NaN reaches only the outputs whose
    window holds it (values and gradients)."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape)
    x.flat[3] = np.nan
    pool = getattr(M, f"adaptive_avg_pool{len(shape) - 2}d")
    a, b = _t(x, backend, True), _t(x, backend, True)
    y = M.interpolate(a, size=size, mode="area")
    ref = pool(b, size if len(shape) > 3 or isinstance(size, int) else size[0])
    np.testing.assert_array_equal(y.detach().numpy(), ref.detach().numpy())
    assert 0 < np.isnan(y.detach().numpy()).sum() < y.numel() or y.numel() == 2
    g = rng.standard_normal(tuple(y.shape))
    g.flat[0] = np.nan
    y.backward(_t(g, backend))
    ref.backward(_t(g, backend))
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    assert not np.isnan(a.grad.numpy()).all()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("align", [False, True])
def test_linear_interpolation_of_infinities(backend, align):
    """``w0 * a + w1 * b`` with both taps on the pixel itself where the size is unchanged
    (torch's): a non-finite pixel makes its own output NaN and no other. Resized, an output
    on an infinite pixel stays infinite (a lerp ``a + w1 (b - a)`` made it NaN), one whose
    0-weight second tap is infinite is NaN."""
    x = np.array([[[1.0, 2.0, np.inf, 3.0, -np.inf, 4.0, np.nan]]])
    y = M.interpolate(_t(x, backend), size=7, mode="linear", align_corners=align).numpy()
    np.testing.assert_array_equal(y, [[[1.0, 2.0, np.nan, 3.0, np.nan, 4.0, np.nan]]])
    up = M.interpolate(_t(x[..., :4], backend), size=7, mode="linear", align_corners=True)
    np.testing.assert_array_equal(up.numpy(), [[[1.0, 1.5, np.nan, np.inf, np.inf, np.inf,
                                                  3.0]]])


# ---- torch parity -------------------------------------------------------------------------------


@pytest.mark.parity
@pytest.mark.parametrize("mode,ac", [("nearest", None), ("nearest-exact", None),
                                     ("bilinear", False), ("bilinear", True)])
@pytest.mark.parametrize("kw", [{"size": (7, 3)}, {"scale_factor": 2},
                                {"scale_factor": (1.5, 0.7)}])
def test_interpolate_parity(torch, backend, mode, ac, kw):
    x = np.random.default_rng(4).standard_normal((2, 3, 4, 5)).astype(np.float32)
    lx, tx = _t(x, backend, True), torch.tensor(x, requires_grad=True)
    y = M.interpolate(lx, mode=mode, align_corners=ac, **kw)
    yt = torch.nn.functional.interpolate(tx, mode=mode, align_corners=ac, **kw)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = np.random.default_rng(5).standard_normal(tuple(yt.shape)).astype(np.float32)
    y.backward(_t(g, backend))
    yt.backward(torch.from_numpy(g))
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)




@pytest.mark.parity
@pytest.mark.parametrize("half", ["float16", "bfloat16"])
@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_grid_sample_half_parity(torch, backend, half, mode):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 2, 3, 3)).astype(np.float32)
    grid = rng.uniform(-1.4, 1.4, (1, 2, 2, 2)).astype(np.float32)
    d, td = getattr(lucid, half), getattr(torch, half)
    y = M.grid_sample(_t(x, backend).to(d), _t(grid, backend).to(d), mode=mode,
                      padding_mode="reflection", align_corners=True)
    yt = torch.nn.functional.grid_sample(torch.tensor(x).to(td), torch.tensor(grid).to(td),
                                         mode=mode, padding_mode="reflection",
                                         align_corners=True)
    assert y.dtype is d and yt.dtype is td
    np.testing.assert_allclose(y.float().numpy(), yt.float().numpy(), rtol=3e-2, atol=3e-2)


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(("mode", "shape", "size", "kw"), [
    ("linear", (2, 3, 7), (7,), {}), ("linear", (2, 3, 7), (12,), {}),
    ("bilinear", (2, 3, 6, 7), (6, 7), {}), ("bilinear", (2, 3, 6, 7), (6, 9), {}),
    ("bilinear", (2, 3, 6, 7), (9, 11), {}), ("trilinear", (1, 2, 3, 6, 7), (3, 6, 9), {}),
    ("trilinear", (1, 2, 3, 6, 7), (5, 2, 7), {}),
    ("area", (2, 3, 6, 7), (4, 5), {}), ("area", (2, 3, 7), (3,), {})])
@pytest.mark.parametrize("align", [False, True])
def test_interpolate_non_finite_parity(torch, backend, mode, shape, size, kw, align):
    if mode == "area" and align:
        pytest.skip("area takes no align_corners")
    rng = np.random.default_rng(8)
    x = rng.standard_normal(shape)
    x.flat[3], x.flat[-5], x.flat[20] = np.nan, np.inf, -np.inf
    ac = None if mode == "area" else align
    lx, tx = _t(x, backend, True), torch.tensor(x, requires_grad=True)
    y = M.interpolate(lx, size=size, mode=mode, align_corners=ac, **kw)
    yt = torch.nn.functional.interpolate(tx, size=size, mode=mode, align_corners=ac, **kw)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = rng.standard_normal(tuple(yt.shape))
    y.backward(_t(g, backend))
    yt.backward(torch.from_numpy(g))
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("size", [(6, 7), (6, 5), (4, 7)])
def test_antialias_leaves_a_dim_of_unchanged_size_alone(torch, backend, mode, size):
    """torch's antialiased resize skips a dim whose size does not change (its identity-like
    weights would turn an infinite pixel's 0-weight neighbour into NaN); the result is a
    new tensor even when nothing changes."""
    x = np.random.default_rng(9).standard_normal((2, 3, 6, 7))
    if size == (6, 7):  # nothing to resize: the values come back as they are
        x[0, 0, 2, 3] = np.inf
    lx = _t(x, backend)
    y = M.interpolate(lx, size=size, mode=mode, antialias=True, align_corners=False)
    yt = torch.nn.functional.interpolate(torch.tensor(x), size=size, mode=mode,
                                         antialias=True, align_corners=False)
    np.testing.assert_allclose(y.numpy(), yt.numpy(), rtol=1e-10, atol=1e-12)
    assert y.is_contiguous()
    if size == (6, 7):
        np.testing.assert_array_equal(y.numpy(), x)
        assert y is not lx and not np.shares_memory(y.numpy(), lx.numpy())
