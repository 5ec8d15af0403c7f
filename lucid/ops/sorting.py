"""Searching, counting and order statistics: ``unique``, ``unique_consecutive``,
``searchsorted``, ``bucketize``, ``isin``, ``kthvalue`` and ``mode`` (the histograms are in
``histogram.py``).

The searching and counting ops return indices or counts: their values are computed on the
host with numpy (one read-back, one upload) on every device. ``kthvalue`` and ``mode`` pick
elements of their input, so their values carry gradients (a ``gather`` at the indices).
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

import numpy as np

from .. import _dtype
from .._dims import norm_dim
from .._tensor import Tensor
from ..autograd.function import Op
from ._util import wrap
from .index import Gather, sort

unique_return = namedtuple("unique_return", ["values", "inverse", "counts"])
kthvalue_return = namedtuple("kthvalue", ["values", "indices"])
mode_return = namedtuple("mode", ["values", "indices"])


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t._be.to_numpy(t._data))


def _upload(a: np.ndarray, be: Any) -> Tensor:
    return wrap(be.from_numpy(np.asarray(a, order="C")), be)


class _NoDerivative(Op):
    """Values computed outside the graph whose derivative PyTorch leaves undefined: the
    output requires grad as the input does, and a backward through it fails."""

    def forward(self, x, out, name):
        self.opname = name
        return out

    def backward(self, g):
        raise RuntimeError(f"the derivative for '{self.opname}' is not implemented.")


def _values(input: Tensor, out: np.ndarray, name: str) -> Tensor:
    be = input._be
    if not input._rg:
        return _upload(out, be)
    return _NoDerivative.apply(input, be.from_numpy(np.asarray(out, order="C")), name)


def _unique_result(input: Tensor, vals: np.ndarray, inv: np.ndarray, counts: np.ndarray,
                   return_inverse: bool, return_counts: bool, name: str) -> Any:
    out = _values(input, vals, name)
    if not (return_inverse or return_counts):
        return out
    res: list[Tensor] = [out]
    be = input._be
    if return_inverse:
        res.append(_upload(inv.astype(np.int64), be))
    if return_counts:
        res.append(_upload(counts.astype(np.int64), be))
    return tuple(res)


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The unique elements of ``input`` (or unique slices along ``dim``), in ascending
    order, optionally with the inverse indices and the counts.

    As in PyTorch on the CPU the result is sorted whatever ``sorted`` says, and every NaN
    is its own unique value.

    Example::

        lucid.unique(lucid.tensor([2, 1, 2]), return_counts=True)
        # (tensor([1, 2]), tensor([1, 2]))
    """
    a = _host(input)
    if dim is None:
        flat = a.reshape(-1)
        vals, inv, counts = np.unique(flat, return_inverse=True, return_counts=True,
                                      equal_nan=False)
        inv = inv.reshape(a.shape)
    else:
        d = norm_dim(dim, input.ndim)
        if a.shape[d] == 0:
            vals, inv, counts = a, np.zeros(0, np.int64), np.zeros(0, np.int64)
        else:
            moved = np.moveaxis(a, d, 0)
            rows = moved.reshape(moved.shape[0], -1)
            _, first, inv, counts = np.unique(rows, axis=0, return_index=True,
                                              return_inverse=True, return_counts=True)
            vals = np.moveaxis(moved[first], 0, d)
            inv = inv.reshape(-1)
    return _unique_result(input, vals, inv, counts, return_inverse, return_counts, "unique")


def unique_consecutive(input: Tensor, return_inverse: bool = False,
                       return_counts: bool = False, dim: int | None = None) -> Any:
    """``input`` with each run of equal consecutive elements (or slices along ``dim``)
    collapsed to one, optionally with inverse indices and run lengths.

    Example::

        lucid.unique_consecutive(lucid.tensor([1, 1, 2, 2, 3, 1]))   # tensor([1, 2, 3, 1])
    """
    a = _host(input)
    if dim is None:
        rows = a.reshape(-1, 1)
        shape_inv = a.shape
    else:
        d = norm_dim(dim, input.ndim)
        moved = np.moveaxis(a, d, 0)
        rows = moved.reshape(moved.shape[0], -1)
        shape_inv = (a.shape[d],)
    n = rows.shape[0]
    change = np.ones(n, bool)
    if n > 1:
        change[1:] = np.any(rows[1:] != rows[:-1], axis=1) if rows.shape[1] else False
    starts = np.flatnonzero(change)
    counts = np.diff(np.append(starts, n))
    inv = (np.cumsum(change) - 1).reshape(shape_inv)
    if dim is None:
        vals = a.reshape(-1)[starts]
    else:
        vals = np.moveaxis(np.moveaxis(a, d, 0)[starts], 0, d)
    return _unique_result(input, vals, inv, counts, return_inverse, return_counts,
                          "unique_consecutive")


def _scalar_values(values: Any, like: Tensor) -> tuple[np.ndarray, bool]:
    if isinstance(values, Tensor):
        if values._be is not like._be:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{like._be.name} and {values._be.name}!")
        return _host(values), False
    if isinstance(values, (bool, int, float, np.number)):
        return np.asarray(values), True
    raise TypeError(f"expected a Tensor or a number, got {type(values).__name__}")


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter: Tensor | None = None
                 ) -> Tensor:
    """For each value of ``input``, the index in ``sorted_sequence`` (sorted along its last
    dim) where it would be inserted to keep the order: before equal entries (``side="left"``)
    or after them (``right=True`` / ``side="right"``). ``sorter`` gives the order of an
    unsorted sequence. int64 indices (int32 with ``out_int32``).

    Example::

        lucid.searchsorted(lucid.tensor([1, 3, 5]), lucid.tensor([3, 6]))   # tensor([1, 3])
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to "
                               "opposites, got side of left while right was True")
        right = side == "right"
    seq = _host(sorted_sequence)
    vals, scalar = _scalar_values(input, sorted_sequence)
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           "the first N-1 dimensions of boundaries tensor and input value "
                           "tensor must match, but we got boundaries tensor [] and input value "
                           f"tensor {list(vals.shape)}")
    if seq.ndim > 1 and (scalar or vals.ndim != seq.ndim or vals.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor {list(vals.shape)}")
    order = None
    if sorter is not None:
        order = _host(sorter)
        if order.shape != seq.shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(seq.shape)}and got sorter "
                               f"tensor {list(order.shape)}")
        if order.dtype != np.int64:
            got = _dtype.torch_name(_dtype.from_numpy_dtype(order.dtype))
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype "
                               f"but got dtype {got}")
        if order.size and (order.min() < 0 or order.max() >= seq.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
    how = "right" if right else "left"
    ordered = seq if order is None else np.take_along_axis(seq, order, -1)
    if not np.all(ordered[..., 1:] >= ordered[..., :-1]):
        # not ascending (NaN included): torch's binary search, whose answer numpy's may not
        # share there
        out = _bound_search(seq, vals, right, order)
    elif seq.ndim == 1:
        out = np.searchsorted(seq, vals, side=how, sorter=order)
    else:
        s2 = seq.reshape(math.prod(seq.shape[:-1]), seq.shape[-1])
        v2 = vals.reshape(s2.shape[0], math.prod(vals.shape[seq.ndim - 1:]))
        o2 = None if order is None else order.reshape(s2.shape)
        out = np.stack([np.searchsorted(s2[i], v2[i], side=how,
                                        sorter=None if o2 is None else o2[i])
                        for i in range(s2.shape[0])]).reshape(vals.shape) if s2.shape[0] else \
            np.zeros(vals.shape, np.int64)
    out = np.asarray(out).astype(np.int32 if out_int32 else np.int64)
    return _upload(out, sorted_sequence._be)


def _bound_search(seq: np.ndarray, vals: np.ndarray, right: bool,
                  order: np.ndarray | None) -> np.ndarray:
    """torch's binary search, step for step, for boundaries that are not ascending (NaN
    included): it moves right past an entry unless ``entry >= value`` (``>`` for
    ``right``), so a NaN entry reads as smaller than everything, where numpy sorts NaN
    last."""
    n = seq.shape[-1]
    rows = math.prod(seq.shape[:-1])
    s2 = seq.reshape(rows, n)
    if order is not None:
        s2 = np.take_along_axis(s2, order.reshape(rows, n), -1)
    v2 = np.asarray(vals).reshape(rows, -1) if seq.ndim > 1 else \
        np.asarray(vals).reshape(1, -1)
    lo = np.zeros(v2.shape, np.int64)
    hi = np.full(v2.shape, n, np.int64)
    with np.errstate(invalid="ignore"):
        while n and (lo < hi).any():
            live = lo < hi
            mid = lo + ((hi - lo) >> 1)
            at = np.take_along_axis(s2, np.minimum(mid, n - 1), -1)
            go = ~(at > v2) if right else ~(at >= v2)
            lo = np.where(live & go, mid + 1, lo)
            hi = np.where(live & ~go, mid, hi)
    return lo.reshape(np.shape(vals))


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False
              ) -> Tensor:
    """The bucket of each value of ``input`` given 1-D sorted ``boundaries``: ``i`` with
    ``boundaries[i-1] < x <= boundaries[i]`` (``right=True``: ``boundaries[i-1] <= x <
    boundaries[i]``).

    Example::

        lucid.bucketize(lucid.tensor([1, 5, 9]), lucid.tensor([1, 3, 5, 7, 9]))  # [0, 2, 4]
    """
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(elements: Any = None, test_elements: Any = None, *, assume_unique: bool = False,
         invert: bool = False, element: Any = None, test_element: Any = None) -> Tensor:
    """A bool tensor of ``elements``' shape: whether each element is in ``test_elements``
    (either may be a number, not both). torch's overload names are taken too: ``element=``
    (a number) with ``test_elements=``, ``elements=`` with ``test_element=`` (a number).

    Example::

        lucid.isin(lucid.tensor([1, 2, 3]), lucid.tensor([2, 3]))   # [False, True, True]
        lucid.isin(element=2, test_elements=lucid.tensor([2, 3]))  # tensor(True)
    """
    if element is not None or test_element is not None:
        if (element is not None and (elements is not None or test_element is not None)) or (
                test_element is not None and test_elements is not None):
            raise TypeError("isin() received an invalid combination of arguments: expected "
                            "(elements, test_elements), (element, test_elements) or "
                            "(elements, test_element)")
        for name, v in (("element", element), ("test_element", test_element)):
            if isinstance(v, Tensor):
                raise TypeError(f"isin(): argument '{name}' must be Number, not Tensor")
        elements = element if element is not None else elements
        test_elements = test_element if test_element is not None else test_elements
    if elements is None or test_elements is None:
        raise TypeError("isin() missing required argument 'elements' or 'test_elements'")
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() expected at least one of 'elements' and 'test_elements' to be "
                        "a Tensor")
    like = elements if isinstance(elements, Tensor) else test_elements
    a, _ = _scalar_values(elements, like)
    b, _ = _scalar_values(test_elements, like)
    out = np.isin(a, b, assume_unique=assume_unique, invert=invert)
    return _upload(np.asarray(out, bool), like._be)


def _pick(input: Tensor, idx: np.ndarray, d: int, keepdim: bool) -> tuple[Tensor, Tensor]:
    """``input``'s elements at ``idx`` (kept dim ``d`` of size 1) and the indices."""
    be = input._be
    it = _upload(idx.astype(np.int64), be)
    vals = Gather.apply(input, it, d)
    if not keepdim:
        vals, it = vals.squeeze(d), it.squeeze(d)  # type: ignore[attr-defined]
    return vals, it


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> kthvalue_return:
    """``(values, indices)``: the ``k``-th smallest element (1-based) along ``dim``.

    Among equal values the index is the first one in a stable ascending sort (as lucid's
    ``median``); PyTorch's quickselect may return another of the tied indices (the values
    always agree).

    Example::

        lucid.kthvalue(lucid.tensor([3.0, 1.0, 2.0]), 2)    # values=tensor(2.), indices=tensor(2)
    """
    d = norm_dim(dim, max(input.ndim, 1))
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if not input.ndim:
        return kthvalue_return(input.clone(), _upload(np.zeros((), np.int64), input._be))
    _, idx = sort(input.detach(), d)
    sl = (slice(None),) * d + (slice(k - 1, k),)
    return kthvalue_return(*_pick(input, _host(idx)[sl], d, keepdim))


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> mode_return:
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest among
    equally frequent ones) and the index of its last occurrence, as PyTorch.

    Example::

        lucid.mode(lucid.tensor([1, 2, 2, 1, 3]))   # values=tensor(1), indices=tensor(3)
    """
    d = norm_dim(dim, max(input.ndim, 1))
    n = input.shape[d] if input.ndim else 1
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    if not input.ndim:
        return mode_return(input.clone(), _upload(np.zeros((), np.int64), input._be))
    a = np.moveaxis(_host(input), d, -1)
    rows = a.reshape(-1, n)
    # runs of equal values in each stably sorted row; a run's length is stored at its last
    # position, whose original index is the value's last occurrence
    order = np.argsort(rows, axis=1, kind="stable")
    srt = np.take_along_axis(rows, order, 1)
    change = np.ones(rows.shape, bool)
    change[:, 1:] = srt[:, 1:] != srt[:, :-1]
    pos = np.arange(n)
    start = np.maximum.accumulate(np.where(change, pos, 0), axis=1)
    end = np.ones(rows.shape, bool)
    end[:, :-1] = change[:, 1:]
    length = np.where(end, pos - start + 1, 0)
    last = np.argmax(length, axis=1)[:, None]  # first of the longest: the smallest value
    best = np.take_along_axis(order, last, 1)
    idx = np.moveaxis(best.reshape(a.shape[:-1] + (1,)), -1, d)
    return mode_return(*_pick(input, idx, d, keepdim))


__all__ = [
    "bucketize", "isin", "kthvalue", "mode", "searchsorted", "unique", "unique_consecutive"
]
