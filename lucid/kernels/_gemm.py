"""BLAS products inside numba kernels: ``gemm(a, b, out)`` is ``np.dot(a, b, out)`` for 2-D
float32/float64 arrays, on the library ``_blaslib`` chose (MKL, or scipy's BLAS: the one
numba's own ``np.dot`` calls); and ``products``, the pool's products (``_blaslib``): each
product cut into one block of output columns or rows per numba thread, each block one
single-threaded BLAS call.

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

from typing import Any

import llvmlite.binding as ll
import numba
import numpy as np
from numba import prange
from numba.core import types as nbt
from numba.core.extending import intrinsic

from . import _blaslib
from ._jit import helper, kernel
from ._threads import ONE_BLAS_THREAD, block_count

__all__ = ["add_rows", "gemm", "gemm_add", "one", "pair", "pool_one", "products"]

for _dt, _sym in (("float32", "lucid_sgemm"), ("float64", "lucid_dgemm")):
    ll.add_symbol(_sym, _blaslib.fortran_gemm(_dt))
if _blaslib.library() == "pool":
    ONE_BLAS_THREAD.pin()  # the pool's threads call scipy's BLAS: it runs one thread for good

# Fortran ?gemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc): every argument
# by address (intp, as numba passes array data pointers)
_SIG = nbt.void(*([nbt.intp] * 13))
_sgemm = nbt.ExternalFunction("lucid_sgemm", _SIG)
_dgemm = nbt.ExternalFunction("lucid_dgemm", _SIG)

_N, _T = 78, 84  # 'N', 'T'
# multiply-adds from which the pool cuts a product into blocks (below: one call, one thread);
# blocks of output columns (or rows) start on multiples of BLOCK
POOL_MIN = 1 << 17
BLOCK = 16


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
def _call_ptr(tx, ty, r, c, k, xp, ldx, yp, ldy, cp, ldc, wide, beta):
    """Fortran ?gemm by address: C (r x c, column-major, ldc) = op(X) @ op(Y) + beta C, op
    'N' or 'T' (``tx``, ``ty``), beta 0 or 1; dgemm when ``wide``, else sgemm."""
    iv = np.empty(6, np.int32)
    ch = np.empty(2, np.uint8)
    ch[0] = tx
    ch[1] = ty
    iv[0] = r
    iv[1] = c
    iv[2] = k
    iv[3] = ldx
    iv[4] = ldy
    iv[5] = ldc
    p = iv.ctypes.data
    t = ch.ctypes.data
    if wide:
        sd = np.zeros(2, np.float64)  # alpha 1, beta
        sd[0] = 1
        sd[1] = beta
        s = sd.ctypes.data
        _dgemm(t, t + 1, p, p + 4, p + 8, s, xp, p + 12, yp, p + 16, s + 8, cp, p + 20)
        sd[0] = sd[1]
    else:
        sf = np.zeros(2, np.float32)
        sf[0] = 1
        sf[1] = beta
        s = sf.ctypes.data
        _sgemm(t, t + 1, p, p + 4, p + 8, s, xp, p + 12, yp, p + 16, s + 4, cp, p + 20)
        sf[0] = sf[1]
    # numba frees an array after its last use: these uses keep the argument arrays alive
    # until BLAS has read them (without them the first call read freed memory)
    iv[0] = ch[0]


@helper
def _call(a, ma, lda, b, mb, ldb, out, mc, ldc, beta):
    m, k = a.shape
    n = b.shape[1]
    # column-major BLAS: a row-major out is read as out^T = b^T a^T (n x m), a column-major
    # one as out = a b; an operand goes untransposed when its major order is out's
    if mc == 0:
        xp, mx, ldx, yp, my, ldy, r, c = b.ctypes.data, mb, ldb, a.ctypes.data, ma, lda, n, m
    else:
        xp, mx, ldx, yp, my, ldy, r, c = a.ctypes.data, ma, lda, b.ctypes.data, mb, ldb, m, n
    _call_ptr(_N if mx == mc else _T, _N if my == mc else _T, r, c, k, xp, ldx, yp, ldy,
              out.ctypes.data, ldc, out.itemsize == 8, beta)


@helper
def _gemm_into(a, b, out, beta):
    """``out[...] = a @ b + beta * out`` (beta 0 or 1) for 2-D arrays of one float dtype."""
    m, k = a.shape
    n = b.shape[1]
    if m == 0 or n == 0:
        return
    if k == 0:
        if beta == 0:
            out[...] = 0
        return
    ma, lda = _major(a)
    mb, ldb = _major(b)
    if ma < 0 or mb < 0:  # copies BLAS can read (C-contiguous: leading dims k and n)
        _gemm_out(np.ascontiguousarray(a), 0, k, np.ascontiguousarray(b), 0, n, out, beta)
        return
    _gemm_out(a, ma, lda, b, mb, ldb, out, beta)


@helper
def _gemm_out(a, ma, lda, b, mb, ldb, out, beta):
    """``_gemm_into`` for operands BLAS reads in place; an ``out`` it cannot write goes
    through a C-contiguous scratch."""
    mc, ldc = _major(out)
    if mc < 0:
        tmp = np.ascontiguousarray(out) if beta else np.empty(out.shape, out.dtype)
        _call(a, ma, lda, b, mb, ldb, tmp, 0, out.shape[1], beta)
        out[...] = tmp
        return
    _call(a, ma, lda, b, mb, ldb, out, mc, ldc, beta)


@helper
def gemm(a, b, out):
    """``out[...] = a @ b`` for 2-D arrays of one float dtype (out (m, n), a (m, k), b (k, n))."""
    _gemm_into(a, b, out, 0)


@helper
def gemm_add(a, b, out):
    """``out += a @ b`` for 2-D arrays of one float dtype (BLAS's beta = 1: no scratch)."""
    _gemm_into(a, b, out, 1)


@helper
def add_rows(src, dst):
    """dst += src for 2-D arrays of one shape (a product made in scratch, summed into an
    accumulator)."""
    for i in range(src.shape[0]):
        s, d = src[i], dst[i]
        for j in range(s.shape[0]):
            d[j] += s[j]


@helper
def _edge(n, t, parts):
    """Start of block ``t`` of ``parts`` over ``n`` columns or rows (a multiple of BLOCK)."""
    if t >= parts:
        return n
    return min(n, (n * t // parts + BLOCK // 2) // BLOCK * BLOCK)


def _pointer(nbtype):
    """An intrinsic reading an address (intp) as a pointer to ``nbtype``."""

    @intrinsic
    def at(typingctx, addr):
        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], context.get_value_type(signature.return_type))

        return nbt.CPointer(nbtype)(nbt.intp), codegen

    return at


_f32_at, _f64_at = _pointer(nbt.float32), _pointer(nbt.float64)


@helper
def _rows_of(c, b, i0, i1, j0, j1):
    for i in range(i0, i1):
        row = c[i]
        for j in range(j0, j1):  # (a slice assignment copied b through a temporary first)
            row[j] = b[j]


@helper
def _bias_rows(pc, pbias, m, n, i0, i1, j0, j1, wide):
    """C[i0:i1, j0:j1] = bias[j0:j1] for C (m, n) row-major at pc, bias (n,) at pbias."""
    if wide:
        _rows_of(numba.carray(_f64_at(pc), (m, n)), numba.carray(_f64_at(pbias), (n,)),
                 i0, i1, j0, j1)
    else:
        _rows_of(numba.carray(_f32_at(pc), (m, n)), numba.carray(_f32_at(pbias), (n,)),
                 i0, i1, j0, j1)


@helper
def _block(ta, lda, tb, ldb, m, n, k, xa, xb, xc, wide, t, parts, split_n, pbias):
    """Block ``t`` of ``parts`` of one product (``_products``' layout), one BLAS call:
    C[:, cols of t] = A @ B[:, cols of t] (``split_n``), or the rows of t of C = A @ B; with
    a bias row at ``pbias`` (else 0) the block is first filled with it and BLAS adds onto it
    (beta 1: BLAS's own pass zeroing C for beta 0 becomes the bias's, and no pass adds it
    after)."""
    it = 8 if wide else 4
    tx = _T if tb else _N  # column-major BLAS computes C^T = B^T A^T: B goes first
    ty = _T if ta else _N
    beta = 1 if pbias != 0 else 0
    if split_n:
        j0 = _edge(n, t, parts)
        j1 = _edge(n, t + 1, parts)
        if j1 > j0:
            if beta:
                _bias_rows(xc, pbias, m, n, 0, m, j0, j1, wide)
            xb = xb + (j0 * ldb if tb else j0) * it
            _call_ptr(tx, ty, j1 - j0, m, k, xb, ldb, xa, lda, xc + j0 * it, n, wide, beta)
    else:
        i0 = _edge(m, t, parts)
        i1 = _edge(m, t + 1, parts)
        if i1 > i0:
            if beta:
                _bias_rows(xc, pbias, m, n, i0, i1, 0, n, wide)
            xa = xa + (i0 if ta else i0 * lda) * it
            _call_ptr(tx, ty, n, i1 - i0, k, xb, ldb, xa, lda, xc + i0 * n * it, n, wide,
                      beta)


def _products(ta, lda, tb, ldb, m, n, k, pa, pb, pc, wide, count, inner, sa, sb, sa2, sb2,
              parts, split_n, pbias):
    """C[i] = A[i] @ B[i] (+ the bias row at ``pbias`` when not 0) for i < count, by address:
    C row-major (m, n), one after another; A (m, k) and B (k, n) row-major (t = 0) or
    column-major (t = 1) with leading dims lda/ldb. The batch is ``count // inner`` groups of
    ``inner``: entry i = (o, j) at pa + o*sa + j*sa2 / pb + o*sb + j*sb2 (bytes; two batch
    dimensions that do not merge, as heads viewed out of one projection). Each product is cut
    into ``parts`` blocks of columns (``split_n``) or rows, one BLAS call each.

    for item in prange(count * parts):  C[i][:, cols of t] = A[i] @ B[i][:, cols of t]
    """
    it = 8 if wide else 4
    for item in prange(count * parts):
        i = item // parts
        t = item - i * parts
        o = i // inner
        j = i - o * inner
        _block(ta, lda, tb, ldb, m, n, k, pa + o * sa + j * sa2, pb + o * sb + j * sb2,
               pc + i * m * n * it, wide, t, parts, split_n, pbias)


def _pair(a1, b1, c1, a2, b2, c2, parts, split1, split2):
    """Two independent products c1 = a1 @ b1 and c2 = a2 @ b2 (``_pool_one``'s operands, no
    bias) in one parallel region, ``parts`` blocks each, cut along columns where ``split1`` /
    ``split2``: on two threads, one whole product per thread (a linear layer's two gradient
    products, of equal work). False, with nothing done, where BLAS cannot read an operand in
    place."""
    ta1, lda1 = _major(a1)
    tb1, ldb1 = _major(b1)
    ta2, lda2 = _major(a2)
    tb2, ldb2 = _major(b2)
    if min(ta1, tb1, ta2, tb2) < 0:
        return False
    (m1, k1), n1 = a1.shape, b1.shape[1]
    (m2, k2), n2 = a2.shape, b2.shape[1]
    pa1, pb1, pc1 = a1.ctypes.data, b1.ctypes.data, c1.ctypes.data
    pa2, pb2, pc2 = a2.ctypes.data, b2.ctypes.data, c2.ctypes.data
    wide = c1.itemsize == 8
    for item in prange(2 * parts):
        if item < parts:
            _block(ta1, lda1, tb1, ldb1, m1, n1, k1, pa1, pb1, pc1, wide, item, parts, split1,
                   0)
        else:
            _block(ta2, lda2, tb2, ldb2, m2, n2, k2, pa2, pb2, pc2, wide, item - parts, parts,
                   split2, 0)
    return True


def _sig_products(_t):
    return (nbt.int64,) * 20


def _sig_pair(t):
    read, write = nbt.Array(t, 2, "A", readonly=True), nbt.Array(t, 2, "A")
    return (read, read, write) * 2 + (nbt.int64,) * 3


POOL = (kernel(_products, name="gemm.products", signatures=[_sig_products]),
        kernel(_products, name="gemm.products[par]", parallel=True,
               signatures=[_sig_products]))
PAIR = kernel(_pair, name="gemm.pair", parallel=True, signatures=[_sig_pair])


def split_columns(m: int, n: int) -> bool:
    """Whether the pool cuts one product C (m, n) into blocks of columns (else of rows): rows,
    unless C is at least twice as wide as tall (BLAS's packing favours blocks of whole rows).
    One thread's share on each of two, float32, microseconds, columns / rows::

        A @ B^T   128x784 @ 784x512    565 / 591     700x200 @ 200x800    1119 / 1090
        A^T @ B   512x128 @ 128x784    577 / 527
        A @ B     128x256 @ 256x4096  1436 / 1574
    """
    return n >= 2 * m


def products(pa: int, ta: int, lda: int, pb: int, tb: int, ldb: int, pc: int, m: int, n: int,
             k: int, wide: bool, count: int = 1, sa: int = 0, sb: int = 0, pbias: int = 0,
             inner: int = 0, sa2: int = 0, sb2: int = 0) -> None:
    """``C[i] = A[i] @ B[i]`` (``+ bias``) on the pool for ``count`` products of one float
    dtype, by address (the caller keeps the arrays alive): A (m, k) and B (k, n) at pa / pb,
    row-major (t = 0) or column-major (t = 1) with leading dims lda / ldb, the next ones
    sa / sb bytes further; with ``inner``, groups of ``inner`` products sa / sb bytes apart,
    sa2 / sb2 within a group; C C-contiguous (count, m, n) at pc; a bias row (n,) of C's dtype,
    C-contiguous, at ``pbias`` (0: none). Small work runs as one call on this thread; a batch of
    at least one product per thread runs whole products on each; else every product is cut
    into one block per thread (``split_columns``).

    The block count is ``lucid.set_num_threads``'s (numba's pool size until it is called):
    reading numba's own per-thread count costs a microsecond a call, and a count above the
    threads running only queues blocks."""
    threads = block_count(numba.config.NUMBA_NUM_THREADS)
    # every argument an int: a bool (``wide``) would compile a second, unwarmed signature
    if inner <= 0:  # one level: a single group
        inner, sa2, sb2 = max(count, 1), sa, sb
    args = (ta, lda, tb, ldb, m, n, k, pa, pb, pc, int(wide), count, inner, sa, sb, sa2, sb2)
    if threads < 2 or m * n * k * count < POOL_MIN or _blaslib._STATE["forked"] or \
            (count < threads and max(m, n) < 2 * BLOCK):
        POOL[0](*args, 1, 0, pbias)
    elif count >= threads:
        POOL[1](*args, 1, 0, pbias)
    else:
        POOL[1](*args, threads, int(split_columns(m, n)), pbias)


def _one(a, b, out, bias):
    """out = a @ b on the library's BLAS, plus the row ``bias`` where it holds out's n
    columns (out is filled with it first and BLAS adds the product onto it, beta 1)."""
    m, n = out.shape
    if n > 0 and bias.shape[0] == n:
        _rows_of(out, bias, 0, m, 0, n)
        _gemm_into(a, b, out, 1)
    else:
        _gemm_into(a, b, out, 0)


def _sig_one(t):
    read = nbt.Array(t, 2, "A", readonly=True)
    return (read, read, nbt.Array(t, 2, "A"), nbt.Array(t, 1, "A", readonly=True))


def _pool_one(a, b, out, bias, parts, split_n):
    """``_one`` on the pool: out (C-contiguous) = a @ b (+ ``bias``, a contiguous row, when it
    holds out's n columns) in ``parts`` blocks of columns (``split_n``) or rows, one BLAS call
    each (``_block``); False, with nothing done, where BLAS cannot read a or b in place."""
    m, k = a.shape
    n = b.shape[1]
    ta, lda = _major(a)
    tb, ldb = _major(b)
    if ta < 0 or tb < 0:
        return False
    pbias = bias.ctypes.data if n > 0 and bias.shape[0] == n else 0
    pa, pb, pc = a.ctypes.data, b.ctypes.data, out.ctypes.data
    for t in prange(parts):
        _block(ta, lda, tb, ldb, m, n, k, pa, pb, pc, out.itemsize == 8, t, parts, split_n,
               pbias)
    return True


def _sig_pool_one(t):
    return _sig_one(t) + (nbt.int64, nbt.int64)


# one build per dtype, of any layout: a call converts its arrays to it (compiling is off once
# the build is loaded, ``_loaded``), so no layout or read-only flag compiles a second build
_ONE = kernel(_one, name="gemm.one", signatures=[_sig_one])
POOL_ONE = (kernel(_pool_one, name="gemm.pool_one", signatures=[_sig_pool_one]),
            kernel(_pool_one, name="gemm.pool_one[par]", parallel=True,
                   signatures=[_sig_pool_one]))
_READY: set[tuple[int, np.dtype]] = set()
NO_ROW = {np.dtype(t): np.empty(0, t) for t in (np.float32, np.float64)}  # "no bias"


def _loaded(disp: Any, spec: Any, dt: np.dtype) -> Any:
    """``disp`` with its build for ``dt`` (``spec``'s signature) loaded, and compiling off."""
    if (id(disp), dt) not in _READY:
        disp.disable_compile(False)
        try:
            disp.compile(spec(numba.from_dtype(dt)))
        finally:  # NOTE: a build still compiling in the background leaves compiling on
            if disp.signatures:
                disp.disable_compile(True)
        _READY.add((id(disp), dt))
    return disp


def one(a: np.ndarray, b: np.ndarray, out: np.ndarray, bias: np.ndarray) -> None:
    """``out[...] = a @ b`` (``+ bias`` when ``bias``, 1-D, holds out's columns; ``NO_ROW``
    for none) in one compiled call on the library's BLAS: ~1 us of dispatch where
    the same product through ctypes took ~8 (``blas.gemm``). 2-D float32/float64 arrays of
    one dtype, aligned, any strides (ones BLAS cannot read are copied first), ``out`` (m, n)
    writable."""
    _loaded(_ONE, _sig_one, out.dtype)(a, b, out, bias)


def pool_one(a: np.ndarray, b: np.ndarray, out: np.ndarray, bias: np.ndarray | None = None
             ) -> bool:
    """``one`` on the pool, cut as ``products`` cuts a product (``out`` C-contiguous,
    ``bias`` None or a C-contiguous row); False, with nothing done, where BLAS cannot read
    ``a`` or ``b`` in place."""
    if bias is None:
        bias = NO_ROW[out.dtype]
    m, k = a.shape
    n = b.shape[1]
    threads = block_count(numba.config.NUMBA_NUM_THREADS)
    if threads < 2 or m * n * k < POOL_MIN or _blaslib._STATE["forked"] or max(m, n) < 2 * BLOCK:
        return _loaded(POOL_ONE[0], _sig_pool_one, out.dtype)(a, b, out, bias, 1, 0)
    return _loaded(POOL_ONE[1], _sig_pool_one, out.dtype)(a, b, out, bias, threads,
                                                          int(split_columns(m, n)))


def pair(a1: np.ndarray, b1: np.ndarray, c1: np.ndarray, a2: np.ndarray, b2: np.ndarray,
         c2: np.ndarray) -> bool:
    """``c1[...] = a1 @ b1`` and ``c2[...] = a2 @ b2`` (``pool_one``'s operands, no bias): in one
    parallel region with half the threads on each, or, where that does not pay (an odd thread
    count, a forked child, a product below the pool's size), one after the other through
    ``pool_one``. False where BLAS cannot read an operand in place (results then unset)."""
    threads = block_count(numba.config.NUMBA_NUM_THREADS)
    (m1, k1), n1 = a1.shape, b1.shape[1]
    (m2, k2), n2 = a2.shape, b2.shape[1]
    if threads < 2 or threads % 2 or _blaslib._STATE["forked"] or \
            min(m1 * n1 * k1, m2 * n2 * k2) < POOL_MIN:
        return pool_one(a1, b1, c1) and pool_one(a2, b2, c2)
    return _loaded(PAIR, _sig_pair, c1.dtype)(a1, b1, c1, a2, b2, c2, threads // 2,
                                              int(split_columns(m1, n1)),
                                              int(split_columns(m2, n2)))

if numba.config.DISABLE_JIT:  # kernels as plain Python (NUMBA_DISABLE_JIT=1): numpy's product

    def gemm(a, b, out):  # noqa: F811
        out[...] = a @ b
