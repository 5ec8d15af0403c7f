"""Inputs PyTorch rejects are rejected with its message, and the edge cases it accepts give its
result: norms of integer input, negative ``repeat_interleave`` counts, softmax over an empty
dim (and the zero-size reductions around it)."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

DEVICES = ("cpu", "numpy", "gpu")


def _dev(device: str) -> str:
    if device == "gpu":
        pytest.importorskip("mlx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lucid.zeros(1, device="gpu")
    return device


def _norms(lib: object, fn: object, x: object) -> dict[str, Callable]:
    return {
        "batch_norm_train": lambda: fn.batch_norm(x, None, None, training=True),
        "batch_norm_eval": lambda: fn.batch_norm(x, lib.zeros(3), lib.ones(3)),
        "layer_norm": lambda: fn.layer_norm(x, (2,)),
        "group_norm": lambda: fn.group_norm(x, 1),
        "instance_norm": lambda: fn.instance_norm(x),
        "rms_norm": lambda: fn.rms_norm(x, (2,)),
        "layer_norm_bool": lambda: fn.layer_norm(x > 3, (2,)),
    }


NORM_ERRORS = {
    "batch_norm_train": "\"batch_norm\" not implemented for 'Long'",
    "batch_norm_eval": "\"batch_norm\" not implemented for 'Long'",
    "layer_norm": "\"LayerNormKernelImpl\" not implemented for 'Long'",
    "group_norm": "\"GroupNormKernelImpl\" not implemented for 'Long'",
    "instance_norm": "\"batch_norm\" not implemented for 'Long'",
    "rms_norm": "\"rms_norm\" not implemented for 'Long'",
    "layer_norm_bool": "\"LayerNormKernelImpl\" not implemented for 'Bool'",
}


@pytest.mark.parametrize("device", DEVICES)
def test_norms_of_integer_input_raise(device: str) -> None:
    x = lucid.arange(12, device=_dev(device)).view(2, 3, 2)
    cases = _norms(lucid, F, x)
    cases["batch_norm_eval"] = lambda: F.batch_norm(
        x, lucid.zeros(3, device=device), lucid.ones(3, device=device))
    for name, fn in cases.items():
        with pytest.raises(NotImplementedError) as err:
            fn()
        assert str(err.value) == NORM_ERRORS[name], name
    with pytest.raises(RuntimeError, match="^linalg.vector_norm: Expected a floating point or "
                                           "complex tensor as input. Got Long$"):
        F.normalize(x)
    y = F.layer_norm(x.float(), (2,))  # the float path is untouched
    np.testing.assert_allclose(y.numpy(), np.tile([-1.0, 1.0], (2, 3, 1)), atol=1e-4)


def test_rms_norm_shape_message_is_torchs() -> None:
    with pytest.raises(RuntimeError) as err:
        F.rms_norm(lucid.ones(2, 3), (3, 2))
    assert str(err.value) == ("Given normalized_shape=[3, 2], expected input with shape "
                              "[*3, 2], but got input of size[2, 3]")


@pytest.mark.parity
def test_norm_errors_match_torch(torch: object) -> None:
    tx = torch.arange(12).view(2, 3, 2)  # type: ignore[attr-defined]
    theirs = _norms(torch, torch.nn.functional, tx)  # type: ignore[attr-defined]
    ours = _norms(lucid, F, lucid.arange(12).view(2, 3, 2))
    for name in theirs:
        with pytest.raises(NotImplementedError) as t_err:
            theirs[name]()
        with pytest.raises(NotImplementedError) as l_err:
            ours[name]()
        assert str(l_err.value) == str(t_err.value) == NORM_ERRORS[name], name


# ---- repeat_interleave --------------------------------------------------------------------------


def _repeats(lib: object, x: object) -> dict[str, Callable]:
    T = lib.tensor
    return {
        "negative_int": lambda: x.repeat_interleave(-1),
        "negative_entry": lambda: x.repeat_interleave(T([1, -1, 2])),
        "negative_counts_only": lambda: lib.repeat_interleave(T([1, -2])),
        "wrong_length": lambda: x.repeat_interleave(T([1, 2])),
        "wrong_length_dim": lambda: x.view(1, 3).repeat_interleave(T([1, 2]), dim=1),
        "two_dim": lambda: x.repeat_interleave(T([[1, 2, 3]])),
        "output_size": lambda: x.repeat_interleave(T([1, 1, 1]), output_size=2),
    }


REPEAT_ERRORS = {
    "negative_int": "Repeats must be non-negative",
    "negative_entry": "repeats can not be negative",
    "negative_counts_only": "repeats can not be negative",
    "wrong_length": "repeats must have the same size as input along dim, but got "
                    "repeats.size(0) = 2 and input.size(0) = 3",
    "wrong_length_dim": "repeats must have the same size as input along dim, but got "
                        "repeats.size(0) = 2 and input.size(1) = 3",
    "two_dim": "repeats must be 0-dim or 1-dim tensor",
    "output_size": "allocated size does not match required size",
}


def test_repeat_interleave_rejects_negative_and_mismatched_repeats() -> None:
    for name, fn in _repeats(lucid, lucid.arange(3)).items():
        with pytest.raises(RuntimeError) as err:
            fn()
        assert str(err.value) == REPEAT_ERRORS[name], name


@pytest.mark.parametrize("device", DEVICES)
def test_repeat_interleave_values(device: str) -> None:
    x = lucid.tensor([10.0, 20.0, 30.0], device=_dev(device), requires_grad=True)
    r = lucid.tensor([1, 0, 2], device=device)
    y = x.repeat_interleave(r)
    np.testing.assert_array_equal(y.detach().numpy(), [10.0, 30.0, 30.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 2.0])
    np.testing.assert_array_equal(lucid.repeat_interleave(r).numpy(), [0, 2, 2])
    np.testing.assert_array_equal(
        x.detach().repeat_interleave(lucid.tensor([2], device=device)).numpy(),
        [10.0, 10.0, 20.0, 20.0, 30.0, 30.0])
    m = lucid.tensor([[1, 2], [3, 4]], device=device)
    np.testing.assert_array_equal(m.repeat_interleave(2, dim=0).numpy(),
                                  [[1, 2], [1, 2], [3, 4], [3, 4]])
    np.testing.assert_array_equal(m.repeat_interleave(2).numpy(), [1, 1, 2, 2, 3, 3, 4, 4])
    assert m.repeat_interleave(0, dim=1).shape == (2, 0)
    with pytest.raises(RuntimeError, match="^Repeats must be non-negative$"):
        m.repeat_interleave(-1, dim=1)


@pytest.mark.parity
def test_repeat_interleave_errors_match_torch(torch: object) -> None:
    theirs = _repeats(torch, torch.arange(3))  # type: ignore[attr-defined]
    ours = _repeats(lucid, lucid.arange(3))
    for name in theirs:
        with pytest.raises(RuntimeError) as t_err:
            theirs[name]()
        with pytest.raises(RuntimeError) as l_err:
            ours[name]()
        assert str(l_err.value) == str(t_err.value), name


# ---- zero-size dims -----------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_softmax_over_empty_dims_keeps_the_shape(device: str, dim: int) -> None:
    x = lucid.zeros(2, 0, 3, device=_dev(device), requires_grad=True)
    for fn in (F.softmax, F.log_softmax, lambda t, d: t.softmax(d)):
        y = fn(x, dim)
        assert tuple(y.shape) == (2, 0, 3) and y.dtype is lucid.float32
        y.sum().backward()
        assert tuple(x.grad.shape) == (2, 0, 3)
        x.grad = None


@pytest.mark.parametrize("device", DEVICES)
def test_reductions_over_an_empty_dim(device: str) -> None:
    x = lucid.zeros(2, 0, 3, device=_dev(device))
    np.testing.assert_array_equal(x.sum(1).numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(x.prod(1).numpy(), np.ones((2, 3)))
    assert np.isnan(x.mean(1).numpy()).all() and x.mean(1).shape == (2, 3)
    np.testing.assert_array_equal(lucid.logsumexp(x, 1).numpy(), np.full((2, 3), -np.inf))
    np.testing.assert_array_equal(x.norm(dim=1).numpy(), np.zeros((2, 3)))
    assert x.amax(0).shape == (0, 3) and x.cumsum(1).shape == (2, 0, 3)
    for fn, name in ((lambda: x.max(1), "max"), (lambda: x.amax(1), "amax"),
                     (lambda: x.argmax(1), "argmax")):
        with pytest.raises(IndexError, match=rf"^{name}\(\): Expected reduction dim 1 to have "
                                             "non-zero size.$"):
            fn()


@pytest.mark.parity
def test_empty_softmax_matches_torch(torch: object) -> None:
    t = torch.zeros(2, 0, 3)  # type: ignore[attr-defined]
    for dim in (0, 1, 2):
        assert tuple(torch.softmax(t, dim).shape) == tuple(  # type: ignore[attr-defined]
            F.softmax(lucid.zeros(2, 0, 3), dim).shape)
        assert tuple(torch.log_softmax(t, dim).shape) == tuple(  # type: ignore[attr-defined]
            F.log_softmax(lucid.zeros(2, 0, 3), dim).shape)
