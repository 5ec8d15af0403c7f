"""``nn.TransformerDecoderLayer``, ``nn.TransformerDecoder`` and ``nn.Transformer``: outputs and
gradients against torch with identical weights (loaded from torch's ``state_dict``), masks,
a numpy reference of one decoder layer, and torch's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from devices import DEVICES

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

RTOL, ATOL = 1e-4, 1e-5
# torch's notes on nested tensors and mixed bool / float masks
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _inputs(batch_first: bool, rng: np.random.Generator, t: int = 5, s: int = 6, n: int = 3,
            e: int = 16) -> tuple[np.ndarray, np.ndarray]:
    tgt = rng.standard_normal((n, t, e) if batch_first else (t, n, e)).astype(np.float32)
    mem = rng.standard_normal((n, s, e) if batch_first else (s, n, e)).astype(np.float32)
    return tgt, mem


def _masks(t: int = 5, s: int = 6, n: int = 3) -> dict[str, np.ndarray]:
    causal = np.triu(np.full((t, t), -np.inf, np.float32), 1)
    mem_mask = np.zeros((t, s), bool)
    mem_mask[:, 0] = True                                  # nobody attends memory slot 0
    tgt_pad = np.zeros((n, t), bool)
    tgt_pad[1, -2:] = True
    mem_pad = np.zeros((n, s), bool)
    mem_pad[2, -1] = True
    return {"tgt_mask": causal, "memory_mask": mem_mask, "tgt_key_padding_mask": tgt_pad,
            "memory_key_padding_mask": mem_pad}


def _pair(torch, name: str, *args, **kw):
    tm = getattr(torch.nn, name)(*args, **kw)
    lm = getattr(nn, name)(*args, **kw)
    assert list(lm.state_dict()) == list(tm.state_dict())
    lm.load_state_dict(tm.state_dict())
    return lm, tm


def _check_grads(lm, tm, lins, tins) -> None:
    for a, b in zip(lins, tins):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=RTOL, atol=ATOL)
    tp = dict(tm.named_parameters())
    for name, p in lm.named_parameters():
        q = tp[name]
        assert (p.grad is None) == (q.grad is None), name
        if p.grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=RTOL, atol=ATOL,
                                       err_msg=name)


@pytest.mark.parametrize("batch_first,norm_first,activation", [
    (False, False, "relu"), (True, True, "gelu"), (True, False, "callable"),
    (False, True, "module")])
@pytest.mark.parametrize("train", [False, True])
def test_decoder_layer_matches_torch(torch, batch_first, norm_first, activation, train):
    act = {"relu": "relu", "gelu": "gelu", "callable": None, "module": None}[activation]
    kw = dict(dim_feedforward=32, batch_first=batch_first, norm_first=norm_first,
              dropout=0.0 if train else 0.3)
    tact = act or (torch.nn.functional.silu if activation == "callable" else torch.nn.GELU())
    lact = act or (F.silu if activation == "callable" else nn.GELU())
    tm = torch.nn.TransformerDecoderLayer(16, 4, activation=tact, **kw)
    lm = nn.TransformerDecoderLayer(16, 4, activation=lact, **kw)
    assert list(lm.state_dict()) == list(tm.state_dict())
    lm.load_state_dict(tm.state_dict())
    lm.train(train)
    tm.train(train)
    tgt, mem = _inputs(batch_first, np.random.default_rng(0))
    masks = _masks()
    lins = [lucid.tensor(a, requires_grad=True) for a in (tgt, mem)]
    tins = [torch.tensor(a, requires_grad=True) for a in (tgt, mem)]
    lo = lm(*lins, **{k: lucid.tensor(v) for k, v in masks.items()}, tgt_is_causal=True)
    to = tm(*tins, **{k: torch.tensor(v) for k, v in masks.items()}, tgt_is_causal=True)
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=RTOL, atol=ATOL)
    w = np.random.default_rng(1).standard_normal(lo.shape).astype(np.float32)
    (lo * lucid.tensor(w)).sum().backward()
    (to * torch.tensor(w)).sum().backward()
    _check_grads(lm, tm, lins, tins)


def test_decoder_stack_matches_torch(torch):
    layer = torch.nn.TransformerDecoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
    tm = torch.nn.TransformerDecoder(layer, 2, norm=torch.nn.LayerNorm(16))
    lm = nn.TransformerDecoder(nn.TransformerDecoderLayer(16, 4, 32, dropout=0.0,
                                                          batch_first=True), 2,
                               norm=nn.LayerNorm(16))
    assert list(lm.state_dict()) == list(tm.state_dict())
    lm.load_state_dict(tm.state_dict())
    tgt, mem = _inputs(True, np.random.default_rng(2))
    # float masks for the attention over memory and a 3-D (N * nhead, T, T) target mask
    mem_mask = np.random.default_rng(3).standard_normal((5, 6)).astype(np.float32)
    tgt_mask = np.random.default_rng(4).standard_normal((3 * 4, 5, 5)).astype(np.float32)
    lins = [lucid.tensor(a, requires_grad=True) for a in (tgt, mem)]
    tins = [torch.tensor(a, requires_grad=True) for a in (tgt, mem)]
    lo = lm(*lins, tgt_mask=lucid.tensor(tgt_mask), memory_mask=lucid.tensor(mem_mask))
    to = tm(*tins, tgt_mask=torch.tensor(tgt_mask), memory_mask=torch.tensor(mem_mask))
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=RTOL, atol=ATOL)
    lo.sum().backward()
    to.sum().backward()
    _check_grads(lm, tm, lins, tins)
    assert lm.num_layers == 2 and lm.layers[0] is not lm.layers[1]


@pytest.mark.parametrize("batch_first,norm_first,bias", [(False, False, True),
                                                         (True, True, False)])
def test_transformer_matches_torch(torch, batch_first, norm_first, bias):
    lm, tm = _pair(torch, "Transformer", 16, 4, 2, 2, 32, dropout=0.0, batch_first=batch_first,
                   norm_first=norm_first, bias=bias)
    assert lm.d_model == 16 and lm.nhead == 4 and lm.batch_first is batch_first
    rng = np.random.default_rng(5)
    src, _ = _inputs(batch_first, rng, t=7)
    tgt, _ = _inputs(batch_first, rng)
    src_pad = np.zeros((3, 7), bool)
    src_pad[0, -3:] = True
    masks = {k: v for k, v in _masks(s=7).items()}
    masks["src_key_padding_mask"] = src_pad
    lins = [lucid.tensor(a, requires_grad=True) for a in (src, tgt)]
    tins = [torch.tensor(a, requires_grad=True) for a in (src, tgt)]
    lo = lm(*lins, **{k: lucid.tensor(v) for k, v in masks.items()})
    to = tm(*tins, **{k: torch.tensor(v) for k, v in masks.items()})
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=RTOL, atol=ATOL)
    lo.sum().backward()
    to.sum().backward()
    _check_grads(lm, tm, lins, tins)


def test_transformer_unbatched_and_eval_dropout(torch):
    lm, tm = _pair(torch, "Transformer", 8, 2, 1, 1, 16)      # dropout 0.1, off in eval
    lm.eval()
    tm.eval()
    rng = np.random.default_rng(6)
    src = rng.standard_normal((4, 8)).astype(np.float32)
    tgt = rng.standard_normal((3, 8)).astype(np.float32)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(3)
    lo = lm(lucid.tensor(src), lucid.tensor(tgt), tgt_mask=lucid.tensor(mask.numpy()),
            tgt_is_causal=True)
    to = tm(torch.tensor(src), torch.tensor(tgt), tgt_mask=mask, tgt_is_causal=True)
    assert lo.shape == (3, 8)
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=RTOL, atol=ATOL)


def test_transformer_init_and_custom_parts(torch):
    model = nn.Transformer(8, 2, 1, 1, 16)
    for name, p in model.named_parameters():  # xavier-uniform for every matrix
        if p.dim() > 1:
            bound = math.sqrt(6.0 / (p.shape[0] + p.shape[1]))
            assert float(p.abs().max()) <= bound, name
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 1)
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), 3)
    custom = nn.Transformer(8, 2, custom_encoder=enc, custom_decoder=dec)
    assert custom.encoder is enc and custom.decoder is dec
    assert len(custom.decoder.layers) == 3 and custom.encoder.norm is None
    tm = torch.nn.Transformer(8, 2, custom_encoder=torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(8, 2, 16), 1), custom_decoder=torch.nn.TransformerDecoder(
        torch.nn.TransformerDecoderLayer(8, 2, 16), 3))
    assert list(custom.state_dict()) == list(tm.state_dict())


def test_generate_square_subsequent_mask(torch):
    m = nn.Transformer.generate_square_subsequent_mask(4)
    want = np.triu(np.full((4, 4), -np.inf, np.float32), 1)
    assert m.dtype is lucid.float32 and m.shape == (4, 4)
    np.testing.assert_array_equal(m.numpy(), want)
    m64 = nn.Transformer.generate_square_subsequent_mask(3, dtype=lucid.float64)
    assert m64.dtype is lucid.float64
    np.testing.assert_array_equal(m64.numpy(),
                                  torch.nn.Transformer.generate_square_subsequent_mask(
                                      3, dtype=torch.float64).numpy())
    assert nn.Transformer(8, 2, 1, 1, 16).generate_square_subsequent_mask(2).shape == (2, 2)


def _np_mha(q_in, kv_in, in_w, in_b, out_w, out_b, h, mask):
    e = q_in.shape[-1]
    d = e // h
    q = q_in @ in_w[:e].T + in_b[:e]
    k = kv_in @ in_w[e:2 * e].T + in_b[e:2 * e]
    v = kv_in @ in_w[2 * e:].T + in_b[2 * e:]
    n, t, s = q.shape[0], q.shape[1], k.shape[1]
    q, k, v = (a.reshape(n, -1, h, d).transpose(0, 2, 1, 3) for a in (q, k, v))
    sc = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + mask
    sc = np.exp(sc - sc.max(-1, keepdims=True))
    att = sc / sc.sum(-1, keepdims=True)
    out = (att @ v).transpose(0, 2, 1, 3).reshape(n, t, e)
    assert s == kv_in.shape[1]
    return out @ out_w.T + out_b


def _np_ln(x, w, b):
    mu = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * w + b


@pytest.mark.parametrize("device", DEVICES)
def test_decoder_layer_numpy_reference(device):
    """Post-norm decoder layer against plain numpy (batch first, causal mask, key padding)."""
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    sd = {k: v.detach().numpy().astype(np.float64) for k, v in layer.state_dict().items()}
    rng = np.random.default_rng(7)
    tgt = rng.standard_normal((2, 4, 8)).astype(np.float32)
    mem = rng.standard_normal((2, 5, 8)).astype(np.float32)
    pad = np.zeros((2, 5), bool)
    pad[1, -2:] = True
    causal = np.triu(np.full((4, 4), -np.inf), 1)
    layer = layer.to(device)
    out = layer(lucid.tensor(tgt, device=device), lucid.tensor(mem, device=device),
                tgt_mask=nn.Transformer.generate_square_subsequent_mask(4, device=device),
                memory_key_padding_mask=lucid.tensor(pad, device=device))
    assert out.device.type == device

    def mha(prefix, q, kv, mask):
        return _np_mha(q, kv, sd[prefix + "in_proj_weight"], sd[prefix + "in_proj_bias"],
                       sd[prefix + "out_proj.weight"], sd[prefix + "out_proj.bias"], 2, mask)

    x = tgt.astype(np.float64)
    x = _np_ln(x + mha("self_attn.", x, x, causal), sd["norm1.weight"], sd["norm1.bias"])
    pad_add = np.where(pad, -np.inf, 0.0)[:, None, None, :]
    x = _np_ln(x + mha("multihead_attn.", x, mem.astype(np.float64), pad_add),
               sd["norm2.weight"], sd["norm2.bias"])
    ff = np.maximum(x @ sd["linear1.weight"].T + sd["linear1.bias"], 0)
    x = _np_ln(x + ff @ sd["linear2.weight"].T + sd["linear2.bias"], sd["norm3.weight"],
               sd["norm3.bias"])
    np.testing.assert_allclose(out.detach().numpy(), x, rtol=1e-4, atol=1e-5)


def test_decoder_dropout_in_training_is_random_and_off_in_eval():
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.5)
    tgt, mem = lucid.randn(3, 2, 8), lucid.randn(4, 2, 8)
    a, b = layer(tgt, mem), layer(tgt, mem)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    layer.eval()
    np.testing.assert_array_equal(layer(tgt, mem).detach().numpy(),
                                  layer(tgt, mem).detach().numpy())


def test_errors_match_torch(torch):
    def both(fn):
        msgs = []
        for fw in (torch.nn, nn):
            with pytest.raises(Exception) as info:
                fn(fw)
            msgs.append((type(info.value).__name__, str(info.value)))
        assert msgs[0] == msgs[1]
        return msgs[1]

    assert both(lambda m: m.TransformerDecoderLayer(8, 2, activation="tanh")) == (
        "RuntimeError", "activation should be relu/gelu, not tanh")
    assert both(lambda m: m.Transformer(8, 3, 1, 1, 16))[1] == \
        "embed_dim must be divisible by num_heads"
    tm = torch.nn.Transformer(8, 2, 1, 1, 16)
    lm = nn.Transformer(8, 2, 1, 1, 16)

    for shapes in (((5, 2, 8), (4, 3, 8)), ((5, 2, 8), (4, 2, 6))):
        msg = both(lambda m, s=shapes: (tm if m is torch.nn else lm)(
            *((torch.randn if m is torch.nn else lucid.randn)(*sh) for sh in s)))
        assert msg[0] == "RuntimeError" and "must be equal" in msg[1]
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        lm.decoder(lucid.randn(4, 2, 8), lucid.randn(5, 2, 8), tgt_is_causal=True)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        nn.TransformerDecoderLayer(8, 2, 16)(lucid.randn(4, 8), lucid.randn(5, 8),
                                             tgt_is_causal=True)
