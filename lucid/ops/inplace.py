"""The in-place op surface (``add_``, ``mul_``, ``exp_``, ``zero_``, ``fill_``, ``copy_``,
``t_``, ...): each is its out-of-place op run through ``lucid.ops.views.inplace``, which owns
the semantics (version counter, graph rewiring, writes through views)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.function import Op
from ._util import broadcast_error, cast
from .creation import full_like, tensor
from .device import to_device
from .shape import expand
from .views import check_leaf, inplace, written

_grad_on = grad_mode._state


def _binary_inplace(op: Callable) -> Callable:
    def f(self: Tensor, other: Any, *args: Any, **kwargs: Any) -> Tensor:
        return inplace(self, lambda s: op(s, other, *args, **kwargs), (other,))

    f.__name__ = op.__name__ + "_"
    f.__doc__ = f"In-place version of ``{op.__name__}``."
    return f


def _unary_inplace(op: Callable) -> Callable:
    def f(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return inplace(self, lambda s: op(s, *args, **kwargs),
                       [a for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)])

    f.__name__ = op.__name__ + "_"
    f.__doc__ = f"In-place version of ``{op.__name__}``."
    return f


def zero_(self: Tensor) -> Tensor:
    """Fill with zeros in place."""
    return fill_(self, 0)


def fill_(self: Tensor, value: Any) -> Tensor:
    """Fill with ``value`` in place."""
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        if value._rg or self._rg:
            return copy_(self, expand(value, *self.shape))
        value = value.item()
    if _grad_on.on and self._rg:
        check_leaf(self)
        return copy_(self, full_like(self, value))
    return written(self, value)


def copy_(self: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast, cast, moved to this device) into this tensor in place."""
    if not isinstance(src, Tensor):
        src = tensor(src, dtype=self.dtype, device=self.device)
    if src._be is not self._be:
        src = to_device(src, self._be)
    if src.dtype is not self.dtype:
        src = cast(src, self.dtype)
    if tuple(src.shape) != tuple(self.shape):
        try:
            src = expand(src, *self.shape)
        except RuntimeError:
            raise (broadcast_error(self, src) or RuntimeError(
                f"The size of tensor a ({list(self.shape)}) must match the size of tensor b "
                f"({list(src.shape)})")) from None
    return inplace(self, lambda s: _CopyFrom.apply(s, src), (src,))


class _CopyFrom(Op):
    def forward(self, dst, src):
        return self.be.copy(src)

    def backward(self, g):
        return None, g


def _view_inplace(fn: Any) -> Any:
    def f(self: Tensor, *args: Any) -> Tensor:
        if self._rg and self.grad_fn is None and _grad_on.on:
            check_leaf(self)
        r = fn(self, *args)
        self._data = r._data
        if r.grad_fn is not None:  # the new shape's gradient must go through the view op
            self.grad_fn = r.grad_fn
            if self._base is not None:
                self._view_ops = r._view_ops
        return self

    return f
