"""Process memory policy: keep freed tensor buffers in the heap for reuse.

glibc returns every freed block above its mmap threshold (128 KiB, adapting upwards to at
most 32 MiB) to the kernel, so a training loop that frees and re-allocates the same
activation buffers every step pays a page fault per 4 KiB page each time. Fixing the
thresholds keeps those buffers in the heap: a CNN training step (conv 1->16->32, batch
norm, pooling, 64x28x28, Adam) measured 21.1 ms -> 7.4 ms, and cross-entropy backward
710 -> 268 us, on these 2-core machines. The price is a higher resident set: up to
``M_TRIM_THRESHOLD`` of freed memory stays mapped.

Linux/glibc only; ``LUCID_MALLOC_POLICY=0`` leaves the allocator alone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 64 << 20
TRIM_THRESHOLD = 256 << 20

_state: dict[str, object] = {"applied": False}


def configure() -> dict[str, object]:
    """Apply the policy once (idempotent); returns what was done."""
    if _state["applied"] or os.environ.get("LUCID_MALLOC_POLICY", "1") == "0":
        return dict(_state)
    if not sys.platform.startswith("linux"):
        return dict(_state)
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (e.g. musl)
        return dict(_state)
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    _state.update(applied=ok, mmap_threshold=MMAP_THRESHOLD, trim_threshold=TRIM_THRESHOLD)
    return dict(_state)
