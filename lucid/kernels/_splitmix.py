"""The constants of dropout's counter hash (splitmix64), shared by the kernel
(``kernels/random.py``) and its numpy reference (``backend/_nn_ref.py``); numba-free."""

from __future__ import annotations

import math

__all__ = ["GOLDEN", "MIX1", "MIX2", "threshold"]

GOLDEN = 0x9E3779B97F4A7C15  # the counter's increment
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB


def threshold(p: float) -> int:
    """The integer the hash's top 53 bits must reach for an element to be kept with
    probability 1 - p: ceil(p * 2**53)."""
    return math.ceil(p * 2.0 ** 53)
