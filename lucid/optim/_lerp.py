"""``lerp`` over backend arrays with PyTorch's rounding, for the optimizers' update rules."""

from __future__ import annotations

from typing import Any

__all__ = ["lerp"]


def lerp(be: Any, start: Any, end: Any, weight: float) -> Any:
    """``start + weight * (end - start)`` as PyTorch's ``lerp`` computes it: from ``end``
    (``end - (end - start) * (1 - weight)``) once ``|weight| >= 0.5``, so weight 1 gives
    ``end`` exactly."""
    diff = be.sub(end, start)
    if abs(weight) < 0.5:
        return be.add(start, be.mul(diff, weight))
    return be.sub(end, be.mul(diff, 1 - weight))
