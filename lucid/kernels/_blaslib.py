"""Which BLAS lucid's products run on, and its handles (``blas.py`` computes the products).

``LUCID_BLAS`` chooses (``_threads.blas_choice``):

``mkl``
    Intel's MKL from the ``mkl`` wheel (``libmkl_rt``, loaded through ctypes on the first
    product), on MKL's GNU OpenMP threading layer: libgomp, the pool numba's "omp" layer
    uses (``_threads.prefer_omp``), so BLAS and numba's parallel kernels take turns on one set
    of threads, as torch runs MKL and its own kernels on one OpenMP pool. Where libgomp cannot
    be loaded MKL is not used (its sequential layer ran the MLP step slower than OpenBLAS's
    threads).
``pool``
    scipy's OpenBLAS held to one thread, each product cut into one block per numba thread
    (``_gemm.POOL``): OpenBLAS's kernels on that one libgomp pool.
``numpy``
    numpy's own ``matmul`` (its OpenBLAS and OpenBLAS's threads).
``auto`` (the default)
    ``pool`` on AMD processors with AVX-512, else ``mkl`` where it is installed (x86-64
    Linux), else ``numpy``.

Why: on Intel processors with AVX-512 and on AMD ones without it, MKL runs float32 GEMMs
25-35% faster than OpenBLAS (figures in ``blas.py``). On an AMD processor with AVX-512 (Zen 4,
2-core EPYC) MKL takes its generic AVX2 path while OpenBLAS runs its AVX-512 (SkylakeX)
kernels; one thread, float32, microseconds, MKL / OpenBLAS::

    128x784 @ 784x512   1228 / 1066      512x128 @ 128x784   1197 / 1007
    128x512 @ 512x256    368 /  352      128x256 @ 256x10      57 /   11

(later runs put the two large ones within this machine's noise of each other, MKL 1047-1216
and 333-363 us, OpenBLAS 1064-1301 and 353-404 us; the small products' gap holds, 45-56 vs
15-21 us). The pool's gain is mostly its threading: OpenBLAS's own threads fight libgomp's
spinning ones (numpy's OpenBLAS for the products: MLP step 1.49x torch's time), and MKL's
threads took each step 5-14% longer than the pool (``blas.py``).
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

import numpy as np

from ._threads import blas_choice, mkl_candidates

__all__ = ["fortran_gemm", "library", "mkl", "reset", "set_threads"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_GNU_LAYER, _LP64 = 3, 0

_STATE: dict[str, Any] = {"lib": None, "loaded": False, "threads": None, "choice": "numpy",
                          "forked": False}
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
    _STATE["choice"] = blas_choice()
    if _STATE["choice"] != "mkl":
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
    """Where lucid's products run: ``"mkl"``, ``"pool"`` (scipy's OpenBLAS, one thread per
    block, on lucid's thread pool) or ``"numpy"`` (numpy's own BLAS and threads)."""
    if _mkl() is not None:
        return "mkl"
    return "pool" if _STATE["choice"] == "pool" else "numpy"


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
    run on MKL, else scipy's (the BLAS numba's own ``np.dot`` calls, and the pool's)."""
    dt = np.dtype(dtype)
    lib = _mkl()
    if lib is not None:
        _STATE["kernels_lib"] = lib  # the kernels keep calling it after a ``reset``
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
    # a forked child must not wake the parent's OpenMP pool (libgomp is not fork-safe, and
    # numba's "omp" layer ends a child that launches a parallel region): its products run on
    # the calling thread
    set_threads(1)
    bound = _STATE.get("kernels_lib")
    if bound is not None:  # the MKL compiled kernels call, even when products moved off it
        bound.set_threads(1)
    _STATE["forked"] = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
