"""Second derivatives over the whole op table: ``gradgradcheck`` in float64 (gradients of
gradients against finite differences of the create_graph gradients). Every sample runs on
"cpu"; the "numpy" and "gpu" devices run each op's first sample (the backward code is the
same on every device, the backend methods under it differ)."""

from __future__ import annotations

import pytest
from devices import DEVICES
from op_db import OP_DB
from opinfo import Sample, bind, cases, lucid_leaves

from lucid.autograd import gradgradcheck


@pytest.fixture(params=[d for d in DEVICES if d != "cpu"])
def backend(request: pytest.FixtureRequest) -> str:
    """The devices besides "cpu" (which runs every sample)."""
    return request.param


def _wanted(s: Sample) -> bool:
    return s.fd and any(t.grad and t.is_float for t in s.tensors) and \
        sum(t.value.size for t in s.tensors) <= 64


CASES = [p for p in cases(OP_DB, lambda i: i.grad) if _wanted(p.values[1])]
FIRST = []
_seen: set[str] = set()
for _p in CASES:
    if _p.values[0].name not in _seen:
        _seen.add(_p.values[0].name)
        FIRST.append(_p)


@pytest.mark.parametrize("info,sample", CASES)
@pytest.mark.float64("a float64 gradgradcheck")
def test_gradgradcheck(info, sample: Sample) -> None:
    _check(info, sample, "cpu")


@pytest.mark.parametrize("info,sample", FIRST)
@pytest.mark.float64("a float64 gradgradcheck")
def test_gradgradcheck_devices(info, sample: Sample, backend: str) -> None:
    _check(info, sample, backend)


def _check(info, sample: Sample, backend: str) -> None:
    leaves = lucid_leaves(sample, backend)
    assert gradgradcheck(bind(info.lucid_fn(), sample), leaves, eps=1e-6, atol=1e-5,
                         rtol=1e-3)
