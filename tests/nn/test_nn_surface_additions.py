"""Smaller torch.nn names: nn.ConvTranspose1d, nn.CrossMapLRN2d, nn.Container, nn.NLLLoss2d,
F.pdist, F.native_channel_shuffle and the deprecated F.upsample / upsample_nearest /
upsample_bilinear: values and gradients against torch (float64), warnings and errors; and
that every torch.nn / torch.nn.functional name training code uses is present."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_util import arr, catch

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

RNG = np.random.default_rng(0)

# torch names lucid leaves out: quantization namespaces, typing helpers, internal modules
_NOT_NN = {"LinearCrossEntropyLoss", "LinearCrossEntropyOptions", "common_types",
           "factory_kwargs", "intrinsic", "qat", "quantizable", "quantized"}
_NOT_F = {"BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "Callable", "DType",
          "GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES", "Optional",
          "ScalingType", "SwizzleType", "TYPE_CHECKING", "assert_int_or_pair",
          "boolean_dispatch", "conv_tbc", "dataclasses", "grouped_mm", "handle_torch_function",
          "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
          "importlib", "linear_cross_entropy", "math", "np", "reproducibility_notes",
          "scaled_grouped_mm", "scaled_mm", "sparse_support_notes", "tf32_notes", "torch",
          "warnings"}


def test_torch_nn_names_are_present(torch):
    missing = {n for n in dir(torch.nn) if not n.startswith("_") and not hasattr(nn, n)}
    assert missing <= _NOT_NN, sorted(missing - _NOT_NN)
    missing = {n for n in dir(torch.nn.functional)
               if not n.startswith("_") and not hasattr(F, n)}
    assert missing <= _NOT_F, sorted(missing - _NOT_F)


@pytest.mark.parametrize("kw, shape", [
    (dict(stride=2), (2, 4, 7)), (dict(stride=3, padding=1, output_padding=2, dilation=2,
                                       groups=2), (2, 4, 6)), (dict(bias=False), (4, 5)),
])
def test_conv_transpose1d_matches_torch(torch, kw, shape):
    tm = torch.nn.ConvTranspose1d(4, 6, 3, dtype=torch.float64, **kw)
    lm = nn.ConvTranspose1d(4, 6, 3, dtype=lucid.float64, **kw)
    assert repr(lm) == repr(tm)
    lm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    x = RNG.standard_normal(shape)
    lx, tx = lucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ly, ty = lm(lx), tm(tx)
    np.testing.assert_allclose(arr(ly), arr(ty), rtol=1e-12, atol=1e-12)
    ly.square().sum().backward()
    ty.square().sum().backward()
    np.testing.assert_allclose(arr(lx.grad), arr(tx.grad), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(arr(lm.weight.grad), arr(tm.weight.grad), rtol=1e-12)
    if kw == dict(stride=2):
        out = (*shape[:2], ty.shape[-1] + 1)
        np.testing.assert_allclose(arr(lm(lx, output_size=out)), arr(tm(tx, output_size=out)),
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("size, c", [(1, 4), (2, 5), (3, 6), (5, 9), (4, 3)])
def test_cross_map_lrn2d_forward_matches_torch(torch, size, c):
    lm, tm = nn.CrossMapLRN2d(size, 0.3, 0.75, 1.5), torch.nn.CrossMapLRN2d(size, 0.3, 0.75, 1.5)
    assert repr(lm) == repr(tm)
    x = RNG.standard_normal((2, c, 3, 4))
    np.testing.assert_allclose(arr(lm(lucid.tensor(x))), arr(tm(torch.tensor(x))),
                               rtol=1e-13, atol=1e-14)


def test_cross_map_lrn2d_gradient_is_exact(torch):
    """Pins the documented difference: torch's hand-written backward fails its gradcheck,
    lucid's gradient is the exact one."""
    x = lucid.randn(2, 6, 2, 3, dtype=lucid.float64, requires_grad=True)
    m = nn.CrossMapLRN2d(3, 0.5, 0.75, 1.0)
    assert lucid.autograd.gradcheck(m, [x])
    tx = torch.tensor(arr(x), requires_grad=True)
    tm = torch.nn.CrossMapLRN2d(3, 0.5, 0.75, 1.0)
    assert not torch.autograd.gradcheck(tm, (tx,), raise_exception=False)
    assert catch(lambda: m(lucid.zeros(2, 3, 4))) == catch(lambda: tm(torch.zeros(2, 3, 4)))


def test_container_and_nllloss2d_warn_as_torch(torch):
    for fw in (lucid.nn, torch.nn):
        with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
            c = fw.Container(fc=fw.Linear(2, 3), act=fw.ReLU())
        assert [n for n, _ in c.named_children()] == ["fc", "act"]
        with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
            loss = fw.NLLLoss2d(ignore_index=1)
        assert isinstance(loss, fw.NLLLoss) and loss.ignore_index == 1
    x = RNG.standard_normal((2, 3, 4, 4))
    y = RNG.integers(0, 3, (2, 4, 4))
    with pytest.warns(FutureWarning):
        lv = nn.NLLLoss2d()(F.log_softmax(lucid.tensor(x), 1), lucid.tensor(y))
    with pytest.warns(FutureWarning):
        tv = torch.nn.NLLLoss2d()(torch.log_softmax(torch.tensor(x), 1), torch.tensor(y))
    np.testing.assert_allclose(float(lv), float(tv), rtol=1e-12)


@pytest.mark.parametrize("p", [0, 0.5, 1, 2, 3, math.inf])
def test_pdist_matches_torch(torch, p):
    x = RNG.standard_normal((6, 4))
    x[3] = x[1]
    x[4, :2] = x[0, :2] + 1.0
    x[0, 2:] = x[4, 2:] - 1.0  # ties for the inf-norm
    lx, tx = lucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ly, ty = F.pdist(lx, p), torch.nn.functional.pdist(tx, p)
    np.testing.assert_allclose(arr(ly), arr(ty), rtol=1e-12, atol=1e-14)
    g = RNG.standard_normal(tuple(ly.shape))
    ly.backward(lucid.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(arr(lx.grad), arr(tx.grad), rtol=1e-10, atol=1e-12)


def test_pdist_and_channel_shuffle_edges_match_torch(torch):
    def run(fw, F):
        return [catch(lambda: F.pdist(fw.zeros(3))),
                catch(lambda: F.pdist(fw.zeros(3, 2), -1)),
                catch(lambda: F.pdist(fw.zeros(3, 2, dtype=fw.int64))),
                catch(lambda: tuple(F.pdist(fw.zeros(1, 2)).shape)),
                catch(lambda: F.pdist(fw.zeros(3, 0)).tolist()),
                catch(lambda: F.native_channel_shuffle(fw.arange(12.0).reshape(1, 4, 3),
                                                       2).tolist()),
                catch(lambda: F.native_channel_shuffle(fw.zeros(2, 4), 2)),
                catch(lambda: F.native_channel_shuffle(fw.zeros(2, 4, 3), 3))]

    assert run(lucid, F) == run(torch, torch.nn.functional)


@pytest.mark.parametrize("name, kw", [
    ("upsample", dict(scale_factor=2)), ("upsample", dict(size=(5, 7), mode="bilinear")),
    ("upsample", dict(size=6, mode="bicubic", align_corners=True)),
    ("upsample_nearest", dict(size=(5, 7))), ("upsample_bilinear", dict(scale_factor=2)),
])
def test_upsample_aliases_match_torch(torch, name, kw):
    x = RNG.standard_normal((2, 3, 4, 4))
    with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated"):
        ly = getattr(F, name)(lucid.tensor(x), **kw)
    with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated"):
        ty = getattr(torch.nn.functional, name)(torch.tensor(x), **kw)
    np.testing.assert_allclose(arr(ly), arr(ty), rtol=1e-12, atol=1e-12)
