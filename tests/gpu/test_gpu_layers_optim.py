"""Every nn layer and every optimizer on the "gpu" device against "cpu" (float32): layer
outputs, input and parameter gradients and buffers; optimizer parameters and state."""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from gpu_util import close

import lucid
import lucid.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "optim"))
from optim_util import CASES, arrays, case_id, grads, lucid_params, set_grads  # noqa: E402

_rng = np.random.default_rng(0)


def R(*shape: int) -> np.ndarray:
    return _rng.uniform(-2, 2, shape).astype(np.float32)


x4, x3, x2 = R(2, 4, 6, 6), R(2, 4, 9), R(3, 8)
LAYERS: dict[str, list[tuple[Callable[[], nn.Module], tuple]]] = {
    "Linear": [(lambda: nn.Linear(8, 5), (x2,))],
    "Conv1d": [(lambda: nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2), (x3,))],
    "Conv2d": [(lambda: nn.Conv2d(4, 6, 3, padding=1, dilation=1), (x4,)),
               (lambda: nn.Conv2d(4, 4, (2, 3), stride=2, groups=4, bias=False), (x4,))],
    "ConvTranspose2d": [(lambda: nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1,
                                                    output_padding=1), (x4,))],
    "MaxPool1d": [(lambda: nn.MaxPool1d(3, 2), (x3,))],
    "MaxPool2d": [(lambda: nn.MaxPool2d(2), (x4,))],
    "AvgPool1d": [(lambda: nn.AvgPool1d(3, 2, 1), (x3,))],
    "AvgPool2d": [(lambda: nn.AvgPool2d(3, 2, 1), (x4,))],
    "AdaptiveAvgPool1d": [(lambda: nn.AdaptiveAvgPool1d(4), (x3,))],
    "AdaptiveAvgPool2d": [(lambda: nn.AdaptiveAvgPool2d((2, 3)), (x4,))],
    "AdaptiveMaxPool1d": [(lambda: nn.AdaptiveMaxPool1d(4), (x3,))],
    "AdaptiveMaxPool2d": [(lambda: nn.AdaptiveMaxPool2d((2, 3)), (x4,))],
    "BatchNorm1d": [(lambda: nn.BatchNorm1d(4), (x3,)), (lambda: nn.BatchNorm1d(8), (x2,))],
    "BatchNorm2d": [(lambda: nn.BatchNorm2d(4, momentum=0.3), (x4,))],
    "SyncBatchNorm": [(lambda: nn.SyncBatchNorm(4, momentum=0.3), (x4,))],  # a world of one
    "GroupNorm": [(lambda: nn.GroupNorm(2, 4), (x4,))],
    "InstanceNorm1d": [(lambda: nn.InstanceNorm1d(4, affine=True, track_running_stats=True),
                        (x3,))],
    "InstanceNorm2d": [(lambda: nn.InstanceNorm2d(4, affine=True), (x4,))],
    "LayerNorm": [(lambda: nn.LayerNorm((6, 6)), (x4,))],
    "RMSNorm": [(lambda: nn.RMSNorm(8), (x2,))],
    "Dropout": [(lambda: nn.Dropout(0.3), (x4,))],
    "Dropout1d": [(lambda: nn.Dropout1d(0.5), (x3,))],
    "Dropout2d": [(lambda: nn.Dropout2d(0.5), (x4,))],
    "Embedding": [(lambda: nn.Embedding(10, 4, padding_idx=0),
                   (_rng.integers(0, 10, (3, 5)),))],
    "Flatten": [(lambda: nn.Flatten(), (x4,))],
    "Unflatten": [(lambda: nn.Unflatten(1, (2, 4)), (x2,))],
    "Identity": [(lambda: nn.Identity(), (x2,))],
    "PReLU": [(lambda: nn.PReLU(4), (x4,))],
    "GLU": [(lambda: nn.GLU(1), (x4,))],
    "Softmax": [(lambda: nn.Softmax(1), (x4,))],
    "Softmin": [(lambda: nn.Softmin(1), (x4,))],
    "LogSoftmax": [(lambda: nn.LogSoftmax(1), (x4,))],
    "Threshold": [(lambda: nn.Threshold(0.2, -1.0), (x4,))],
    "MultiheadAttention": [(lambda: nn.MultiheadAttention(8, 2, batch_first=True),
                            (R(2, 5, 8), R(2, 5, 8), R(2, 5, 8)))],
    "TransformerEncoderLayer": [(lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                                    batch_first=True),
                                 (R(2, 5, 8),))],
    "TransformerEncoder": [(lambda: nn.TransformerEncoder(
        nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True), 2), (R(2, 5, 8),))],
    "Sequential": [(lambda: nn.Sequential(nn.Linear(8, 6), nn.ReLU(), nn.Linear(6, 2)), (x2,))],
    "DataParallel": [(lambda: nn.DataParallel(nn.Linear(8, 5)), (x2,))],
    "ModuleList": [(lambda: _Call(nn.ModuleList([nn.Linear(8, 8), nn.Tanh()])), (x2,))],
    "ModuleDict": [(lambda: _Call(nn.ModuleDict({"a": nn.Linear(8, 8), "b": nn.SiLU()})),
                    (x2,))],
    "ParameterList": [(lambda: _PCall(nn.ParameterList([nn.Parameter(lucid.randn(8))])),
                       (x2,))],
    "ParameterDict": [(lambda: _PCall(nn.ParameterDict({"w": nn.Parameter(lucid.randn(8))})),
                       (x2,))],
}
x5 = R(2, 4, 4, 5, 5)
LAYERS.update({
    "Conv3d": [(lambda: nn.Conv3d(4, 6, 3, stride=(1, 2, 1), padding=1, groups=2), (x5,))],
    "ConvTranspose3d": [(lambda: nn.ConvTranspose3d(4, 2, 3, stride=2, padding=1,
                                                    output_padding=1), (x5,))],
    "MaxPool3d": [(lambda: nn.MaxPool3d(3, 2, 1, return_indices=True), (x5,))],
    "AvgPool3d": [(lambda: nn.AvgPool3d(3, 2, 1, count_include_pad=False), (x5,))],
    "AdaptiveAvgPool3d": [(lambda: nn.AdaptiveAvgPool3d((3, 2, 4)), (x5,))],
    "AdaptiveMaxPool3d": [(lambda: nn.AdaptiveMaxPool3d((3, 2, 4)), (x5,))],
    "BatchNorm3d": [(lambda: nn.BatchNorm3d(4), (x5,))],
    "InstanceNorm3d": [(lambda: nn.InstanceNorm3d(4, affine=True), (x5,))],
    "Dropout3d": [(lambda: nn.Dropout3d(0.5), (x5,))],
    "TransformerDecoderLayer": [(lambda: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0,
                                                                    batch_first=True),
                                 (R(2, 5, 8), R(2, 3, 8)))],
    "TransformerDecoder": [(lambda: nn.TransformerDecoder(
        nn.TransformerDecoderLayer(8, 2, 16, dropout=0.1, norm_first=True), 2,
        nn.LayerNorm(8)), (R(5, 2, 8), R(3, 2, 8)))],
    "Transformer": [(lambda: nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, batch_first=True),
                     (R(2, 3, 8), R(2, 5, 8)))],
})
_SIGN = np.sign(R(3, 8)).astype(np.float32)
for _k, _x in ((1, x3), (2, x4), (3, x5)):
    for _kind in ("Zero", "Constant", "Reflection", "Replication", "Circular"):
        _args = (1, 0.5) if _kind == "Constant" else (1,)
        LAYERS[f"{_kind}Pad{_k}d"] = [(lambda n=f"{_kind}Pad{_k}d", a=_args: getattr(nn, n)(*a),
                                        (_x,))]
LAYERS.update({
    "Upsample": [(lambda: nn.Upsample(scale_factor=1.5, mode="bicubic"), (x4,)),
                 (lambda: nn.Upsample(size=(3, 4), mode="area"), (x4,))],
    "UpsamplingNearest2d": [(lambda: nn.UpsamplingNearest2d(scale_factor=2), (x4,))],
    "UpsamplingBilinear2d": [(lambda: nn.UpsamplingBilinear2d(size=(4, 7)), (x4,))],
    "PixelShuffle": [(lambda: nn.PixelShuffle(2), (x4,))],
    "PixelUnshuffle": [(lambda: nn.PixelUnshuffle(3), (x4,))],
    "ChannelShuffle": [(lambda: nn.ChannelShuffle(2), (x4,))],
    "Bilinear": [(lambda: nn.Bilinear(8, 5, 3), (x2, R(3, 5)))],
    "CosineSimilarity": [(nn.CosineSimilarity, (x2, R(3, 8)))],
    "PairwiseDistance": [(lambda: nn.PairwiseDistance(p=3.0), (x2, R(3, 8)))],
    "Unfold": [(lambda: nn.Unfold(3, padding=1, stride=2), (x4,))],
    "Fold": [(lambda: nn.Fold((4, 5), 2), (R(2, 8, 12),))],
    "Softmax2d": [(nn.Softmax2d, (x4,))],
    "RNN": [(lambda: nn.RNN(9, 5, num_layers=2, nonlinearity="relu"), (R(3, 2, 9),))],
    "LSTM": [(lambda: nn.LSTM(9, 6, bidirectional=True, proj_size=3, batch_first=True),
              (R(2, 3, 9),))],
    "GRU": [(lambda: nn.GRU(9, 5, num_layers=2, bidirectional=True), (R(3, 2, 9),))],
    "RNNCell": [(lambda: nn.RNNCell(8, 5), (x2, R(3, 5)))],
    "LSTMCell": [(lambda: nn.LSTMCell(8, 5), (x2,))],
    "GRUCell": [(lambda: nn.GRUCell(8, 5), (x2, R(3, 5)))],
    "LocalResponseNorm": [(lambda: nn.LocalResponseNorm(3, 0.5), (x4,))],
    "EmbeddingBag": [(lambda: nn.EmbeddingBag(10, 4, mode="max"),
                      (np.array([1, 2, 4, 5, 4, 3, 9]), np.array([0, 3, 3])))],
    "LazyLinear": [(lambda: nn.LazyLinear(5), (x2,))],
    "LazyConv1d": [(lambda: nn.LazyConv1d(6, 3, groups=2), (x3,))],
    "LazyConv2d": [(lambda: nn.LazyConv2d(3, 3, padding=1), (x4,))],
    "TripletMarginLoss": [(lambda: nn.TripletMarginLoss(swap=True), (x2, R(3, 8), R(3, 8)))],
    "TripletMarginWithDistanceLoss": [(nn.TripletMarginWithDistanceLoss,
                                       (x2, R(3, 8), R(3, 8)))],
    "MarginRankingLoss": [(nn.MarginRankingLoss, (x2, R(3, 8), _SIGN))],
    "CosineEmbeddingLoss": [(nn.CosineEmbeddingLoss, (x2, R(3, 8), _SIGN[:, 0]))],
    "HingeEmbeddingLoss": [(nn.HingeEmbeddingLoss, (x2, _SIGN))],
    "SoftMarginLoss": [(nn.SoftMarginLoss, (x2, _SIGN))],
    "MultiLabelSoftMarginLoss": [(nn.MultiLabelSoftMarginLoss, (x2, (_SIGN > 0) * 1.0))],
    "MultiMarginLoss": [(lambda: nn.MultiMarginLoss(p=2), (x2, np.array([0, 7, 3])))],
    "MultiLabelMarginLoss": [(nn.MultiLabelMarginLoss,
                              (x2, np.array([[3, 0, -1] + [0] * 5, [1] + [-1] * 7,
                                             [7, 6, 5, 4, 3, 2, 1, 0]])))],
    "GaussianNLLLoss": [(nn.GaussianNLLLoss, (x2, R(3, 8), np.abs(R(3, 8)) + 0.1))],
    "PoissonNLLLoss": [(lambda: nn.PoissonNLLLoss(full=True),
                        (x2, _rng.integers(0, 4, (3, 8)).astype(np.float32)))],
    "CTCLoss": [(nn.CTCLoss, (R(6, 2, 5), np.array([[1, 2, 2], [3, 4, 0]]), np.array([6, 5]),
                              np.array([3, 2])))],
})
_ACT = ["ReLU", "ReLU6", "ELU", "CELU", "SELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh",
        "LogSigmoid", "Hardsigmoid", "Hardswish", "Hardtanh", "Hardshrink", "Softshrink",
        "Softsign", "Softplus", "Tanhshrink", "LeakyReLU"]
for _n in _ACT:
    LAYERS[_n] = [(getattr(nn, _n), (x4,))]
_LOSS = ["MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss"]
for _n in _LOSS:
    LAYERS[_n] = [(getattr(nn, _n), (x2, R(3, 8)))]
LAYERS["KLDivLoss"] = [(lambda: nn.KLDivLoss(reduction="batchmean"),
                        (x2, _rng.uniform(0.1, 1, (3, 8)).astype(np.float32)))]
LAYERS["BCELoss"] = [(nn.BCELoss, (_rng.uniform(0.1, 0.9, (3, 4)).astype(np.float32),
                                   _rng.uniform(0, 1, (3, 4)).astype(np.float32)))]
LAYERS["BCEWithLogitsLoss"] = [(nn.BCEWithLogitsLoss, (R(3, 4),
                                                       _rng.uniform(0, 1, (3, 4)).astype(
                                                           np.float32)))]
LAYERS["CrossEntropyLoss"] = [(lambda: nn.CrossEntropyLoss(label_smoothing=0.1),
                               (R(4, 5), _rng.integers(0, 5, 4)))]
LAYERS["NLLLoss"] = [(nn.NLLLoss, (R(4, 5), _rng.integers(0, 5, 4)))]
LAYERS["NLLLoss2d"] = [(nn.NLLLoss2d, (R(2, 5, 3, 3), _rng.integers(0, 5, (2, 3, 3))))]
LAYERS["AdaptiveLogSoftmaxWithLoss"] = [
    (lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 7], div_value=2.0),
     (x2, _rng.integers(0, 10, 3)))]
LAYERS["LinearCrossEntropyLoss"] = [
    (lambda: nn.LinearCrossEntropyLoss(8, 5), (x2, _rng.integers(0, 5, 3)))]
_pooled, _where = (np.asarray(t.numpy()) for t in lucid.nn.functional.max_pool2d(
    lucid.tensor(x4), 2, return_indices=True))
_pooled1, _where1 = (np.asarray(t.numpy()) for t in lucid.nn.functional.max_pool1d(
    lucid.tensor(x3), 3, return_indices=True))
_pooled3, _where3 = (np.asarray(t.numpy()) for t in lucid.nn.functional.max_pool3d(
    lucid.tensor(R(2, 4, 4, 4, 4)), 2, return_indices=True))
LAYERS.update({
    "ConvTranspose1d": [(lambda: nn.ConvTranspose1d(4, 3, 3, stride=2, padding=1), (x3,))],
    "LazyConv3d": [(lambda: nn.LazyConv3d(3, 2), (x5,))],
    "LazyConvTranspose1d": [(lambda: nn.LazyConvTranspose1d(3, 2), (x3,))],
    "LazyConvTranspose2d": [(lambda: nn.LazyConvTranspose2d(3, 2), (x4,))],
    "LazyConvTranspose3d": [(lambda: nn.LazyConvTranspose3d(2, 2), (x5,))],
    "LazyBatchNorm1d": [(lambda: nn.LazyBatchNorm1d(), (x3,))],
    "LazyBatchNorm2d": [(lambda: nn.LazyBatchNorm2d(), (x4,))],
    "LazyBatchNorm3d": [(lambda: nn.LazyBatchNorm3d(), (x5,))],
    "LazyInstanceNorm1d": [(lambda: nn.LazyInstanceNorm1d(affine=True), (x3,))],
    "LazyInstanceNorm2d": [(lambda: nn.LazyInstanceNorm2d(affine=True), (x4,))],
    "LazyInstanceNorm3d": [(lambda: nn.LazyInstanceNorm3d(affine=True), (x5,))],
    "LPPool1d": [(lambda: nn.LPPool1d(2, 3, 2), (x3,))],
    "LPPool2d": [(lambda: nn.LPPool2d(3, 2), (x4,))],
    "LPPool3d": [(lambda: nn.LPPool3d(2, 2), (x5,))],
    "MaxUnpool1d": [(lambda: nn.MaxUnpool1d(3), (_pooled1, _where1))],
    "MaxUnpool2d": [(lambda: nn.MaxUnpool2d(2), (_pooled, _where))],
    "MaxUnpool3d": [(lambda: nn.MaxUnpool3d(2), (_pooled3, _where3))],
    "FractionalMaxPool2d": [(lambda: nn.FractionalMaxPool2d(2, output_size=3), (x4,))],
    "FractionalMaxPool3d": [(lambda: nn.FractionalMaxPool3d(2, output_ratio=0.5), (x5,))],
    "CrossMapLRN2d": [(lambda: nn.CrossMapLRN2d(3), (x4,))],
    "AlphaDropout": [(lambda: nn.AlphaDropout(0.3), (x4,))],
    "FeatureAlphaDropout": [(lambda: nn.FeatureAlphaDropout(0.3), (x4,))],
    "RReLU": [(lambda: nn.RReLU(), (x4,))],
})


class _Call(nn.Module):
    def __init__(self, mods: Any) -> None:
        super().__init__()
        self.mods = mods

    def forward(self, x: Any) -> Any:
        for m in (self.mods.values() if isinstance(self.mods, nn.ModuleDict) else self.mods):
            x = m(x)
        return x


class _PCall(_Call):
    def forward(self, x: Any) -> Any:
        for p in (self.mods.values() if isinstance(self.mods, nn.ParameterDict) else self.mods):
            x = x * p
        return x


def _run(make: Callable, args: tuple, device: str) -> dict[str, Any]:
    lucid.manual_seed(0)
    layer = make()
    layer = copy.deepcopy(layer).to(device)
    xs = []
    for a in args:
        t = lucid.tensor(a, device=device)
        if a.dtype.kind == "f":
            t.requires_grad_(True)
        xs.append(t)
    lucid.manual_seed(1)
    out = layer(*xs)
    outs = list(out) if isinstance(out, tuple) else [out]
    outs = [o for o in outs if isinstance(o, lucid.Tensor)]
    rng = np.random.default_rng(2)
    total = None
    for o in outs:
        if o.requires_grad:
            w = lucid.tensor(rng.uniform(0.5, 1.5, tuple(o.shape)).astype(np.float32),
                             device=device)
            total = (o * w).sum() if total is None else total + (o * w).sum()
    if total is not None:
        total.backward()
    res: dict[str, Any] = {f"out{k}": o.detach().numpy() for k, o in enumerate(outs)}
    res.update({f"xgrad{k}": None if x.grad is None else x.grad.numpy() for k, x in enumerate(xs)})
    for k, p in layer.named_parameters():
        res["grad " + k] = None if p.grad is None else p.grad.numpy()
    for k, v in layer.state_dict().items():
        res["state " + k] = v.numpy()
    return res


_PARAMS = [pytest.param(make, args, id=f"{name}-{k}")
           for name, ms in LAYERS.items() for k, (make, args) in enumerate(ms)]


@pytest.mark.parametrize("make,args", _PARAMS)
def test_layer_gpu_matches_cpu(make: Callable, args: tuple) -> None:
    c, g = _run(make, args, "cpu"), _run(make, args, "gpu")
    assert c.keys() == g.keys()
    for k in c:
        close(g[k], c[k], k, rtol=2e-4, atol=5e-5)


def test_every_layer_is_compared() -> None:
    skip = {"Module", "Parameter", "Buffer", "RNNBase", "RNNCellBase",  # bases: abstract
            "Container",  # torch's deprecated container base: no forward
            "DistributedDataParallel"}  # needs a process group: tests/distributed runs it
    layers = {n for n in dir(nn) if n[:1].isupper() and isinstance(getattr(nn, n), type)
              and issubclass(getattr(nn, n), nn.Module)}
    assert layers - skip - set(LAYERS) == set()


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_optimizer_gpu_matches_cpu(case: tuple[str, dict[str, Any]]) -> None:
    """Every optimizer and option: 6 steps with the same injected gradients on both devices."""
    name, kw = case
    arrs = arrays(0)
    res = {}
    for dev in ("cpu", "gpu"):
        params = lucid_params(arrs, dev)
        opt = getattr(lucid.optim, name)(params, **kw)
        rng = np.random.default_rng(1)
        for _ in range(6):
            set_grads(params, grads(rng))
            opt.step()
        state = [{k: (v.numpy() if isinstance(v, lucid.Tensor) else v)
                  for k, v in opt.state[p].items()} for p in params]
        res[dev] = ([p.detach().numpy() for p in params], state)
        assert all(p.device.type == dev for p in params)
    for k, (g, c) in enumerate(zip(res["gpu"][0], res["cpu"][0])):
        close(g, c, f"param {k}", rtol=1e-5, atol=1e-6)
    for sg, sc in zip(res["gpu"][1], res["cpu"][1]):
        assert sg.keys() == sc.keys()
        for key in sc:
            close(sg[key], sc[key], key, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", CASES[1::2], ids=case_id)
def test_optimizer_state_dict_across_devices(case: tuple[str, dict[str, Any]]) -> None:
    """An optimizer's state from "gpu" loads into one over "cpu" parameters and continues
    identically (state tensors follow their parameter's device)."""
    name, kw = case
    arrs = arrays(0)
    pg = lucid_params(arrs, "gpu")
    og = getattr(lucid.optim, name)(pg, **kw)
    rng = np.random.default_rng(1)
    for _ in range(3):
        set_grads(pg, grads(rng))
        og.step()
    pc = lucid_params([p.detach().numpy() for p in pg], "cpu")
    oc = getattr(lucid.optim, name)(pc, **kw)
    oc.load_state_dict(og.state_dict())
    for p in pc:
        for v in oc.state[p].values():
            if isinstance(v, lucid.Tensor) and v.ndim:
                assert v.device.type == "cpu"
    gs = grads(rng)
    set_grads(pg, gs)
    set_grads(pc, gs)
    og.step()
    oc.step()
    for a, b in zip(pg, pc):
        close(a.detach().numpy(), b.detach().numpy(), "param", rtol=1e-5, atol=1e-6)
