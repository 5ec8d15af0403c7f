"""Gradients of several slices of one tensor meet in one buffer (the engine's ``scatters``
path): the same values as summing zero-padded gradients, checked against numpy references,
with overlapping and integer indices, the base also used directly, hooks, retain_graph and
create_graph."""

from __future__ import annotations

import numpy as np
import pytest

import lucid


def _x(shape=(4, 6), seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("device", ["cpu", "numpy"])
def test_split_chunks_and_the_base_itself(device) -> None:
    xv = _x()
    x = lucid.tensor(xv, device=device, requires_grad=True)
    y = x * 2.0
    a, b, c = y.split(2, dim=1)
    loss = (a * 1.0).sum() + (b * 3.0).sum() + (c * c).sum() + (y * y).sum()
    loss.backward()
    w = np.concatenate([np.ones((4, 2)), 3 * np.ones((4, 2)), 2 * (2 * xv[:, 4:])], 1)
    want = 2.0 * (w + 2 * (2 * xv))
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


def test_overlapping_and_integer_indices() -> None:
    xv = _x((5,))
    x = lucid.tensor(xv, requires_grad=True)
    y = x * 1.0
    loss = (y[0:3] * 2.0).sum() + (y[1:4] * 3.0).sum() + y[2] * 7.0 + y[-1] * y[-1]
    loss.backward()
    want = np.array([2.0, 5.0, 12.0, 3.0, 2 * xv[4]])
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


def test_slices_as_roots_and_with_hooks() -> None:
    xv = _x()
    x = lucid.tensor(xv, requires_grad=True)
    y = x + 0.0
    q, k = y[:, :3], y[:, 3:]
    k.register_hook(lambda g: g * 10.0)
    lucid.autograd.backward([q, k], [lucid.ones(4, 3), lucid.ones(4, 3)])
    want = np.concatenate([np.ones((4, 3)), 10 * np.ones((4, 3))], 1)
    np.testing.assert_allclose(x.grad.numpy(), want)


def test_retain_graph_gives_the_same_gradient_twice() -> None:
    x = lucid.tensor(_x(), requires_grad=True)
    y = x * 3.0
    a, b = y.chunk(2, dim=0)
    loss = (a * a).sum() + b.sum()
    loss.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first, rtol=1e-12)


def test_create_graph_through_slices() -> None:
    xv = _x((3, 4))
    x = lucid.tensor(xv, requires_grad=True)
    a, b = (x * 1.0).split(2, dim=1)
    loss = (a ** 3).sum() + (b ** 2).sum()
    (g,) = lucid.autograd.grad(loss, x, create_graph=True)
    want = np.concatenate([3 * xv[:, :2] ** 2, 2 * xv[:, 2:]], 1)
    np.testing.assert_allclose(g.detach().numpy(), want, rtol=1e-12)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.concatenate(
        [6 * xv[:, :2], 2 * np.ones((3, 2))], 1), rtol=1e-12)


def test_matches_torch_on_attention_style_views() -> None:
    torch = pytest.importorskip("torch")
    xv = _x((2, 5, 3, 4), seed=1).astype(np.float32)
    outs = []
    for m in (lucid, torch):
        x = m.tensor(xv, requires_grad=True)
        y = x * 1.5
        q, k, v = y[:, :, 0], y[:, :, 1], y[:, :, 2]
        att = (q @ k.transpose(1, 2)).softmax(-1) @ v
        (att * att).sum().backward()
        outs.append(x.grad.detach().numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("used", [(0,), (1,), (2,), (0, 2), (2, 0), (1, 2), (0, 1, 2)])
def test_split_slices_leave_zeros_where_unused(used) -> None:
    # slices covering ranges of one axis are written into an unfilled buffer: what no used
    # slice covered must come back zero (the buffer held garbage before)
    rng = np.random.default_rng(1)
    xv = rng.standard_normal((3, 9))
    scales = rng.standard_normal((3, 3, 3))
    for _ in range(3):  # reused heap memory, not fresh zeros, under the buffer
        x = lucid.tensor(xv, requires_grad=True)
        parts = (x * 1.5).split(3, dim=1)
        loss = sum((parts[i] * lucid.tensor(scales[i])).sum() for i in used)
        loss.backward()
        want = np.zeros((3, 9))
        for i in used:
            want[:, 3 * i:3 * i + 3] = 1.5 * scales[i]
        np.testing.assert_array_equal(x.grad.numpy(), want)


def test_split_ranges_then_a_slice_across_them_and_the_base() -> None:
    xv = _x((6, 4))
    x = lucid.tensor(xv, requires_grad=True)
    y = x * 1.0
    a, b = y[0:2], y[4:6]  # rows 2:4 written by no range slice
    c = y[:, 1:3]  # another axis: the gaps are zeroed, then this adds
    loss = (a * 2.0).sum() + (b * 3.0).sum() + (c * 5.0).sum() + (y * y).sum()
    loss.backward()
    want = 2 * xv
    want[0:2] += 2.0
    want[4:6] += 3.0
    want[:, 1:3] += 5.0
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


def test_split_overlapping_ranges_add() -> None:
    xv = _x((8,))
    x = lucid.tensor(xv, requires_grad=True)
    y = x * 1.0
    loss = (y[0:4] * 2.0).sum() + (y[6:8] * 4.0).sum() + (y[2:7] * 3.0).sum()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2, 2, 5, 5, 3, 3, 7, 4], rtol=1e-12)


def test_split_gradient_seen_by_a_hook_is_filled() -> None:
    x = lucid.tensor(_x((2, 6)), requires_grad=True)
    y = x * 1.0
    seen = []
    y.register_hook(lambda g: seen.append(g.numpy().copy()))
    a, _, c = y.chunk(3, dim=1)
    (a.sum() + (c * 2.0).sum()).backward()
    want = np.array([[1, 1, 0, 0, 2, 2]] * 2, dtype=float)
    np.testing.assert_array_equal(seen[0], want)
    np.testing.assert_array_equal(x.grad.numpy(), want)
