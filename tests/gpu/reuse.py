"""Collect another test module's backend-parametrized tests into a gpu test module."""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import sys
from typing import Any

import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _marked_float64(fn: Any) -> Any:
    @functools.wraps(fn)
    def test(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    # marks the wrapper, not the original module's test
    return pytest.mark.float64("float64 data against float64 numpy references")(test)


def backend_tests(folder: str, module: str, skip: tuple[str, ...] = (),
                  float64: bool = False) -> dict[str, Any]:
    """``{name: test}`` for the tests of ``tests/<folder>/<module>.py`` that take ``backend``
    (they then run with this folder's ``backend`` fixture, i.e. on "gpu"). ``float64``: the
    module's tests compare float64 data with float64 numpy references, so they are marked
    ``float64`` (skipped, with that reason, on a stream without float64)."""
    path = os.path.join(TESTS, folder) if folder else TESTS
    if path not in sys.path:
        sys.path.insert(0, path)
    mod = importlib.import_module(module)
    out = {}
    for name, fn in vars(mod).items():
        if name.startswith("test_") and callable(fn) and name not in skip \
                and "backend" in inspect.signature(fn).parameters:
            out[f"test_{module[5:]}__{name[5:]}"] = _marked_float64(fn) if float64 else fn
    return out
