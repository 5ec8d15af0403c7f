"""Model-level training steps, written once for any torch-compatible framework module.

``make_step(fw, model, size="bench")`` builds one model with ``fw`` (``lucid`` or ``torch``:
the same code builds both) and returns a ``step()`` closure that runs one training step
(forward, loss, backward, optimizer step) on fixed random data and returns the loss tensor.

Models (``size="bench"``; ``size="tiny"`` shrinks every one for quick correctness checks):

- ``mlp``: MLP 784-512-256-10, batch 128, SGD;
- ``cnn``: the small CNN of ``test_training.py`` (28x28, batch 64, Adam);
- ``gpt``: nanoGPT-style decoder, 4 layers, 128 wide, 4 heads, block 64, batch 16,
  vocab 256, AdamW, ``clip_grad_norm_(1.0)``;
- ``resnet18``: CIFAR-style ResNet-18 (32x32, batch 32), SGD momentum 0.9;
- ``dcgan``: DCGAN generator + discriminator at 32x32 (ngf=ndf=32, nz=100, batch 32), Adam,
  BCE; one D step and one G step;
- ``transformer``: 2-layer ``nn.TransformerEncoder`` classifier, d_model 128, 4 heads,
  seq 64, batch 32, Adam;
- ``lstm_lm``: the word language model of ``test_rnn.py`` (2-layer LSTM 200, bptt 35,
  batch 20, vocab 10k, SGD lr 20, ``clip_grad_norm_(0.25)``);
- ``mingpt``: ``gpt``'s sizes written as minGPT writes its model: attention by hand (q @ k^T,
  ``masked_fill`` with a ``tril`` buffer, softmax, dropout, @ v), the tanh GELU composed of
  tensor ops (``pow``, ``tanh``, scalar products), dropout 0.1, AdamW, clip 1.0.

This module imports neither framework: each benchmark process imports only its own.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

MODELS: tuple[str, ...] = ("mlp", "cnn", "gpt", "resnet18", "dcgan", "transformer", "lstm_lm",
                           "mingpt")

TITLES: dict[str, str] = {
    "mlp": "MLP 784-512-256-10 b128 SGD",
    "cnn": "CNN 28x28 b64 Adam",
    "gpt": "nanoGPT 4x128 h4 T64 b16 V256 AdamW+clip",
    "resnet18": "ResNet-18 CIFAR 32x32 b32 SGD-m",
    "dcgan": "DCGAN G+D 32x32 b32 Adam",
    "transformer": "TransformerEncoder 2x128 h4 T64 b32",
    "lstm_lm": "LSTM word LM 2x200 T35 b20 V10k",
    "mingpt": "minGPT-style 4x128 h4 T64 b16 V256 drop0.1",
}

SIZES: dict[str, dict[str, dict[str, int]]] = {
    "bench": {
        "mlp": {"batch": 128, "d_in": 784, "h1": 512, "h2": 256},
        "cnn": {"batch": 64},
        "gpt": {"layers": 4, "width": 128, "heads": 4, "block": 64, "batch": 16, "vocab": 256},
        "resnet18": {"batch": 32, "width": 64},
        "dcgan": {"batch": 32, "ngf": 32, "nz": 100},
        "transformer": {"layers": 2, "width": 128, "heads": 4, "seq": 64, "batch": 32,
                        "vocab": 1000},
        "lstm_lm": {"vocab": 10_000, "emb": 200, "hid": 200, "bptt": 35, "batch": 20},
        "mingpt": {"layers": 4, "width": 128, "heads": 4, "block": 64, "batch": 16, "vocab": 256,
                   "drop": 0.1},
    },
    "tiny": {
        "mlp": {"batch": 8, "d_in": 32, "h1": 16, "h2": 16},
        "cnn": {"batch": 8},
        "gpt": {"layers": 1, "width": 16, "heads": 2, "block": 8, "batch": 2, "vocab": 16},
        "resnet18": {"batch": 2, "width": 4},
        "dcgan": {"batch": 4, "ngf": 4, "nz": 8},
        "transformer": {"layers": 1, "width": 16, "heads": 2, "seq": 8, "batch": 4,
                        "vocab": 20},
        "lstm_lm": {"vocab": 50, "emb": 8, "hid": 8, "bptt": 5, "batch": 2},
        "mingpt": {"layers": 1, "width": 16, "heads": 2, "block": 8, "batch": 2, "vocab": 16,
                   "drop": 0.0},
    },
}


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _classify_step(fw: ModuleType, model: Any, opt: Any, x: Any, y: Any) -> Callable[[], Any]:
    F = fw.nn.functional

    def step() -> Any:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


# --------------------------------------------------------------------------- MLP and CNN


def mlp_net(nn: ModuleType, d_in: int = 784, h1: int = 512, h2: int = 256) -> Any:
    """Linear-ReLU-Linear-ReLU-Linear to 10 classes."""
    return nn.Sequential(nn.Linear(d_in, h1), nn.ReLU(), nn.Linear(h1, h2), nn.ReLU(),
                         nn.Linear(h2, 10))


def cnn_net(nn: ModuleType) -> Any:
    """Two conv3x3-BN-ReLU-maxpool stages and a linear head, for 1x28x28 inputs."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10),
    )


def _mlp(fw: ModuleType, batch: int, d_in: int, h1: int, h2: int) -> Callable[[], Any]:
    r = _rng()
    model = mlp_net(fw.nn, d_in, h1, h2)
    x = fw.tensor(r.standard_normal((batch, d_in), dtype=np.float32))
    y = fw.tensor(r.integers(0, 10, batch))
    return _classify_step(fw, model, fw.optim.SGD(model.parameters(), lr=0.01), x, y)


def _cnn(fw: ModuleType, batch: int) -> Callable[[], Any]:
    r = _rng()
    model = cnn_net(fw.nn)
    x = fw.tensor(r.standard_normal((batch, 1, 28, 28), dtype=np.float32))
    y = fw.tensor(r.integers(0, 10, batch))
    return _classify_step(fw, model, fw.optim.Adam(model.parameters(), lr=1e-3), x, y)


# --------------------------------------------------------------------------- nanoGPT


def gpt_net(fw: ModuleType, layers: int, width: int, heads: int, block: int, vocab: int) -> Any:
    """nanoGPT's decoder (pre-LN blocks, fused qkv projection, tied embedding/head)."""
    nn, F = fw.nn, fw.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_attn = nn.Linear(width, 3 * width)
            self.c_proj = nn.Linear(width, width)

        def forward(self, x: Any) -> Any:
            B, T, C = x.shape
            q, k, v = self.c_attn(x).split(width, dim=2)
            q = q.view(B, T, heads, C // heads).transpose(1, 2)
            k = k.view(B, T, heads, C // heads).transpose(1, 2)
            v = v.view(B, T, heads, C // heads).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(width)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(width)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                     nn.Linear(4 * width, width))

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(vocab, width)
            self.wpe = nn.Embedding(block, width)
            self.h = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(width)
            self.lm_head = nn.Linear(width, vocab, bias=False)
            self.wte.weight = self.lm_head.weight  # weight tying, as nanoGPT

        def forward(self, idx: Any, targets: Any) -> Any:
            T = idx.shape[1]
            x = self.wte(idx) + self.wpe(fw.arange(T))
            for blk in self.h:
                x = blk(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, vocab), targets.view(-1))

    return GPT()


def _gpt(fw: ModuleType, layers: int, width: int, heads: int, block: int, batch: int,
         vocab: int, drop: float | None = None) -> Callable[[], Any]:
    """nanoGPT's training step; with ``drop``, on minGPT's model (``mingpt_net``)."""
    r = _rng()
    model = gpt_net(fw, layers, width, heads, block, vocab) if drop is None else \
        mingpt_net(fw, layers, width, heads, block, vocab, drop)
    data = r.integers(0, vocab, (batch, block + 1))
    x, y = fw.tensor(data[:, :-1]), fw.tensor(data[:, 1:])
    opt = fw.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)
    clip = fw.nn.utils.clip_grad_norm_

    def step() -> Any:
        opt.zero_grad()
        loss = model(x, y)
        loss.backward()
        clip(model.parameters(), 1.0)
        opt.step()
        return loss

    return step


# --------------------------------------------------------------------------- minGPT


def mingpt_net(fw: ModuleType, layers: int, width: int, heads: int, block: int, vocab: int,
               drop: float) -> Any:
    """minGPT's model (karpathy/minGPT ``model.py``): the same decoder as ``gpt_net``, its
    attention and GELU written out in tensor ops, dropout after embeddings, attention and
    each residual branch."""
    nn, F = fw.nn, fw.nn.functional

    class NewGELU(nn.Module):
        def forward(self, x: Any) -> Any:
            return 0.5 * x * (1.0 + fw.tanh(math.sqrt(2.0 / math.pi)
                                            * (x + 0.044715 * fw.pow(x, 3.0))))

    class CausalSelfAttention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_attn = nn.Linear(width, 3 * width)
            self.c_proj = nn.Linear(width, width)
            self.attn_dropout = nn.Dropout(drop)
            self.resid_dropout = nn.Dropout(drop)
            self.register_buffer("bias", fw.tril(fw.ones(block, block)).view(1, 1, block, block))

        def forward(self, x: Any) -> Any:
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(width, dim=2)
            k = k.view(B, T, heads, C // heads).transpose(1, 2)
            q = q.view(B, T, heads, C // heads).transpose(1, 2)
            v = v.view(B, T, heads, C // heads).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = self.attn_dropout(F.softmax(att, dim=-1))
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(width)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(width)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), NewGELU(),
                                     nn.Linear(4 * width, width), nn.Dropout(drop))

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(vocab, width)
            self.wpe = nn.Embedding(block, width)
            self.drop = nn.Dropout(drop)
            self.h = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(width)
            self.lm_head = nn.Linear(width, vocab, bias=False)

        def forward(self, idx: Any, targets: Any) -> Any:
            pos = fw.arange(0, idx.size(1), dtype=fw.long).unsqueeze(0)
            x = self.drop(self.wte(idx) + self.wpe(pos))
            for blk in self.h:
                x = blk(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)

    return GPT()


# --------------------------------------------------------------------------- ResNet-18


def resnet18_net(nn: ModuleType, width: int = 64, num_classes: int = 10) -> Any:
    """CIFAR ResNet-18: 3x3 stem, no max-pool, four stages of two BasicBlocks."""

    class BasicBlock(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                              nn.BatchNorm2d(cout))

        def forward(self, x: Any) -> Any:
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + self.shortcut(x))

    chans = [width, 2 * width, 4 * width, 8 * width]
    stages, cin = [], width
    for i, c in enumerate(chans):
        stages += [BasicBlock(cin, c, 1 if i == 0 else 2), BasicBlock(c, c, 1)]
        cin = c
    return nn.Sequential(nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width),
                         nn.ReLU(), *stages, nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(),
                         nn.Linear(chans[-1], num_classes))


def _resnet18(fw: ModuleType, batch: int, width: int) -> Callable[[], Any]:
    r = _rng()
    model = resnet18_net(fw.nn, width)
    x = fw.tensor(r.standard_normal((batch, 3, 32, 32), dtype=np.float32))
    y = fw.tensor(r.integers(0, 10, batch))
    opt = fw.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return _classify_step(fw, model, opt, x, y)


# --------------------------------------------------------------------------- DCGAN


def dcgan_nets(nn: ModuleType, ngf: int, nz: int) -> tuple[Any, Any]:
    """DCGAN generator (nz -> 3x32x32) and discriminator (3x32x32 -> probability)."""
    g = nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(),
        nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2),
        nn.ReLU(),
        nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(),
        nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh(),
    )
    ndf = ngf
    d = nn.Sequential(
        nn.Conv2d(3, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2),
        nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2),
        nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 4),
        nn.LeakyReLU(0.2),
        nn.Conv2d(ndf * 4, 1, 4, 1, 0, bias=False), nn.Sigmoid(), nn.Flatten(0),
    )
    return g, d


def _dcgan(fw: ModuleType, batch: int, ngf: int, nz: int) -> Callable[[], Any]:
    r = _rng()
    g, d = dcgan_nets(fw.nn, ngf, nz)
    real = fw.tensor(np.tanh(r.standard_normal((batch, 3, 32, 32), dtype=np.float32)))
    noise = fw.tensor(r.standard_normal((batch, nz, 1, 1), dtype=np.float32))
    ones, zeros = fw.ones(batch), fw.zeros(batch)
    crit = fw.nn.BCELoss()
    opt_d = fw.optim.Adam(d.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_g = fw.optim.Adam(g.parameters(), lr=2e-4, betas=(0.5, 0.999))

    def step() -> Any:
        opt_d.zero_grad()
        err_real = crit(d(real), ones)
        err_real.backward()
        fake = g(noise)
        err_fake = crit(d(fake.detach()), zeros)
        err_fake.backward()
        opt_d.step()
        opt_g.zero_grad()
        err_g = crit(d(fake), ones)
        err_g.backward()
        opt_g.step()
        return err_real + err_fake

    return step


# --------------------------------------------------------------------------- Transformer


def transformer_net(nn: ModuleType, layers: int, width: int, heads: int, vocab: int,
                    seq: int, classes: int = 4) -> Any:
    """Token + position embeddings, ``nn.TransformerEncoder``, mean pool, linear head."""

    class Classifier(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok = nn.Embedding(vocab, width)
            self.pos = nn.Embedding(seq, width)
            layer = nn.TransformerEncoderLayer(width, heads, dim_feedforward=4 * width,
                                               batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.head = nn.Linear(width, classes)

        def forward(self, x: Any) -> Any:
            h = self.tok(x) + self.pos.weight[: x.shape[1]]
            return self.head(self.encoder(h).mean(1))

    return Classifier()


def _transformer(fw: ModuleType, layers: int, width: int, heads: int, seq: int, batch: int,
                 vocab: int) -> Callable[[], Any]:
    r = _rng()
    model = transformer_net(fw.nn, layers, width, heads, vocab, seq)
    x = fw.tensor(r.integers(0, vocab, (batch, seq)))
    y = fw.tensor(r.integers(0, 4, batch))
    return _classify_step(fw, model, fw.optim.Adam(model.parameters(), lr=1e-3), x, y)


# --------------------------------------------------------------------------- LSTM word LM


def word_lm_net(nn: ModuleType, vocab: int, emb: int, hid: int) -> Any:
    """The PyTorch word_language_model example: Embedding -> 2-layer LSTM -> Linear."""

    class WordLM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.drop = nn.Dropout(0.2)
            self.encoder = nn.Embedding(vocab, emb)
            self.rnn = nn.LSTM(emb, hid, 2, dropout=0.2)
            self.decoder = nn.Linear(hid, vocab)

        def forward(self, x: Any, hidden: Any) -> Any:
            out, hidden = self.rnn(self.drop(self.encoder(x)), hidden)
            return self.decoder(self.drop(out)).reshape(-1, vocab), hidden

    return WordLM()


def _lstm_lm(fw: ModuleType, vocab: int, emb: int, hid: int, bptt: int, batch: int
             ) -> Callable[[], Any]:
    r = _rng()
    model = word_lm_net(fw.nn, vocab, emb, hid)
    tokens = r.integers(0, vocab, (bptt + 1, batch))
    x, y = fw.tensor(tokens[:-1]), fw.tensor(tokens[1:].reshape(-1))
    opt = fw.optim.SGD(model.parameters(), lr=20.0)
    return lm_step(model, x, y, opt, fw.nn.functional, fw.nn.utils.clip_grad_norm_)


def lm_step(model: Any, x: Any, y: Any, opt: Any, F: Any, clip: Any) -> Callable[[], Any]:
    """The word-language-model training step (truncated BPTT: the state carries over,
    detached; gradients clipped at 0.25), for either framework."""
    state: dict[str, Any] = {"h": None}

    def step() -> Any:
        h = state["h"]
        if h is not None:
            h = tuple(t.detach() for t in h)
        opt.zero_grad()
        out, state["h"] = model(x, h)
        loss = F.cross_entropy(out, y)
        loss.backward()
        clip(model.parameters(), 0.25)
        opt.step()
        return loss

    return step


_BUILDERS: dict[str, Callable[..., Callable[[], Any]]] = {
    "mlp": _mlp, "cnn": _cnn, "gpt": _gpt, "resnet18": _resnet18, "dcgan": _dcgan,
    "transformer": _transformer, "lstm_lm": _lstm_lm, "mingpt": _gpt,
}


def make_step(fw: ModuleType, model: str, size: str = "bench") -> Callable[[], Any]:
    """One training step of ``model`` built with framework module ``fw`` (seeded, fixed data).

    Example::

        import lucid
        step = make_step(lucid, "gpt")
        loss = step()          # forward, loss, backward, optimizer step
    """
    if model not in _BUILDERS:
        raise ValueError(f"unknown model {model!r}; choose from {', '.join(MODELS)}")
    fw.manual_seed(0)
    return _BUILDERS[model](fw, **SIZES[size][model])


def time_steps(step: Callable[[], Any], warm: int, steps: int) -> list[float]:
    """Run ``warm`` untimed steps, then ``steps`` timed ones; milliseconds per step."""
    for _ in range(warm):
        step().item()
    out = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step().item()  # .item() waits for the value, as a training loop logging the loss does
        out.append((time.perf_counter() - t0) * 1e3)
    return out
