"""``lucid.sparse``: sparse COO tensors and the products graph networks use (PyTorch's
``torch.sparse``).

A sparse tensor (``lucid.sparse_coo_tensor(indices, values, size)`` or ``x.to_sparse()``) is a
``SparseCooTensor``: a ``lucid.Tensor`` subclass (``isinstance(a, lucid.Tensor)`` is True, as in
PyTorch) that keeps an int64 ``(sparse_dim, nnz)`` index tensor and a ``(nnz, *dense)`` values
tensor and no dense storage. ``mm`` / ``addmm``, ``a @ x`` and ``x @ a`` scatter-add over the
nonzeros, so an adjacency matrix of a 100k-node graph is never densified; ``a @ b`` of two sparse
matrices is a sparse matrix (GCN normalisation: ``d @ a @ d`` with ``d`` a sparse diagonal).

Example::

    import lucid
    edges = lucid.tensor([[0, 1, 2], [1, 2, 0]])
    adj = lucid.sparse_coo_tensor(edges, lucid.ones(3), (3, 3))
    h = lucid.sparse.mm(adj, lucid.randn(3, 8))        # dense (3, 8)
    two_hop = adj @ adj                                  # sparse (3, 3)
"""

from __future__ import annotations

from ..ops.sparse_api import (  # noqa: A004
    DoubleTensor,
    FloatTensor,
    LongTensor,
    addmm,
    log_softmax,
    mm,
    softmax,
    sparse_coo_tensor,
    spmm,
    sum,
)
from ..ops.sparse_coo import SparseCooTensor
from ..ops.sparse_ops import layout, sparse_coo, strided

__all__ = ["SparseCooTensor", "DoubleTensor", "FloatTensor", "LongTensor", "addmm", "layout",
           "log_softmax", "mm", "softmax", "sparse_coo", "sparse_coo_tensor", "spmm", "strided",
           "sum"]
