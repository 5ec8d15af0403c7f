"""Subgradients at ties and kinks, with the numbers written out (no torch needed): ties in
maximum/minimum split the gradient in halves, full max/min/amax/amin reductions share it evenly
among the tied elements, max/min along a dim send it to the returned index, clamp passes it at
its bounds, abs/relu/sign give 0 at 0. A parity test checks the same table against torch."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid

DEVICES = ("cpu", "numpy", "gpu")
THIRD = 1.0 / 3.0

# name -> (function of the leaves, leaf values, expected gradients of the output's sum)
TIES: dict[str, tuple[Callable, list, list]] = {
    "maximum": (lambda L, a, b: L.maximum(a, b), [[1.0, 2.0, 3.0], [1.0, 1.0, 4.0]],
                [[0.5, 1.0, 0.0], [0.5, 0.0, 1.0]]),
    "minimum": (lambda L, a, b: L.minimum(a, b), [[1.0, 2.0, 3.0], [1.0, 1.0, 4.0]],
                [[0.5, 0.0, 1.0], [0.5, 1.0, 0.0]]),
    "max_of_two": (lambda L, a, b: L.max(a, b), [[1.0, 2.0], [1.0, 3.0]],
                   [[0.5, 0.0], [0.5, 1.0]]),
    "maximum_broadcast": (lambda L, a, b: L.maximum(a, b), [[[1.0, 2.0], [2.0, 1.0]], [1.0]],
                          [[[0.5, 1.0], [1.0, 0.5]], [1.0]]),
    "clamp_at_bounds": (lambda L, a: a.clamp(0.0, 1.0), [[0.0, 0.5, 1.0, -1.0, 2.0]],
                        [[1.0, 1.0, 1.0, 0.0, 0.0]]),
    "clamp_min_at_bound": (lambda L, a: a.clamp(min=1.0), [[1.0, 2.0, 0.0]],
                           [[1.0, 1.0, 0.0]]),
    "clamp_tensor_bounds": (lambda L, a, lo, hi: L.clamp(a, lo, hi),
                            [[0.0, 0.5, 1.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]],
                            [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
    "abs_at_0": (lambda L, a: a.abs(), [[-1.0, 0.0, 2.0]], [[-1.0, 0.0, 1.0]]),
    "relu_at_0": (lambda L, a: L.nn.functional.relu(a), [[-1.0, 0.0, 2.0]], [[0.0, 0.0, 1.0]]),
    "relu6_at_6": (lambda L, a: L.nn.functional.relu6(a), [[6.0, 0.0]], [[0.0, 0.0]]),
    "hardtanh_at_bounds": (lambda L, a: L.nn.functional.hardtanh(a), [[-1.0, 1.0, 0.0]],
                           [[0.0, 0.0, 1.0]]),
    "leaky_relu_at_0": (lambda L, a: L.nn.functional.leaky_relu(a, 0.1), [[0.0]], [[0.1]]),
    "elu_at_0": (lambda L, a: L.nn.functional.elu(a), [[0.0]], [[1.0]]),
    "sign": (lambda L, a: a.sign(), [[-1.0, 0.0, 2.0]], [[0.0, 0.0, 0.0]]),
    "norm_at_0": (lambda L, a: a.norm(), [[0.0, 0.0]], [[0.0, 0.0]]),
    "max_all_ties": (lambda L, a: a.max(), [[1.0, 3.0, 3.0, 2.0]], [[0.0, 0.5, 0.5, 0.0]]),
    "min_all_ties": (lambda L, a: a.min(), [[1.0, 1.0, 3.0]], [[0.5, 0.5, 0.0]]),
    "amax_ties": (lambda L, a: a.amax(), [[1.0, 3.0, 3.0, 2.0]], [[0.0, 0.5, 0.5, 0.0]]),
    "amax_dim_ties": (lambda L, a: a.amax(1), [[[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]],
                      [[[0.0, 0.5, 0.5], [THIRD, THIRD, THIRD]]]),
    "amin_dim_ties": (lambda L, a: a.amin(0), [[[1.0, 3.0], [1.0, 2.0]]],
                      [[[0.5, 0.0], [0.5, 1.0]]]),
    "max_dim_ties_go_to_the_index": (lambda L, a: a.max(1).values,
                                     [[[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]],
                                     [[[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]]),
    "min_dim_ties_go_to_the_index": (lambda L, a: a.min(0).values, [[[1.0, 3.0], [1.0, 2.0]]],
                                     [[[1.0, 0.0], [0.0, 1.0]]]),
    "logsumexp_equal": (lambda L, a: a.logsumexp(0), [[1.0, 1.0]], [[0.5, 0.5]]),
    "prod_one_zero": (lambda L, a: a.prod(), [[0.0, 2.0, 3.0]], [[6.0, 0.0, 0.0]]),
    "prod_two_zeros": (lambda L, a: a.prod(), [[0.0, 0.0, 3.0]], [[0.0, 0.0, 0.0]]),
}


def _grads(L: Any, name: str, make: Callable) -> list[np.ndarray]:
    fn, values, _ = TIES[name]
    leaves = [make(v) for v in values]
    fn(L, *leaves).sum().backward()
    return [np.asarray(x.grad.numpy()) for x in leaves]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(TIES))
def test_gradient_at_ties_and_kinks(device: str, name: str) -> None:
    if device == "gpu":
        pytest.importorskip("mlx")

    def make(v: list) -> lucid.Tensor:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lucid.tensor(v, device=device, requires_grad=True)

    for got, want in zip(_grads(lucid, name, make), TIES[name][2], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=name)


@pytest.mark.parametrize("device", DEVICES)
def test_indices_at_ties_are_the_first(device: str) -> None:
    if device == "gpu":
        pytest.importorskip("mlx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = lucid.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], device=device)
    assert lucid.max(m, 1).indices.tolist() == [1, 0]
    assert lucid.min(m, 1).indices.tolist() == [0, 0]
    assert m.argmax().item() == 1 and m.argmin().item() == 0
    assert m.argmax(1).tolist() == [1, 0]


@pytest.mark.parity
@pytest.mark.parametrize("name", list(TIES))
def test_tie_table_matches_torch(name: str, torch: Any) -> None:
    def make(v: list) -> Any:
        return torch.tensor(v, requires_grad=True)

    for got, want in zip(_grads(torch, name, make), TIES[name][2], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=name)
