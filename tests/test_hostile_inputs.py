"""Careless or hostile arguments get a clear Python error naming the problem (never a raw
numba typing error, a ZeroDivisionError from inside lucid, or a silently empty result)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F


@pytest.mark.parametrize("kw, msg", [
    (dict(scale_factor=0), r"output \(H: 0, W: 0\)"),
    (dict(scale_factor=-1.0), r"output \(H: -4, W: -4\)"),
    (dict(size=(-1, 2)), r"output \(H: -1, W: 2\)"),
    (dict(size=(0, 2)), r"output \(H: 0, W: 2\)"),
    (dict(scale_factor=float("nan")), "without overflow"),
    (dict(scale_factor=1e30), "without overflow"),
])
def test_interpolate_output_sizes(backend, kw, msg):
    x = lucid.randn(1, 1, 4, 4, device=backend)
    with pytest.raises(RuntimeError, match=msg):
        F.interpolate(x, **kw)
    assert F.interpolate(x, scale_factor=2).shape == (1, 1, 8, 8)


def test_read_only_memory_is_named():
    a = np.ones(3, np.float32)
    a.setflags(write=False)
    t = lucid.from_numpy(a)
    with pytest.raises(RuntimeError, match="memory is read-only"):
        t.add_(1)
    with pytest.raises(RuntimeError, match="memory is read-only"):
        F.relu(t, inplace=True)
    np.testing.assert_array_equal(a, 1)
    rm = lucid.from_numpy(np.zeros(3, np.float32))
    with pytest.raises(RuntimeError, match="running statistics .* read-only"):
        F.batch_norm(lucid.randn(4, 3), lucid.from_numpy(a), rm, training=True)
    np.testing.assert_array_equal(rm.numpy(), 0)  # nothing half-changed
    out = t.clone().add_(1)
    np.testing.assert_array_equal(out.numpy(), 2)


@pytest.mark.parity
def test_interpolate_sizes_match_torch(torch):
    for kw in (dict(scale_factor=0), dict(size=(-1, 2))):
        with pytest.raises(RuntimeError, match="Input and output sizes should be greater than 0"):
            torch.nn.functional.interpolate(torch.randn(1, 1, 4, 4), **kw)


@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (0, 3, 2)])
def test_cross_entropy_of_nothing_is_nan_on_every_backend(backend, shape):
    """torch gives nan for a mean over no rows, and a zero gradient of the empty input."""
    x = lucid.zeros(*shape, device=backend, requires_grad=True)
    t = lucid.zeros(shape[0], *shape[2:], dtype=lucid.int64, device=backend)
    with np.errstate(invalid="ignore", divide="ignore"):
        loss = F.cross_entropy(x, t, label_smoothing=0.1)
    assert np.isnan(loss.item())
    loss.backward()
    assert x.grad.shape == shape
