"""``as_strided`` (a view with explicit element strides), its copy and scatter forms, and
``empty_strided``/``empty_permuted``: torch's values, gradients, aliasing and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid

DEVICES = ("cpu", "numpy", "gpu")
CASES = [((3, 3), (2, 1), 1), ((2, 2), (1, 2), None), ((4,), (0,), 2), ((2, 0, 3), (1, 1, 1), 0),
         ((2, 3), (3, 1), 6)]


def _dev(device: str) -> str:
    if device == "gpu":
        pytest.importorskip("mlx")
    return device


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES)
def test_as_strided_reads_the_positions_and_adds_gradients(device: str, case: tuple) -> None:
    size, stride, offset = case
    x = lucid.arange(12.0, device=_dev(device), requires_grad=True)
    y = lucid.as_strided(x * 1, size, stride, offset)
    pos = (0 if offset is None else offset) + sum(
        np.arange(n).reshape([-1 if d == k else 1 for d in range(len(size))]) * s
        for k, (n, s) in enumerate(zip(size, stride)))
    pos = np.broadcast_to(pos, size)
    np.testing.assert_array_equal(y.detach().numpy(), np.arange(12.0)[pos])
    w = np.arange(1.0, 1 + np.prod(size)).reshape(size)
    (y * lucid.tensor(w, device=device)).sum().backward()
    want = np.zeros(12)
    np.add.at(want, pos.reshape(-1), w.reshape(-1))
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_as_strided_matches_torch(torch: Any) -> None:
    for size, stride, offset in CASES:
        lx, tx = lucid.arange(12.0, requires_grad=True), torch.arange(12.0, requires_grad=True)
        lo, to = lx.as_strided(size, stride, offset), tx.as_strided(size, stride, offset)
        np.testing.assert_array_equal(lo.detach().numpy(), to.detach().numpy())
        lo.sum().backward()
        to.sum().backward()
        np.testing.assert_array_equal(lx.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_as_strided_is_a_view(device: str) -> None:
    z = lucid.arange(6.0, device=_dev(device))
    w = z.as_strided((2, 2), (1, 2))
    w[0, 1] = 100.0
    np.testing.assert_array_equal(z.numpy(), [0, 1, 100, 3, 4, 5])
    c = lucid.as_strided_copy(z, (2,), (1,))
    c.fill_(-1.0)
    assert z[0].item() == 0.0


@pytest.mark.parametrize("device", DEVICES)
def test_as_strided_scatter(device: str) -> None:
    src = lucid.ones(2, 2, device=_dev(device))
    out = lucid.as_strided_scatter(lucid.zeros(6, device=device), src, (2, 2), (1, 2), 1)
    np.testing.assert_array_equal(out.numpy(), [0, 1, 1, 1, 1, 0])


def test_as_strided_refuses_what_it_cannot_read_as_torch() -> None:
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 16"):
        lucid.as_strided(lucid.arange(4.0), (3,), (2,))
    with pytest.raises(RuntimeError, match="Negative strides"):
        lucid.as_strided(lucid.arange(4.0), (2,), (-1,))
    with pytest.raises(RuntimeError, match="not contiguous"):
        lucid.as_strided(lucid.ones(3, 4).t(), (2,), (1,))
    with pytest.raises(RuntimeError, match="storage_offset on a view"):
        lucid.as_strided(lucid.arange(6.0)[2:], (2,), (1,), 1)


def test_empty_strided_and_permuted_give_torchs_strides(torch: Any) -> None:
    for size, stride in (((2, 3, 4), (1, 8, 2)), ((2, 3), (3, 1)), ((2, 3, 4), (12, 1, 3))):
        got = lucid.empty_strided(size, stride)
        assert got.shape == size
        assert got.stride() == torch.empty_strided(size, stride).stride()
    for size, perm in (((2, 3, 4), (2, 0, 1)), ((2, 3, 4, 5), (0, 2, 3, 1))):
        assert lucid.empty_permuted(size, perm).stride() == \
            torch.empty_permuted(size, perm).stride()
