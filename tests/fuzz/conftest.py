"""Crash fuzz suite: one worker process per test module, and a summary line at the end."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fuzz_harness  # noqa: E402


@pytest.fixture(scope="module")
def worker() -> Iterator[fuzz_harness.Worker]:
    """A long-lived child process that runs cases; replaced whenever a case kills it."""
    w = fuzz_harness.Worker()
    yield w
    w.close()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    s = fuzz_harness.STATS
    if s["cases"]:
        terminalreporter.write_line(
            f"fuzz: {s['cases']} cases, {s['crashes']} crashes, {s['hangs']} hangs "
            f"({s['errors']} raised a Python exception)")
