"""``Variable``: the legacy tensor wrapper, as ``torch.autograd.Variable``. Since PyTorch 0.4
every tensor is a Variable: calling it returns a tensor and every tensor is an instance."""

from __future__ import annotations

import warnings
from typing import Any

from .. import _dtype
from .._device import get_default_device
from .._tensor import Tensor, _make
from ..backend import get_backend

__all__ = ["VariableMeta", "Variable"]


class VariableMeta(type):
    """Makes ``isinstance(t, Variable)`` true for every lucid Tensor."""

    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=VariableMeta):
    """``Variable(data, requires_grad=False)``: ``data`` detached (sharing its memory) with
    ``requires_grad`` set; ``Variable()`` is an empty tensor. ``volatile`` is accepted and
    ignored with a warning, as in PyTorch. Prefer ``t.detach().requires_grad_()``.

    Example::

        v = lucid.autograd.Variable(lucid.ones(3), requires_grad=True)
        isinstance(v, lucid.Tensor)      # True: v is a plain tensor
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = False,  # type: ignore[misc]
                volatile: bool = False) -> Tensor:
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "lucid.no_grad():` instead.", stacklevel=2)
        if data is None:
            be = get_backend(get_default_device())
            out = _make(be.zeros((0,), _dtype.get_default_dtype()), be, False, None)
        elif isinstance(data, Tensor):
            out = data.detach()
        else:
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if requires_grad:
            out.requires_grad_(True)
        return out
