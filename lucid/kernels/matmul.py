"""Matrix products. BLAS wins, so this module holds no njit kernel: 2-D products go to
``blas.gemm`` (MKL where it runs, numpy's OpenBLAS otherwise, see blas.py).

Measured, float32, microseconds (2 cores, OpenBLAS 0.3.31 SkylakeX, numba 0.68):

    case                                numpy @   np.dot in njit   numba own   torch
    256x784 @ 784x512                       818             849          -     691
    32 x (64x64 @ 64x64)                    114             177 (serial)  783     77
    64 x (16x16 @ 16x16)                    7.5            23.3          53     9.2
    8 x (128x128 @ 128x128)                 406             461        1143    129
    32x128x256 @ 256x128 (shared weight)   2260     1046 as one 4096x256 GEMM     939

* 2-D: numpy's ``@`` equals ``np.dot`` called from njit (same OpenBLAS) and is used as is.
* Batched: a serial njit loop of ``np.dot`` loses to numpy's own batch loop; a parallel one
  (``prange`` over the batch) makes OpenBLAS warn "Detect OpenMP Loop and this application
  may hang" and was 1.1-2.7x slower than numpy anyway; hand-tiled numba was 3-7x slower.
* A right operand whose batch dimensions are broadcast (a weight shared by every batch
  entry, stride 0 after expansion) becomes one GEMM over the stacked rows: 2.2x faster
  than numpy's per-matrix loop at the size above, 1.2x at 32 x 64x64.
"""

from __future__ import annotations

import numpy as np

from . import blas
from .blas import gemm_pair as matmul_pair  # 2-D products: nothing to dispatch

__all__ = ["matmul", "matmul_pair"]


def _shared_right(b: np.ndarray) -> bool:
    return b.ndim == 2 or all(s == 0 or n == 1 for s, n in zip(b.strides[:-2], b.shape[:-2]))


def matmul(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
    """numpy ``a @ b`` (``+ bias``, broadcast) for float32/float64 with at least 2-D operands
    (batch dims broadcast).

    1-D operands and other dtypes are passed straight to numpy.
    """
    a = np.asarray(a)
    b = np.asarray(b)
    if a.ndim == 2 and b.ndim == 2:
        return blas.gemm(a, b, bias)
    if a.ndim >= 3 and b.ndim == 2 and b.shape[0] == a.shape[-1] and 0 not in a.shape \
            and (bias is None or blas.fits(np.shape(bias), (b.shape[1],))):
        # a linear layer's (..., k) @ (k, n): one GEMM over the rows (np.broadcast_shapes,
        # below, alone costs ~5 us a call)
        rows = a.reshape(-1, a.shape[-1])  # a view when a is contiguous, else one copy
        return blas.gemm(rows, b, bias).reshape(*a.shape[:-1], b.shape[1])
    if a.ndim >= 3 and b.ndim >= 2 and _shared_right(b):
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        m, k = a.shape[-2:]
        n = b.shape[-1]
        if b.shape[-2] == k and k and 0 not in batch:
            a_full = a if a.shape[:-2] == batch else np.broadcast_to(a, (*batch, m, k))
            w = b[(0,) * (b.ndim - 2)]
            rows = a_full.reshape(-1, k)  # a view when a is contiguous, else one copy
            if bias is None or blas.fits(np.shape(bias), (n,)):  # one bias row for all
                return blas.gemm(rows, w, bias).reshape(*batch, m, n)
    # numpy raises its own shape errors (and takes empty batches)
    out = blas.bmm(a, b) if a.ndim >= 2 and b.ndim >= 2 else np.matmul(a, b)
    return out if bias is None else blas.add_into(out, bias)

