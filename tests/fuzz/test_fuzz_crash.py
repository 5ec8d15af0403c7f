"""Random cases for every fuzzed op on every device, run in a worker process: a signal death
or a hang fails the test with the case and a replay command; a Python exception passes.

``LUCID_FUZZ_EXAMPLES`` scales the number of cases per (op family, device) for deeper runs;
``LUCID_FUZZ_SEED`` replaces the fixed derandomized sequence by a seeded one (other cases).
"""

from __future__ import annotations

import os
from typing import Any

import fuzz_strategies as fs
import fuzz_strategies_nn as fn
import pytest
from fuzz_harness import DEVICES, Worker, check
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

FAMILIES: dict[str, Any] = {
    "getitem": fs.getitem,
    "setitem": lambda dev: fs.getitem(dev, "setitem"),
    "index_select": fs.index_select,
    "gather": fs.gather,
    "scatter": lambda dev: fs.gather(dev, "scatter"),
    "take": fs.take,
    "masked": fs.masked,
    "embedding": fs.embedding,
    "one_hot": fs.one_hot,
    "loss": fs.loss,
    "pool": fn.pool,
    "conv": fn.conv,
    "unfold": fn.unfold,
    "interpolate": fn.interpolate,
    "sort": fn.sort,
    "reduce": fn.reduce,
    "movement": fn.movement,
    "matmul": fn.matmul,
    "cat": fn.cat,
    "norm": fn.norm,
    "pointwise": fn.pointwise,
}

EXAMPLES = int(os.environ.get("LUCID_FUZZ_EXAMPLES", "40"))
SEED = os.environ.get("LUCID_FUZZ_SEED")

# NOTE: no shrinking: after a crash every shrink step would restart the worker (an import of
# lucid each); the first failing case is printed as found, with its replay command.
FUZZ = settings(max_examples=EXAMPLES, derandomize=SEED is None, deadline=None, database=None,
                phases=(Phase.explicit, Phase.generate),
                suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("family", list(FAMILIES))
@FUZZ
@seed(int(SEED or 0))
@given(data=st.data())
def test_no_crash(worker: Worker, family: str, dev: str, data: st.DataObject) -> None:
    check(worker, data.draw(FAMILIES[family](dev), label="case"))
