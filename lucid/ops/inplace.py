"""The in-place op surface (``add_``, ``mul_``, ``exp_``, ``zero_``, ``fill_``, ``copy_``,
``t_``, ...): each is its out-of-place op run through ``lucid.ops.views.inplace``, which owns
the semantics (version counter, graph rewiring, writes through views)."""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

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


def copy_(self: Tensor, other: Any, non_blocking: bool = False) -> Tensor:
    """Copy ``other`` (broadcast, cast, moved to this device) into this tensor in place."""
    src = other
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
    """The in-place form of the view op ``fn`` (``t_``, ``transpose_``, ``squeeze_``, ...):
    ``fn``'s signature and keywords, named ``fn.__name__ + "_"``."""
    @functools.wraps(fn)
    def f(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if self._rg and self.grad_fn is None and _grad_on.on:
            check_leaf(self)
        r = fn(self, *args, **kwargs)
        self._data = r._data
        if r.grad_fn is not None:  # the new shape's gradient must go through the view op
            self.grad_fn = r.grad_fn
            if self._base is not None:
                self._view_ops = r._view_ops
        return self

    f.__name__ = fn.__name__ + "_"
    f.__qualname__ = fn.__qualname__ + "_"
    f.__doc__ = f"In-place version of ``{fn.__name__}``: this tensor takes the new view's shape."
    return f


def resize_(self: Tensor, *sizes: Any, size: Any = None, memory_format: Any = None) -> Tensor:
    """Give ``self`` the shape ``sizes`` (or ``size=``) in place, keeping its elements in
    memory order (the first ``min(old, new)`` of them; new ones are zeros where torch leaves
    them uninitialised). Refused for a tensor that requires grad, as in torch.

    Example::

        x = lucid.arange(6.0)
        x.resize_(2, 2)          # tensor([[0., 1.], [2., 3.]])
    """
    if size is not None:
        if sizes:
            raise TypeError("resize_() got multiple values for argument 'size'")
        sizes = (size,)
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = tuple(int(s) for s in (sizes[0] if len(sizes) == 1 and isinstance(
        sizes[0], (tuple, list)) else sizes))
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                           f"{list(shape)}")
    be = self._be
    flat = np.ravel(np.asarray(be.to_numpy(self._data)), order="K")
    n = math.prod(shape)
    out = np.zeros(n, flat.dtype)
    out[:min(n, flat.size)] = flat[:min(n, flat.size)]
    self.data = tensor(out.reshape(shape), dtype=self.dtype, device=self.device)
    written(self)
    return self


def resize_as_(self: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """``resize_`` to ``the_template``'s shape."""
    return resize_(self, tuple(the_template.shape))


def resize(self: Tensor, *sizes: Any) -> Tensor:
    """torch's deprecated out-of-place ``resize``: a tensor of the new shape holding
    ``self``'s elements (``self`` keeps its shape)."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return resize_(self.detach().clone(), *sizes)


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """torch's deprecated out-of-place ``resize_as``."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return resize_(self.detach().clone(), tuple(tensor.shape))
