"""Recurrent training-step benchmarks, float32: one forward + backward + optimizer step.

- word language model (the PyTorch example's shape): Embedding(10k, 200) -> 2-layer LSTM(200)
  -> Linear(200, 10k), bptt 35, batch 20, states carried (detached) between steps,
  clip_grad_norm_(0.25), SGD lr 20;
- GRU classifier over a packed batch of variable-length token sequences: Embedding(5k, 64) ->
  GRU(64, 128) -> Linear(128, 4), batch 32, lengths up to 50, Adam;
- Elman RNN layer alone: RNN(512, 512, 2 layers, tanh), T 35, batch 20, forward + backward
  of the summed output.

lucid on "cpu" (numpy + numba kernels) vs lucid on its numpy-only reference backend
("numpy") vs torch, same architecture, batch and optimizer, side by side in one run.
"""

from __future__ import annotations

import numpy as np
import pytest
from bench_models import lm_step, word_lm_net

import lucid
import lucid.nn as lnn
import lucid.nn.functional as LF
import lucid.optim as loptim

VOCAB, EMB, HID, BPTT, BATCH = 10_000, 200, 200, 35, 20
rng = np.random.default_rng(0)
TOKENS = rng.integers(0, VOCAB, (BPTT + 1, BATCH))
CLS_VOCAB, CLS_B, CLS_T = 5_000, 32, 50
CLS_X = rng.integers(1, CLS_VOCAB, (CLS_B, CLS_T))
CLS_LEN = np.sort(rng.integers(5, CLS_T + 1, CLS_B))[::-1].copy()
CLS_LEN[0] = CLS_T
rng.shuffle(CLS_LEN)
CLS_Y = rng.integers(0, 4, CLS_B)
ELMAN_X = rng.standard_normal((BPTT, BATCH, 512)).astype(np.float32)


def _lm(nn):
    return word_lm_net(nn, VOCAB, EMB, HID)  # shared with test_models.py


def _classifier(nn):
    class GRUClassifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(CLS_VOCAB, 64)
            self.rnn = nn.GRU(64, 128, batch_first=True)
            self.head = nn.Linear(128, 4)

        def forward(self, x, lengths, pack):
            packed = pack(self.emb(x), lengths, batch_first=True, enforce_sorted=False)
            _, h = self.rnn(packed)
            return self.head(h[-1])

    return GRUClassifier()


def _lm_step(fw, nn, F, optim, clip, device=None):
    fw.manual_seed(0)
    model = _lm(nn) if device is None else _lm(nn).to(device)
    kw = {} if device is None else {"device": device}
    x = fw.tensor(TOKENS[:-1], **kw)
    y = fw.tensor(TOKENS[1:].reshape(-1), **kw)
    return lm_step(model, x, y, optim.SGD(model.parameters(), lr=20.0), F, clip)


def _cls_step(fw, nn, F, optim, pack, device=None):
    fw.manual_seed(0)
    model = _classifier(nn) if device is None else _classifier(nn).to(device)
    kw = {} if device is None else {"device": device}
    x, y = fw.tensor(CLS_X, **kw), fw.tensor(CLS_Y, **kw)
    lengths = CLS_LEN.tolist()
    opt = optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x, lengths, pack), y)
        loss.backward()
        opt.step()
        return loss

    return step


def _elman_step(fw, nn, device=None):
    fw.manual_seed(0)
    rnn = nn.RNN(512, 512, 2) if device is None else nn.RNN(512, 512, 2).to(device)
    kw = {} if device is None else {"device": device}
    x = fw.tensor(ELMAN_X, requires_grad=True, **kw)

    def step():
        x.grad = None
        rnn.zero_grad()
        y, _ = rnn(x)
        y.sum().backward()
        return x.grad

    return step


def _lucid(kind: str, device: str):
    if kind == "elman":
        return _elman_step(lucid, lnn, device)
    if kind == "lm":
        return _lm_step(lucid, lnn, LF, loptim, lnn.utils.clip_grad_norm_, device)
    return _cls_step(lucid, lnn, LF, loptim, lnn.utils.rnn.pack_padded_sequence, device)


def _torch(torch, kind: str):
    if kind == "elman":
        return _elman_step(torch, torch.nn)
    if kind == "lm":
        return _lm_step(torch, torch.nn, torch.nn.functional, torch.optim,
                        torch.nn.utils.clip_grad_norm_)
    return _cls_step(torch, torch.nn, torch.nn.functional, torch.optim,
                     torch.nn.utils.rnn.pack_padded_sequence)


GROUPS = {"lm": "train step LSTM word LM 2x200 bptt35 b20 vocab10k SGD+clip",
          "cls": "train step GRU classifier packed b32 T<=50 Adam",
          "elman": "fwd+bwd RNN tanh 2x512 T35 b20"}


def test_elman_gradients_match_the_reference_backend():
    """The benchmark's Elman layer on "cpu" (the sequence kernel) against the numpy
    reference backend: the input gradient it returns."""
    a, b = _lucid("elman", "cpu")(), _lucid("elman", "numpy")()
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("kind", ["lm", "cls"])
def test_rnn_step_lucid(benchmark, kind):
    benchmark.group = GROUPS[kind]
    step = _lucid(kind, "cpu")
    first = step().item()
    benchmark(step)
    assert step().item() < first  # it is learning


@pytest.mark.parametrize("kind", ["elman"])
def test_rnn_layer_lucid(benchmark, kind):
    benchmark.group = GROUPS[kind]
    benchmark(_lucid(kind, "cpu"))


@pytest.mark.parametrize("kind", ["elman"])
def test_rnn_layer_torch(benchmark, kind, torch_or_skip):
    benchmark.group = GROUPS[kind]
    benchmark(_torch(torch_or_skip, kind))


@pytest.mark.parametrize("kind", ["lm", "cls", "elman"])
def test_rnn_step_lucid_numpy_backend(benchmark, kind):
    benchmark.group = GROUPS[kind]
    step = _lucid(kind, "numpy")
    step()
    benchmark.pedantic(step, rounds=5, iterations=1)


@pytest.mark.parametrize("kind", ["lm", "cls"])
def test_rnn_step_torch(benchmark, kind, torch_or_skip):
    benchmark.group = GROUPS[kind]
    step = _torch(torch_or_skip, kind)
    step()
    benchmark(step)
