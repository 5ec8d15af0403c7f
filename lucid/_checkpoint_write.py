"""Atomic checkpoint writes, and the cleanup of temporaries left by killed saves.

A save to ``dir/name`` writes ``dir/.name.lucid-save-<pid>-<host>-<random>.tmp``, fsyncs it
and renames it over ``dir/name``. A process killed mid-write leaves that temporary behind;
the next save to the same target removes the temporaries of that target whose process is
gone (same host, pid no longer running) or that nobody has written to for
``STALE_AFTER_S`` seconds (a save in progress keeps touching its file).
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import socket
import time
import zlib
from collections.abc import Callable
from typing import IO

__all__: list[str] = []

STALE_AFTER_S = 30 * 60
_HOST = f"{zlib.crc32(socket.gethostname().encode('utf-8', 'replace')):08x}"
_TMP = re.compile(r"\.lucid-save-(\d+)-([0-9a-f]{8})-[0-9a-f]{8}\.tmp\Z")


def temp_name(target: str) -> str:
    """The temporary file a save to ``target`` writes first (same folder, hidden)."""
    folder, base = os.path.split(os.path.abspath(target))
    return os.path.join(folder, f".{base}.lucid-save-{os.getpid()}-{_HOST}-"
                                f"{secrets.token_hex(4)}.tmp")


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError as e:  # EPERM: alive, owned by someone else; anything else: assume alive
        return e.errno != errno.ESRCH
    return True


def remove_stale_temps(target: str, now: float | None = None) -> list[str]:
    """Delete the temporaries of earlier saves to ``target`` whose writer is gone; returns
    their paths."""
    folder, base = os.path.split(os.path.abspath(target))
    prefix = f".{base}"
    now = time.time() if now is None else now
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for entry in names:
        if not entry.startswith(prefix):
            continue
        m = _TMP.match(entry, len(prefix))
        if m is None:
            continue
        path = os.path.join(folder, entry)
        try:
            age = now - os.stat(path).st_mtime
        except OSError:
            continue
        pid, host = int(m.group(1)), m.group(2)
        dead = host == _HOST and not _pid_alive(pid)
        if dead or age > STALE_AFTER_S:
            try:
                os.unlink(path)
                removed.append(path)
            except OSError:
                pass
    return removed


def write_atomic(path: str, dump: Callable[[IO[bytes]], None]) -> None:
    """Write ``path`` through a temporary in the same folder, fsynced and renamed, so a
    crash leaves either the old file or the new one."""
    remove_stale_temps(path)
    tmp = temp_name(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            dump(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    folder = os.path.dirname(os.path.abspath(path))
    try:  # make the rename itself durable
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass
