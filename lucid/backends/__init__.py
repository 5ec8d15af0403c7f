"""``lucid.backends``: PyTorch's ``torch.backends`` queries that scripts use to pick a device.

Example::

    device = "mps" if lucid.backends.mps.is_available() else "cpu"
"""

from __future__ import annotations

from . import mps

__all__ = ["mps"]
