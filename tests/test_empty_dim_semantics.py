"""Ops over a dim of size 0, as torch: ``chunk(n)`` of an empty dim gives ``n`` empty pieces,
``trapezoid`` over no samples is zeros outside the graph (nothing was integrated), a search
in empty sorted rows finds position 0."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from devices import DEVICES

import lucid

CHUNKS = [((5, 0), 2, -1), ((5, 0), 3, 1), ((0,), 2, 0), ((0, 4), 1, 0), ((0, 4), 3, 0),
          ((5,), 2, 0), ((7, 2), 3, 0)]


def _zeros(shape: tuple, device: str, **kw: Any) -> lucid.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lucid.zeros(shape, device=device, **kw)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,chunks,dim", CHUNKS)
def test_chunk(device: str, shape: tuple, chunks: int, dim: int) -> None:
    pieces = lucid.chunk(_zeros(shape, device), chunks, dim)
    n = shape[dim]
    if n == 0:
        want = [shape] * chunks
    else:
        size = -(-n // chunks)
        d = dim % len(shape)
        want = [shape[:d] + (min(size, n - s),) + shape[d + 1:] for s in range(0, n, size)]
    assert [tuple(p.shape) for p in pieces] == want


@pytest.mark.parametrize("shape,chunks,dim", CHUNKS)
def test_chunk_against_torch(torch: Any, shape: tuple, chunks: int, dim: int) -> None:
    a = [tuple(p.shape) for p in lucid.chunk(lucid.zeros(shape), chunks, dim)]
    b = [tuple(p.shape) for p in torch.chunk(torch.zeros(shape), chunks, dim)]
    assert a == b


@pytest.mark.parametrize("device", DEVICES)
def test_chunk_of_an_empty_dim_backward(device: str) -> None:
    x = _zeros((5, 0), device, requires_grad=True)
    a, b = x.chunk(2, 1)
    (a.sum() + b.sum()).backward()
    assert tuple(x.grad.shape) == (5, 0)


@pytest.mark.parametrize("device", DEVICES)
def test_trapezoid_over_no_samples(device: str) -> None:
    y = _zeros((4, 0), device, requires_grad=True)
    for out in (lucid.trapezoid(y), lucid.trapezoid(y, dx=2.0),
                lucid.trapezoid(y, _zeros((0,), device))):
        assert tuple(out.shape) == (4,) and out.tolist() == [0.0] * 4
        assert not out.requires_grad
    assert tuple(lucid.trapezoid(_zeros((0, 3), device), dim=0).shape) == (3,)


def test_trapezoid_against_torch(torch: Any) -> None:
    for m in (lucid, torch):
        y = m.zeros(4, 0, requires_grad=True)
        out = m.trapezoid(y)
        assert tuple(out.shape) == (4,) and not out.requires_grad


@pytest.mark.parametrize("device", DEVICES)
def test_searchsorted_in_empty_rows(device: str) -> None:
    seq = _zeros((2, 0), device)
    for kw, dt in (({}, lucid.int64), ({"out_int32": True}, lucid.int32)):
        out = lucid.searchsorted(seq, lucid.ones(2, 3, device=device), **kw)
        assert out.dtype is dt and out.tolist() == [[0, 0, 0], [0, 0, 0]]
    assert tuple(lucid.searchsorted(seq, _zeros((2, 0), device)).shape) == (2, 0)
    rows = lucid.tensor([[0.0, 1.0], [2.0, 3.0]], device=device)
    assert lucid.searchsorted(rows, lucid.tensor([[0.5, 2], [2.5, 9]], device=device)).tolist() \
        == [[1, 2], [1, 2]]


def test_double_backward_over_an_empty_batch() -> None:
    """max pooling and cross_entropy differentiate twice over a batch of none (torch's
    gradgradcheck passes max_pool2d there and refuses cross_entropy's NaN mean alike)."""
    F = lucid.nn.functional
    for fn, shape in ((lambda t: F.max_pool2d(t, 2), (0, 1, 4, 5)),
                      (lambda t: F.max_pool1d(t, 2), (0, 1, 4))):
        assert lucid.autograd.gradgradcheck(
            fn, [lucid.zeros(*shape, dtype=lucid.float64, requires_grad=True)])
    t = lucid.zeros(0, 3, dtype=lucid.float64, requires_grad=True)
    loss = F.cross_entropy(t, lucid.zeros(0, dtype=lucid.int64))
    (g,) = lucid.autograd.grad(loss, t, create_graph=True)
    assert g.shape == (0, 3) and g.requires_grad


def test_channel_shuffle_is_contiguous_when_it_moves_nothing() -> None:
    x = lucid.randn(2, 4, 3, 3).transpose(2, 3)
    for groups in (1, 2, 4):
        out = lucid.nn.functional.channel_shuffle(x, groups)
        assert out.is_contiguous()
        assert out.view(-1).shape == (72,)
