"""Core op benchmarks: lucid vs numpy vs torch on identical float32 inputs.

Run: python -m pytest benchmarks/test_core.py --benchmark-enable --benchmark-only
     --benchmark-group-by=group
"""

from __future__ import annotations

import numpy as np
import pytest

import lucid

rng = np.random.default_rng(0)
A = rng.standard_normal((256, 784), dtype=np.float32)
B = rng.standard_normal((784, 512), dtype=np.float32)
R = rng.standard_normal((256, 4096), dtype=np.float32)
S1 = rng.standard_normal(10, dtype=np.float32)
S2 = rng.standard_normal(10, dtype=np.float32)


# ---- matmul 256x784 @ 784x512 ------------------------------------------------------------------

@pytest.mark.benchmark(group="matmul 256x784@784x512")
def test_matmul_lucid(benchmark):
    a, b = lucid.tensor(A), lucid.tensor(B)
    a @ b
    out = benchmark(lambda: a @ b)
    np.testing.assert_allclose(out.numpy(), A @ B, rtol=1e-4, atol=1e-3)


@pytest.mark.benchmark(group="matmul 256x784@784x512")
def test_matmul_numpy(benchmark):
    benchmark(lambda: A @ B)


@pytest.mark.benchmark(group="matmul 256x784@784x512")
def test_matmul_torch(benchmark, torch_or_skip):
    a, b = torch_or_skip.from_numpy(A), torch_or_skip.from_numpy(B)
    benchmark(lambda: a @ b)


# ---- axis reductions over (256, 4096) ------------------------------------------------------------

@pytest.mark.parametrize("op", ["sum", "mean", "max"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_reduce_lucid(benchmark, op, axis):
    benchmark.group = f"{op} (256,4096) axis={axis}"
    x = lucid.tensor(R)
    f = getattr(x, op)
    run = (lambda: lucid.amax(x, axis)) if op == "max" else (lambda: f(axis))
    run()  # compile or load the kernel outside the timed rounds
    out = benchmark(run)
    np.testing.assert_allclose(out.numpy(), getattr(np, op)(R, axis=axis), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("op", ["sum", "mean", "max"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_reduce_numpy(benchmark, op, axis):
    benchmark.group = f"{op} (256,4096) axis={axis}"
    f = getattr(np, op)
    benchmark(lambda: f(R, axis=axis))


@pytest.mark.parametrize("op", ["sum", "mean", "max"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_reduce_torch(benchmark, op, axis, torch_or_skip):
    benchmark.group = f"{op} (256,4096) axis={axis}"
    x = torch_or_skip.from_numpy(R)
    if op == "max":
        benchmark(lambda: torch_or_skip.amax(x, axis))
    else:
        f = getattr(x, op)
        benchmark(lambda: f(axis))


# ---- per-op overhead: a tiny a + b --------------------------------------------------------------

@pytest.mark.parametrize("grad", [False, True], ids=["nograd", "grad"])
def test_tiny_add_lucid(benchmark, grad):
    benchmark.group = f"tiny add (10,) requires_grad={grad}"
    a = lucid.tensor(S1, requires_grad=grad)
    b = lucid.tensor(S2, requires_grad=grad)
    out = benchmark(lambda: a + b)
    assert out.requires_grad == grad


@pytest.mark.parametrize("grad", [False, True], ids=["nograd", "grad"])
def test_tiny_add_numpy(benchmark, grad):
    benchmark.group = f"tiny add (10,) requires_grad={grad}"
    benchmark(lambda: S1 + S2)


@pytest.mark.parametrize("grad", [False, True], ids=["nograd", "grad"])
def test_tiny_add_torch(benchmark, grad, torch_or_skip):
    benchmark.group = f"tiny add (10,) requires_grad={grad}"
    a = torch_or_skip.tensor(S1, requires_grad=grad)
    b = torch_or_skip.tensor(S2, requires_grad=grad)
    benchmark(lambda: a + b)


# ---- small graph: (x*y + x).sum().backward() ----------------------------------------------------

@pytest.mark.benchmark(group="(x*y+x).sum().backward() (10,)")
def test_small_backward_lucid(benchmark):
    x = lucid.tensor(S1, requires_grad=True)
    y = lucid.tensor(S2, requires_grad=True)
    benchmark(lambda: (x * y + x).sum().backward())


@pytest.mark.benchmark(group="(x*y+x).sum().backward() (10,)")
def test_small_backward_torch(benchmark, torch_or_skip):
    x = torch_or_skip.tensor(S1, requires_grad=True)
    y = torch_or_skip.tensor(S2, requires_grad=True)
    benchmark(lambda: (x * y + x).sum().backward())


# ---- a 100-op chain, forward + backward ---------------------------------------------------------

def _chain(x, w):
    h = x
    for i in range(25):  # 4 ops per step -> 100 ops
        h = (h * w).tanh() + x - 0.01 * i
    return h.sum()


@pytest.mark.benchmark(group="100-op chain fwd+bwd (64,64)")
def test_chain_lucid(benchmark):
    x = lucid.tensor(R[:64, :64], requires_grad=True)
    w = lucid.tensor(R[64:128, :64], requires_grad=True)

    def run():
        x.grad = w.grad = None
        _chain(x, w).backward()

    benchmark(run)


@pytest.mark.benchmark(group="100-op chain fwd+bwd (64,64)")
def test_chain_numpy(benchmark):
    """The same chain by hand in numpy, forward and backward (the no-framework floor)."""
    x, w = R[:64, :64], R[64:128, :64]

    def run():
        hs, ts = [x], []
        h = x
        for i in range(25):
            t = np.tanh(h * w)
            ts.append(t)
            h = t + x - np.float32(0.01 * i)
            hs.append(h)
        gh = np.ones_like(h)
        gx = np.zeros_like(x)
        gw = np.zeros_like(w)
        for i in reversed(range(25)):
            gx += gh
            gt = gh * (1 - ts[i] * ts[i])
            gw += (gt * hs[i])
            gh = gt * w
        gx += gh
        return gx, gw

    benchmark(run)


@pytest.mark.benchmark(group="100-op chain fwd+bwd (64,64)")
def test_chain_torch(benchmark, torch_or_skip):
    x = torch_or_skip.tensor(R[:64, :64], requires_grad=True)
    w = torch_or_skip.tensor(R[64:128, :64], requires_grad=True)

    def run():
        x.grad = w.grad = None
        _chain(x, w).backward()

    benchmark(run)
