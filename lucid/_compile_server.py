"""The background compile helper: ``python -m lucid._compile_server`` (started by
``lucid/_background_compile.py``, never by hand).

Reads length-prefixed requests ``(id, module, kernel name, argument types)`` from stdin,
compiles each into lucid's disk cache, the cheapest waiting first (requests arrive together,
in a model's first step, and each one done moves an op off numpy), and answers one JSON line
per request on stdout: ``{"id": ..., "ok": true|false, "seconds": ...}``. It exits at once
when stdin closes: its parent ended (numba's cache writes are temp-file + rename, so a compile cut
short leaves no broken entry).
"""

from __future__ import annotations

import importlib
import json
import os
import pickle
import queue
import signal
import struct
import sys
import threading
import time
from typing import Any, BinaryIO

from lucid._warmup_pool import compile_cost
from lucid.kernels import _jit


def _read_exact(f: BinaryIO, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = f.read(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def _compile(req: tuple, out: Any) -> None:
    rid, module, name, args = req
    t0 = time.perf_counter()
    ok = True
    try:
        importlib.import_module(module)
        _jit.REGISTRY[name].dispatcher.compile(tuple(args))
    except Exception:  # noqa: BLE001 - the parent compiles it itself and shows the error
        ok = False
    out.write(json.dumps({"id": rid, "ok": ok, "seconds": time.perf_counter() - t0}) + "\n")
    out.flush()


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's; EOF ends us
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything a compile prints stays off the reply channel
    todo: queue.PriorityQueue = queue.PriorityQueue()

    def work() -> None:
        while True:
            _compile(todo.get()[2], out)

    threading.Thread(target=work, name="compile", daemon=True).start()
    stdin = sys.stdin.buffer
    while True:
        head = _read_exact(stdin, 4)
        body = None if head is None else _read_exact(stdin, struct.unpack(">I", head)[0])
        if body is None:
            os._exit(0)  # NOTE: the parent is gone; do not wait for a compile in progress
        req = pickle.loads(body)  # noqa: S301 - our own parent's pipe, numba types only
        todo.put((compile_cost(req[2]), req[0], req))


if __name__ == "__main__":
    sys.exit(main())
