"""Compile kernels in a background process while their ops run on the numpy reference.

On an empty disk cache every kernel would compile (0.1-5 s each) before its op could run, so a
model's first step waited a minute or more for numba. Instead, when a registered kernel misses
both memory and the disk cache inside a call that can do without it, ``_jit``'s cache object
asks this module to have it compiled by a helper process and raises ``KernelNotReady``; the
nearest *catcher* on the stack (each "cpu" backend method, see ``backend/_declining.py``)
then runs the numpy reference of its op. The helper (``lucid/_compile_server.py``) compiles the
requests in order into the same on-disk cache; once it reports a kernel done, the next call
loads it (milliseconds) and the op runs on the kernel from then on.

Only the call's own signature is requested: one dtype, one layout, the serial or the parallel
build that the size asked for.

In deterministic mode (``lucid.use_deterministic_algorithms(True)``) nothing runs on a
reference path instead: the caller waits for the helper, then loads the kernel from the disk
cache, so a cold run executes the very machine code a warm run loads (numba's in-process
build can round differently from the object code it caches). A process that loaded
pytest-benchmark waits the same way, so that no timed step runs on a reference path.

A kernel compiles in the calling process as before (blocking) when:

- the call has no catcher above it (kernels called directly, warm-up, the helper itself), or
  runs inside a catcher's reference path (``compiling_here``);
- ``LUCID_BACKGROUND_COMPILE=0``;
- the disk cache is off (read-only and no writable ``LUCID_CACHE_DIR``: nothing to share), or
  the helper could not start or failed on that kernel (the foreground compile then shows the
  real error).

No helper outlives its parent: it exits when its stdin closes (the parent ended, however) and
the parent kills it at exit. numba writes each cache entry through a temporary file and a
rename, so a compile cut short leaves a cache that the next run reads or rebuilds.
"""

from __future__ import annotations

import atexit
import json
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["ENV", "KernelNotReady", "await_compiled", "catcher", "compiling_here", "mode",
           "set_deterministic", "set_enabled", "started", "state"]

ENV = "LUCID_BACKGROUND_COMPILE"
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])


class KernelNotReady(Exception):
    """A kernel is being compiled in the background; the caller runs its reference path."""


_CATCHERS: set[Any] = set()
_FALLBACK_CODES: set[Any] = set()
_LOCK = threading.Lock()
_STATE: dict[str, Any] = {
    "enabled": os.environ.get(ENV, "1") != "0",
    "deterministic": False,
    "server": None,  # the helper's Popen, once started
    "broken": False,  # the helper could not start or died: compile in the foreground
    "status": {},  # (kernel, args) -> "pending" | "done" | "failed"
    "ids": {},  # request id -> (kernel, args)
    "next_id": 0,
    "on_first": None,  # called once when the first kernel is deferred (the notice)
}
_DONE = threading.Condition(_LOCK)


def set_enabled(on: bool) -> None:
    """Turn deferral on or off for this process (``LUCID_BACKGROUND_COMPILE`` sets the
    default)."""
    _STATE["enabled"] = bool(on)


def set_deterministic(on: bool) -> None:
    """Deterministic mode (``lucid.use_deterministic_algorithms``): each op waits for its
    kernel from the helper and runs the cached code, so a result never depends on which
    path ran or whether the cache was cold."""
    _STATE["deterministic"] = bool(on)


def catcher(fn: Callable) -> Callable:
    """Mark ``fn`` as handling ``KernelNotReady`` (it falls back to a reference path)."""
    _CATCHERS.add(fn.__code__)
    return fn


def compiling_here(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, where a kernel called outside any inner catcher compiles in
    this process (a catcher's reference path: there is nothing left to fall back to)."""
    return fn(*args, **kwargs)


_FALLBACK_CODES.add(compiling_here.__code__)


def started() -> bool:
    """Whether this process has deferred a kernel (its first steps are on reference paths)."""
    return _STATE["server"] is not None


def _caught() -> bool:
    """True when the innermost catcher-or-fallback frame on this thread's stack is a catcher."""
    f = sys._getframe(2)
    while f is not None:
        code = f.f_code
        if code in _CATCHERS:
            return True
        if code in _FALLBACK_CODES:
            return False
        f = f.f_back
    return False


def mode() -> str | None:
    """What a kernel's cache miss does now: ``"defer"`` (the helper compiles it while the
    caller's reference path runs), ``"wait"`` (deterministic mode: the helper compiles it
    and the caller waits, then loads it), or None (compile in this process)."""
    if not _STATE["enabled"] or _STATE["broken"]:
        return None
    # NOTE: under pytest-benchmark a step timed on a reference path would be reported as the
    # kernel's speed: there, as in deterministic mode, each op waits for its kernel
    if _STATE["deterministic"] or "pytest_benchmark" in sys.modules:
        return "wait"
    return "defer"


def state(key: tuple) -> str | None:
    """``"pending"``, ``"done"``, ``"failed"`` or None (never requested) for ``key``."""
    return _STATE["status"].get(key)


def on_first_deferral(fn: Callable[[bool], None]) -> None:
    """Call ``fn(waiting)`` once, when the first kernel goes to the helper (lucid prints its
    notice); ``waiting``: the caller waits for it (deterministic mode)."""
    _STATE["on_first"] = fn


def defer(key: tuple, module: str, name: str, args: tuple) -> None:
    """Raise ``KernelNotReady`` after asking the helper for ``name(args)``, when the caller
    can fall back; return (the caller compiles in the foreground) when it cannot."""
    if not _caught():
        return
    with _LOCK:
        st = _STATE["status"].get(key)
        if st == "failed" or _STATE["broken"]:
            return
        if st is None:
            if not _send(key, module, name, args):
                return
    raise KernelNotReady(name)


def await_compiled(key: tuple, module: str, name: str, args: tuple) -> bool:
    """Have the helper compile ``name(args)`` and wait for it; True once it is on disk."""
    with _LOCK:
        st = _STATE["status"].get(key)
        if st is None and not _send(key, module, name, args, waiting=True):
            return False
        _DONE.wait_for(lambda: _STATE["status"].get(key) != "pending")
        return _STATE["status"].get(key) == "done"


def _send(key: tuple, module: str, name: str, args: tuple, waiting: bool = False) -> bool:
    """Queue one request (``_LOCK`` held); False when the helper is unusable."""
    proc = _STATE["server"] or _start()
    if proc is None:
        return False
    rid = _STATE["next_id"]
    _STATE["next_id"] = rid + 1
    try:
        blob = pickle.dumps((rid, module, name, args), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - a type numba cannot pickle: compile here instead
        return False
    try:
        proc.stdin.write(struct.pack(">I", len(blob)) + blob)
        proc.stdin.flush()
    except (OSError, ValueError):
        _STATE["broken"] = True
        return False
    _STATE["ids"][rid] = key
    _STATE["status"][key] = "pending"
    first, _STATE["on_first"] = _STATE["on_first"], None
    if first is not None:
        try:
            first(waiting)
        except Exception:  # noqa: BLE001 - a notice never breaks a computation
            pass
    return True


def _start() -> subprocess.Popen | None:
    env = dict(os.environ)
    env[ENV] = "0"  # the helper compiles in its own foreground
    env["LUCID_COMPILE_NOTICE"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_PARENT, env.get("PYTHONPATH"))
                                        if p)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "lucid._compile_server"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, close_fds=True)
    except OSError:
        _STATE["broken"] = True
        return None
    _STATE["server"] = proc
    threading.Thread(target=_read_replies, args=(proc,), name="lucid-compile-replies",
                     daemon=True).start()
    return proc


def _read_replies(proc: subprocess.Popen) -> None:
    for line in proc.stdout:  # type: ignore[union-attr]
        try:
            rep = json.loads(line)
        except ValueError:
            continue
        with _LOCK:
            key = _STATE["ids"].pop(rep.get("id"), None)
            if key is not None:
                _STATE["status"][key] = "done" if rep.get("ok") else "failed"
            _DONE.notify_all()
    with _LOCK:  # the helper ended: what it still owed compiles in the foreground
        if _STATE["server"] is proc:
            _STATE["broken"] = True
            for key in _STATE["ids"].values():
                _STATE["status"][key] = "failed"
            _STATE["ids"].clear()
        _DONE.notify_all()


def _shutdown() -> None:
    proc = _STATE["server"]
    _STATE["server"] = None
    if proc is None:
        return
    try:
        proc.stdin.close()  # type: ignore[union-attr]
    except OSError:
        pass
    if proc.poll() is None:
        proc.kill()  # NOTE: numba's cache writes are temp-file + rename: a kill is safe
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        pass


def _after_fork_in_child() -> None:
    # NOTE: a forked child (a data-loader worker) must neither talk to nor kill its parent's
    # helper: it forgets it and compiles in its own foreground
    proc = _STATE["server"]
    if proc is not None:
        for f in (proc.stdin, proc.stdout):
            try:
                f.close()  # type: ignore[union-attr]
            except OSError:
                pass
    _STATE.update(server=None, broken=True, ids={}, status={})


atexit.register(_shutdown)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
