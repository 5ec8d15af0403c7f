"""The harness itself: a worker death by signal or a hang is reported, and the worker comes
back for the next case."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fuzz_harness import Worker, WorkerDied, repro


def _code(src: str) -> dict:
    return {"op": "code", "dev": "cpu", "src": src}


@pytest.fixture(scope="module")
def own_worker() -> Iterator[Worker]:
    w = Worker()
    yield w
    w.close()


@pytest.mark.parametrize("src,signame", [
    ("import ctypes; ctypes.string_at(0)", "SIGSEGV"),
    ("import os; os.abort()", "SIGABRT"),
])
def test_signal_death_is_reported_and_worker_restarts(own_worker: Worker, src: str,
                                                      signame: str) -> None:
    with pytest.raises(WorkerDied, match=signame):
        own_worker.run(_code(src))
    assert own_worker.run(_code("x = lucid.ones(2) + 1")) == {"ok": True}


def test_hang_is_reported(own_worker: Worker) -> None:
    with pytest.raises(WorkerDied, match="hang"):
        own_worker.run(_code("import time; time.sleep(60)"), timeout=2)
    assert own_worker.run(_code("lucid.zeros(1)")) == {"ok": True}


def test_python_exception_is_a_clear_error(own_worker: Worker) -> None:
    res = own_worker.run(_code("lucid.zeros(2)[5]"))
    assert not res["ok"] and res["exc"].startswith("IndexError")


def test_repro_of_a_generated_case_replays_it() -> None:
    case = {"op": "take", "dev": "cpu", "x": {"shape": [2]}, "idx": {"shape": [1],
                                                                    "values": [7]}}
    assert "fuzz_worker.py --replay" in repro(case) and '"values": [7]' in repro(case)
