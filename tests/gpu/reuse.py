"""Collect another test module's backend-parametrized tests into a gpu test module."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Any

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def backend_tests(folder: str, module: str, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """``{name: test}`` for the tests of ``tests/<folder>/<module>.py`` that take ``backend``
    (they then run with this folder's ``backend`` fixture, i.e. on "gpu")."""
    path = os.path.join(TESTS, folder) if folder else TESTS
    if path not in sys.path:
        sys.path.insert(0, path)
    mod = importlib.import_module(module)
    out = {}
    for name, fn in vars(mod).items():
        if name.startswith("test_") and callable(fn) and name not in skip \
                and "backend" in inspect.signature(fn).parameters:
            out[f"test_{module[5:]}__{name[5:]}"] = fn
    return out
