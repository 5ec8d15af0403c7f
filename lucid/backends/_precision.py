"""The float32 matmul precision setting (``lucid.set_float32_matmul_precision``), shared by
``lucid.backends.cuda.matmul.allow_tf32`` and ``lucid.backends.cudnn.allow_tf32``."""

from __future__ import annotations

import warnings

__all__ = ["set_float32_matmul_precision", "get_float32_matmul_precision"]

_PRECISIONS = ("highest", "high", "medium")
_state = {"precision": "highest"}


def set_float32_matmul_precision(precision: str) -> None:
    """Record the float32 matmul precision PyTorch scripts ask for: ``"highest"`` (the
    default), ``"high"`` or ``"medium"``.

    The setting is kept and reported (``get_float32_matmul_precision``,
    ``lucid.backends.cuda.matmul.allow_tf32``) so scripts run unchanged, but it never changes
    results: lucid computes float32 matmuls in float32 on every device (no TF32 or bfloat16
    shortcuts). An unknown name warns and changes nothing, as in PyTorch.

    Example::

        lucid.set_float32_matmul_precision("high")
    """
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", stacklevel=2)
        return
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision last set: ``"highest"`` unless changed (lucid always
    computes float32 matmuls in float32; see ``set_float32_matmul_precision``)."""
    return _state["precision"]
