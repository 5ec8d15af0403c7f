"""Warm lucid's kernel cache on every core: several processes fill the one on-disk cache.

``warmup_parallel`` splits the registered kernels among worker processes, each compiling
its share (or loading it, if already cached). numba keeps one index file per cached function
(here: per kernel and option set), rewritten atomically (temp file + rename) by the process
that compiles it; two processes that compile *different* functions never touch the same
file, while two compiling *different signatures of one function* could both pick data file
``*.1.nbc`` and lose an entry. So the unit of work is one index file: every dtype and
signature of a kernel compile in the same process.

Kernels the demo (and most small CNNs) use first are compiled first; the rest go longest
first so the workers finish together.
"""

from __future__ import annotations

import fnmatch
import glob
import importlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from numba.np.ufunc import parallel as _numba_parallel

from lucid import _first_run
from lucid.kernels import _jit
from lucid.kernels import warmup as _warmup

__all__ = ["DEMO_KERNELS", "cache_path", "compile_cost", "default_jobs", "groups", "missing",
           "start_method", "warmup_parallel"]

# What ``python -m lucid.demo`` compiles on its first epoch (its conv GEMMs, batch norm, ReLU,
# 2x2 max pool, cross-entropy, Adam, row sums; serial or parallel builds by size).
DEMO_KERNELS: tuple[str, ...] = (
    "conv.gemm_forward", "conv.gemm_forward[par]", "conv.gemm_grad_input[par]",
    "conv.gemm_grad_weight", "conv.gemm_grad_weight[par]", "elementwise.relu",
    "elementwise.relu[par]", "elementwise.relu_backward", "norm.bn_bwd", "norm.bn_fwd",
    "optim.adam", "pool.max_pool_2x2", "pool.max_pool_2x2[par]", "pool.max_pool_backward",
    "reduce.sum_last", "softmax.ce_bwd", "softmax.ce_fwd",
)


def default_jobs() -> int:
    """Worker processes used by default: the cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _cache_file(entry: _jit.KernelEntry) -> str:
    cache = getattr(entry.dispatcher, "_cache", None)
    index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
    return str(index) if index else entry.name


def _match(name: str, patterns: Sequence[str]) -> bool:
    return name in patterns or any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _registry_for(patterns: Sequence[str]) -> dict[str, _jit.KernelEntry]:
    """The registry after importing only the kernel modules ``patterns`` can name."""
    mods = set(_warmup.kernel_modules())
    wanted = {p.split(".", 1)[0] for p in patterns}
    if not wanted <= mods:  # a pattern like "*relu*": every module
        return _warmup.registry()
    for m in sorted(wanted):
        importlib.import_module(f"lucid.kernels.{m}")
    return dict(_jit.REGISTRY)


def compile_cost(name: str) -> float:
    """Rough relative compile time of kernel ``name`` (DESIGN.md "Compile time"): kernels
    calling BLAS 3.6-4.6 s (conv, winograd, attention, recurrent sequences: 2.5-21 s),
    parallel builds 0.4-1.9 s, serial ones 0.1-0.8 s."""
    if "gemm" in name or name.startswith(("winograd.", "attention.", "rnn_seq.")):
        return 4.0
    return 1.2 if name.endswith("[par]") else 0.5


def _cost(names: list[str]) -> float:
    return sum(compile_cost(n) for n in names)


def groups(kernels: Iterable[str] | None = None,
           first: Sequence[str] = DEMO_KERNELS) -> list[list[str]]:
    """Registered kernel names grouped by cache file, in compile order.

    ``kernels``: names or fnmatch patterns (None = all); groups matching ``first`` come
    first, then the rest, longest first.
    """
    pats = None if kernels is None else list(kernels)
    reg = _warmup.registry() if pats is None else _registry_for(pats)
    names = sorted(reg)
    if pats is not None:
        names = [n for n in names if _match(n, pats)]
    by_file: dict[str, list[str]] = {}
    for n in names:
        by_file.setdefault(_cache_file(reg[n]), []).append(n)
    out = list(by_file.values())
    out.sort(key=lambda g: (not any(_match(n, first) for n in g), -_cost(g)))
    return out


def missing(kernels: Iterable[str], dtypes: Iterable[str] = ("float32",)) -> list[str]:
    """Kernels among ``kernels`` (names or patterns) not yet compiled into the disk cache.

    Cheap: reads each kernel's cache index (no compilation, nothing loaded).
    """
    if not _jit.cache_enabled():
        return []
    pats = list(kernels)
    reg = _registry_for(pats)
    out = []
    for name in sorted(n for n in reg if _match(n, pats)):
        entry = reg[name]
        cache = getattr(entry.dispatcher, "_cache", None)
        if cache is None or not hasattr(cache, "_cache_file"):
            continue
        try:
            have = {key[0] for key in cache._cache_file._load_index()}
        except Exception:  # NOTE: an unreadable index is a cold one
            have = set()
        if any(tuple(sig) not in have for dt in dtypes for sig in entry.signatures_for(dt)):
            out.append(name)
    return out


def start_method() -> str:
    """Workers' start method: "fork" while this process runs no other thread (workers then
    skip importing lucid and numba: seconds each), else "spawn"."""
    # NOTE: numba's parallel runtime starts its thread pool when a parallel kernel first
    # compiles or runs; forking a process that holds it, or any other thread, is unsafe
    started = getattr(_numba_parallel, "_is_initialized", True)
    if sys.platform.startswith("linux") and not started and threading.active_count() == 1:
        return "fork"
    return "spawn"


def _worker_init() -> None:
    _first_run.silence()


def _compile(names: list[str], dtypes: tuple[str, ...]) -> list[dict[str, Any]]:
    return _warmup.warmup(dtypes=dtypes, kernels=[glob.escape(n) for n in names],
                          progress=False)


def warmup_parallel(dtypes: Iterable[str] = ("float32",), kernels: Iterable[str] | None = None,
                    jobs: int | None = None, progress: bool = True,
                    log: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Compile (or load) registered kernels in ``jobs`` processes; one row per kernel/dtype.

    Same rows as :func:`lucid.kernels.warmup.warmup`; ``jobs`` defaults to every core
    (1 = in this process). ``kernels``: names or fnmatch patterns, None = all.

    Example::

        from lucid._warmup_pool import warmup_parallel
        rows = warmup_parallel(jobs=4)
    """
    dtypes = tuple(dtypes)
    for dt in dtypes:
        if dt not in _jit.DTYPES:
            raise ValueError(f"dtype {dt!r} not in {_jit.DTYPES}")
    jobs = default_jobs() if jobs is None else int(jobs)
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    say = log or (lambda s: print(s, file=sys.stderr, flush=True))
    work = groups(kernels)
    total = sum(len(g) for g in work) * len(dtypes)
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    _first_run.silence()

    def report(got: list[dict[str, Any]]) -> None:
        for row in got:
            rows.append(row)
            if progress:
                say(f"[{len(rows):3d}/{total}] {row['kernel']:34s} {row['dtype']:8s} "
                    f"{row['seconds']:6.2f} s  {row['source']}")

    if jobs == 1 or len(work) <= 1 or not _jit.cache_enabled():
        for g in work:  # without a disk cache, other processes' work would be lost
            report(_compile(g, dtypes))
    else:
        ctx = get_context(start_method())
        with ProcessPoolExecutor(max_workers=min(jobs, len(work)), mp_context=ctx,
                                 initializer=_worker_init) as pool:
            futures = [pool.submit(_compile, g, dtypes) for g in work]
            for fut in as_completed(futures):
                report(fut.result())
    if progress:
        where = _jit.cache_dir() if _jit.cache_enabled() else "off"
        say(f"{len(rows)} kernel builds in {time.perf_counter() - t0:.1f} s on "
            f"{jobs if _jit.cache_enabled() else 1} process(es); cache: {where}")
    return rows


def cache_path() -> Path:
    """lucid's kernel cache directory for this version (see ``lucid.kernels._jit``)."""
    return _jit.cache_dir()
