"""``embedding_bag``: sums, means or maxima of bags of embedding rows without materialising
the per-bag lookups one by one. The rows are looked up once with ``embedding`` (so the
gradient, ``max_norm`` and ``scale_grad_by_freq`` are its); bags are reduced with a segment
sum (``BagSum``) for sum / mean and a padded gather for max."""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _make
from ..autograd.function import Op
from . import elementwise as _e
from . import index as _i
from . import reduce as _r
from . import select as _sel
from . import shape as _s
from .embedding import embedding

__all__ = ["embedding_bag"]


class BagSum(Op):
    """(positions, D) rows summed into (bags, D) by each row's bag index; a row's gradient
    is its bag's."""

    def forward(self, rows, bag, nb):
        be = self.be
        self.saved = (bag,)
        if not rows.size:  # no rows in any bag, or no columns
            return be.zeros((nb, rows.shape[1]), be.dtype_of(rows))
        return be.index_add((nb, rows.shape[1]), bag, rows)

    def backward(self, g):
        return self.be.take(g, self.saved[0], 0), None, None


def _const(a: np.ndarray, like: Tensor) -> Tensor:
    be = like._be
    return _make(be.from_numpy(np.ascontiguousarray(a)), be, False, None)


def _bags(input: Tensor, offsets: Tensor | None, include_last_offset: bool
          ) -> tuple[np.ndarray, np.ndarray]:
    """(flat indices, bag starts with the end appended) on the host."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        b, length = input.shape
        return np.asarray(input.numpy()).reshape(-1), np.arange(b + 1) * length  # type: ignore
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    idx = np.asarray(input.numpy()).reshape(-1)  # type: ignore[attr-defined]
    off = np.asarray(offsets.numpy()).astype(np.int64).reshape(-1)  # type: ignore
    if off.size and off[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {off[0]}")
    if off.size and off[-1] > idx.size:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {idx.size} but "
                           f"got offsets[-1] of {off[-1]}")
    if (np.diff(off) < 0).any():
        raise RuntimeError("embedding_bag: offsets must be non-decreasing")
    # torch's last bag runs to the end of the input, whatever the last offset says
    bounds = np.append(off[:-1] if include_last_offset else off, idx.size)
    return idx, bounds


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Reduce bags of rows of ``weight`` with ``mode`` "sum", "mean" or "max". ``input`` is
    (B, L) (each row a bag) or 1-D with ``offsets`` giving each bag's start
    (``include_last_offset``: the last offset is the end of the last bag). Entries equal to
    ``padding_idx`` are left out (and not counted by "mean"); empty bags give zeros.
    ``per_sample_weights`` (same shape as ``input``, "sum" only) scales each row first.
    ``scale_grad_by_freq`` divides each row's gradient by its index's count over the whole
    input, as ``embedding`` does (torch's embedding_bag applies the counts inconsistently).

    Example::

        w = lucid.randn(10, 3)
        F.embedding_bag(lucid.tensor([1, 2, 4, 5, 4]), w, lucid.tensor([0, 2]), mode="sum")
    """
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    if input.dtype.is_floating_point or input.dtype is _dtype.bool_:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{_dtype.torch_name(input.dtype)} instead (while checking arguments "
                           f"for embedding_bag)")
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != tuple(input.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    n = weight.shape[0]
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{n} "
                               f"through {n - 1}, but got {padding_idx}")
        padding_idx %= n
    idx, bounds = _bags(input, offsets, include_last_offset)
    bad = np.flatnonzero((idx < 0) | (idx >= n))
    if bad.size:
        raise RuntimeError(f"Index {bad[0]} of input takes value {idx[bad[0]]} which is not in "
                           f"the valid range [0, {n})")
    flat = _s.reshape(input, -1)
    rows = embedding(flat, weight, None, max_norm, norm_type, scale_grad_by_freq)  # (L, D)
    if per_sample_weights is not None:
        rows = _e.mul(rows, _s.unsqueeze(_s.reshape(per_sample_weights, -1), 1))
    nb = len(bounds) - 1
    # each position's bag (a repeated bound is an empty bag: the last one of equal bounds
    # holds the position); positions past the last bound and padding entries in none
    bag = np.searchsorted(bounds, np.arange(idx.size), side="right") - 1
    inside = (bag >= 0) & (bag < nb)  # no offsets: no bags
    if padding_idx is not None:
        inside &= idx != padding_idx
    pos = np.flatnonzero(inside)
    bag = bag[pos]
    counts = np.bincount(bag, minlength=nb)
    if pos.size != idx.size:
        rows = _i.index_select(rows, 0, _const(pos, weight))
    if mode != "max" or not pos.size:  # a segment sum: a NaN row reaches its bag only
        out = BagSum.apply(rows, weight._be.from_numpy(bag), nb)
        if mode == "mean":  # the sum over the bag's size, 0 for an empty bag
            out = _e.div(out, _const(np.maximum(counts, 1)[:, None].astype(rows.dtype.np),
                                     weight))
        return out
    width = max(int(counts.max(initial=0)), 1)
    slot = np.arange(pos.size) - np.concatenate(([0], np.cumsum(counts)))[bag]
    slots = np.zeros((nb, width), dtype=np.int64)
    filled = np.zeros((nb, width), dtype=bool)
    slots[bag, slot] = np.arange(pos.size)
    filled[bag, slot] = True
    vals = _s.reshape(_i.index_select(rows, 0, _const(slots.reshape(-1), weight)),
                      nb, width, weight.shape[1])
    # torch takes a bag's first row, then a row only where it is greater: a NaN counts as
    # the first row only, so later NaNs are dropped like the padding slots
    later = _const((np.arange(width) > 0)[None, :, None], weight)
    drop = _sel.logical_or(_const(~filled[:, :, None], weight),
                           _sel.logical_and(_sel.isnan(vals), later))
    vals = _sel.where(drop, -np.inf, vals)
    # max(dim) routes each gradient to its bag's maximum alone, as torch's max_indices
    out = _r.max(vals, 1)[0]
    return _sel.where(_const((counts > 0)[:, None], weight), out, 0.0)


