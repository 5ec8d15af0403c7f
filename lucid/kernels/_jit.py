"""The one njit decorator behind every lucid kernel: cache policy, fastmath, parallel, registry.

Cache policy
    Compiled kernels go to ``cache_dir()``:
    ``$LUCID_CACHE_DIR`` or ``<user cache dir>/lucid/numba``, then one sub-directory per
    *key* = lucid version + Python version + numba version + a hash of every
    ``lucid/kernels/*.py``.  Keying on all kernel sources closes numba's own gap (it only
    checks the file that defines a function, so an edited callee in another module would
    be served stale).  Each option set of a function gets its own cache entry (numba
    would otherwise let a serial and a parallel build of one Python function share one).
    The user's own ``NUMBA_CACHE_DIR`` is neither read nor changed: lucid attaches its
    own cache object to each dispatcher.  If the directory cannot be written, kernels
    compile in memory only; nothing raises.

Fastmath policy
    ``FASTMATH`` = {nsz, arcp, contract, afn, reassoc}: reassociation lets float sums
    vectorise (3-5x here) while leaving out ``nnan``/``ninf`` keeps NaN/inf semantics, so
    NaN still propagates through sums and the explicit ``v != v`` tests in max/min kernels
    survive.  ``error_model="numpy"``: x/0 gives inf/nan as in numpy, no exception checks.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lucid.kernels import _threads

_threads.configure()  # NOTE: before numba/numpy load their thread pools, if still possible

import numba  # noqa: E402
from numba.core import sigutils  # noqa: E402
from numba.core import types as nbtypes  # noqa: E402
from numba.core.dispatcher import Dispatcher  # noqa: E402

from lucid import _background_compile as _background  # noqa: E402
from lucid import _first_run  # noqa: E402

FASTMATH: frozenset[str] = frozenset({"nsz", "arcp", "contract", "afn", "reassoc"})
DTYPES: tuple[str, ...] = ("float32", "float64")

_HERE = Path(__file__).resolve().parent

SigSpec = Callable[[Any], tuple]


# --------------------------------------------------------------------------- cache location


def _user_cache_base() -> Path:
    try:
        home = Path.home()
    except RuntimeError:  # no HOME and no passwd entry
        return Path(tempfile.gettempdir()) / f"lucid-{os.getuid() if hasattr(os, 'getuid') else 0}"
    if sys.platform == "darwin":
        return home / "Library" / "Caches"
    if os.name == "nt":
        local = os.environ.get("LOCALAPPDATA")
        return Path(local) if local else home / "AppData" / "Local"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) if xdg else home / ".cache"


def cache_root() -> Path:
    """Directory holding one sub-directory per cache key (``LUCID_CACHE_DIR`` overrides)."""
    env = os.environ.get("LUCID_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    return _user_cache_base() / "lucid" / "numba"


def _read_version() -> str:
    # NOTE: read the file, never import lucid/__init__ (it imports this module).
    try:
        text = (_HERE.parent / "_version.py").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    m = re.search(r"""__version__\s*=\s*["']([^"']+)["']""", text)
    return m.group(1) if m else "unknown"


def source_hash(paths: Sequence[Path] | None = None) -> str:
    """SHA-256 over the names and bytes of the kernel sources (``lucid/kernels/*.py``)."""
    if paths is None:
        paths = sorted(_HERE.glob("*.py"))
    h = hashlib.sha256()
    for p in sorted(paths, key=lambda q: q.name):
        h.update(p.name.encode())
        h.update(b"\0")
        try:
            h.update(p.read_bytes())
        except OSError:
            h.update(b"<unreadable>")
        h.update(b"\0")
    return h.hexdigest()


def cache_key(version: str | None = None, src_hash: str | None = None) -> str:
    """Name of the cache sub-directory; changes with lucid, Python, numba or any kernel source."""
    version = _read_version() if version is None else version
    src_hash = source_hash() if src_hash is None else src_hash
    py = f"py{sys.version_info[0]}{sys.version_info[1]}"
    return f"{version}-{py}-nb{numba.__version__}-{src_hash[:16]}"


def _writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


_CACHE_DIR: Path | None = None
_CACHE_OK: bool | None = None
KEEP_KEYS = 8  # cache directories of other keys (versions, edited sources) kept, newest first
_KEY_RE = re.compile(r"^.+-py\d+-nb[^-]+-[0-9a-f]{16}$")


def prune(root: Path, current: Path, keep: int = KEEP_KEYS) -> list[Path]:
    """Delete all but the ``keep`` most recently used key directories under ``root``."""
    try:
        os.utime(current)
        others = [
            p for p in root.iterdir() if p != current and _KEY_RE.match(p.name) and p.is_dir()
        ]
        others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return []
    gone = others[keep:]
    for p in gone:
        shutil.rmtree(p, ignore_errors=True)
    return gone


def cache_dir() -> Path:
    """Directory where lucid's compiled kernels are cached (may be unusable: see cache_enabled)."""
    global _CACHE_DIR
    if _CACHE_DIR is None:
        _CACHE_DIR = cache_root() / cache_key()
    return _CACHE_DIR


def cache_enabled() -> bool:
    """True when kernels are cached on disk (JIT on and ``cache_dir()`` writable)."""
    global _CACHE_OK
    if _CACHE_OK is None:
        _CACHE_OK = (not numba.config.DISABLE_JIT) and _writable(cache_dir())
        if _CACHE_OK:
            prune(cache_dir().parent, cache_dir())
    return _CACHE_OK


# a one-time stderr notice when the first lucid kernel misses the disk cache and compiles
# (here, or in the background helper while its op runs on numpy)
_first_run.install(cache_dir, cache_enabled)
_background.on_first_deferral(
    lambda waiting: _first_run.announce(cache_dir(), True, background=not waiting))

# --------------------------------------------------------------------------- numba cache object

try:
    from numba.core.caching import CompileResultCacheImpl, FunctionCache, IndexDataCacheFile
    from numba.core.caching import _CacheLocator as _NumbaLocator
except ImportError:  # pragma: no cover - numba moved its internals; run uncached
    FunctionCache = None  # type: ignore[assignment,misc]


if FunctionCache is not None:

    class _Locator(_NumbaLocator):
        """Points numba at lucid's keyed directory, whatever NUMBA_CACHE_DIR says."""

        def __init__(self, py_func: Callable, path: Path, stamp: str, tag: str) -> None:
            self._lineno = py_func.__code__.co_firstlineno
            self._path = str(path)
            self._stamp = stamp
            self._tag = tag

        def get_cache_path(self) -> str:
            return self._path

        def get_source_stamp(self) -> str:
            return self._stamp

        def get_disambiguator(self) -> str:
            return f"{self._lineno}-{self._tag}"

    class _Impl(CompileResultCacheImpl):
        def __init__(self, py_func: Callable, locator: _Locator) -> None:
            self._lineno = py_func.__code__.co_firstlineno
            self._locator = locator
            modname = os.path.splitext(os.path.basename(inspect.getfile(py_func)))[0]
            fullname = f"{modname}.{py_func.__qualname__}"
            self._filename_base = self.get_filename_base(fullname, getattr(sys, "abiflags", ""))

    class _Cache(FunctionCache):
        def __init__(self, py_func: Callable, path: Path, tag: str, kname: str = "") -> None:
            self._kname = kname
            self._module = py_func.__module__
            self._name = repr(py_func)
            self._py_func = py_func
            self._impl = _Impl(py_func, _Locator(py_func, path, path.name, tag))
            self._cache_path = str(path)
            self._cache_file = IndexDataCacheFile(
                cache_path=self._cache_path,
                filename_base=self._impl.filename_base,
                source_stamp=path.name,
            )
            self.enable()

        # NOTE: a cache that cannot be read or written (disk full, directory removed by a
        # concurrent prune) must never fail the computation: fall back to compiling.
        def load_overload(self, sig: Any, target_context: Any) -> Any:
            # A miss is compiled by the background helper (lucid/_background_compile.py):
            # "defer" while the call's reference path runs, "wait" (deterministic mode) and
            # then load what it wrote, so that a cold run executes the very code a warm run
            # loads (numba's in-process build can round differently from its cached object
            # code: layer norm's backward did). A "pending" kernel is not looked up again
            # until the helper reports it.
            mode = _background.mode() if self._kname else None
            if mode is None:
                return self._load(sig, target_context)
            args = sigutils.normalize_signature(sig)[0]
            key = (self._kname, args)
            st = _background.state(key)
            if st != "pending":
                cres = self._load(sig, target_context)
                if cres is not None or st is not None:  # loaded, or the helper gave up
                    return cres
            if mode == "defer":
                _background.defer(key, self._module, self._kname, args)  # raises if caught
                return None
            if _background.await_compiled(key, self._module, self._kname, args):
                return self._load(sig, target_context)
            return None

        def _load(self, sig: Any, target_context: Any) -> Any:
            try:
                return super().load_overload(sig, target_context)
            except OSError:
                return None

        def save_overload(self, sig: Any, data: Any) -> None:
            try:
                super().save_overload(sig, data)
            except OSError:
                pass


def options_tag(options: dict[str, Any]) -> str:
    """Short stable hash of a compile-option set (part of each cache file name)."""
    norm = {k: sorted(v) if isinstance(v, (set, frozenset)) else v for k, v in options.items()}
    return hashlib.sha1(repr(sorted(norm.items())).encode()).hexdigest()[:10]


# --------------------------------------------------------------------------- registry


@dataclass
class KernelEntry:
    """A registered kernel: its dispatcher and how to build warm-up signatures per dtype."""

    name: str
    dispatcher: Any
    signatures: list[SigSpec] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)

    def signatures_for(self, dtype: str) -> list[tuple]:
        t = getattr(nbtypes, dtype)
        return [spec(t) for spec in self.signatures]


REGISTRY: dict[str, KernelEntry] = {}


def _default_name(f: Callable) -> str:
    mod = f.__module__.rsplit(".", 1)[-1].strip("_").removesuffix("_kernels")
    return f"{mod}.{f.__name__.lstrip('_')}"


def kernel(
    fn: Callable | None = None,
    *,
    name: str | None = None,
    parallel: bool = False,
    fastmath: bool | frozenset[str] = True,
    signatures: Sequence[SigSpec] = (),
) -> Any:
    """Compile ``fn`` with lucid's numba policy and register it.

    ``signatures`` are callables ``T -> tuple of numba types`` (T = float32 or float64),
    used only by ``warmup``; they must match what the Python wrapper passes (C-contiguous
    arrays, Python ints -> int64).  Under ``NUMBA_DISABLE_JIT=1`` the plain function
    comes back and runs as Python.
    """

    def deco(f: Callable) -> Any:
        fm = set(FASTMATH) if fastmath is True else (set(fastmath) if fastmath else False)
        options: dict[str, Any] = {
            "parallel": parallel,
            "fastmath": fm,
            "nogil": True,
            "error_model": "numpy",
        }
        kname = name or _default_name(f) + ("[par]" if parallel else "")
        if kname in REGISTRY:
            raise ValueError(f"kernel {kname!r} registered twice")
        disp = numba.njit(cache=False, **options)(f)
        if FunctionCache is not None and isinstance(disp, Dispatcher) and cache_enabled():
            disp._cache = _Cache(f, cache_dir(), options_tag(options), kname)
        REGISTRY[kname] = KernelEntry(kname, disp, list(signatures), options)
        if not parallel:
            _SERIAL.setdefault(f, disp)
            return disp
        return _Serialized(disp, kname)

    return deco(fn) if fn is not None else deco


_SERIAL: dict[Callable, Any] = {}  # each function's serial build, where one is registered


class _Serialized:
    """A parallel kernel whose launches hold ``_threads.PARALLEL_LOCK``. In a forked child
    (``_threads.forked()``: a DataLoader worker) it runs its function's serial build
    instead: the same loops on the calling thread (made on first use where none is
    registered)."""

    __slots__ = ("_disp", "_name")

    def __init__(self, disp: Any, name: str) -> None:
        self._disp = disp
        self._name = name

    def __call__(self, *args: Any) -> Any:
        if _threads.forked():
            return self.serial()(*args)
        with _threads.PARALLEL_LOCK:
            return self._disp(*args)

    def serial(self) -> Any:
        """The serial build of this kernel's function."""
        f = self._disp.py_func
        ser = _SERIAL.get(f)
        if ser is None:
            opts = dict(REGISTRY[self._name].options, parallel=False)
            ser = _SERIAL[f] = kernel(f, name=self._name.replace("[par]", "") + "[serial]",
                                      fastmath=opts["fastmath"] or False)
        return ser

    def __getattr__(self, name: str) -> Any:
        return getattr(self._disp, name)


def dual(
    fn: Callable, *, name: str | None = None, signatures: Sequence[SigSpec] = ()
) -> tuple[Any, Any]:
    """A serial and a parallel build of one function (separate cache entries)."""
    base = name or _default_name(fn)
    ser = kernel(fn, name=base, parallel=False, signatures=signatures)
    par = kernel(fn, name=base + "[par]", parallel=True, signatures=signatures)
    return ser, par


def helper(fn: Callable) -> Any:
    """njit a callee used only inside kernels (same fastmath policy, compiled into callers)."""
    return numba.njit(cache=False, fastmath=set(FASTMATH), nogil=True, error_model="numpy")(fn)


def clear_cache(all_keys: bool = False) -> int:
    """Delete cached kernels (this key, or every key when ``all_keys``); returns files removed."""
    targets = [cache_root()] if all_keys else [cache_dir()]
    n = 0
    for t in targets:
        if t.is_dir():
            n += sum(1 for p in t.rglob("*") if p.is_file())
            shutil.rmtree(t, ignore_errors=True)
    return n
