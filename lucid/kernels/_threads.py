"""Thread-pool policy: keep OpenBLAS's and numba's worker threads from fighting over cores.

Both pools busy-wait after each parallel region. On a 2-core machine the waiting threads
of one pool steal a core from the next region of the other. Figures (2 cores, numpy 2.4
with OpenBLAS 0.3.31 pthreads, numba 0.68 "omp" layer = GNU libgomp), for one step of
``h = a @ b`` (256x784 @ 784x512 float32, numpy) -> parallel row-sum of ``h`` -> parallel
row-sum of a (256, 4096) array; matmul alone 0.90 ms, big row-sum alone 48 us:

    no policy                                         9.9  ms / step
    OPENBLAS_THREAD_TIMEOUT=4 only                    1.88 ms  (libgomp spin now hurts BLAS)
    + GOMP_SPINCOUNT=10000                            1.07 ms  <- lucid's policy
    + GOMP_SPINCOUNT=0 (or OMP_WAIT_POLICY=PASSIVE)   1.14 ms  but row-sum alone 131 us (wake-up)
    OMP_WAIT_POLICY=ACTIVE                            1.80 ms  and matmul alone 1.72 ms
    GOMP_SPINCOUNT=30000 / 100000                     1.27 / 1.67 ms
    one BLAS thread (threadpoolctl)                   1.53 ms  (matmul alone 1.39 ms)
    numba kernels serial, no policy                   1.00 ms  (big row-sum alone 158 us)
    numpy imported first, then configure()            same as the policy (OpenBLAS re-read)

``configure()`` therefore
  1. sets ``OPENBLAS_THREAD_TIMEOUT=4`` (OpenBLAS workers sleep after 2**4 polls instead
     of ~0.1 s) and ``GOMP_SPINCOUNT=10000`` (300000 where MKL runs the products, below)
     unless the user already set them;
  2. if an OpenBLAS (pthreads build) was loaded before it ran (numpy/scipy imported
     first), makes that library re-read its environment (``openblas_read_env``) and
     stops its workers (``blas_thread_shutdown_``, OpenBLAS's own pre-fork hook); the next
     BLAS call restarts them with the short timeout;
  3. if that is impossible (symbols missing, other BLAS builds), numba kernels run serial
     (``parallel_threshold()`` becomes infinite): serial was 1.0 ms vs 9.9 ms above.

Where lucid's products run on MKL (``blas.py``), MKL and numba's kernels share one libgomp
pool and nothing competes for its spinning threads: ``GOMP_SPINCOUNT`` is then libgomp's own
default, 300000, not 10000. Step times, ms, MKL, spin 10000 -> 300000: CNN 8.2 -> 7.5, DCGAN
33.7 -> 29.6, Transformer encoder 60.1 -> 52.5, ResNet-18 448 -> 451; the MLP after a 0.3 s
pause took ~10 steps at 5.2 ms before reaching 2.0 ms with the short spin, 1-2 with the long.

``OMP_WAIT_POLICY`` is left alone (PASSIVE costs an ~80 us wake-up on every parallel
kernel). numba's threading layer is chosen in the order omp > tbb > workqueue (numba's own
order puts tbb first; ``NUMBA_THREADING_LAYER`` or ``NUMBA_THREADING_LAYER_PRIORITY`` set by
the user win): MKL, where lucid's products use it (``blas.py``), runs on libgomp, so "omp"
keeps BLAS and numba's kernels on one pool (the ``mkl`` wheel installs TBB, which numba
would otherwise pick; on the CNN and MLP steps tbb and omp measured the same without MKL).
This holds also when an OpenMP runtime was loaded before lucid (torch ships a libgomp.so.1
that numba then shares): "omp" on torch's pool beat a switch to "workqueue" (figures below).
Kernels below
``parallel_threshold(kind)`` elements run their serial build (figures below).

benchmarks/kernels/interleaved.py (step = matmul, row sums of 131k and 1M, relu_backward):
policy before numpy import 1.12 ms, numpy imported first 1.13 ms, no policy 7.4 ms
(8.5 ms with every kernel parallel); matmul alone 0.94-1.0 ms in all three.
Torch imported first, microseconds, "workqueue" vs "omp" on torch's pool (the choice):
1M row sum 218-239 vs 72-78, 1M row max 261-279 vs 109-120, 1M relu_backward 360-407 vs
272-280, step with an extra torch.relu 2.04-2.27 ms vs 1.80-1.98 ms (lucid imported first,
"omp", own libgomp: 66-80 / 110-121 / 270-285 us).

Inside lucid's parallel kernels two more rules hold: every parallel launch holds
``PARALLEL_LOCK``, and kernels whose numba threads call BLAS (conv's GEMMs) run under
``ONE_BLAS_THREAD``, which sets scipy's OpenBLAS to one thread and restores it afterwards.
"""

from __future__ import annotations

import ctypes
import glob
import os
import sys
import threading
from typing import Any

OPENBLAS_THREAD_TIMEOUT = "4"
GOMP_SPINCOUNT = "10000"
GOMP_SPINCOUNT_ONE_POOL = "300000"  # libgomp's own default, where MKL shares numba's pool
LAYER_PRIORITY = "omp tbb workqueue"

# Elements from which a kernel runs its parallel build. Median microseconds of one kernel
# call, float32, serial -> parallel build, in three situations: right after a 256x784 @ 784x512
# matmul (worker threads asleep), back to back (threads still spinning), and after 200 us of
# busy Python (the usual gap between ops):
#
#                       relu_backward (3 streams)        row sum (1 stream)
#   elements        after BLAS   warm     gap       after BLAS   warm     gap
#   65536            27 -> 71    8 -> 6    9 -> 35    14 -> 63    3 -> 4    5 -> 33
#   131072           50 -> 54   15 -> 8   20 -> 41    21 -> 43    5 -> 5    8 -> 37
#   262144          101 -> 93  100 -> 17 101 -> 64    40 -> 74   12 -> 9   14 -> 37
#   524288          210 -> 140 232 -> 100 231 -> 159  76 -> 83   37 -> 15  49 -> 58
#   1048576         434 -> 246 445 -> 225 442 -> 276 143 -> 125 131 -> 45 133 -> 110
#
# Waking the sleeping worker costs 30-60 us, so parallel pays once the serial loop takes
# ~100 us: 2**18 elements for elementwise kernels, 2**19 for reductions, 2**21 for optimizer
# updates (``optim.py``). These hold where BLAS keeps threads of its own (``blas_choice()``
# "numpy", spin count 10000).
THRESHOLDS: dict[str, int] = {"elementwise": 1 << 18, "reduce": 1 << 19, "optimizer": 1 << 21}
# Where the products run on numba's own libgomp pool ("pool" or "mkl", spin count 300000),
# its worker stays awake through a training step, and a serial kernel after a product reads
# on one core what the product left in the other core's cache. On this 2-core Zen 4 VM that
# read cost 5x in one of two machine states (an SGD update of the MLP's 256x512 weight right
# after backward: 25 us, or 125-133 us while the worker spun; 28 us once it slept). Steps,
# lucid with these thresholds against the ones above, interleaved with torch, ms: MLP 3.78 ->
# 3.28 in that state (torch 3.31), 2.21 -> 2.15 in the other (torch 2.20); CNN 7.17 -> 7.00,
# nanoGPT 54.2 -> 54.4, Transformer encoder 47.8 -> 47.0, DCGAN 33.2 -> 32.7, LSTM LM 76.8 ->
# 76.3.
THRESHOLDS_ONE_POOL: dict[str, int] = {"elementwise": 1 << 16, "reduce": 1 << 16,
                                       "optimizer": 1 << 16}

_STATE: dict[str, Any] = {"configured": False}


# ---- will products run on MKL (blas.py)? Decided here, without numpy: the answer sets the
# spin count before numpy loads its BLAS. LUCID_BLAS: auto or mkl (the default: MKL wherever
# libmkl_rt is installed) or numpy.


def mkl_candidates() -> list[str]:
    """Paths where the ``mkl`` wheel (or a conda environment) puts ``libmkl_rt``."""
    roots = [os.path.join(p, "lib") for p in dict.fromkeys((sys.prefix, sys.base_prefix))]
    found: list[str] = []
    for root in roots:
        found += sorted(glob.glob(os.path.join(root, "libmkl_rt.so*")), reverse=True)
    return found


def _amd_avx512() -> bool:
    """An AMD processor with AVX-512 (Zen 4 and later), read from /proc/cpuinfo (Linux)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            first = f.read(1 << 16).split("\n\n", 1)[0]
    except OSError:
        return False
    fields = {key.strip(): value for key, _, value in
              (line.partition(":") for line in first.splitlines())}
    return "AuthenticAMD" in fields.get("vendor_id", "") and \
        "avx512f" in fields.get("flags", "").split()


def blas_choice() -> str:
    """Where lucid's products run (``_blaslib``): ``"mkl"``, ``"pool"`` or ``"numpy"``, from
    ``LUCID_BLAS`` (auto, mkl, pool, numpy) and this machine."""
    choice = os.environ.get("LUCID_BLAS", "auto").strip().lower()
    if choice == "pool":
        return "pool"
    if choice not in ("mkl", "auto") or not sys.platform.startswith("linux"):
        return "numpy"
    if choice == "auto" and _amd_avx512():
        return "pool"
    return "mkl" if mkl_candidates() else "numpy"


def wants_mkl() -> bool:
    """True when ``LUCID_BLAS`` and this machine call for MKL and it is installed (Linux)."""
    return blas_choice() == "mkl"


# NOTE: numba's "workqueue" layer (its fallback where neither TBB nor OpenMP is available, and
# a user's choice via NUMBA_THREADING_LAYER) aborts the process when two Python threads launch
# parallel regions at once, and a parallel launch releases the GIL whatever the nogil flag
# says. Every parallel build runs under this lock (reentrant: conv holds it around a
# sequence of launches). When torch loaded OpenMP first, numba shares torch's pool on the
# "omp" layer: measured faster than switching to workqueue (1M-element sum 72-78 vs 218-239
# us, the wake-up of workqueue's sleeping threads), so the layer is left alone.
PARALLEL_LOCK = threading.RLock()


def _loaded_libraries(needle: str) -> list[str]:
    """Paths of shared libraries in this process whose file name contains ``needle``."""
    paths: list[str] = []
    if sys.platform.startswith("linux"):
        try:
            with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
                for line in f:
                    parts = line.split(None, 5)
                    if len(parts) == 6:
                        p = parts[5].strip()
                        if needle in os.path.basename(p) and p not in paths:
                            paths.append(p)
        except OSError:
            pass
        return paths
    try:  # NOTE: threadpoolctl is optional
        from threadpoolctl import threadpool_info
    except ImportError:
        return paths
    for info in threadpool_info():
        p = info.get("filepath", "")
        if needle in os.path.basename(p) and p not in paths:
            paths.append(p)
    return paths


def _openblas_parallel_mode(lib: ctypes.CDLL) -> int | None:
    for sym in (
        "openblas_get_parallel",
        "openblas_get_parallel64_",
        "scipy_openblas_get_parallel64_",
        "scipy_openblas_get_parallel",
    ):
        fn = getattr(lib, sym, None)
        if fn is not None:
            fn.restype = ctypes.c_int
            return int(fn())
    return None


def _reinit_openblas(path: str, timeout: int) -> dict[str, Any]:
    """Make an already loaded OpenBLAS pick up the thread timeout; report what happened."""
    rec: dict[str, Any] = {"path": path, "ok": False}
    try:
        mode = getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_GLOBAL", 0)
        lib = ctypes.CDLL(path, mode=mode)
        read_env = lib.openblas_read_env
        shutdown = lib.blas_thread_shutdown_
        get_timeout = lib.openblas_thread_timeout
    except (OSError, AttributeError) as e:
        rec["error"] = repr(e)
        return rec
    get_timeout.restype = ctypes.c_int
    rec["parallel_mode"] = _openblas_parallel_mode(lib)
    if rec["parallel_mode"] not in (None, 1):  # 0 = sequential, 2 = OpenMP: no idle spin
        rec["ok"] = True
        return rec
    rec["timeout_before"] = int(get_timeout())
    if rec["timeout_before"] != timeout:
        read_env()
        shutdown()
    rec["timeout_after"] = int(get_timeout())
    rec["ok"] = rec["timeout_after"] == timeout
    return rec


def configure() -> dict[str, Any]:
    """Apply lucid's thread policy; call before numpy is imported when possible. Idempotent.

    Returns ``state()``. Safe to call again after numpy/scipy were imported: an OpenBLAS
    loaded meanwhile is told to re-read its environment.
    """
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", OPENBLAS_THREAD_TIMEOUT)
    one_pool = blas_choice() != "numpy"  # MKL or the pool: products on numba's libgomp pool
    os.environ.setdefault("GOMP_SPINCOUNT", GOMP_SPINCOUNT_ONE_POOL if one_pool else GOMP_SPINCOUNT)
    prefer_omp()
    try:
        want = int(os.environ["OPENBLAS_THREAD_TIMEOUT"])
    except ValueError:
        want = -1
    blas = []
    if want >= 0:
        for p in _loaded_libraries("openblas"):
            blas.append(_reinit_openblas(p, want))
    first = not _STATE["configured"]
    _STATE.update(
        configured=True,
        openblas=blas,
        openblas_protected=all(r["ok"] for r in blas),
        openblas_thread_timeout=os.environ["OPENBLAS_THREAD_TIMEOUT"],
        gomp_spincount=os.environ["GOMP_SPINCOUNT"],
    )
    if first:
        _STATE["gomp_preloaded"] = bool(_loaded_libraries("libgomp"))
    return state()


def prefer_omp() -> None:
    """Put numba's "omp" threading layer first unless the user chose (see the docstring)."""
    if "NUMBA_THREADING_LAYER_PRIORITY" in os.environ:
        return
    os.environ["NUMBA_THREADING_LAYER_PRIORITY"] = LAYER_PRIORITY
    config = getattr(sys.modules.get("numba"), "config", None)
    if config is not None:  # numba read its environment already
        config.THREADING_LAYER_PRIORITY = LAYER_PRIORITY.split()


def state() -> dict[str, Any]:
    """What ``configure`` found and did (for diagnostics and tests)."""
    return dict(_STATE)


def parallel_threshold(kind: str = "reduce") -> float:
    """Element count from which kernels of ``kind`` ("reduce", "elementwise", "optimizer") go
    parallel: ``THRESHOLDS_ONE_POOL`` where the products share numba's pool, else
    ``THRESHOLDS``.

    ``LUCID_PARALLEL_THRESHOLD`` overrides every kind; infinite when a spinning BLAS pool could
    not be tamed (then parallel loops lose far more than they gain: 9.9 vs 1.0 ms above).
    """
    if _STATE.get("forked"):
        return float("inf")
    env = os.environ.get("LUCID_PARALLEL_THRESHOLD")
    if env:
        try:
            return float(env)
        except ValueError:
            pass
    if _STATE.get("configured") and not _STATE.get("openblas_protected", True):
        return float("inf")
    return (THRESHOLDS if blas_choice() == "numpy" else THRESHOLDS_ONE_POOL)[kind]


_THRESHOLD_CACHE: dict[str, float] = {}


def use_parallel(n: int, kind: str = "reduce") -> bool:
    """True when a kernel of ``kind`` over ``n`` elements should run its parallel build."""
    t = _THRESHOLD_CACHE.get(kind)
    if t is None:
        t = _THRESHOLD_CACHE[kind] = parallel_threshold(kind)
    return n >= t


def _after_fork() -> None:
    # NOTE: numba's "omp" layer ends a child forked after its pool started ("fork() called
    # from a process already using GNU OpenMP") when it opens a parallel region: a forked
    # process (a DataLoader worker) runs serial builds only (see _jit._Serialized)
    _STATE["forked"] = True
    _THRESHOLD_CACHE.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def forked() -> bool:
    """Whether this process was forked from one running lucid (no parallel builds here)."""
    return bool(_STATE.get("forked"))


def reset_threshold() -> None:
    """Forget cached thresholds (after changing ``LUCID_PARALLEL_THRESHOLD`` or ``THRESHOLDS``)."""
    _THRESHOLD_CACHE.clear()


# ---- BLAS threads inside parallel kernels ------------------------------------------------


class BlasThreads:
    """Sets scipy's OpenBLAS (and MKL, where kernels' GEMMs run on it: ``_gemm.py``) to one
    thread while numba threads call BLAS, then restores it.

    numba's ``np.dot`` calls scipy's BLAS. With two threads each calling a multithreaded
    OpenBLAS, OpenBLAS warns "Detect OpenMP Loop and this application may hang" and the pools
    oversubscribe the cores. The setter is process-wide: another Python thread calling scipy's
    BLAS during the kernel runs single-threaded for that time (numpy's own copy is untouched).
    """

    def __init__(self) -> None:
        self.ready = False
        self.ok = False
        self.libs: list[tuple[object, object]] = []
        self.lock = threading.Lock()
        self.depth = 0  # calls inside (several Python threads may run kernels at once)
        self.prev: list[int] = []
        self.pinned = False  # held at one thread for good (the pool's products, _blaslib)
        self.paths: list[str] = []

    def _probe(self) -> None:
        self.ready = True
        mkl = getattr(sys.modules.get("lucid.kernels._blaslib"), "mkl", None)
        lib = mkl() if mkl is not None else None
        if lib is not None:  # kernels' GEMMs run on MKL (kernels/_gemm.py)
            self.libs.append((lib.set_threads, lib.get_threads))
            self.ok = True
        try:  # NOTE: scipy's BLAS is loaded only when a conv first needs its thread count
            import scipy
            import scipy.linalg.cython_blas  # noqa: F401  (loads the BLAS numba calls)
        except ImportError:
            return
        name = ""
        try:
            name = str(scipy.__config__.CONFIG["Build Dependencies"]["blas"]["name"])
        except (AttributeError, KeyError, TypeError):
            pass
        if "openblas" not in name.lower():
            return
        paths = _loaded_libraries("openblas")
        # numba's np.dot calls scipy's BLAS; numpy's own copy (wheels ship two) is left alone
        # unless it is the only one, so numpy matmuls in other threads keep their threads.
        own = os.sep + "numpy.libs" + os.sep
        paths = [p for p in paths if own not in p] or paths
        for path in paths:
            try:
                lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0))
            except OSError:
                continue
            for sym in (
                "openblas_set_num_threads",
                "scipy_openblas_set_num_threads",
                "scipy_openblas_set_num_threads64_",
            ):
                setter = getattr(lib, sym, None)
                getter = getattr(lib, sym.replace("_set_", "_get_"), None)
                if setter is not None and getter is not None:
                    getter.restype = ctypes.c_int
                    setter.argtypes = [ctypes.c_int]
                    self.libs.append((setter, getter))
                    self.paths.append(path)
                    break
        self.ok = bool(self.libs)

    def available(self) -> bool:
        if not self.ready:
            self._probe()
        return self.ok

    def pin(self) -> None:
        """Hold the library at one thread from now on (entering and leaving do nothing)."""
        if not self.ready:
            self._probe()
        with self.lock:
            self.pinned = True
            for s, _ in self.libs:
                s(1)  # type: ignore[operator]

    def __enter__(self) -> None:
        if not self.ready:  # entered before any ``available()``: find the library first
            self._probe()
        if self.pinned:
            return
        with self.lock:
            if self.depth == 0:
                self.prev = [int(g()) for _, g in self.libs]  # type: ignore[operator]
                for s, _ in self.libs:
                    s(1)  # type: ignore[operator]
            self.depth += 1

    def __exit__(self, *exc: object) -> None:
        if self.pinned:
            return
        with self.lock:
            self.depth -= 1
            if self.depth == 0:
                for (s, _), n in zip(self.libs, self.prev):
                    s(n)  # type: ignore[operator]


# ``with ONE_BLAS_THREAD:`` around a parallel launch whose threads call BLAS (conv's GEMMs).
ONE_BLAS_THREAD = BlasThreads()


# ---- lucid.set_num_threads / get_num_threads ------------------------------------------------

_BLAS_SETTERS = ("openblas_set_num_threads", "openblas_set_num_threads64_",
                 "scipy_openblas_set_num_threads", "scipy_openblas_set_num_threads64_")


def set_blas_threads(n: int) -> None:
    """Set every OpenBLAS loaded in this process (numpy's and scipy's copies, but scipy's where
    the pool holds it at one thread), and MKL where lucid's products use it, to ``n``
    threads."""
    lib = sys.modules.get("lucid.kernels._blaslib")
    if lib is not None:
        lib.set_threads(n)
    pinned = ONE_BLAS_THREAD.paths if ONE_BLAS_THREAD.pinned else []
    for path in _loaded_libraries("openblas"):
        if path in pinned:
            continue
        try:
            lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0))
        except OSError:
            continue
        for sym in _BLAS_SETTERS:
            fn = getattr(lib, sym, None)
            if fn is not None:
                fn.argtypes = [ctypes.c_int]
                fn(n)
                break


def set_num_threads(n: int) -> None:
    """``n`` threads for numba's parallel kernels (capped at its pool size,
    ``NUMBA_NUM_THREADS``; numba keeps the count per Python thread) and for OpenBLAS
    (process-wide)."""
    import numba  # NOTE: this module runs before numpy/numba load (see configure())

    count = min(n, numba.config.NUMBA_NUM_THREADS)
    numba.set_num_threads(count)
    _STATE["num_threads"] = count  # the pool's block count (_gemm.products)
    set_blas_threads(n)


def block_count(default: int) -> int:
    """Blocks the pool cuts a product into (``_gemm.products``): ``set_num_threads``'s count,
    or ``default`` (numba's pool size) before it is called."""
    return int(_STATE.get("num_threads") or default)


def get_num_threads() -> int:
    """The number of threads numba's parallel kernels use in the calling thread."""
    import numba  # NOTE: this module runs before numpy/numba load (see configure())

    return int(numba.get_num_threads())
