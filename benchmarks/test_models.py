"""Model-level training-step benchmarks, lucid vs torch, one test per (model, framework).

The models live in ``bench_models.py`` and are built by the same code for both frameworks.
Run each framework in its own process (in one process numba shares torch's OpenMP pool and
both slow down)::

    python -m pytest benchmarks/test_models.py -k lucid -p no:cacheprovider
    python -m pytest benchmarks/test_models.py -k torch -p no:cacheprovider

or, for alternating rounds and a ratio table, ``python benchmarks/compare.py``.
"""

from __future__ import annotations

import math

import pytest
from bench_models import MODELS, TITLES, make_step

# rounds per benchmark: the big models are slow on lucid, keep each test short
ROUNDS = {"resnet18": 3, "dcgan": 5, "lstm_lm": 5}


def _run(benchmark, fw, model: str) -> None:
    benchmark.group = f"train step {TITLES[model]}"
    step = make_step(fw, model)
    first = float(step().item())
    benchmark.pedantic(lambda: step().item(), rounds=ROUNDS.get(model, 10), iterations=1,
                       warmup_rounds=1)
    assert math.isfinite(first)


@pytest.mark.parametrize("model", MODELS)
def test_model_step_lucid(benchmark, model):
    import lucid  # NOTE: here, so that a ``-k torch`` run never loads lucid's kernels

    _run(benchmark, lucid, model)


@pytest.mark.parametrize("model", MODELS)
def test_model_step_torch(benchmark, model, torch_or_skip):
    _run(benchmark, torch_or_skip, model)
