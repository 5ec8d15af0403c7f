"""BLAS products inside numba kernels: ``gemm(a, b, out)`` is ``np.dot(a, b, out)`` for 2-D
float32/float64 arrays, on the library ``blas.py`` chose (MKL, or scipy's BLAS: the one
numba's own ``np.dot`` calls).

Compiled kernels call two symbols, ``lucid_sgemm`` and ``lucid_dgemm``, which this module binds
at import (``llvmlite.binding.add_symbol``) to that library's Fortran ``sgemm`` / ``dgemm``: a
kernel loaded from the on-disk cache serves either library, and the choice is made once per
process, before the first kernel loads (``LUCID_BLAS`` read then).

Any layout with a unit stride in one axis is passed to BLAS as it lies (the transposed views
kernels use, ``kb.T``, are read in place); other operands are copied first. In a conv step on
an AVX-512 Xeon, one thread, float32: 576x1152 @ 1152x64 705 us through scipy's OpenBLAS,
594 us through MKL; small products (64x32 @ 32x64, attention's) cost the same, ~2.3 us.
"""

from __future__ import annotations

import llvmlite.binding as ll
import numba
import numpy as np
from numba.core import types as nbt

from . import blas
from ._jit import helper

__all__ = ["gemm"]

for _dt, _sym in (("float32", "lucid_sgemm"), ("float64", "lucid_dgemm")):
    ll.add_symbol(_sym, blas.fortran_gemm(_dt))

# Fortran ?gemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc): every argument
# by address (intp, as numba passes array data pointers)
_SIG = nbt.void(*([nbt.intp] * 13))
_sgemm = nbt.ExternalFunction("lucid_sgemm", _SIG)
_dgemm = nbt.ExternalFunction("lucid_dgemm", _SIG)

_N, _T = 78, 84  # 'N', 'T'


@helper
def _major(x):
    """(0, ld) when ``x``'s rows are contiguous (row-major), (1, ld) when its columns are,
    (-1, 0) when neither (BLAS cannot read it in place)."""
    r, c = x.shape
    it = x.itemsize
    s0, s1 = x.strides[0] // it, x.strides[1] // it
    if s1 == 1 or c == 1:
        ld = s0 if r > 1 else c
        if ld >= max(c, 1):
            return 0, ld
    if s0 == 1 or r == 1:
        ld = s1 if c > 1 else r
        if ld >= max(r, 1):
            return 1, ld
    return -1, 0


@helper
def _call(a, ma, lda, b, mb, ldb, out, mc, ldc):
    m, k = a.shape
    n = b.shape[1]
    iv = np.empty(6, np.int32)
    ch = np.empty(2, np.uint8)
    sc = np.zeros(2, out.dtype)  # alpha 1, beta 0
    sc[0] = 1
    # column-major BLAS: a row-major out is read as out^T = b^T a^T (n x m), a column-major
    # one as out = a b; an operand goes untransposed when its major order is out's
    if mc == 0:
        xp, mx, ldx, yp, my, ldy, r, c = b.ctypes.data, mb, ldb, a.ctypes.data, ma, lda, n, m
    else:
        xp, mx, ldx, yp, my, ldy, r, c = a.ctypes.data, ma, lda, b.ctypes.data, mb, ldb, m, n
    ch[0] = _N if mx == mc else _T
    ch[1] = _N if my == mc else _T
    iv[0] = r
    iv[1] = c
    iv[2] = k
    iv[3] = ldx
    iv[4] = ldy
    iv[5] = ldc
    p = iv.ctypes.data
    t = ch.ctypes.data
    s = sc.ctypes.data
    if out.itemsize == 4:
        _sgemm(t, t + 1, p, p + 4, p + 8, s, xp, p + 12, yp, p + 16, s + 4, out.ctypes.data,
               p + 20)
    else:
        _dgemm(t, t + 1, p, p + 4, p + 8, s, xp, p + 12, yp, p + 16, s + 8, out.ctypes.data,
               p + 20)
    # numba frees an array after its last use: these uses keep the argument arrays alive
    # until BLAS has read them (without them the first call read freed memory)
    iv[0] = ch[0]
    sc[0] = sc[1]


@helper
def gemm(a, b, out):
    """``out[...] = a @ b`` for 2-D arrays of one float dtype (out (m, n), a (m, k), b (k, n))."""
    m, k = a.shape
    n = b.shape[1]
    if m == 0 or n == 0:
        return
    if k == 0:
        out[...] = 0
        return
    ma, lda = _major(a)
    mb, ldb = _major(b)
    if ma < 0 or mb < 0:
        ac = np.ascontiguousarray(a)
        bc = np.ascontiguousarray(b)
        gemm_c(ac, bc, out)
        return
    mc, ldc = _major(out)
    if mc < 0:
        tmp = np.empty((m, n), out.dtype)
        _call(a, ma, lda, b, mb, ldb, tmp, 0, n)
        out[...] = tmp
        return
    _call(a, ma, lda, b, mb, ldb, out, mc, ldc)


@helper
def gemm_c(a, b, out):
    """``gemm`` for C-contiguous ``a`` and ``b``."""
    m, k = a.shape
    n = b.shape[1]
    mc, ldc = _major(out)
    if mc < 0:
        tmp = np.empty((m, n), out.dtype)
        _call(a, 0, k, b, 0, n, tmp, 0, n)
        out[...] = tmp
        return
    _call(a, 0, k, b, 0, n, out, mc, ldc)


if numba.config.DISABLE_JIT:  # kernels as plain Python (NUMBA_DISABLE_JIT=1): numpy's product

    def gemm(a, b, out):  # noqa: F811
        out[...] = a @ b
