"""Layers against PyTorch: same constructor arguments give the same repr, state_dict keys
and shapes; after loading torch's weights, the same outputs and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity
tnn = torch.nn

LAYERS = [
    ("BatchNorm1d", (6,), {}, (4, 6)),
    ("BatchNorm2d", (3,), {"momentum": None}, (4, 3, 5, 5)),
    ("BatchNorm2d", (3,), {"affine": False, "track_running_stats": False}, (4, 3, 5, 5)),
    ("InstanceNorm2d", (3,), {"affine": True}, (2, 3, 5, 5)),
    ("LayerNorm", ((4, 5),), {}, (2, 3, 4, 5)),
    ("GroupNorm", (2, 6), {}, (2, 6, 3, 3)),
    ("Conv1d", (3, 4, 3), {"padding": 1}, (2, 3, 9)),
    ("Conv2d", (3, 4, 3), {"stride": 2, "padding": 1, "bias": False}, (2, 3, 9, 9)),
    ("Conv2d", (4, 4, 3), {"groups": 4, "padding": "same"}, (2, 4, 7, 7)),
    ("Conv2d", (2, 4, 3), {"padding": 1, "padding_mode": "reflect"}, (2, 2, 6, 6)),
    ("ConvTranspose2d", (4, 2, 2), {"stride": 2}, (2, 4, 3, 3)),
    ("MaxPool2d", (2,), {}, (2, 3, 6, 6)),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (2, 3, 7, 7)),
    ("AvgPool2d", (2,), {}, (2, 3, 6, 6)),
    ("AvgPool1d", (3,), {"stride": 2}, (2, 3, 9)),
    ("AdaptiveAvgPool2d", ((2, 3),), {}, (2, 3, 7, 8)),
    ("AdaptiveMaxPool2d", (2,), {}, (2, 3, 7, 8)),
    ("LeakyReLU", (0.2,), {}, (3, 4)),
    ("ELU", (), {"alpha": 0.7}, (3, 4)),
    ("GELU", (), {"approximate": "tanh"}, (3, 4)),
    ("SiLU", (), {}, (3, 4)),
    ("Mish", (), {}, (3, 4)),
    ("Softplus", (), {"beta": 2.0}, (3, 4)),
    ("Hardtanh", (-0.5, 0.5), {}, (3, 4)),
    ("ReLU6", (), {}, (3, 4)),
    ("Hardswish", (), {}, (3, 4)),
    ("Hardsigmoid", (), {}, (3, 4)),
    ("SELU", (), {}, (3, 4)),
    ("PReLU", (), {"num_parameters": 3}, (2, 3, 4)),
    ("Softmax", (), {"dim": 1}, (3, 4)),
    ("LogSoftmax", (), {"dim": -1}, (3, 4)),
    ("Flatten", (), {}, (2, 3, 4)),
    ("Linear", (4, 3), {}, (2, 4)),
]


def _pair(name, args, kwargs):
    lucid.manual_seed(0)
    torch.manual_seed(0)
    return getattr(nn, name)(*args, **kwargs), getattr(tnn, name)(*args, **kwargs)


@pytest.mark.parametrize("name,args,kwargs,shape", LAYERS,
                         ids=[f"{n}-{i}" for i, (n, *_rest) in enumerate(LAYERS)])
def test_layer_matches_torch(name, args, kwargs, shape):
    lm, tm = _pair(name, args, kwargs)
    assert repr(lm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in lm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    lm.load_state_dict(tm.state_dict())
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    lx = lucid.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    for train in (True, False):
        lm.train(train)
        tm.train(train)
        lo, to = lm(lx), tm(tx)
        np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-5)
        g = np.random.default_rng(2).standard_normal(tuple(to.shape)).astype(np.float32)
        lo.backward(lucid.tensor(g))
        to.backward(torch.tensor(g))
        np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
        for (k, lp), (_, tp) in zip(lm.named_parameters(), tm.named_parameters()):
            np.testing.assert_allclose(lp.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-4,
                                       err_msg=k)
        for (k, lb), (_, tb) in zip(lm.named_buffers(), tm.named_buffers()):
            np.testing.assert_allclose(lb.numpy(), tb.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
        lx.grad = None
        tx.grad = None
        lm.zero_grad()
        tm.zero_grad()


def test_batchnorm_running_stats_several_steps_then_eval():
    lm, tm = _pair("BatchNorm2d", (4,), {"momentum": None})
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = (rng.standard_normal((8, 4, 3, 3)) * 3 + 1).astype(np.float32)
        lm(lucid.tensor(x))
        tm(torch.tensor(x))
    np.testing.assert_allclose(lm.running_mean.numpy(), tm.running_mean.numpy(), rtol=1e-5)
    np.testing.assert_allclose(lm.running_var.numpy(), tm.running_var.numpy(), rtol=1e-5)
    assert int(lm.num_batches_tracked) == int(tm.num_batches_tracked) == 5
    lm.eval()
    tm.eval()
    x = rng.standard_normal((2, 4, 3, 3)).astype(np.float32)
    np.testing.assert_allclose(lm(lucid.tensor(x)).detach().numpy(),
                               tm(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_old_batchnorm_checkpoint_without_num_batches_tracked_loads():
    sd = tnn.BatchNorm2d(4).state_dict()
    del sd["num_batches_tracked"]
    sd._metadata[""]["version"] = 1
    m = nn.BatchNorm2d(4)
    assert m.load_state_dict(sd) == ([], [])
    assert int(m.num_batches_tracked) == 0
    sd2 = dict(tnn.BatchNorm2d(4).state_dict())  # a plain dict has no version: treated as old
    del sd2["num_batches_tracked"]
    t2 = tnn.BatchNorm2d(4)
    assert tuple(t2.load_state_dict(sd2)) == tuple(nn.BatchNorm2d(4).load_state_dict(sd2))
    sd3 = tnn.BatchNorm2d(4).state_dict()  # current version: the key is required
    del sd3["num_batches_tracked"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "num_batches'):
        nn.BatchNorm2d(4).load_state_dict(sd3)


@pytest.mark.parametrize("batch_first,norm_first", [(False, False), (True, True)])
def test_transformer_encoder_layer(batch_first, norm_first):
    lm, tm = _pair("TransformerEncoderLayer", (16, 4, 32),
                   {"batch_first": batch_first, "norm_first": norm_first, "dropout": 0.0})
    lm.load_state_dict(tm.state_dict())
    shape = (3, 5, 16) if batch_first else (5, 3, 16)  # batch 3, sequence 5
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    mask = np.zeros((3, 5), bool)
    mask[:, -1] = True
    lo = lm(lucid.tensor(x), src_key_padding_mask=lucid.tensor(mask))
    to = tm(torch.tensor(x), src_key_padding_mask=torch.tensor(mask))
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_multihead_attention_weights_and_causal_mask():
    lm, tm = _pair("MultiheadAttention", (8, 2), {"batch_first": True})
    lm.load_state_dict(tm.state_dict())
    x = np.random.default_rng(0).standard_normal((2, 4, 8)).astype(np.float32)
    causal = np.triu(np.ones((4, 4), bool), 1)
    lo, lw = lm(*(lucid.tensor(x),) * 3, attn_mask=lucid.tensor(causal))
    to, tw = tm(*(torch.tensor(x),) * 3, attn_mask=torch.tensor(causal))
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(lw.detach().numpy(), tw.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_embedding_padding_idx_and_from_pretrained():
    lm, tm = _pair("Embedding", (10, 3), {"padding_idx": 0})
    lm.load_state_dict(tm.state_dict())
    idx = [[1, 0, 1], [9, 0, 2]]
    lo, to = lm(lucid.tensor(idx)), tm(torch.tensor(idx))
    lo.sum().backward()
    to.sum().backward()
    np.testing.assert_allclose(lm.weight.grad.numpy(), tm.weight.grad.numpy())
    assert float(lm.weight.grad[0].abs().sum()) == 0.0
    w = lucid.randn(4, 2)
    e = nn.Embedding.from_pretrained(w)
    assert not e.weight.requires_grad and repr(e) == "Embedding(4, 2)"


@pytest.mark.parametrize("name,kwargs", [
    ("CrossEntropyLoss", {"label_smoothing": 0.1}), ("NLLLoss", {}), ("MSELoss", {}),
    ("L1Loss", {"reduction": "sum"}), ("SmoothL1Loss", {"beta": 0.5}), ("HuberLoss", {}),
    ("BCEWithLogitsLoss", {}), ("KLDivLoss", {"reduction": "batchmean"}),
])
def test_loss_modules(name, kwargs):
    lm, tm = _pair(name, (), kwargs)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    if name in ("CrossEntropyLoss", "NLLLoss"):
        t = rng.integers(0, 5, 6)
    elif name == "BCEWithLogitsLoss":
        t = rng.integers(0, 2, (6, 5)).astype(np.float32)
    elif name == "KLDivLoss":
        x = np.log(np.abs(x) / np.abs(x).sum(1, keepdims=True))
        t = np.abs(rng.standard_normal((6, 5))).astype(np.float32)
        t /= t.sum(1, keepdims=True)
    else:
        t = rng.standard_normal((6, 5)).astype(np.float32)
    assert repr(lm) == repr(tm)
    np.testing.assert_allclose(lm(lucid.tensor(x), lucid.tensor(t)).item(),
                               tm(torch.tensor(x), torch.tensor(t)).item(), rtol=1e-5)


def test_dropout_train_eval():
    d = nn.Dropout(0.5)
    x = lucid.ones(1000)
    y = d(x)
    kept = (y != 0).float().mean().item()
    assert 0.4 < kept < 0.6 and set(np.unique(y.numpy())) <= {0.0, 2.0}
    d.eval()
    assert lucid.equal(d(x), x)
    assert repr(d) == repr(tnn.Dropout(0.5))
