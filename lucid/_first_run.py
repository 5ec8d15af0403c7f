"""The first-run notice: say once, on stderr, that lucid is compiling its kernels.

A lucid kernel compiles (0.1-5 s each) only when the on-disk cache misses, which happens
on a machine's first run and after an upgrade. Without a word, a newcomer's first epoch
simply looks slow. ``install`` hooks numba's ``"numba:compile"`` event (numba raises it
after the disk cache missed, right before compiling), and the first lucid kernel that
compiles prints one notice: what is happening, roughly how long it takes, and how to
compile everything ahead of time (``python -m lucid.kernels warmup``).

The notice is printed once per process and not at all when ``LUCID_COMPILE_NOTICE=0``
(set by the warmup itself, and by this module once it has spoken, so that worker
processes started later stay quiet).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

__all__ = ["ENV", "announce", "install", "message", "silence"]

ENV = "LUCID_COMPILE_NOTICE"

_LOCK = threading.Lock()
_STATE: dict[str, Any] = {"installed": False, "said": False, "cache_dir": None,
                          "cache_enabled": None, "stream": None}


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def message(cache_dir: Path | str | None, cache_enabled: bool, background: bool = False) -> str:
    """The notice's text for a cache at ``cache_dir`` (enabled or not); ``background``: the
    kernels compile in a helper process while their ops run on numpy."""
    if background:
        return ("lucid: compiling numba kernels for this machine in a background process, once"
                f"\n  (cached in {cache_dir})."
                "\n  Until a kernel is ready its op runs on numpy: the first minute or two of steps"
                "\n  is slower and may differ from later steps by float rounding"
                "\n  (lucid.use_deterministic_algorithms(True) waits for the kernels instead)."
                f"\n  To compile every kernel ahead of time on all {_cores()} cores, run:"
                "  python -m lucid.kernels warmup"
                f"\n  (set {ENV}=0 to hide this message)\n")
    head = ("lucid: compiling numba kernels for this machine (0.1-5 s each: a model's "
            "first steps\n  can take 10-60 s).")
    if cache_enabled:
        body = ("\n  This happens once: they are cached in"
                f" {cache_dir}\n  and load in milliseconds from now on."
                f"\n  To compile every kernel ahead of time on all {_cores()} cores, run:"
                "  python -m lucid.kernels warmup")
    else:
        body = (f"\n  The cache directory {cache_dir} cannot be written, so kernels compile again"
                "\n  in every process: set LUCID_CACHE_DIR to a writable directory to keep them.")
    return head + body + f"\n  (set {ENV}=0 to hide this message)\n"


def silence() -> None:
    """No notice in this process, nor in processes it starts from now on."""
    _STATE["said"] = True
    os.environ[ENV] = "0"


def _is_lucid(dispatcher: Any) -> bool:
    mod = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    return mod == "lucid" or mod.startswith("lucid.")


def announce(cache_dir: Path | str | None, cache_enabled: bool,
             stream: TextIO | None = None, background: bool = False) -> bool:
    """Print the notice unless already printed (or turned off); True if it was printed now."""
    with _LOCK:
        if _STATE["said"]:
            return False
        _STATE["said"] = True
        if os.environ.get(ENV, "1") == "0":
            return False
        os.environ[ENV] = "0"
        try:
            out: TextIO = stream or _STATE["stream"] or sys.stderr
            out.write(message(cache_dir, cache_enabled, background))
            out.flush()
        except Exception:  # NOTE: a notice must never break a computation
            return False
        return True


def _on_compile(dispatcher: Any) -> None:
    if _STATE["said"] or not _is_lucid(dispatcher):
        return
    try:
        where, enabled = _STATE["cache_dir"](), bool(_STATE["cache_enabled"]())
    except Exception:  # NOTE: a notice must never break a computation
        return
    announce(where, enabled)


def install(cache_dir: Callable[[], Any], cache_enabled: Callable[[], bool],
            stream: TextIO | None = None) -> None:
    """Listen for numba compilations (idempotent; needs numba, so call it once numba loaded).

    ``cache_dir`` / ``cache_enabled``: callables giving lucid's kernel cache directory and
    whether it is usable; ``stream``: where the notice goes (default ``sys.stderr``).
    """
    _STATE.update(cache_dir=cache_dir, cache_enabled=cache_enabled, stream=stream)
    if _STATE["installed"]:
        return
    # NOTE: numba is imported only by the caller's layer (lucid.kernels); this module stays
    # importable without it
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            data = ev.data or {}
            _on_compile(data.get("dispatcher"))

        def on_end(self, ev: Any) -> None:
            pass

    event.register("numba:compile", _Listener())
    _STATE["installed"] = True
