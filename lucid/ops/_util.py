"""Shared helpers for ops: un-broadcasting, operand coercion and dtype casts (dim
normalisation lives in ``lucid._dims``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._convert import to_array
from .._tensor import Tensor, _make
from ..autograd.function import Op

Scalar = (int, float, bool, complex, np.number, np.bool_)


def sum_to(be: Any, g: Any, shape: tuple[int, ...]) -> Any:
    """Sum a broadcast gradient back down to ``shape``."""
    gs = g.shape
    if tuple(gs) == tuple(shape):
        return g
    lead = len(gs) - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and gs[i + lead] != 1
    )
    if axes:
        g = be.sum(g, axes, False) if lead else be.sum(g, axes, True)
        if lead and len(axes) > lead:
            g = be.reshape(g, shape)
    if tuple(g.shape) != tuple(shape):
        g = be.reshape(g, shape)
    return g


def shape_of(x: Any) -> tuple[int, ...]:
    return x.shape if hasattr(x, "shape") else ()


def is_scalar(x: Any) -> bool:
    return isinstance(x, Scalar)


def py_scalar(x: Any) -> Any:
    return x.item() if isinstance(x, (np.number, np.bool_)) else x


def wrap(data: Any, be: Any) -> Tensor:
    return _make(data, be, False, None)


class Cast(Op):
    """A dtype conversion; the gradient is converted back to the input's dtype."""

    def forward(self, x, dtype):
        self.src = self.be.dtype_of(x)
        return self.be.astype(x, dtype)

    def backward(self, g):
        return self.be.astype(g, self.src)


def cast(t: Tensor, d: _dtype.dtype) -> Tensor:
    """``t`` converted to dtype ``d`` (differentiable; a no-op when already ``d``)."""
    if t.dtype is d:
        return t
    if t._rg and d._cat < 2:  # integer and bool results carry no gradient, as in torch
        t = t.detach()
    return Cast.apply(t, dtype=d)


_SCALAR_CAT = {bool: 0, int: 1, float: 2}


def coerce(a: Any, b: Any) -> tuple[Any, Any]:
    """Bring two operands (tensors or Python scalars) to PyTorch's result dtype."""
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    if ta and tb:
        if a._data.dtype == b._data.dtype:
            return a, b
        d = _dtype.result_type(a, b)
        return cast(a, d), cast(b, d)
    if ta:
        # fast path: a Python scalar of a category the tensor already covers (x * 2.0 on a
        # float tensor, x + 1 on an int tensor) keeps the tensor's dtype
        need = _SCALAR_CAT.get(b.__class__)
        if need is not None and a._be.dtype_of(a._data)._cat >= need:
            return a, b
        if not isinstance(b, Scalar):
            b = _to_tensor_like(b, a)
            return coerce(a, b)
        b = py_scalar(b)
        d = _dtype.result_type(a, b)
        return cast(a, d), b
    if tb:
        need = _SCALAR_CAT.get(a.__class__)
        if need is not None and b._be.dtype_of(b._data)._cat >= need:
            return a, b
        if not isinstance(a, Scalar):
            a = _to_tensor_like(a, b)
            return coerce(a, b)
        a = py_scalar(a)
        d = _dtype.result_type(a, b)
        return a, cast(b, d)
    raise TypeError(f"expected at least one Tensor operand, got {type(a).__name__} and "
                    f"{type(b).__name__}")


def _to_tensor_like(x: Any, like: Tensor) -> Tensor:
    if isinstance(x, (list, tuple, np.ndarray)):
        return _make(to_array(x, None, like._be), like._be, False, None)
    raise TypeError(f"unsupported operand type: {type(x).__name__}")


def broadcast_error(a: Any, b: Any) -> RuntimeError | None:
    """PyTorch's message for two shapes that do not broadcast, or None if they do."""
    sa, sb = tuple(shape_of(a)), tuple(shape_of(b))
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(
                f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                f"non-singleton dimension {i}"
            )
    return None


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    n = max((len(s) for s in shapes), default=0)
    out = [1] * n
    for s in shapes:
        s = (1,) * (n - len(s)) + tuple(s)
        for i, v in enumerate(s):
            if v != 1:
                if out[i] != 1 and out[i] != v:
                    raise RuntimeError(
                        f"shape mismatch: objects cannot be broadcast to a single shape: "
                        f"{' and '.join(str(tuple(x)) for x in shapes)}"
                    )
                out[i] = v
    return tuple(out)


def float_dtype_for(t: Tensor) -> _dtype.dtype:
    d = t.dtype
    return d if d.is_floating_point else _dtype.get_default_dtype()


def size_arg(args: tuple) -> tuple[int, ...]:
    """``shape_arg`` for a new tensor's size: every entry must be non-negative."""
    shape = shape_arg(args)
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")
    return shape


def sized(name: str, sizes: tuple, size: Any) -> tuple:
    """The size of a factory call given as ``f(2, 3)``, ``f((2, 3))`` or ``f(size=(2, 3))``."""
    if size is None:
        return sizes
    if sizes:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,)


def shape_arg(args: tuple) -> tuple[int, ...]:
    """Accept ``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` forms of a shape."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    out = []
    for s in args:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"shape entries must be ints, got {type(s).__name__}")
        out.append(int(s))
    return tuple(out)


def loss_reduction(reduction: str, size_average: bool | None = None,
                   reduce: bool | None = None) -> str:
    """A loss's reduction, with torch's deprecated ``size_average``/``reduce`` pair mapped
    onto it (either given wins over ``reduction``)."""
    if size_average is not None or reduce is not None:
        reduction = (("sum" if size_average is False else "mean") if reduce is not False
                     else "none")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def reduce_loss(loss: Tensor, reduction: str) -> Tensor:
    """An unreduced loss reduced as ``reduction`` says: "mean", "sum" or "none"."""
    if reduction == "mean":
        return loss.mean()  # type: ignore[attr-defined]
    return loss.sum() if reduction == "sum" else loss  # type: ignore[attr-defined]
