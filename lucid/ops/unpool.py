"""``max_unpool1d`` / ``max_unpool2d`` / ``max_unpool3d``, as ``torch.nn.functional``: the
partial inverse of a max pool. Every value is written at its index into a zero output of the
default (or given) size, one ``scatter`` over the flattened spatial dims, so the gradient is
the scatter's (a gather of the output gradient at the indices, as torch's)."""

from __future__ import annotations

import math
from typing import Any

from .. import _dtype
from .._tensor import Tensor
from .creation import zeros
from .index import scatter
from .pool import float_only

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _ntuple(v: Any, n: int) -> tuple[int, ...]:
    if isinstance(v, (tuple, list)):
        return tuple(int(i) for i in v)
    return (int(v),) * n


def _unpool_output_size(input: Tensor, kernel_size: tuple, stride: tuple, padding: tuple,
                        output_size: Any) -> list[int]:
    """torch's ``_unpool_output_size``: the default size, or ``output_size`` (its last dims)
    checked to lie within one stride of the default."""
    n = len(kernel_size)
    xs = tuple(input.shape)
    default = [(xs[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        ret = default
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for d in range(n):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < output_size[d] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                                 f"{lo} and {hi})")
        ret = [int(s) for s in output_size]
    for d in range(n):
        if ret[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={ret[d]}")
    return ret


def _unpool_geometry(input: Tensor, kernel_size: Any, stride: Any, padding: Any,
                     output_size: Any, n: int) -> tuple[tuple[int, ...], list[int]]:
    """The ``n``-d stride (the kernel size when None) and the output's spatial size."""
    k = _ntuple(kernel_size, n)
    s = _ntuple(stride, n) if stride is not None else k
    p = _ntuple(padding, n)
    return s, _unpool_output_size(input, k, s, p, output_size)


def _unpool(input: Tensor, indices: Tensor, size: list[int], n: int) -> Tensor:
    """Scatter ``input`` into zeros of spatial ``size`` (``n`` = 2 or 3 spatial dims)."""
    name = f"max_unpool{n}d"
    if indices.dtype is not _dtype.int64:
        got = "" if n == 3 else f" but got: {_dtype.torch_name(indices.dtype)}"
        raise RuntimeError("elements in indices should be type int64" + got)
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Input to max_unpooling{n}d should be a {n + 1}d or {n + 2}d Tensor, "
                           f"but got a tensor with {input.dim()} dimensions.")
    xs = list(input.shape)
    if xs != list(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({xs}) but got indices tensor with shape: {list(indices.shape)}")
    for i in range(1, len(xs)):
        if xs[i] == 0:
            raise RuntimeError(f"max_unpooling{n}d_forward_out_cpu(): Expected input to have "
                               f"non-zero size for non-batch dimensions, but got {xs} with "
                               f"dimension {i} being empty.")
    float_only(input, name)
    batched = input.dim() == n + 2
    x = input if batched else input.unsqueeze(0)
    idx = indices if batched else indices.unsqueeze(0)
    b, c = int(x.shape[0]), int(x.shape[1])
    total, m = math.prod(size), math.prod(int(s) for s in x.shape[2:])
    flat_i = idx.reshape(b, c, m)
    if flat_i.numel() and (int(flat_i.min()) < 0 or int(flat_i.max()) >= total):
        bad = flat_i.reshape(-1)
        bad = bad[(bad < 0) | (bad >= total)][0]
        raise RuntimeError(f"Found an invalid max index: {int(bad)} (output volumes are of size "
                           f"{'x'.join(str(s) for s in size)}")
    out = zeros((b, c, total), dtype=input.dtype, device=input.device)
    out = scatter(out, 2, flat_i, x.reshape(b, c, m)).reshape(b, c, *size)
    return out if batched else out.squeeze(0)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """Partial inverse of ``max_pool1d`` over (N, C, L) or (C, L): each value goes to its
    index, every other position is zero.

    Example::

        y, idx = F.max_pool1d(x, 2, return_indices=True)
        F.max_unpool1d(y, idx, 2).shape == x.shape
    """
    _, size = _unpool_geometry(input, kernel_size, stride, padding, output_size, 1)
    return _unpool(input.unsqueeze(-1), indices.unsqueeze(-1), size + [1], 2).squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """Partial inverse of ``max_pool2d`` over (N, C, H, W) or (C, H, W); ``output_size``
    picks among the sizes that pool to the input's (as ``MaxUnpool2d``).

    Example::

        y, idx = F.max_pool2d(x, 2, return_indices=True)
        F.max_unpool2d(y, idx, 2, output_size=x.shape)
    """
    _, size = _unpool_geometry(input, kernel_size, stride, padding, output_size, 2)
    return _unpool(input, indices, size, 2)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """Partial inverse of ``max_pool3d`` over (N, C, D, H, W) or (C, D, H, W).

    Example::

        y, idx = F.max_pool3d(x, 2, return_indices=True)
        F.max_unpool3d(y, idx, 2).shape == x.shape
    """
    s, size = _unpool_geometry(input, kernel_size, stride, padding, output_size, 3)
    if min(s) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(s)}")
    return _unpool(input, indices, size, 3)
