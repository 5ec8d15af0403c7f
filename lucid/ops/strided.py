"""Explicit strides: ``as_strided`` (a view with the sizes and element strides given),
its copy and scatter forms, and the factories that take a layout (``empty_strided``,
``empty_permuted``).

lucid keeps no storage object apart from a tensor's array, so ``as_strided`` counts its
strides and ``storage_offset`` in elements from the first element of a contiguous input,
which is where torch counts them for a tensor that starts its storage. A non-contiguous
input, or an explicit offset on a view of another tensor (whose storage offset lucid does
not keep), is refused with an error rather than read differently from torch.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..backend import get_backend
from .creation import empty
from .factory_options import check_layout
from .views import ViewOp

__all__ = ["as_strided", "as_strided_copy", "as_strided_scatter", "empty_permuted",
           "empty_strided"]


def _positions(size: tuple[int, ...], stride: tuple[int, ...], offset: int) -> np.ndarray:
    pos = np.full(size, offset, np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        pos = pos + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return pos


class AsStrided(ViewOp):
    """Elements ``offset + sum(i_k * stride_k)`` of a contiguous input: a view (writes reach
    the input; overlapping positions cannot be written through). The gradient adds up at
    each position read, overlaps included."""

    def forward(self, x, size, stride, offset):
        be = self.be
        self.shape = tuple(x.shape)
        self.pos = _positions(size, stride, offset)
        self.broadcasts = bool(self.pos.size) and np.unique(self.pos).size < self.pos.size
        return be.as_strided(x, size, stride, offset)

    def backward(self, g):
        be = self.be
        n = math.prod(self.shape)
        flat = be.reshape(g, (-1,))
        idx = be.asarray(self.pos.reshape(-1))
        out = be.scatter_add((n,), idx, flat, 0)
        return be.reshape(out, self.shape), None, None, None


def _check(name: str, input: Tensor, size: Any, stride: Any, storage_offset: Any
           ) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} strides for "
                           f"{len(size)} sizes")
    if any(s < 0 for s in size):
        raise RuntimeError(f"{name}(): negative size in {list(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if storage_offset is not None and input._base is not None:
        raise RuntimeError(f"{name}(): an explicit storage_offset on a view counts from the "
                           "storage of the tensor it views, which lucid does not keep; call "
                           "it on .clone() of the view (offsets then count from its start)")
    if not input.is_contiguous():
        raise RuntimeError(f"{name}(): the input is not contiguous; its strides index "
                           "torch's storage layout, which lucid does not keep: call "
                           ".contiguous() first")
    offset = 0 if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    need = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    have = input.numel()
    if need > have:
        item = input.element_size()
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {item} requiring a storage size of "
                           f"{need * item} are out of bounds for storage of size {have * item}")
    return size, stride, offset


def as_strided(input: Tensor, size: Any, stride: Any, storage_offset: int | None = None
               ) -> Tensor:
    """A view of ``input``'s elements with the given sizes and (element) strides.

    Example::

        lucid.as_strided(lucid.arange(6.0), (2, 2), (1, 2))   # tensor([[0., 2.], [1., 3.]])
    """
    size, stride, offset = _check("as_strided", input, size, stride, storage_offset)
    return AsStrided.apply(input, size, stride, offset)


def as_strided_copy(input: Tensor, size: Any, stride: Any,
                    storage_offset: int | None = None) -> Tensor:
    """``as_strided`` into fresh memory."""
    return as_strided(input, size, stride, storage_offset).clone()


def as_strided_scatter(input: Tensor, src: Tensor, size: Any, stride: Any,
                       storage_offset: int | None = None) -> Tensor:
    """A copy of ``input`` with ``src`` written where ``as_strided`` would read."""
    out = input.clone()
    view = as_strided(out, size, stride, storage_offset)
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(view.shape)}")
    view.copy_(src)
    return out


def _dense_order(size: tuple[int, ...], stride: tuple[int, ...]) -> list[int] | None:
    """The dims from outermost to innermost when ``stride`` is a dense layout of ``size``
    (a permutation of contiguous strides), else None."""
    order = sorted(range(len(size)), key=lambda d: (-stride[d], -d))
    want = 1
    for d in reversed(order):
        if size[d] != 1 and stride[d] != want:
            return None
        want *= max(size[d], 1)
    return order


def empty_strided(size: Any, stride: Any, *, dtype: Any = None, layout: Any = None,
                  device: Any = None, pin_memory: bool = False,
                  requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor of ``size``; a dense ``stride`` (any order of the dims)
    gives those strides (a size-1 dim gets the stride of its place in that order), other
    strides a contiguous tensor of the same size."""
    if layout is not None or pin_memory:
        check_layout("empty_strided", layout, pin_memory, get_backend(device))
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} strides for "
                           f"{len(size)} sizes")
    order = _dense_order(size, stride)
    if order is None:
        return empty(size, dtype=dtype, device=device, requires_grad=requires_grad)
    return empty_permuted(size, order, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_permuted(size: Any, physical_layout: Any, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` laid out in memory in the dim order
    ``physical_layout`` (outermost first), as torch's."""
    if layout is not None or pin_memory:
        check_layout("empty_permuted", layout, pin_memory, get_backend(device))
    size, perm = tuple(int(s) for s in size), [int(d) for d in physical_layout]
    if sorted(perm) != list(range(len(size))):
        raise RuntimeError(f"physical_layout {perm} is not a permutation of the dims of size "
                           f"{list(size)}")
    base = empty(tuple(size[d] for d in perm), dtype=dtype, device=device)
    inv = [perm.index(d) for d in range(len(size))]
    out = base.permute(*inv)
    return out.requires_grad_(True) if requires_grad else out
