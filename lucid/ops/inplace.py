"""In-place ops (``add_``, ``mul_``, ``zero_``, ``copy_``, ``__setitem__``, ...).

Each is its out-of-place op written back into the tensor's memory, with the version
counter bumped so a backward that saved the old values can tell. When a graph is being
recorded, the op runs on a copy that takes the tensor's place in the graph, then the
tensor adopts the result's ``grad_fn``. On a view, the new values are written into the
base through ``_ViewWrite`` (PyTorch's CopySlices): the base adopts that node and the view
gets a fresh node that reads it back, so gradients reach both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _dtype
from .._tensor import Tensor, _make
from ..autograd import grad_mode
from ..autograd.function import Op
from ._util import broadcast_error, cast
from .creation import full_like, tensor
from .device import to_device
from .shape import Expand, expand

_grad_on = grad_mode._state


_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def _check_leaf(t: Tensor) -> None:
    if t.grad_fn is None and t._rg:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    base = t._base
    if base is not None and base._rg and base.grad_fn is None:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place "
            "operation."
        )


_READ_ONLY = (
    "cannot write into a tensor whose memory is read-only (a tensor made by from_numpy() or "
    "frombuffer() from a non-writable array shares that array's memory). Please clone() the "
    "tensor before performing the operation."
)


def _assign(be: Any, dst: Any, src: Any) -> Any:
    try:
        return be.assign(dst, src)
    except ValueError:  # a read-only broadcast (expanded) view, or read-only memory
        overlap = 0 in getattr(dst, "strides", ()) and dst.size > 1
        raise RuntimeError(_OVERLAP if overlap else _READ_ONLY) from None


def inplace(t: Tensor, fn: Callable[[Tensor], Tensor], others: Any = ()) -> Tensor:
    """Run ``fn(t)`` (an out-of-place op) and write the result into ``t``."""
    be = t._be
    if _grad_on.on and (t._rg or any(isinstance(o, Tensor) and o._rg for o in others)):
        _check_leaf(t)
        if t._base is not None:
            return _inplace_view(t, fn)
        src = _make(be.copy(t._data), be, t._rg, t.grad_fn)
        r = fn(src)
        _check_cast(r, t)
        _check_shape(r, t)
        t._data = _assign(be, t._data, r._data)
        t._vc[0] += 1
        if r.grad_fn is not None:
            t.grad_fn = r.grad_fn
            t._rg = True
            if t._views:
                _renew_views(t, None)
        sync_views(t)
        return t
    r = fn(t)
    _check_cast(r, t)
    _check_shape(r, t)
    t._data = _assign(be, t._data, r._data)
    t._vc[0] += 1
    sync_views(t)
    return t


def sync_views(t: Tensor) -> None:
    """After ``t``'s values changed in place on a backend whose views are copies (MLX): write
    a view's values into its base, and give every live view of the base (or of an alias of
    it) its new values."""
    be = t._be
    if be.views_share_memory:
        return
    base, chain = t._base, t._view_ops
    if base is None:  # an alias (detach, .data) of a view holds the view's array object
        owner = be.view_owner(t._data)
        if owner is not None:
            base, chain = owner._base, owner._view_ops
    if base is not None:
        base._data = be.assign(base._data, _write_region(be, base._data, chain, t._data))
    else:
        base = t
    root = base._data  # aliases of the base hold the same array object
    for v in be.views_of(root):
        if v._data is not t._data and v._base is not None and v._base._data is root:
            v._data = be.assign(v._data, _view_of(be, root, v._view_ops))


def _write_region(be: Any, base: Any, chain: tuple, value: Any) -> Any:
    """A copy of the array ``base`` with the region that ``chain`` selects set to ``value``."""
    out = be.copy(base)
    if be.views_share_memory:
        dst = _view_of(be, out, chain)
        if not be.shares_memory(dst, out):
            raise RuntimeError("in-place write through this view is not supported; clone() it "
                               "first")
        _assign(be, dst, value)
        return out
    if any(step[0] is Expand for step in chain):
        raise RuntimeError(_OVERLAP)
    # no shared memory: find the view's elements in the base by replaying the chain on their
    # flat positions, then scatter the values there
    shape = tuple(base.shape)
    n = 1
    for s in shape:
        n *= s
    pos = _view_of(be, be.reshape(be.arange(0, n, 1, _dtype.int64), shape), chain)
    if not hasattr(value, "shape") or tuple(value.shape) != tuple(pos.shape):
        value = be.broadcast_to(be.asarray(value, be.dtype_of(base)) if not hasattr(
            value, "shape") else value, tuple(pos.shape))
    flat = be.setitem(be.reshape(out, (n,)), be.reshape(pos, (-1,)), be.reshape(value, (-1,)))
    return be.reshape(flat, shape)


def _inplace_view(t: Tensor, fn: Callable[[Tensor], Tensor]) -> Tensor:
    """``fn`` applied in place to the view ``t``, recorded as a write into its base."""
    be, base, chain = t._be, t._base, t._view_ops
    src = _make(be.copy(t._data), be, t._rg, t.grad_fn)
    r = fn(src)
    _check_cast(r, t)
    _check_shape(r, t)
    r = cast(r, t.dtype)
    new = _ViewWrite.apply(_make(be.copy(base._data), be, base._rg, base.grad_fn), r,
                           chain=chain)
    base._data = be.assign(base._data, new._data)  # the view sees the values through memory
    t._vc[0] += 1
    sync_views(base)  # ... or, where views are copies, is given them
    if new.grad_fn is not None:
        base.grad_fn = new.grad_fn
        base._rg = True
        t.grad_fn = _replay(base, chain).grad_fn  # the view, read back from the new base
        t._rg = True
        if base._views:
            _renew_views(base, t)
    return t


def _replay(base: Tensor, chain: tuple) -> Tensor:
    v = base
    for cls, args, params in chain:
        v = cls.apply(v, *args, **params)
    return v


def _renew_views(base: Tensor, skip: Tensor | None) -> None:
    """Point every live view of ``base`` at its new node (PyTorch regenerates a view's
    grad_fn when its base changed in place)."""
    views, base._views = base._views, None  # replaying registers fresh views: not these
    alive = []
    for r in views or ():
        v = r()
        if v is None or v._base is not base:
            continue
        alive.append(r)
        if v is not skip and v._rg:
            v.grad_fn = _replay(base, v._view_ops).grad_fn
    base._views = alive


def _view_of(be: Any, x: Any, chain: tuple) -> Any:
    """Replay a view chain on a backend array (each step's forward, no graph)."""
    for cls, args, params in chain:
        op = cls.__new__(cls)
        op.be = be
        op.parents = (None,) * (1 + len(args))
        x = op.forward(x, *args, **params)
    return x


class _ViewWrite(Op):
    """``base`` with the region that ``chain`` selects replaced by ``value``."""

    def forward(self, base, value, chain):
        self.chain = chain
        return _write_region(self.be, base, chain, value)

    def backward(self, g):
        be = self.be
        gb = gv = None
        if self.parents[0] is not None:
            gb = _write_region(be, g, self.chain, 0)
        if self.parents[1] is not None:
            gv = be.copy(_view_of(be, g, self.chain))
        return gb, gv


def _check_shape(r: Tensor, t: Tensor) -> None:
    if r._data.shape != t._data.shape:
        raise RuntimeError(
            f"output with shape {list(t.shape)} doesn't match the broadcast shape "
            f"{list(r.shape)}"
        )


def _check_cast(r: Tensor, t: Tensor) -> None:
    rd, td = r.dtype, t.dtype
    if rd is not td and rd._cat > td._cat:
        raise RuntimeError(
            f"result type {_dtype.torch_name(rd)} can't be cast to the desired output type "
            f"{_dtype.torch_name(td)}"
        )


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
        _check_leaf(self)
        return copy_(self, full_like(self, value))
    self._data = self._be.assign(self._data, value)
    self._vc[0] += 1
    sync_views(self)
    return self


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
            _check_leaf(self)
        r = fn(self, *args)
        self._data = r._data
        if r.grad_fn is not None:  # the new shape's gradient must go through the view op
            self.grad_fn = r.grad_fn
            if self._base is not None:
                self._view_ops = r._view_ops
        return self

    return f
