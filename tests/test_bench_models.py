"""The model-level benchmark models (benchmarks/bench_models.py) train correctly on lucid.

Tiny sizes of every model: a few steps give finite losses that go down (the GAN: finite losses
and both networks updated). The benchmark figures mean nothing if the lucid step is wrong.
"""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid.kernels import blas, warmup

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_models.py"
_spec = importlib.util.spec_from_file_location("bench_models", _PATH)
bench_models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_models)

STEPS = 5


@pytest.mark.parametrize("model", [m for m in bench_models.MODELS if m != "dcgan"])
def test_tiny_model_learns(model):
    step = bench_models.make_step(lucid, model, "tiny")
    losses = [float(step().item()) for _ in range(STEPS)]
    assert all(math.isfinite(v) for v in losses), losses
    assert losses[-1] < losses[0], losses


def test_tiny_dcgan_updates_both_networks():
    lucid.manual_seed(0)
    g, d = bench_models.dcgan_nets(lucid.nn, 4, 8)
    assert g(lucid.randn(2, 8, 1, 1)).shape == (2, 3, 32, 32)
    assert d(lucid.randn(2, 3, 32, 32)).shape == (2,)
    step = bench_models.make_step(lucid, "dcgan", "tiny")
    losses = [float(step().item()) for _ in range(STEPS)]
    assert all(math.isfinite(v) for v in losses), losses
    assert len(set(losses)) > 1  # the discriminator's loss moves: parameters were updated


def test_gpt_ties_embedding_and_head():
    lucid.manual_seed(0)
    net = bench_models.gpt_net(lucid, 1, 16, 2, 8, 16)
    assert net.wte.weight is net.lm_head.weight
    n_params = sum(p.numel() for p in net.parameters())
    # tied weight counted once: wte/lm_head 16*16, wpe 8*16, 2 LN + block
    block = 2 * 2 * 16 + (16 * 48 + 48) + (16 * 16 + 16) + (16 * 64 + 64) + (64 * 16 + 16)
    assert n_params == 16 * 16 + 8 * 16 + block + 2 * 16


def test_time_steps_and_unknown_model():
    step = bench_models.make_step(lucid, "mlp", "tiny")
    ms = bench_models.time_steps(step, warm=1, steps=2)
    assert len(ms) == 2 and all(np.isfinite(ms)) and min(ms) > 0
    with pytest.raises(ValueError, match="unknown model 'vgg'"):
        bench_models.make_step(lucid, "vgg")


@pytest.mark.slow
def test_compare_interleaved_runs_both_frameworks():
    """``compare.py --interleave``: two warm processes, alternated batches, a ratio table."""
    pytest.importorskip("torch")
    script = _PATH.parent / "compare.py"
    res = subprocess.run([sys.executable, str(script), "--interleave", "--rounds", "2",
                          "--models", "mlp"], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    row = next(line for line in res.stdout.splitlines() if line.startswith("mlp ("))
    lucid_ms, torch_ms, ratio = row.split(")")[-1].split()
    assert float(lucid_ms) > 0 and float(torch_ms) > 0
    assert math.isclose(float(ratio.rstrip("x")), float(lucid_ms) / float(torch_ms), rel_tol=0.6)
    assert "2 rounds of 12 step(s)" in res.stderr  # the MLP: batches of 12 steps


def test_model_steps_call_only_warmed_signatures() -> None:
    """After ``warmup`` a model's first step loads every kernel from the cache: each kernel
    it calls is called with a signature ``warmup`` compiles (a bool where the signature says
    int, say, would compile a second build on every fresh machine). Every benchmark model's
    step, and the pool's products (with and without a bias row, pairs, batches). Only the
    builds these calls add are checked (other tests may call kernels on purpose with arrays
    no model passes, read-only ones say)."""
    reg = warmup.registry()
    before = {name: set(map(tuple, getattr(e.dispatcher, "signatures", ())))
              for name, e in reg.items()}
    for model in bench_models.MODELS:
        bench_models.make_step(lucid, model, "tiny")()
    r = np.random.default_rng(0)
    for dt in (np.float32, np.float64):
        a, b, bias = (r.standard_normal(s).astype(dt) for s in ((96, 64), (64, 80), 80))
        blas.gemm(a, b, bias), blas.gemm(a, b), blas.gemm_pair(a, b, a.T, a)
        blas.bmm(np.stack([a] * 3), b)
    checked = 0
    for name, entry in reg.items():
        disp = entry.dispatcher
        if not entry.signatures or not hasattr(disp, "signatures"):
            continue
        declared = {tuple(s) for dt in ("float32", "float64") for s in entry.signatures_for(dt)}
        for sig in disp.signatures:
            checked += 1
            if tuple(sig) not in before[name]:
                assert tuple(sig) in declared, (name, sig)
    assert checked > 50
