"""View-shaped ops: reshape/view, flatten, permute/transpose, squeeze/unsqueeze, expand and
broadcasting, clone/contiguous. The lowest layer of ``lucid.ops`` after ``_util``: indexing,
in-place writes and the other shape ops build on these."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._dims import norm_dim
from .._memory_format import channel_order, dense_strides, preserve_format
from .._tensor import Tensor, _make
from ..autograd.function import Op
from ._util import broadcast_shapes, shape_arg, sum_to
from .views import ViewOp

# ---- reshape ------------------------------------------------------------------------------------


def _infer_shape(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if any(s < -1 for s in shape):
        raise RuntimeError(f"invalid shape dimension {min(shape)}")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(
                f"shape '{list(shape)}' is invalid for input of size {numel}"
            )
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


class Reshape(ViewOp):
    def forward(self, x, shape, strict):
        self.shape = x.shape
        if strict:
            try:
                return self.be.view(x, shape)
            except ValueError:
                raise RuntimeError(
                    "view size is not compatible with input tensor's size and stride (at least "
                    "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                    "instead."
                ) from None
        be = self.be
        out = be.reshape(x, shape)
        if not be.is_contiguous(x) and not be.shares_memory(out, x):
            self.copied = True  # reshape of a strided view: a copy, as in PyTorch
        return out

    def backward(self, g):
        return self.be.reshape(g, self.shape), None, None


def reshape(input: Tensor, *shape: Any) -> Tensor:
    """The same data with a new shape (one entry may be -1)."""
    return Reshape.apply(input, _infer_shape(shape_arg(shape), input.numel()), False)


def view(input: Tensor, *shape: Any, size: Any = None, dtype: Any = None) -> Tensor:
    """Like ``reshape`` but never copies: fails when the layout does not allow a view
    (``view(2, 3)``, ``view((2, 3))``, ``view(size=(2, 3))``).

    ``view(dtype)`` / ``view(dtype=...)`` reinterprets the bytes as ``dtype``, as torch: the
    last dim scales by the ratio of element sizes (it must be contiguous and divisible for a
    change of size). The result is outside the graph, as torch's; on the cpu it shares memory
    (and the version counter) with ``input``, on the "gpu" device (MLX) it is a copy.

    Example::

        lucid.tensor([1.0]).view(lucid.int32)      # tensor([1065353216], dtype=lucid.int32)
    """
    if size is not None or dtype is not None:
        if shape or (size is not None and dtype is not None):
            raise TypeError("view() received an invalid combination of arguments: give the "
                            "size (positionally or as size=) or dtype=, not both")
        if dtype is not None:
            return view_dtype(input, dtype)
        shape = (size,)
    elif len(shape) == 1 and not isinstance(shape[0], (int, tuple, list, Tensor)):
        return view_dtype(input, shape[0])
    return Reshape.apply(input, _infer_shape(shape_arg(shape), input.numel()), True)


def view_dtype(input: Tensor, dtype: Any) -> Tensor:
    """``input.view(dtype)``: its bytes read as ``dtype`` (see ``view``)."""
    d = _dtype.to_dtype(dtype)
    src = input.dtype
    if d is src:
        return input.detach()
    be = input._be
    arr = be.to_numpy(input._data) if not be.views_share_memory else input._data
    old, new = np.dtype(src.np).itemsize, np.dtype(d.np).itemsize
    what = f"to view {_dtype.torch_name(src)} as {_dtype.torch_name(d)} (different element sizes)"
    if old != new:
        if input.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if old < new and input.shape[-1] % (new // old):
            raise RuntimeError(f"self.size(-1) must be divisible by {new // old} {what}, but "
                               f"got {input.shape[-1]}")
        st = arr.strides[-1] // old if arr.ndim and arr.itemsize else 1
        if st != 1 and input.shape[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {st}")
    host = np.asarray(arr)
    if host.ndim and old != new and host.strides[-1] != old:
        host = np.ascontiguousarray(host)  # a size-1 last dim: numpy wants stride == itemsize
    data = host.view(d.np)
    if not be.views_share_memory:
        return _make(be.from_numpy(np.array(data)), be, False, None)
    out = _make(data, be, False, None)
    out._vc = input._vc
    return out


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if input.ndim == 0:
        return reshape(input, 1)
    s = norm_dim(start_dim, input.ndim)
    e = norm_dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = input.shape
    return reshape(input, tuple(shape[:s]) + (-1,) + tuple(shape[e + 1:]) if input.numel()
                   else tuple(shape[:s]) + (_prod(shape[s:e + 1]),) + tuple(shape[e + 1:]))


def _prod(xs: Any) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:
    d = norm_dim(dim, input.ndim)
    shape = input.shape
    sizes = tuple(sizes)
    try:
        inner = _infer_shape(sizes, shape[d])
    except RuntimeError:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
            f"({shape[d]}) in the input tensor"
        ) from None
    return reshape(input, tuple(shape[:d]) + inner + tuple(shape[d + 1:]))


# ---- axes ---------------------------------------------------------------------------------------


class Permute(ViewOp):
    def forward(self, x, axes):
        self.axes = axes
        return self.be.transpose(x, axes)

    def backward(self, g):
        inv = [0] * len(self.axes)
        for i, a in enumerate(self.axes):
            inv[a] = i
        return self.be.transpose(g, tuple(inv)), None


def permute(input: Tensor, *dims: Any) -> Tensor:
    dims = shape_arg(dims) if dims and not isinstance(dims[0], int) else dims
    if len(dims) != input.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {input.ndim} is "
            f"not equal to len(dims) = {len(dims)}"
        )
    axes = tuple(norm_dim(d, input.ndim) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return Permute.apply(input, axes)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    n = input.ndim
    if n == 0:
        norm_dim(dim0, 0), norm_dim(dim1, 0)
        return Permute.apply(input, ())
    a, b = norm_dim(dim0, n), norm_dim(dim1, n)
    axes = list(range(n))
    axes[a], axes[b] = axes[b], axes[a]
    return Permute.apply(input, tuple(axes))


swapdims = transpose


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """``transpose`` under numpy's name (and argument names)."""
    return transpose(input, axis0, axis1)


def t(input: Tensor) -> Tensor:
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else input


def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    n = input.ndim
    src = [norm_dim(s, n) for s in src]
    dst = [norm_dim(d, n) for d in dst]
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return Permute.apply(input, tuple(order))


moveaxis = movedim


def T(input: Tensor) -> Tensor:  # noqa: N802
    return Permute.apply(input, tuple(reversed(range(input.ndim))))


def mT(input: Tensor) -> Tensor:  # noqa: N802
    if input.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {input.ndim}-D tensor.")
    return transpose(input, -2, -1)


def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """Drop size-1 dims (all, or those listed in ``dim``; others are left alone)."""
    shape = input.shape
    if dim is None:
        new = tuple(s for s in shape if s != 1)
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        axes = {norm_dim(d, input.ndim) for d in dims}
        new = tuple(s for i, s in enumerate(shape) if not (i in axes and s == 1))
    return Reshape.apply(input, new, False)


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    d = norm_dim(dim, input.ndim + 1)
    shape = tuple(input.shape)
    return Reshape.apply(input, shape[:d] + (1,) + shape[d:], False)


# ---- broadcast and repeat -----------------------------------------------------------------------


class Expand(ViewOp):
    broadcasts = True

    def forward(self, x, shape):
        self.shape = x.shape
        return self.be.broadcast_to(x, shape)

    def backward(self, g):
        return sum_to(self.be, g, self.shape), None


def expand(input: Tensor, *sizes: Any, size: Any = None, implicit: bool = False) -> Tensor:
    """A broadcast view with ``sizes`` (-1 keeps a dim): ``expand(2, 3)``,
    ``expand((2, 3))`` or ``expand(size=(2, 3))``. ``implicit`` (torch's tracing flag)
    changes nothing."""
    if size is not None:
        if sizes:
            raise TypeError("expand() got multiple values for argument 'size'")
        sizes = (size,)
    sizes = shape_arg(sizes)
    shape = tuple(input.shape)
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand(lucid.{_dtype.torch_name(input.dtype)}Tensor{{{list(shape)}}}, "
            f"size={list(sizes)}): the number of sizes provided ({len(sizes)}) must be greater "
            f"or equal to the number of dimensions in the tensor ({len(shape)})"
        )
    lead = len(sizes) - len(shape)
    out = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   "leading, non-existing dimension 0")
            out.append(s)
            continue
        cur = shape[i - lead]
        if s == -1:
            out.append(cur)
        elif cur == 1 or cur == s:
            out.append(s)
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                f"{list(shape)}"
            )
    return Expand.apply(input, tuple(out))


def broadcast_to(input: Tensor, size: Any) -> Tensor:
    """``input`` broadcast to ``size`` (a view, as ``expand``)."""
    return expand(input, *shape_arg((size,)))


def expand_as(input: Tensor, other: Tensor) -> Tensor:
    return expand(input, *other.shape)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(expand(t, *shape) for t in tensors)



class Clone(Op):
    def forward(self, x):
        return self.be.copy(x)

    def backward(self, g):
        return g


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """A copy with its own memory; gradients flow back to the input. With
    ``memory_format=lucid.channels_last`` (``channels_last_3d``) the copy is stored that way."""
    order = channel_order(memory_format, input.ndim)
    if order is None or not input._be.views_share_memory:  # MLX arrays are row-major
        return Clone.apply(input)
    return _stored_in(input, order)


def _stored_in(input: Tensor, order: tuple[int, ...]) -> Tensor:
    """A copy of ``input`` whose values lie in dim ``order`` (torch's channels-last strides)."""
    inverse = tuple(order.index(d) for d in range(input.ndim))
    return Permute.apply(Clone.apply(Permute.apply(input, order)), inverse)


def in_format(input: Tensor, memory_format: Any) -> Tensor:
    """``input`` with exactly the strides torch gives ``memory_format`` (itself when it has
    them): what ``to(memory_format=...)`` returns."""
    order = channel_order(memory_format, input.ndim)
    if order is None:
        return contiguous(input)
    if not input._be.views_share_memory:
        return input
    want = dense_strides(tuple(input.shape), order)
    return input if tuple(stride(input)) == want else _stored_in(input, order)


def contiguous(input: Tensor, memory_format: Any = None) -> Tensor:
    """This tensor when its values lie in ``memory_format``'s order without gaps (row-major
    by default), else a copy that does; gradients flow back to the input."""
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    order = channel_order(memory_format, input.ndim)
    if order is None or not input._be.views_share_memory:  # MLX arrays are row-major
        if input._be.is_contiguous(input._data):
            return input
        return Clone.apply(input)
    if input.is_contiguous(memory_format=memory_format):
        return input
    return _stored_in(input, order)


def stride(self: Tensor, dim: int | None = None) -> Any:
    """Element strides of this tensor's layout (``torch.Tensor.stride``).

    Example::

        lucid.zeros(2, 3).stride()       # (3, 1)
    """
    shape = tuple(self.shape)
    st = []
    acc = 1
    for s in reversed(shape):
        st.append(acc)
        acc *= max(s, 1)
    contiguous = tuple(reversed(st))
    arr = self._data
    strides = getattr(arr, "strides", None)
    if strides is not None and getattr(arr, "itemsize", 0):
        contiguous = tuple(s // arr.itemsize for s in strides)
    return contiguous if dim is None else contiguous[norm_dim(dim, len(shape))]


__all__ = [
    "T", "broadcast_tensors", "broadcast_to", "clone", "contiguous", "expand", "expand_as",
    "flatten", "mT", "moveaxis", "movedim", "permute", "reshape", "squeeze", "swapaxes", "swapdims",
    "t", "transpose", "unflatten", "unsqueeze", "view"
]
