"""The options every factory takes: ``layout=`` (the ``lucid.strided`` / ``lucid.sparse_coo``
constants), ``pin_memory=``, ``requires_grad=`` (a new leaf) and ``memory_format=`` (the dim
order a new tensor is stored in, ``preserve_format`` included).

A factory checks ``layout=``/``pin_memory=`` only when one is given (``if layout is not None
or pin_memory: check_layout(...)``), makes its array, then hands it to ``leaf``; a call with
the defaults pays two comparisons.
"""

from __future__ import annotations

from typing import Any

from .._memory_format import channel_order, preserve_format
from .._named import NamedConstant
from .._tensor import Tensor, _make

__all__ = ["check_layout", "format_order", "layout", "leaf", "sparse_coo", "stored_in",
           "strided"]


class layout(NamedConstant):  # noqa: N801 - torch's name
    """A tensor's memory layout: ``lucid.strided`` (dense) or ``lucid.sparse_coo``."""

    __slots__ = ()


strided = layout("strided")
sparse_coo = layout("sparse_coo")
_Layout = layout


def check_layout(name: str, layout: Any, pin_memory: Any, be: Any) -> None:
    """torch's checks of a factory's ``layout=`` and ``pin_memory=``. lucid's factories make
    dense tensors: ``layout`` must be None or ``lucid.strided`` (a sparse tensor comes from
    ``lucid.sparse_coo_tensor`` or ``Tensor.to_sparse()``). ``pin_memory=True`` does what
    ``Tensor.pin_memory()`` does: nothing, since the "gpu" device (MLX) reads host memory in
    place; as in torch, only a host tensor can be pinned."""
    if layout is not None and layout is not strided:
        if not isinstance(layout, _Layout):
            raise TypeError(f"{name}(): argument 'layout' must be lucid.layout, not "
                            f"{type(layout).__name__}")
        raise NotImplementedError(
            f"{name}() makes dense tensors only (layout=lucid.strided), not layout={layout!r}: "
            "build a sparse tensor with lucid.sparse_coo_tensor() or Tensor.to_sparse()")
    if pin_memory and be.name == "gpu":
        raise RuntimeError("Only dense CPU tensors can be pinned")


def leaf(data: Any, be: Any, requires_grad: bool) -> Tensor:
    """A new leaf tensor over ``data``; ``requires_grad=True`` needs a floating point or
    complex dtype, as torch's factories."""
    t = _make(data, be, False, None)
    if requires_grad:
        d = t.dtype
        if not (d.is_floating_point or d.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               f"gradients (got {d})")
        t._rg = True
    return t


def _preserved_order(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...]:
    """The dim order, outermost first, in which torch's ``preserve_format`` lays out a new
    tensor like one of ``strides``: the input's own order of strides (torch's
    ``infer_dense_strides``: a zero stride keeps its place, equal strides put the smaller
    dim inside)."""
    perm = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(perm)):
        b = i
        for j in range(1, i + 1):
            a = i - j
            sa, sb = strides[perm[a]], strides[perm[b]]
            if sa == 0 or sb == 0:
                continue
            if sa < sb:
                break
            if sa > sb or shape[perm[a]] > shape[perm[b]]:
                perm[a], perm[b] = perm[b], perm[a]
                b = a
    return tuple(reversed(perm))


def format_order(memory_format: Any, like: Tensor | None, ndim: int) -> tuple[int, ...] | None:
    """The dim order (outermost first) a new tensor of ``ndim`` dims is stored in for
    ``memory_format``; ``preserve_format`` keeps the order of ``like``'s strides (None:
    row-major, the usual case, found without looking at strides when ``like`` is
    row-major)."""
    if memory_format is preserve_format or (memory_format is None and like is not None):
        if like is None:
            raise RuntimeError("unsupported memory format Preserve")
        be = like._be
        if not be.views_share_memory or be.is_contiguous(like._data):
            return None
        arr = like._data
        item = arr.itemsize
        order = _preserved_order(tuple(arr.shape), tuple(s // item for s in arr.strides))
        return None if order == tuple(range(ndim)) else order
    return channel_order(memory_format, ndim)


def stored_in(data: Any, be: Any, order: tuple[int, ...] | None) -> Any:
    """``data`` copied into dim ``order`` (outermost first), the strides torch gives that
    memory format; ``data`` itself for row-major or a device whose arrays are always
    row-major (MLX)."""
    if order is None or not be.views_share_memory:
        return data
    inverse = tuple(order.index(d) for d in range(len(order)))
    return be.transpose(be.contiguous(be.transpose(data, order)), inverse)
