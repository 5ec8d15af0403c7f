"""Convolution and pooling: lucid vs plain numpy vs torch, float32, forward + backward.

Run: python -m pytest benchmarks/test_conv_pool.py --benchmark-enable --benchmark-only
     --benchmark-group-by=group

The numpy baselines are written here as a careful numpy user would: im2col through a strided
window view, one large GEMM per pass, col2im as one strided add per kernel offset; max pooling
through a (.., 2, .., 2) reshape with argmax kept for the backward pass.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import lucid
import lucid.nn.functional as F

rng = np.random.default_rng(0)

CONV_SHAPES = {
    "N=64 16->32 28x28 k3 p1": (64, 16, 32, 28),
    "N=64 1->16 28x28 k3 p1 (first layer)": (64, 1, 16, 28),
}
CONV_DATA = {
    name: (rng.standard_normal((n, c, h, h), dtype=np.float32),
           (rng.standard_normal((oc, c, 3, 3), dtype=np.float32) * 0.1),
           rng.standard_normal(oc, dtype=np.float32),
           rng.standard_normal((n, oc, h, h), dtype=np.float32))
    for name, (n, c, oc, h) in CONV_SHAPES.items()
}
POOL_X = rng.standard_normal((64, 32, 28, 28), dtype=np.float32)
POOL_G = rng.standard_normal((64, 32, 14, 14), dtype=np.float32)


# ---- plain numpy baselines ------------------------------------------------------------------


def np_conv_fwd(x, w, b):
    """3x3, stride 1, padding 1: im2col as a window view, one GEMM."""
    n, c, h, wd = x.shape
    oc = w.shape[0]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = sliding_window_view(xp, (3, 3), axis=(2, 3))          # (N, C, H, W, 3, 3) view
    cols = cols.transpose(0, 2, 3, 1, 4, 5).reshape(n * h * wd, c * 9)
    y = cols @ w.reshape(oc, -1).T + b                             # (N*H*W, OC)
    return y.reshape(n, h, wd, oc).transpose(0, 3, 1, 2), cols


def np_conv_bwd(g, x_shape, w, cols, need_input=True):
    n, c, h, wd = x_shape
    oc = w.shape[0]
    g2 = g.transpose(0, 2, 3, 1).reshape(-1, oc)                 # (N*H*W, OC)
    gw = (g2.T @ cols).reshape(w.shape)
    gb = g2.sum(0)
    gx = None
    if need_input:
        dcols = (g2 @ w.reshape(oc, -1)).reshape(n, h, wd, c, 3, 3)
        gxp = np.zeros((n, c, h + 2, wd + 2), np.float32)
        for i in range(3):
            for j in range(3):
                gxp[:, :, i:i + h, j:j + wd] += dcols[..., i, j].transpose(0, 3, 1, 2)
        gx = gxp[:, :, 1:-1, 1:-1]
    return gx, gw, gb


def np_max_pool2(x):
    n, c, h, w = x.shape
    x6 = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5)
    x4 = x6.reshape(n, c, h // 2, w // 2, 4)
    idx = x4.argmax(-1)
    return np.take_along_axis(x4, idx[..., None], -1)[..., 0], idx


def np_max_pool2_bwd(g, idx, shape):
    n, c, h, w = shape
    g4 = np.zeros((*g.shape, 4), g.dtype)
    np.put_along_axis(g4, idx[..., None], g[..., None], -1)
    return g4.reshape(n, c, h // 2, w // 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(shape)


# ---- conv2d forward + backward --------------------------------------------------------------


@pytest.mark.parametrize("shape", list(CONV_SHAPES))
def test_conv2d_lucid(benchmark, shape):
    benchmark.group = f"conv2d fwd+bwd {shape}"
    x_np, w_np, b_np, g_np = CONV_DATA[shape]
    first = CONV_SHAPES[shape][1] == 1
    x = lucid.tensor(x_np, requires_grad=not first)
    w = lucid.tensor(w_np, requires_grad=True)
    b = lucid.tensor(b_np, requires_grad=True)
    g = lucid.tensor(g_np)

    def step():
        x.grad = w.grad = b.grad = None
        F.conv2d(x, w, b, padding=1).backward(g)

    benchmark(step)
    y, cols = np_conv_fwd(x_np, w_np, b_np)
    gx, gw, gb = np_conv_bwd(g_np, x_np.shape, w_np, cols, not first)
    np.testing.assert_allclose(F.conv2d(x, w, b, padding=1).detach().numpy(), y, rtol=1e-3,
                               atol=1e-3)
    np.testing.assert_allclose(w.grad.numpy(), gw, rtol=1e-3, atol=1e-2)
    np.testing.assert_allclose(b.grad.numpy(), gb, rtol=1e-3, atol=1e-2)
    if not first:
        np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("shape", list(CONV_SHAPES))
def test_conv2d_numpy(benchmark, shape):
    benchmark.group = f"conv2d fwd+bwd {shape}"
    x_np, w_np, b_np, g_np = CONV_DATA[shape]
    first = CONV_SHAPES[shape][1] == 1

    def step():
        _, cols = np_conv_fwd(x_np, w_np, b_np)
        np_conv_bwd(g_np, x_np.shape, w_np, cols, not first)

    benchmark(step)


@pytest.mark.parametrize("shape", list(CONV_SHAPES))
def test_conv2d_torch(benchmark, shape, torch_or_skip):
    torch = torch_or_skip
    benchmark.group = f"conv2d fwd+bwd {shape}"
    x_np, w_np, b_np, g_np = CONV_DATA[shape]
    first = CONV_SHAPES[shape][1] == 1
    x = torch.tensor(x_np, requires_grad=not first)
    w = torch.tensor(w_np, requires_grad=True)
    b = torch.tensor(b_np, requires_grad=True)
    g = torch.tensor(g_np)

    def step():
        x.grad = w.grad = b.grad = None
        torch.nn.functional.conv2d(x, w, b, padding=1).backward(g)

    benchmark(step)


@pytest.mark.parametrize("impl", ["lucid", "numpy", "torch"])
def test_conv2d_forward(benchmark, impl, request):
    name = "N=64 16->32 28x28 k3 p1"
    benchmark.group = f"conv2d forward {name}"
    x_np, w_np, b_np, _ = CONV_DATA[name]
    if impl == "lucid":
        x, w, b = (lucid.tensor(a) for a in (x_np, w_np, b_np))
        benchmark(lambda: F.conv2d(x, w, b, padding=1))
    elif impl == "numpy":
        benchmark(lambda: np.ascontiguousarray(np_conv_fwd(x_np, w_np, b_np)[0]))
    else:
        torch = request.getfixturevalue("torch_or_skip")
        x, w, b = (torch.tensor(a) for a in (x_np, w_np, b_np))
        benchmark(lambda: torch.nn.functional.conv2d(x, w, b, padding=1))


# ---- max_pool2d forward + backward ----------------------------------------------------------

POOL_GROUP = "max_pool2d fwd+bwd (64, 32, 28, 28) k2"


def test_max_pool2d_lucid(benchmark):
    benchmark.group = POOL_GROUP
    x = lucid.tensor(POOL_X, requires_grad=True)
    g = lucid.tensor(POOL_G)

    def step():
        x.grad = None
        F.max_pool2d(x, 2).backward(g)

    benchmark(step)
    y, idx = np_max_pool2(POOL_X)
    np.testing.assert_array_equal(F.max_pool2d(x, 2).detach().numpy(), y)
    np.testing.assert_array_equal(x.grad.numpy(), np_max_pool2_bwd(POOL_G, idx, POOL_X.shape))


def test_max_pool2d_numpy(benchmark):
    benchmark.group = POOL_GROUP

    def step():
        _, idx = np_max_pool2(POOL_X)
        np_max_pool2_bwd(POOL_G, idx, POOL_X.shape)

    benchmark(step)


def test_max_pool2d_torch(benchmark, torch_or_skip):
    torch = torch_or_skip
    benchmark.group = POOL_GROUP
    x = torch.tensor(POOL_X, requires_grad=True)
    g = torch.tensor(POOL_G)

    def step():
        x.grad = None
        torch.nn.functional.max_pool2d(x, 2).backward(g)

    benchmark(step)


AVG_GROUP = "avg_pool2d fwd+bwd (64, 32, 28, 28) k2"


@pytest.mark.parametrize("impl", ["lucid", "numpy", "torch"])
def test_avg_pool2d(benchmark, impl, request):
    benchmark.group = AVG_GROUP
    if impl == "numpy":
        def step():
            POOL_X.reshape(64, 32, 14, 2, 14, 2).mean((3, 5))
            np.repeat(np.repeat(POOL_G * 0.25, 2, 2), 2, 3)

        benchmark(step)
        return
    fw = lucid if impl == "lucid" else request.getfixturevalue("torch_or_skip")
    x = fw.tensor(POOL_X, requires_grad=True)
    g = fw.tensor(POOL_G)
    avg = F.avg_pool2d if impl == "lucid" else fw.nn.functional.avg_pool2d

    def step():
        x.grad = None
        avg(x, 2).backward(g)

    benchmark(step)
