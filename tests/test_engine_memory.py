"""Gradient buffers: adopted when private, never shared between leaves or with callers;
the process malloc policy."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import lucid


def test_leaves_sharing_one_upstream_gradient_get_separate_buffers():
    x = lucid.ones(3, requires_grad=True)
    y = lucid.ones(3, requires_grad=True)
    (x + y).sum().backward()
    x.grad.add_(10)
    assert y.grad.tolist() == [1.0, 1.0, 1.0]
    assert not np.shares_memory(x.grad.numpy(), y.grad.numpy())


def test_caller_gradient_is_copied():
    x = lucid.ones(3, requires_grad=True)
    g = lucid.tensor([1.0, 2.0, 3.0])
    x.backward(g)
    g.add_(1)
    assert x.grad.tolist() == [1.0, 2.0, 3.0]
    y = lucid.ones(3, requires_grad=True)
    (y * 1.0).backward(g)
    g.add_(1)
    assert y.grad.tolist() == [2.0, 3.0, 4.0]


def test_views_and_broadcasts_are_copied_and_accumulation_is_exact():
    w = lucid.ones(2, 3, requires_grad=True)
    b = lucid.ones(3, requires_grad=True)
    for _ in range(3):
        ((w.T * 2).T + b).sum().backward()  # transposed view and broadcast gradients
    assert w.grad.tolist() == [[6.0] * 3] * 2
    assert b.grad.tolist() == [6.0] * 3
    assert w.grad.numpy().flags.writeable and w.grad.numpy().base is None


def test_adopted_gradient_is_not_a_saved_array():
    a = lucid.tensor([1.0, 2.0], requires_grad=True)
    c = lucid.tensor([3.0, 4.0], requires_grad=True)
    out = a * c
    out.sum().backward(retain_graph=True)
    a.grad.zero_()
    out.sum().backward()
    assert a.grad.tolist() == [3.0, 4.0] and c.grad.tolist() == [2.0, 4.0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc policy")
def test_malloc_policy_applied_and_optional(monkeypatch):
    from lucid import _malloc

    st = _malloc.configure()
    assert st.get("applied") is True and st["mmap_threshold"] == 64 << 20
    import subprocess

    r = subprocess.run([sys.executable, "-c", "import lucid; print(lucid._malloc._state)"],
                       capture_output=True, text=True, env={"LUCID_MALLOC_POLICY": "0",
                                                            "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0 and "'applied': False" in r.stdout


def test_grad_mode_is_per_thread():
    import threading

    a = lucid.ones(2, requires_grad=True)
    started, release = threading.Event(), threading.Event()
    seen = {}

    def other():
        with lucid.no_grad():
            started.set()
            release.wait(5)
            seen["inside"] = (a * 2).requires_grad

    t = threading.Thread(target=other)
    t.start()
    started.wait(5)
    assert (a * 2).requires_grad  # the other thread's no_grad does not reach here
    release.set()
    t.join()
    assert seen["inside"] is False
    box = {}
    th = threading.Thread(target=lambda: box.setdefault("on", lucid.is_grad_enabled()))
    with lucid.no_grad():
        th.start()
        th.join()
    assert box["on"] is True  # new threads start with grad enabled, as in PyTorch


def test_parallel_kernels_from_several_threads():
    from concurrent.futures import ThreadPoolExecutor

    import lucid.nn.functional as F

    x = lucid.randn(1 << 20)
    y = lucid.randn(512, 1024, requires_grad=True)

    def work(_):
        s = x.sum().item()
        F.layer_norm(y, (1024,)).sum().backward()
        return s

    with ThreadPoolExecutor(4) as ex:
        sums = list(ex.map(work, range(8)))
    assert len(set(round(v, 2) for v in sums)) == 1


def test_whole_views_of_fresh_arrays_are_adopted_shared_ones_copied():
    from lucid.backend.numpy_ref import NumpyBackend

    a = np.zeros((4, 5))
    v = a.reshape(20)
    assert not NumpyBackend.is_private(v)  # ``a`` still refers to the memory
    del a
    assert NumpyBackend.is_private(v)
    w = v[:3]
    assert not NumpyBackend.is_private(v) and not NumpyBackend.is_private(w)
    del w
    assert NumpyBackend.is_private(v)
    assert not NumpyBackend.is_private(np.zeros(10)[2:])  # part of a buffer: copied

    kept = []

    class Twice(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            buf = np.full((3, 2), 2.0)
            kept.append(buf)  # the caller keeps the buffer the gradient views
            return lucid.from_numpy(buf.reshape(6))

    x = lucid.ones(6, requires_grad=True)
    Twice.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0] * 6
    kept[0][:] = 7.0
    assert x.grad.tolist() == [2.0] * 6

    emb = lucid.nn.Embedding(10, 4)  # its gradient: a reshape of the kernel's fresh table
    emb(lucid.tensor([1, 1, 3])).sum().backward()
    want = np.zeros((10, 4))
    want[1], want[3] = 2.0, 1.0
    np.testing.assert_array_equal(emb.weight.grad.numpy(), want)


def test_a_leaf_used_at_every_step_sums_its_gradients_in_place_correctly():
    """A weight shared by every step of a loop gathers one gradient a step: the sum, built
    in an array the pass owns, matches numpy's, and no gradient handed to another place
    (a slice of cat's upstream gradient, a retained gradient) is written into."""
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((4, 3))
    xs = [rng.standard_normal((2, 4)) for _ in range(5)]
    w = lucid.tensor(w0, requires_grad=True)
    h = lucid.zeros(2, 3)
    for x in xs:
        h = h + lucid.tensor(x) @ w
    h.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), sum(x.T @ np.ones((2, 3)) for x in xs))

    v = lucid.tensor(w0, requires_grad=True)
    c = lucid.cat([v, v, v * 2], 0)  # v's first two gradients are views of c's gradient
    c.retain_grad()
    g = rng.standard_normal((12, 3))
    c.backward(lucid.tensor(g))
    np.testing.assert_allclose(v.grad.numpy(), g[:4] + g[4:8] + 2 * g[8:])
    np.testing.assert_array_equal(c.grad.numpy(), g)
