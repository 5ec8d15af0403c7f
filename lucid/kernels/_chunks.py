"""Parallel launches over chunks of items whose numba threads call BLAS (conv's images,
attention's heads).

A kernel pair (serial, parallel build) takes the chunk count as its last argument. One chunk
runs the serial build, whose BLAS calls keep BLAS's own threads; more run the parallel build
under ``PARALLEL_LOCK`` with scipy's OpenBLAS set to one thread for the call
(``ONE_BLAS_THREAD``), so the two thread pools never oversubscribe the cores.
"""

from __future__ import annotations

from ._threads import ONE_BLAS_THREAD, PARALLEL_LOCK

__all__ = ["launch"]


def launch(pair: tuple, nt: int, *args: object) -> None:
    """Run ``pair`` = (serial, parallel) builds of a kernel over ``nt`` chunks."""
    ser, par = pair
    if nt == 1:
        ser(*args, 1)
        return
    with PARALLEL_LOCK, ONE_BLAS_THREAD:
        par(*args, nt)
