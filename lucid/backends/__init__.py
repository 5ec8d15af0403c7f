"""``lucid.backends``: PyTorch's ``torch.backends`` queries that scripts use to pick a device.

Example::

    device = "mps" if lucid.backends.mps.is_available() else "cpu"
    lucid.backends.cudnn.benchmark = True      # accepted; lucid has no cuDNN
"""

from __future__ import annotations

from . import cuda, cudnn, mps, openmp

__all__ = ["mps", "cuda", "cudnn", "openmp"]
