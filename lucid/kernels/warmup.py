"""Compile every registered kernel ahead of use: ``python -m lucid.kernels warmup``.

Each kernel is compiled for its registered signatures per dtype; with the disk cache on, a
later process loads them in milliseconds instead of compiling (0.1-2 s each).
"""

from __future__ import annotations

import fnmatch
import importlib
import pkgutil
import sys
import time
import types
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lucid import _first_run

from . import _jit

_NOT_KERNELS = {"warmup", "__main__"}


def kernel_modules() -> list[str]:
    """Public modules of lucid.kernels (each registers its kernels when imported)."""
    here = [str(Path(__file__).resolve().parent)]
    return sorted(
        m.name
        for m in pkgutil.iter_modules(here)
        if not m.name.startswith("_") and m.name not in _NOT_KERNELS
    )


def registry() -> dict[str, _jit.KernelEntry]:
    """All kernels by name (imports every kernel module first)."""
    for mod in kernel_modules():
        importlib.import_module(f"{__package__}.{mod}")
    return dict(_jit.REGISTRY)


def warmup(
    dtypes: Iterable[str] = ("float32",),
    kernels: Iterable[str] | None = None,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Compile (or load from the disk cache) registered kernels; returns one row per kernel/dtype.

    ``kernels``: names or fnmatch patterns (e.g. ``"_reduce_kernels.*"``); None = all.
    Rows: ``{"kernel", "dtype", "seconds", "source"}`` with source "cache", "compiled",
    "memory" (already in this process) or "nojit" (NUMBA_DISABLE_JIT=1).
    """
    _first_run.silence()  # no "compiling kernels, run warmup" notice from the warmup itself
    reg = registry()
    names = sorted(reg)
    if kernels is not None:
        pats = list(kernels)
        names = [n for n in names if n in pats or any(fnmatch.fnmatchcase(n, p) for p in pats)]
    dtypes = tuple(dtypes)
    for dt in dtypes:
        if dt not in _jit.DTYPES:
            raise ValueError(f"dtype {dt!r} not in {_jit.DTYPES}")
    rows: list[dict[str, Any]] = []
    total = time.perf_counter()
    for name in names:
        entry = reg[name]
        disp = entry.dispatcher
        for dt in dtypes:
            t0 = time.perf_counter()
            if not hasattr(disp, "compile"):
                source = "nojit"
            else:
                source = "memory"
                for sig in entry.signatures_for(dt):
                    if tuple(sig) in disp.overloads:
                        continue
                    hits = sum(disp.stats.cache_hits.values())
                    disp.compile(sig)
                    source = "cache" if sum(disp.stats.cache_hits.values()) > hits else "compiled"
            dt_s = time.perf_counter() - t0
            row = {"kernel": name, "dtype": dt, "seconds": dt_s, "source": source}
            rows.append(row)
            if progress:
                print(f"{name:40s} {dt:8s} {row['seconds']:7.3f} s  {source}", file=sys.stderr)
    if progress:
        print(
            f"{len(rows)} kernel builds in {time.perf_counter() - total:.1f} s; "
            f"cache: {_jit.cache_dir() if _jit.cache_enabled() else 'off'}",
            file=sys.stderr,
        )
    return rows


class _CallableModule(types.ModuleType):
    """``lucid.kernels.warmup(...)`` calls :func:`warmup` whichever way the module was imported."""

    def __call__(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        return warmup(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
