"""Fixtures for the nn tests: ``both`` runs one scenario under torch and under lucid and
compares what each printed (with "torch" read as "lucid")."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture
def both(torch: object) -> object:
    """``both(scenario)``: ``scenario(fw, nn)`` returns a list of strings; the lists from
    ``(torch, torch.nn)`` and ``(lucid, lucid.nn)`` must match after renaming torch."""
    import lucid
    import lucid.nn as lnn

    def run(scenario: object) -> list[str]:
        t_out = [s.replace("torch", "lucid") for s in scenario(torch, torch.nn)]  # type: ignore
        l_out = scenario(lucid, lnn)  # type: ignore[operator]
        assert l_out == t_out
        return l_out

    return run

