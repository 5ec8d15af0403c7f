"""The BLAS behind lucid's matrix products on the CPU: Intel's MKL where it is installed,
numpy's OpenBLAS otherwise.

On Intel processors with AVX-512, OpenBLAS's single-precision GEMM (its SkylakeX kernels,
what numpy's wheels carry) runs well below MKL's: 2-core Xeon (AVX-512), float32, microseconds,
numpy's OpenBLAS / MKL (torch's BLAS on x86-64 is MKL too)::

    128x784 @ 784x512       439 / 320        784x128 @ 128x512     341 / 282
    128x512 @ 512x256       149 / 108        1024x128 @ 128x384    338 / 267
    one thread: 137-157 / 173-203 GFLOP/s (the machine's peak is ~200 per core)

and on AMD processors (AVX2, numpy's OpenBLAS runs its Haswell kernels) MKL leads by as much
or more, at torch's own speed: 2-core AMD EPYC, numpy's OpenBLAS / MKL / torch::

    128x784 @ 784x512     1315 / 1022 / 994     784x128 @ 128x512     1248 / 837 / 870
    128x512 @ 512x256      440 /  301 / 316     1024x128 @ 128x384    1263 / 848 / 827

Tried there and left out: outputs on 64-byte boundaries (numpy's are 16-byte aligned; alone
MKL wrote aligned outputs 5-20% faster, but the MLP and GPT steps ran 0.995-1.014x), and a
numba kernel for products with a side of 10 (3x faster than MKL's ~50 us alone, 0.99x on the
MLP step).

The ``mkl`` wheel (a dependency on x86-64 Linux) ships ``libmkl_rt``; it is loaded on the
first product, through ctypes, and runs on MKL's GNU OpenMP threading layer: libgomp, the
pool numba's "omp" threading layer uses (``_threads.prefer_omp``), so BLAS and numba's
parallel kernels take turns on one set of threads, as torch runs MKL and its own kernels on
one OpenMP pool. Where libgomp cannot be loaded MKL is not used (its sequential layer ran the
MLP step slower than OpenBLAS's threads).

``LUCID_BLAS`` chooses (``_threads.wants_mkl``): ``auto`` or ``mkl`` (the default: MKL
wherever it loads) or ``numpy``. ``gemm`` falls back to numpy for anything MKL's interface
does not take directly (other dtypes, no unit stride, batches, empty operands), so its
results never depend on the layout it was given.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

import numpy as np

from . import elementwise as _ew
from ._threads import mkl_candidates, wants_mkl

__all__ = ["gemm", "bmm", "add_into", "fits", "fortran_gemm", "library", "mkl", "set_threads",
           "reset"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_GNU_LAYER, _LP64 = 3, 0
_INT_MAX = 2**31 - 1
# below this many multiply-adds a product stays with numpy (one call's overhead either way)
MIN_WORK = 4096

_STATE: dict[str, Any] = {"lib": None, "loaded": False, "threads": None}
_LOCK = threading.Lock()


class _Mkl:
    """``cblas_sgemm`` / ``cblas_dgemm`` of one loaded ``libmkl_rt``."""

    def __init__(self, lib: ctypes.CDLL, path: str) -> None:
        self.path = path
        ci, cv = ctypes.c_int, ctypes.c_void_p
        self.fns = {}
        for dt, sym, cf in ((_F32, "cblas_sgemm", ctypes.c_float),
                            (_F64, "cblas_dgemm", ctypes.c_double)):
            fn = getattr(lib, sym)
            fn.restype = None
            fn.argtypes = [ci, ci, ci, ci, ci, ci, cf, cv, ci, cv, ci, cf, cv, ci]
            self.fns[dt] = fn
        self.batched = {}
        for dt, sym, cf in ((_F32, "cblas_sgemm_batch_strided", ctypes.c_float),
                            (_F64, "cblas_dgemm_batch_strided", ctypes.c_double)):
            fn = getattr(lib, sym)
            fn.restype = None
            fn.argtypes = [ci, ci, ci, ci, ci, ci, cf, cv, ci, ci, cv, ci, ci, cf, cv, ci, ci, ci]
            self.batched[dt] = fn
        self.set_threads = lib.MKL_Set_Num_Threads
        self.set_threads.argtypes = [ci]
        self.set_threads.restype = None
        self.get_threads = lib.MKL_Get_Max_Threads
        self.get_threads.argtypes = []
        self.get_threads.restype = ci
        # the Fortran GEMMs (LP64) numba kernels call (``_gemm.py``)
        self.fortran = {dt: ctypes.cast(getattr(lib, sym), cv).value
                        for dt, sym in ((_F32, "sgemm_"), (_F64, "dgemm_"))}


def _load() -> _Mkl | None:
    if not wants_mkl():
        return None
    try:  # MKL's GNU threading layer needs libgomp; without it MKL is not used
        ctypes.CDLL("libgomp.so.1")
    except OSError:
        return None
    for path in mkl_candidates():
        try:
            lib = ctypes.CDLL(path)
            if lib.MKL_Set_Threading_Layer(ctypes.c_int(_GNU_LAYER)) != _GNU_LAYER:
                continue
            lib.MKL_Set_Interface_Layer(ctypes.c_int(_LP64))
            return _Mkl(lib, path)
        except (OSError, AttributeError):
            continue
    return None


def _mkl() -> _Mkl | None:
    if not _STATE["loaded"]:
        with _LOCK:
            if not _STATE["loaded"]:
                lib = _STATE["lib"] = _load()
                _STATE["loaded"] = True
                if lib is not None and _STATE["threads"] is not None:
                    lib.set_threads(_STATE["threads"])
    return _STATE["lib"]


def library() -> str:
    """``"mkl"`` when products run on MKL, else ``"numpy"`` (numpy's own BLAS)."""
    return "numpy" if _mkl() is None else "mkl"


def reset() -> None:
    """Choose the library again on the next product (after changing ``LUCID_BLAS``)."""
    with _LOCK:
        _STATE.update(lib=None, loaded=False)


def set_threads(n: int) -> None:
    """``n`` threads for MKL's products, now or once MKL loads (numpy's OpenBLAS is set
    apart, ``_threads.set_blas_threads``)."""
    _STATE["threads"] = int(n)
    lib = _STATE["lib"]
    if lib is not None:
        lib.set_threads(int(n))


def mkl() -> Any:
    """The loaded MKL (``set_threads`` / ``get_threads``), or None where products use numpy."""
    return _mkl()


def fortran_gemm(dtype: str) -> int:
    """Address of the Fortran ``sgemm`` / ``dgemm`` numba kernels call: MKL's where products
    run on MKL, else scipy's (the BLAS numba's own ``np.dot`` calls)."""
    dt = np.dtype(dtype)
    lib = _mkl()
    if lib is not None:
        return int(lib.fortran[dt])
    from scipy.linalg import cython_blas  # NOTE: scipy loads only for kernels that need it

    cap = cython_blas.__pyx_capi__["sgemm" if dt == _F32 else "dgemm"]
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return int(api.PyCapsule_GetPointer(cap, api.PyCapsule_GetName(cap)))


def _after_fork() -> None:
    # a forked child must not wake the parent's OpenMP pool (libgomp is not fork-safe):
    # its products run on the calling thread
    set_threads(1)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


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


def gemm(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
    """``a @ b`` (``+ bias``, broadcast against the product) as a new array, as numpy computes
    it, on MKL when it is loaded and can take the operands as they lie.

    A bias row (a linear layer's) is added onto the fresh product on both cores while it is
    in cache (``elementwise.add_row``); any other bias is copied into the output first and
    MKL adds the product onto it.
    """
    lib = _STATE["lib"] if _STATE["loaded"] else _mkl()
    fn = lib.fns.get(a.dtype) if lib is not None and a.ndim == 2 and b.ndim == 2 else None
    if fn is not None and b.dtype == a.dtype:
        m, k = a.shape
        n = b.shape[1]
        la = lb = None
        if b.shape[0] == k and m * n * k >= MIN_WORK and max(m, n, k) <= _INT_MAX:
            la = _layout(a)
            lb = _layout(b) if la is not None else None
        if lb is not None and (bias is None or _bias_ok(bias, a.dtype, m, n)):
            pa, pb, it = a.ctypes.data, b.ctypes.data, a.itemsize
            if pa % it == 0 and pb % it == 0:  # (a view at an odd byte offset is not)
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


def bmm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy's ``a @ b`` for operands of at least 2 dimensions, one of them 3 or more (batch
    dimensions broadcast), as one MKL batched GEMM where MKL runs: numpy's loop of OpenBLAS
    products took 3.9-4.4 ms for 8 x (256x256 @ 256x256) there against 1.9 ms alone, its
    threads meeting libgomp's spinning ones (``_threads``)."""
    lib = _STATE["lib"] if _STATE["loaded"] else _mkl()
    fn = lib.batched.get(a.dtype) if lib is not None and a.ndim >= 2 and b.ndim >= 2 else None
    if fn is None or b.dtype != a.dtype or b.shape[-2] != a.shape[-1]:
        return np.matmul(a, b)
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        return np.matmul(a, b)  # numpy's own error
    (m, k), n = a.shape[-2:], b.shape[-1]
    count = int(np.prod(batch, dtype=np.int64))
    if count == 0 or m * n * k < MIN_WORK or max(m, n, k, count) > _INT_MAX:
        return np.matmul(a, b)
    a3 = np.broadcast_to(a, (*batch, m, k)).reshape(count, m, k)  # a view where it can be
    b3 = np.broadcast_to(b, (*batch, k, n)).reshape(count, k, n)
    la, lb, it = _layout(a3[0]), _layout(b3[0]), a.itemsize
    sa, sb = a3.strides[0], b3.strides[0]
    pa, pb = a3.ctypes.data, b3.ctypes.data
    if la is None or lb is None or sa < 0 or sb < 0 or (sa | sb | pa | pb) % it:
        return np.matmul(a, b)
    out = np.empty((*batch, m, n), a.dtype)
    fn(_ROW_MAJOR, la[0], lb[0], m, n, k, 1.0, pa, la[1], sa // it, pb, lb[1], sb // it, 0.0,
       out.ctypes.data, n, m * n, count)
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
