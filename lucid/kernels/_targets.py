"""Class-index targets: the one check and message every backend's cross-entropy raises
(numpy only, so the reference backend shares it)."""

from __future__ import annotations

import numpy as np

__all__ = ["check_targets"]


def check_targets(target: np.ndarray, n_classes: int, ignore_index: int) -> None:
    """Raise IndexError naming the first class index outside ``[0, n_classes)``."""
    if not target.size or (target.min() >= 0 and target.max() < n_classes):
        return
    bad = (target != ignore_index) & ((target < 0) | (target >= n_classes))
    if bad.any():
        v = int(target[bad][0])
        raise IndexError(
            f"Target {v} is out of bounds. Expected class indices in [0, {n_classes}) "
            f"or ignore_index={ignore_index}."
        )
