"""Cold start, lucid vs torch: a fresh process from its start to the end of its first training
step (import, build, step), for the small CNN, the nanoGPT decoder, ResNet-18 and the LSTM
language model (``bench_models.py``).

- ``lucid-cold``: a new empty ``LUCID_CACHE_DIR`` for every round (a fresh container);
- ``lucid-warm``: a cache holding every kernel the model calls;
- ``torch``: a fresh torch process.

Each round is its own interpreter, so frameworks never share a process. For the ratio table
(alternating rounds, median ratios) run ``python benchmarks/cold_start.py``::

    python -m pytest benchmarks/test_cold_start.py --benchmark-enable -p no:cacheprovider
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from cold_start import COLD_MODELS, fill, fresh_first_step

ROUNDS = 3


@pytest.fixture(scope="module")
def warm_caches() -> Iterator[dict[str, str]]:
    """One filled kernel cache per model, made on first use."""
    made: dict[str, str] = {}
    yield made
    for d in made.values():
        shutil.rmtree(d, ignore_errors=True)


def _timed(benchmark, fn, setup=None) -> None:
    seconds: list[float] = []

    def run(*args):
        seconds.append(fn(*args)["seconds"])

    benchmark.pedantic(run, setup=setup, rounds=ROUNDS, iterations=1)
    benchmark.extra_info["first_step_end_s"] = seconds


@pytest.mark.slow
@pytest.mark.parametrize("model", COLD_MODELS)
def test_cold_start_lucid_cold(benchmark, model: str, tmp_path: Path) -> None:
    benchmark.group = f"cold start {model}"
    n = iter(range(1000))

    def setup():
        d = tmp_path / f"cache{next(n)}"
        d.mkdir()
        return (str(d),), {}

    _timed(benchmark, lambda cache: fresh_first_step("lucid", model, cache), setup)


@pytest.mark.slow
@pytest.mark.parametrize("model", COLD_MODELS)
def test_cold_start_lucid_warm(benchmark, model: str, warm_caches: dict[str, str]) -> None:
    benchmark.group = f"cold start {model}"
    if model not in warm_caches:
        warm_caches[model] = tempfile.mkdtemp(prefix="lucid-warm-")
        fill(model, warm_caches[model])
    _timed(benchmark, lambda: fresh_first_step("lucid", model, warm_caches[model]))


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")
@pytest.mark.parametrize("model", COLD_MODELS)
def test_cold_start_torch(benchmark, model: str) -> None:
    benchmark.group = f"cold start {model}"
    _timed(benchmark, lambda: fresh_first_step("torch", model))
