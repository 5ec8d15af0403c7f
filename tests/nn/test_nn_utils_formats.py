"""``lucid.nn.utils``'s ``skip_init`` (``nn.utils.init``) and the convolution-weight memory
format converters (``nn.utils.memory_format``), against torch's."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.utils.init as linit
import lucid.nn.utils.memory_format as lmf
from lucid.nn.utils import (
    convert_conv2d_weight_memory_format,
    convert_conv3d_weight_memory_format,
    skip_init,
)


def test_submodules_and_names_match_torch(torch) -> None:
    assert linit.skip_init is skip_init
    assert lmf.convert_conv2d_weight_memory_format is convert_conv2d_weight_memory_format
    assert set(lmf.__all__) == set(torch.nn.utils.memory_format.__all__)
    assert hasattr(torch.nn.utils.init, "skip_init")
    public = {n for n in dir(torch.nn.utils) if not n.startswith("_")}
    assert not [n for n in public if not hasattr(lucid.nn.utils, n)]


def test_skip_init_builds_the_module_with_empty_values() -> None:
    m = skip_init(nn.Linear, 5, 1)
    assert isinstance(m, nn.Linear)
    assert m.weight.shape == (1, 5) and m.bias.shape == (1,)
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    m2 = skip_init(nn.Linear, in_features=6, out_features=2, bias=False, dtype=lucid.float64)
    assert m2.weight.shape == (2, 6) and m2.weight.dtype == lucid.float64 and m2.bias is None
    bn = skip_init(nn.BatchNorm1d, 3, device="cpu")
    assert bn.running_mean.shape == (3,) and bn.weight.device == lucid.device("cpu")
    nn.init.zeros_(m.weight)
    assert np.all(m.weight.detach().numpy() == 0)


def test_skip_init_errors_as_torch(torch) -> None:
    with pytest.raises(RuntimeError, match="Expected a Module"):
        skip_init(int, 1)
    with pytest.raises(RuntimeError, match="Expected a Module"):
        torch.nn.utils.skip_init(int, 1)

    class NoDevice(nn.Module):
        def __init__(self, n: int) -> None:
            super().__init__()
            self.w = nn.Parameter(lucid.zeros(n))

    class TNoDevice(torch.nn.Module):
        def __init__(self, n: int) -> None:
            super().__init__()

    msg = "Module must support a 'device' arg to skip initialization"
    with pytest.raises(RuntimeError, match=msg):
        skip_init(NoDevice, 2)
    with pytest.raises(RuntimeError, match=msg):
        torch.nn.utils.skip_init(TNoDevice, 2)


def _net(mod: object) -> object:
    return mod.Sequential(mod.Conv2d(3, 4, 3), mod.Sequential(mod.ConvTranspose2d(4, 2, 3)),
                          mod.Conv3d(2, 2, 2), mod.ConvTranspose3d(2, 2, 2), mod.Linear(2, 2))


def test_conv2d_weights_channels_last_as_torch(torch) -> None:
    t, m = _net(torch.nn), _net(nn)
    params = list(m.parameters())
    before = [p.detach().numpy().copy() for p in params]
    assert convert_conv2d_weight_memory_format(m, lucid.channels_last) is m
    torch.nn.utils.convert_conv2d_weight_memory_format(t, torch.channels_last)
    for lp, tp in zip(m.parameters(), t.parameters()):
        assert lp.stride() == tp.stride()
    assert all(p is q for p, q in zip(m.parameters(), params))
    for p, b in zip(params, before):
        np.testing.assert_array_equal(p.detach().numpy(), b)
    assert m[0].weight.is_contiguous(memory_format=lucid.channels_last)
    assert isinstance(m[0].weight, nn.Parameter) and m[0].weight.requires_grad
    convert_conv2d_weight_memory_format(m, lucid.contiguous_format)
    torch.nn.utils.convert_conv2d_weight_memory_format(t, torch.contiguous_format)
    for lp, tp in zip(m.parameters(), t.parameters()):
        assert lp.stride() == tp.stride()
    convert_conv2d_weight_memory_format(m, lucid.channels_last)
    out = m[0](lucid.randn(1, 3, 5, 5))
    assert out.shape == (1, 4, 3, 3)
    out.sum().backward()
    assert m[0].weight.grad.shape == (4, 3, 3, 3)


def test_conv3d_weights_channels_last_3d_as_torch(torch) -> None:
    t, m = _net(torch.nn), _net(nn)
    convert_conv3d_weight_memory_format(m, lucid.channels_last_3d)
    torch.nn.utils.convert_conv3d_weight_memory_format(t, torch.channels_last_3d)
    for lp, tp in zip(m.parameters(), t.parameters()):
        assert lp.stride() == tp.stride()
    assert m[2].weight.is_contiguous(memory_format=lucid.channels_last_3d)


@pytest.mark.parametrize("which,fmt", [("2d", "channels_last_3d"), ("3d", "channels_last"),
                                       ("2d", "preserve_format")])
def test_wrong_formats_raise_as_torch(torch, which, fmt) -> None:
    t_fn = getattr(torch.nn.utils, f"convert_conv{which}_weight_memory_format")
    l_fn = {"2d": convert_conv2d_weight_memory_format,
            "3d": convert_conv3d_weight_memory_format}[which]
    with pytest.raises(RuntimeError) as te:
        t_fn(_net(torch.nn), getattr(torch, fmt))
    with pytest.raises(RuntimeError) as le:
        l_fn(_net(nn), getattr(lucid, fmt))
    if fmt != "preserve_format":
        assert str(le.value) == str(te.value)
