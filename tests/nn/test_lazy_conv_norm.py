"""LazyConv3d, LazyConvTranspose1d/2d/3d, LazyBatchNorm1d/2d/3d, LazyInstanceNorm1d/2d/3d
and UninitializedBuffer: reprs, the shapes they materialise, the class they become, torch's
outputs once their values are copied over, and state_dict round trips."""

from __future__ import annotations

import numpy as np
import pytest
from nn_util import arr, catch

import lucid
import lucid.nn as nn

RNG = np.random.default_rng(0)


def _copy_into_torch(torch, lm, tm):
    with torch.no_grad():
        for (n, lp), (n2, tp) in zip(lm.named_parameters(), tm.named_parameters()):
            assert n == n2 and tuple(lp.shape) == tuple(tp.shape)
            tp.copy_(torch.tensor(arr(lp)))


@pytest.mark.parametrize("name, args, kw, shape, becomes", [
    ("LazyConv3d", (4, 3), dict(padding=1), (2, 3, 5, 5, 5), "Conv3d"),
    ("LazyConvTranspose1d", (4, 3), dict(stride=2, groups=2), (2, 6, 7), "ConvTranspose1d"),
    ("LazyConvTranspose2d", (5, 2), dict(stride=2, output_padding=1), (2, 3, 4, 4),
     "ConvTranspose2d"),
    ("LazyConvTranspose3d", (2, 2), dict(stride=2, bias=False), (1, 3, 3, 3, 3),
     "ConvTranspose3d"),
    ("LazyConvTranspose1d", (4, 3), dict(), (6, 7), "ConvTranspose1d"),
])
def test_lazy_convs_match_torch(torch, name, args, kw, shape, becomes):
    lm = getattr(nn, name)(*args, **kw, dtype=lucid.float64)
    tm = getattr(torch.nn, name)(*args, **kw, dtype=torch.float64)
    assert repr(lm) == repr(tm)
    assert lm.has_uninitialized_params()
    x = RNG.standard_normal(shape)
    ly = lm(lucid.tensor(x))
    tm(torch.tensor(x))
    assert type(lm) is getattr(nn, becomes) and repr(lm) == repr(tm)
    assert not lm._forward_pre_hooks
    _copy_into_torch(torch, lm, tm)
    np.testing.assert_allclose(arr(ly), arr(tm(torch.tensor(x))), rtol=1e-12, atol=1e-12)


def test_lazy_conv_transpose_state_dict_round_trip():
    src = nn.LazyConvTranspose2d(4, 3, groups=2)
    src(lucid.randn(1, 6, 5, 5))
    dst = nn.LazyConvTranspose2d(4, 3, groups=2)
    dst.load_state_dict(src.state_dict())
    assert dst.weight.shape == (6, 2, 3, 3) and dst.bias.shape == (4,)
    x = lucid.randn(1, 6, 5, 5)
    np.testing.assert_array_equal(arr(dst(x)), arr(src(x)))
    assert dst.in_channels == 6 and type(dst) is nn.ConvTranspose2d


@pytest.mark.parametrize("n, kind, shape", [
    (1, "Batch", (8, 5)), (1, "Batch", (8, 5, 3)), (2, "Batch", (4, 5, 3, 3)),
    (3, "Batch", (2, 5, 2, 3, 3)), (1, "Instance", (4, 5, 6)), (2, "Instance", (4, 5, 3, 3)),
    (3, "Instance", (2, 5, 2, 3, 3)),
])
def test_lazy_norms_match_torch(torch, n, kind, shape):
    name = f"Lazy{kind}Norm{n}d"
    lm = getattr(nn, name)(dtype=lucid.float64)
    tm = getattr(torch.nn, name)(dtype=torch.float64)
    assert repr(lm) == repr(tm)
    assert [k for k, _ in lm.named_buffers()] == [k for k, _ in tm.named_buffers()]
    assert repr(lm.running_mean) == "<UninitializedBuffer>"
    x = RNG.standard_normal(shape)
    for _ in range(2):
        ly, ty = lm(lucid.tensor(x)), tm(torch.tensor(x))
        np.testing.assert_allclose(arr(ly), arr(ty), rtol=1e-10, atol=1e-12)
    assert type(lm).__name__ == f"{kind}Norm{n}d" and repr(lm) == repr(tm)
    for (k, lb), (k2, tb) in zip(lm.named_buffers(), tm.named_buffers()):
        assert k == k2 and type(lb) is nn.Buffer
        np.testing.assert_allclose(arr(lb), arr(tb), rtol=1e-10)
    assert lm.weight.shape == (5,) and type(lm.weight) is nn.Parameter


def test_lazy_norm_options_and_unbatched_instance_norm():
    bn = nn.LazyBatchNorm2d(affine=False, track_running_stats=False)
    assert bn.weight is None and bn.running_mean is None and not bn.has_uninitialized_params()
    bn = nn.LazyBatchNorm1d(bias=False)
    bn(lucid.randn(4, 3))
    assert bn.bias is None and bn.weight.shape == (3,)
    inorm = nn.LazyInstanceNorm1d()
    inorm(lucid.randn(3, 7))  # (C, L): the channels are dim 0
    assert inorm.num_features == 3 and inorm.running_mean.shape == (3,)


def test_lazy_norm_state_dict_round_trip_and_failed_load():
    src = nn.LazyBatchNorm2d()
    src(lucid.randn(4, 6, 3, 3))
    sd = src.state_dict()
    lazy_sd = nn.LazyBatchNorm2d().state_dict()
    assert [repr(v) for v in lazy_sd.values()][:4] == ["<UninitializedParameter>"] * 2 + \
        ["<UninitializedBuffer>"] * 2
    dst = nn.LazyBatchNorm2d()
    dst.load_state_dict(sd)
    assert type(dst.running_var) is nn.Buffer and dst.running_var.shape == (6,)
    np.testing.assert_array_equal(arr(dst.running_mean), arr(src.running_mean))
    bad = nn.LazyBatchNorm2d()
    with pytest.raises(RuntimeError, match="Missing key"):
        bad.load_state_dict({k: v for k, v in sd.items() if k != "running_var"})
    assert type(bad.running_mean) is nn.UninitializedBuffer and bad.has_uninitialized_params()
    dst.eval()
    src.eval()
    x = lucid.randn(2, 6, 3, 3)
    np.testing.assert_array_equal(arr(dst(x)), arr(src(x)))


def test_uninitialized_buffer():
    b = nn.UninitializedBuffer(dtype=lucid.float64, persistent=False)
    assert repr(b) == "<UninitializedBuffer>" and not b.persistent and not b.requires_grad
    b.materialize((2, 3))
    assert type(b) is nn.Buffer and b.shape == (2, 3) and b.dtype == lucid.float64
    m = nn.Module()
    m.buf = nn.UninitializedBuffer()
    assert "buf" in dict(m.named_buffers())
    assert catch(lambda: nn.LazyConv3d(4, 2)(lucid.randn(2, 2))) == (
        "RuntimeError: Expected 4D (unbatched) or 5D (batched) input to LazyConv3d, but got "
        "input of size: [2, 2]")
