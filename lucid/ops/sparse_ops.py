"""The pieces under sparse COO tensors (sparse_coo.py): the ``layout`` objects, host
helpers for index arrays, and the two Ops that never densify a product: ``ToDense`` (a
scatter-add of the values) and ``SparseMm`` (a gather of the dense rows, scaled, then a
scatter-add into the output rows), both on the backend interface so they run on every device.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._repr import PRINT_OPTS, _Formatter, _nested, _summarized
from .._tensor import Tensor, _make
from ..autograd.function import Op
from .factory_options import layout, sparse_coo, strided

__all__ = ["layout", "strided", "sparse_coo", "ToDense", "SparseMm", "host", "index_tensor",
           "body_str"]


def host(t: Tensor) -> np.ndarray:
    return np.asarray(t._be.to_numpy(t._data))


def index_tensor(a: np.ndarray, be: Any) -> Tensor:
    return _make(be.from_numpy(np.ascontiguousarray(a, dtype=np.int64)), be, False, None)


class ToDense(Op):
    """``out = zeros(shape); out[idx] += values`` (repeated indices accumulate)."""

    def forward(self, vals, idx, shape):
        self.idx = idx
        return self.be.index_add(shape, idx, vals)

    def backward(self, g):
        return self.be.getitem(g, self.idx), None, None


class SparseMm(Op):
    """``out[r] += v * dense[c]`` over the nonzeros ``(r, c, v)``: a gather of dense rows and a
    scatter-add into the output rows, O(nnz * k) time and memory, never an n x m array."""

    def forward(self, vals, dense, rows, cols, n):
        be = self.be
        self.rows, self.cols, self.m = rows, cols, dense.shape[0]
        w = be.reshape(vals, (vals.shape[0], 1))
        self.saved = (w if self.parents[1] is not None else None,
                      dense if self.parents[0] is not None else None)
        return be.index_add((n, dense.shape[1]), (rows,), be.mul(w, be.take(dense, cols, 0)))

    def backward(self, g):
        be = self.be
        w, dense = self.saved
        gr = be.take(g, self.rows, 0)
        gv = gd = None
        if self.parents[0] is not None:
            gv = be.sum(be.mul(gr, be.take(dense, self.cols, 0)), axis=1)
        if self.parents[1] is not None:
            gd = be.index_add((self.m, g.shape[1]), (self.cols,), be.mul(w, gr))
        return gv, gd, None, None, None


def body_str(t: Tensor, indent: int) -> str:
    a = host(t)
    if a.size == 0:
        return "[], size=" + str(tuple(a.shape))
    summarize = a.size > PRINT_OPTS.threshold
    vals = _summarized(a) if summarize else a.reshape(-1)
    return _nested(a, indent, summarize, _Formatter(vals, t.dtype.is_floating_point))
