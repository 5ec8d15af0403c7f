"""Small helpers shared by the nn files: PyTorch-style type names for error messages."""

from __future__ import annotations

from typing import Any

from .._dtype import torch_name
from .._tensor import Tensor


def typename(obj: Any) -> str:
    """``torch.typename`` with lucid names: tensors by legacy type ("lucid.FloatTensor"),
    other objects by module-qualified class name ("int" for builtins)."""
    if isinstance(obj, Tensor):
        name = torch_name(obj.dtype) + "Tensor"
        dev = obj._be.name
        return f"lucid.{name}" if dev == "cpu" else f"lucid.{dev}.{name}"
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


def addindent(s: str, n: int) -> str:
    """Indent every line but the first by ``n`` spaces (blank lines stay empty)."""
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join((" " * n) + ln if ln.strip() else "" for ln in lines)
