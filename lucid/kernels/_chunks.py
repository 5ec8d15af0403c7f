"""Parallel launches over chunks of items whose numba threads call BLAS (conv's images,
attention's heads).

A kernel pair (serial, parallel build) takes the chunk count as its last argument. One chunk
runs the serial build, whose BLAS calls keep BLAS's own threads; more run the parallel build
under ``PARALLEL_LOCK`` with scipy's OpenBLAS set to one thread for the call
(``ONE_BLAS_THREAD``), so the two thread pools never oversubscribe the cores.
"""

from __future__ import annotations

from typing import Any

import numba

from ._threads import ONE_BLAS_THREAD, PARALLEL_LOCK, forked, use_parallel

__all__ = ["launch", "split"]


def split(n_items: int, work: int, blas: bool = True) -> int:
    """Chunks ``n_items`` are split into: one contiguous chunk per numba thread when ``work``
    pays a parallel launch (and, for kernels whose threads call BLAS, its thread count can
    be held to one), else 1 (the serial build, whose BLAS calls keep BLAS's own threads).

    One chunk per thread: handing out 4 per thread dynamically (numba's parallel chunk size
    1) measured the same on the "omp" layer (conv 16->32 forward + backward 10.98 vs 11.16 ms)
    and slower on "workqueue" (13.2 vs 11.7 ms)."""
    if n_items < 2 or not use_parallel(work, "elementwise"):
        return 1
    if blas and not ONE_BLAS_THREAD.available():
        return 1
    return min(numba.get_num_threads(), n_items)


_BUILDS: dict[tuple[int, int], tuple[Any, Any]] = {}


def _build(disp: Any, sig: Any) -> Any:
    """``disp`` itself when ``sig`` is None, else its build for the argument types ``sig``,
    loaded from the disk cache where it was warmed, called past numba's dispatch: that
    compiles a new build for any layout it has not loaded (a C-contiguous array for an
    any-layout parameter: 17 s for attention) instead of converting. The caller vouches that
    its arguments fit ``sig``. Keyed by identity (hashing a signature's types took ~4 us);
    the entry holds ``sig``, so its id is not reused while the entry lives."""
    if sig is None:
        return disp
    entry = _BUILDS.get((id(disp), id(sig)))
    if entry is None:
        compile_ = getattr(disp, "compile", None)
        if compile_ is None:  # NUMBA_DISABLE_JIT: the plain function
            return disp
        entry = _BUILDS[(id(disp), id(sig))] = (sig, compile_(sig))
    return entry[1]


def launch(pair: tuple, nt: int, *args: object, sig: Any = None) -> None:
    """Run ``pair`` = (serial, parallel) builds of a kernel over ``nt`` chunks; with ``sig``
    (the argument types, the chunk count's included), the builds for exactly those types."""
    ser, par = pair
    if nt == 1 or forked():
        _build(ser, sig)(*args, 1)
        return
    with PARALLEL_LOCK, ONE_BLAS_THREAD:
        _build(par, sig)(*args, nt)
