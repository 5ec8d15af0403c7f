"""lucid's matrix products on the CPU, on the library ``_blaslib`` chose (MKL, scipy's
OpenBLAS on lucid's thread pool, or numpy's own ``matmul``).

On Intel processors with AVX-512, OpenBLAS's single-precision GEMM (its SkylakeX kernels,
what numpy's wheels carry) runs well below MKL's: 2-core Xeon (AVX-512), float32, microseconds,
numpy's OpenBLAS / MKL (torch's BLAS on x86-64 is MKL too)::

    128x784 @ 784x512       439 / 320        784x128 @ 128x512     341 / 282
    128x512 @ 512x256       149 / 108        1024x128 @ 128x384    338 / 267
    one thread: 137-157 / 173-203 GFLOP/s (the machine's peak is ~200 per core)

and on AMD processors without AVX-512 (numpy's OpenBLAS runs its Haswell kernels) MKL leads
by as much or more, at torch's own speed: 2-core AMD EPYC, numpy's OpenBLAS / MKL / torch::

    128x784 @ 784x512     1315 / 1022 / 994     784x128 @ 128x512     1248 / 837 / 870
    128x512 @ 512x256      440 /  301 / 316     1024x128 @ 128x384    1263 / 848 / 827

On AMD processors with AVX-512 the order turns (``_blaslib``): there the products run on the
pool, two blocks on two cores. 2-core EPYC Zen 4, microseconds per ``gemm`` call, medians
of 8 interleaved rounds, MKL's two threads / the pool::

    128x784 @ 784x512    700 / 677     512x128 @ 128x784    708 / 697
    128x512 @ 512x256    241 / 250     128x256 @ 256x10      48 /  21

and whole training steps (lucid on MKL / lucid on the pool, 12 interleaved rounds): MLP
1.08-1.10x, nanoGPT 1.09x, LSTM LM 1.13x, CNN 1.14x, Transformer 1.11x, DCGAN 1.05x.

Tried on MKL and left out: outputs on 64-byte boundaries (numpy's are 16-byte aligned; alone
MKL wrote aligned outputs 5-20% faster, but the MLP and GPT steps ran 0.995-1.014x), and a
numba kernel for products with a side of 10 (3x faster than MKL's ~50 us alone, 0.99x on the
MLP step).

A linear layer's backward has two independent products of equal work (``g @ W`` and
``g.T @ x``); ``gemm_pair`` runs them in one region, one whole product per core, instead of
two regions that each cut a product in two (each half repacking the whole shared operand).
Medians of 300 calls, microseconds, two split calls / the pair::

    batch 128, 256 -> 512 (the MLP's second layer)    405-474 / 365-399
    batch 64, 512 -> 512                              811-815 / 404-415
    batch 1024, 128 -> 384 / 512 (nanoGPT's)           within 5% either way

and the MLP step 2.6-6% faster (interleaved A/B, 10 rounds each order).

A product from Python is one call of a compiled entry (``_gemm.one`` on MKL, ``pool_one`` and
``pair`` on the pool) that reads the operands' layouts and addresses itself: one build per
dtype takes every layout and read-only flag (compiling is off once it is loaded, so numba
converts the arrays to it instead of compiling another). Through ctypes the same call cost
~8 us in Python (three ``.ctypes.data`` at 1.8 us each, the layout checks, ctypes' argument
conversion); the entry's dispatch costs ~1 us. 16x16 @ 16x16 float32 on MKL: 8.4 -> 1.1 us;
MLP step (eight products) 5-8% faster on MKL, 4% on the pool (interleaved A/B, AVX-512 Xeon).
Products on MKL's own threads against single-threaded MKL blocks on the pool were measured
too and left: shape by shape, 0.86-1.28x in one run and 0.91-1.22x in the next, no side
winning.

``gemm`` and ``bmm`` fall back to numpy for anything the library's interface does not take
directly (other dtypes, no unit stride, empty operands), so results never depend on the
layout they were given.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from . import _gemm
from . import elementwise as _ew
from ._blaslib import _STATE, _mkl, fortran_gemm, library, mkl, reset, set_threads
from ._threads import use_parallel

__all__ = ["gemm", "gemm_pair", "bmm", "add_into", "fits", "fortran_gemm", "library", "mkl",
           "set_threads", "reset"]

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_INT_MAX = 2**31 - 1
# below this many multiply-adds a product stays with numpy (one call's overhead either way)
MIN_WORK = 4096
# Batched products of at most SMALL_MACS multiply-adds each, SMALL_TOTAL in all, go to numpy's
# own loop: one thread and no fixed cost per product, where MKL's batched GEMM or the pool's
# single-threaded GEMMs pay ~0.4 us a product and a parallel launch. float32, 2 cores, us,
# numpy / MKL or pool, q @ k^T on heads viewed out of a projection, then att @ v: batch x
# heads 32 x 4 of 16x16 @ 16x16 37.8 / 50.8 and 18.4 / 61.8 (in a makemore-sized
# transformer's step the BLAS ones took 84-132); 16 x 4 of 32x32 @ 32x32 85 / 80 and
# 30 / 71; 16 x 4 of 64x16 @ 16x64 132 / 85 (above: BLAS); 256 x 8 of 16x16 @ 16x16 737 /
# 603 (numpy's one thread loses once the batch is large).
SMALL_MACS = 1 << 15
SMALL_TOTAL = 1 << 22
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_NO_JIT = bool(numba.config.DISABLE_JIT)  # the pool's kernels take addresses: compiled only


def _layout(a: np.ndarray) -> tuple[int, int] | None:
    """(transpose flag, leading dimension) of a 2-D operand MKL can read in place."""
    it = a.itemsize
    s0, s1 = a.strides
    r, c = a.shape
    if s1 == it and s0 % it == 0 and s0 // it >= max(c, 1):
        return _NO_TRANS, s0 // it
    if s0 == it and s1 % it == 0 and s1 // it >= max(r, 1):
        return _TRANS, s1 // it
    if c == 1 and s0 % it == 0 and s0 > 0:  # a column: any row stride is a leading dim
        return _NO_TRANS, max(s0 // it, 1)
    if r == 1 and s1 % it == 0 and s1 > 0:
        return _TRANS, max(s1 // it, 1)
    return None


def _operands(a: np.ndarray, b: np.ndarray) -> tuple | None:
    """(m, n, k, la, lb, pa, pb) for 2-D ``a`` (m, k) and ``b`` (k, n) of one dtype that BLAS
    can read in place (layouts from ``_layout``, data addresses), else None."""
    if a.ndim != 2 or b.ndim != 2 or b.dtype != a.dtype:
        return None
    (m, k), n = a.shape, b.shape[1]
    if b.shape[0] != k or m * n * k < MIN_WORK or max(m, n, k) > _INT_MAX:
        return None
    la = _layout(a)
    lb = _layout(b) if la is not None else None
    if lb is None:
        return None
    pa, pb = a.ctypes.data, b.ctypes.data
    if (pa | pb) % a.itemsize:  # (a view at an odd byte offset is not)
        return None
    return m, n, k, la, lb, pa, pb


def gemm(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
    """``a @ b`` (``+ bias``, broadcast against the product) as a new array, as numpy computes
    it, on MKL or the pool when it can take the operands as they lie.

    A bias row (a linear layer's) is added onto the fresh product on both cores while it is
    in cache (``elementwise.add_row``); on MKL any other bias is copied into the output first
    and MKL adds the product onto it.
    """
    lib = _STATE["lib"] if _STATE["loaded"] else _mkl()
    if lib is None:
        if _on_pool(a.dtype):
            row = bias if bias is not None and _bias_row(bias, a.dtype, b) else None
            out = _pool_gemm(a, b, row)
            if out is not None:
                return out if bias is None or row is not None else add_into(out, bias)
        out = np.matmul(a, b)
        return out if bias is None else add_into(out, bias)
    fn = lib.fns.get(a.dtype)
    if fn is not None and not _NO_JIT:
        out = _compiled(a, b, bias)
        if out is not None:
            return out
    ops = _operands(a, b) if fn is not None else None
    if ops is not None and (bias is None or _bias_ok(bias, a.dtype, ops[0], ops[1])):
        m, n, k, la, lb, pa, pb = ops
        out = np.empty((m, n), a.dtype)
        row = bias is not None and _is_row(bias)
        beta = 0.0
        if bias is not None and not row:
            np.copyto(out, bias)
            beta = 1.0
        fn(_ROW_MAJOR, la[0], lb[0], m, n, k, 1.0, pa, la[1], pb, lb[1], beta,
           out.ctypes.data, n)
        return add_into(out, bias) if row else out
    out = np.matmul(a, b)
    return out if bias is None else add_into(out, bias)


def _takes(a: np.ndarray, b: np.ndarray) -> bool:
    """2-D ``a`` (m, k) and ``b`` (k, n) of one dtype, aligned, with enough work for BLAS: what
    the compiled products (``_gemm.one``, ``pool_one``, ``pair``) take, in any layout."""
    if a.ndim != 2 or b.ndim != 2 or b.dtype != a.dtype or \
            not (a.flags.aligned and b.flags.aligned):
        return False
    (m, k), n = a.shape, b.shape[1]
    return b.shape[0] == k and m * n * k >= MIN_WORK and max(m, n, k) <= _INT_MAX


def _compiled(a: np.ndarray, b: np.ndarray, bias: Any) -> np.ndarray | None:
    """``a @ b`` (``+ bias``, a row) as one compiled call on MKL (``_gemm.one``), or None
    where that does not take them (``_takes``; a bias of other shape)."""
    if not _takes(a, b):
        return None
    out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    if bias is None:
        _gemm.one(a, b, out, _gemm.NO_ROW[a.dtype])
    elif not _bias_row(bias, a.dtype, b):
        return None
    elif use_parallel(out.size, "elementwise"):  # a large output: the bias on both cores after
        _gemm.one(a, b, out, _gemm.NO_ROW[a.dtype])
        _ew.add_row(out, bias)
    else:  # the kernel fills out with it and MKL adds the product onto it
        _gemm.one(a, b, out, bias.reshape(-1))
    return out


def _on_pool(dtype: np.dtype) -> bool:
    """Products of ``dtype`` run on the pool (the library is chosen on the first call)."""
    if not _STATE["loaded"]:
        _mkl()
    return _STATE["choice"] == "pool" and dtype in _FLOATS and not _NO_JIT


def _pool_gemm(a: np.ndarray, b: np.ndarray, row: np.ndarray | None = None
               ) -> np.ndarray | None:
    """``a @ b`` (``+ row``, a C-contiguous bias row of a's dtype) on the pool
    (``_gemm.pool_one``: the bias fills the output before the product adds onto it), or None
    where it does not take them."""
    if not _takes(a, b):
        return None
    out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    return out if _gemm.pool_one(a, b, out, None if row is None else row.reshape(-1)) else None


def _bias_row(bias: Any, dt: np.dtype, b: np.ndarray) -> bool:
    """``bias`` is a row the compiled products take: (n,) or (1, n) of ``dt``, C-contiguous
    and aligned."""
    return (isinstance(bias, np.ndarray) and bias.dtype == dt and _is_row(bias)
            and bias.shape[-1] == b.shape[-1] and bias.flags.c_contiguous
            and bias.flags.aligned)


def gemm_pair(a1: np.ndarray, b1: np.ndarray, a2: np.ndarray, b2: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """``(a1 @ b1, a2 @ b2)``, as two ``gemm`` calls compute them; on the pool, where both
    are large enough, in one parallel region with half the threads on each product (a
    linear layer's two gradient products are of equal work: on two cores each runs whole
    on one, with no block edges and one launch)."""
    if _on_pool(a1.dtype) and _takes(a1, b1) and _takes(a2, b2) and a2.dtype == a1.dtype:
        c1 = np.empty((a1.shape[0], b1.shape[1]), a1.dtype)
        c2 = np.empty((a2.shape[0], b2.shape[1]), a1.dtype)
        if _gemm.pair(a1, b1, c1, a2, b2, c2):
            return c1, c2
    return gemm(a1, b1), gemm(a2, b2)


def bmm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy's ``a @ b`` for operands of at least 2 dimensions, one of them 3 or more (batch
    dimensions broadcast), as one MKL batched GEMM where MKL runs (numpy's loop of OpenBLAS
    products took 3.9-4.4 ms for 8 x (256x256 @ 256x256) there against 1.9 ms alone, its
    threads meeting libgomp's spinning ones, ``_threads``), whole products per thread on
    the pool. Operands whose batch dimensions do not merge into one (q, k, v heads viewed out
    of one projection, as minGPT's q @ k^T) go to the pool under MKL too, read in place
    where MKL's batched GEMM would take copies (``_pool_bmm``)."""
    lib = _STATE["lib"] if _STATE["loaded"] else _mkl()
    if a.ndim < 2 or b.ndim < 2 or b.dtype != a.dtype or b.shape[-2] != a.shape[-1]:
        return np.matmul(a, b)
    fn = lib.batched.get(a.dtype) if lib is not None else None
    pool = lib is None and _on_pool(a.dtype)
    if fn is None and not pool:
        return np.matmul(a, b)
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        return np.matmul(a, b)  # numpy's own error
    (m, k), n = a.shape[-2:], b.shape[-1]
    count = int(np.prod(batch, dtype=np.int64))
    if count == 0 or m * n * k < MIN_WORK or max(m, n, k, count) > _INT_MAX or \
            (m * n * k <= SMALL_MACS and count * m * n * k <= SMALL_TOTAL):
        return np.matmul(a, b)  # small products: BLAS's fixed cost each (``SMALL_MACS``)
    out = None if _NO_JIT else _pool_bmm(a, b, batch, count, not pool)
    if out is not None:
        return out
    a3 = np.broadcast_to(a, (*batch, m, k)).reshape(count, m, k)  # a view where it can be
    b3 = np.broadcast_to(b, (*batch, k, n)).reshape(count, k, n)
    if pool:
        out = _pool_bmm(a3, b3, (count,), count)
        return np.matmul(a, b) if out is None else out.reshape(*batch, m, n)
    la, lb, it = _layout(a3[0]), _layout(b3[0]), a.itemsize
    sa, sb = a3.strides[0], b3.strides[0]
    pa, pb = a3.ctypes.data, b3.ctypes.data
    if la is None or lb is None or sa < 0 or sb < 0 or (sa | sb | pa | pb) % it:
        return np.matmul(a, b)
    out = np.empty((*batch, m, n), a.dtype)
    fn(_ROW_MAJOR, la[0], lb[0], m, n, k, 1.0, pa, la[1], sa // it, pb, lb[1], sb // it, 0.0,
       out.ctypes.data, n, m * n, count)
    return out


def _two_levels(shape: tuple[int, ...], sa: tuple[int, ...], sb: tuple[int, ...]
                ) -> list[tuple[int, int, int]] | None:
    """Batch dimensions (sizes, byte strides of a and b) merged where both operands' merge:
    ``[(outer, sa, sb), (inner, sa2, sb2)]`` when at most two are left, else None."""
    dims: list[tuple[int, int, int]] = []
    for size, x, y in zip(shape, sa, sb):
        if size == 1:
            continue
        if dims and dims[-1][1] == size * x and dims[-1][2] == size * y:
            dims[-1] = (dims[-1][0] * size, x, y)
        else:
            dims.append((size, x, y))
    if len(dims) > 2:
        return None
    return [(1, 0, 0)] * (2 - len(dims)) + dims


def _pool_bmm(a: np.ndarray, b: np.ndarray, batch: tuple[int, ...], count: int,
              split_only: bool = False) -> np.ndarray | None:
    """``a @ b`` on the pool, whole products per thread, reading a and b in place (heads
    viewed out of a projection included: two batch dimensions that do not merge), or None
    where it cannot (more such dimensions, layouts BLAS cannot read, misaligned data) or,
    with ``split_only``, where the batch merges into one dimension (MKL's batched GEMM takes
    that in place, and was faster there: 64 x (64x32 @ 32x64) float32 174 us against the
    pool's 194; on heads of one projection it copied both operands first, 327 us against the
    pool's 198 in place)."""
    (m, k), n = a.shape[-2:], b.shape[-1]
    nb = len(batch)
    a4 = np.broadcast_to(a, (*batch, m, k))  # views: a broadcast dimension has stride 0
    b4 = np.broadcast_to(b, (*batch, k, n))
    lv = _two_levels(batch, a4.strides[:nb], b4.strides[:nb])
    if lv is None or (split_only and lv[0][0] == 1):
        return None
    first = (0,) * nb
    la, lb, it = _layout(a4[first]), _layout(b4[first]), a.itemsize
    (_, sa, sb), (inner, sa2, sb2) = lv
    pa, pb = a4.ctypes.data, b4.ctypes.data
    if la is None or lb is None or min(sa, sb, sa2, sb2) < 0 or \
            (sa | sb | sa2 | sb2 | pa | pb) % it:
        return None
    out = np.empty((*batch, m, n), a.dtype)
    _gemm.products(pa, int(la[0] == _TRANS), la[1], pb, int(lb[0] == _TRANS), lb[1],
                   out.ctypes.data, m, n, k, it == 8, count, sa, sb, inner=inner, sa2=sa2,
                   sb2=sb2)
    return out


def add_into(out: Any, bias: Any) -> Any:
    """``out + bias``, in place where ``out`` (a fresh product) can hold the sum: a bias row
    on both cores (``elementwise.add_row``), any other broadcast through numpy."""
    if isinstance(out, np.ndarray) and _ew.add_row(out, bias):
        return out
    if (isinstance(out, np.ndarray) and np.result_type(out, bias) == out.dtype
            and fits(np.shape(bias), out.shape)):
        np.add(out, bias, out=out)
        return out
    return out + bias


def fits(shape: tuple[int, ...], into: tuple[int, ...]) -> bool:
    """True when ``shape`` broadcasts to ``into`` without growing it."""
    if len(shape) > len(into):
        return False
    if len(shape) == 1:  # a bias row (~0.3 us against ~2.5 for the general test)
        return shape[0] == 1 or shape[0] == into[-1]
    return all(s in (1, t) for s, t in zip(shape[::-1], into[::-1]))


def _is_row(bias: np.ndarray) -> bool:
    """A bias of one row: (n,) or (1, n)."""
    return bias.ndim == 1 or (bias.ndim == 2 and bias.shape[0] == 1)


def _bias_ok(bias: Any, dt: np.dtype, m: int, n: int) -> bool:
    return isinstance(bias, np.ndarray) and bias.dtype == dt and fits(bias.shape, (m, n))
