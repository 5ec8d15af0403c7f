"""Helpers shared by the nn tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def catch(f: Callable[[], Any]) -> str:
    """``"ok <repr>"`` or ``"<ExceptionType>: <message>"`` for calling ``f``."""
    try:
        return f"ok {f()!r}"
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"


def arr(t: Any) -> np.ndarray:
    """A numpy copy of a lucid or torch tensor."""
    if hasattr(t, "detach"):
        t = t.detach()
    if hasattr(t, "cpu") and not hasattr(t, "_be"):
        t = t.cpu()
    return np.array(t.numpy())
