"""Parent side of the crash fuzz suite: one long-lived worker process, fed one case at a time.

``check(case)`` sends a case, waits (with a timeout) for the reply line and fails the test
with the case and a replay command when the worker died (a signal: segfault, SIGFPE, abort,
SIGBUS) or hung. A Python exception raised by lucid inside the worker is a pass. A dead or
hung worker is replaced before the next case.

Environment knobs: ``LUCID_FUZZ_TIMEOUT`` (seconds per case, default 120: the first use of a
kernel may compile it), ``LUCID_FUZZ_LOG`` (a file: crashes are appended there and the
test goes on, for long exploratory runs).
"""

from __future__ import annotations

import importlib.util
import json
import os
import selectors
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "fuzz_worker.py")
TIMEOUT = float(os.environ.get("LUCID_FUZZ_TIMEOUT", "120"))
DEVICES = ("cpu", "numpy") + (("gpu",) if importlib.util.find_spec("mlx") else ())
STATS = {"cases": 0, "errors": 0, "crashes": 0, "hangs": 0}


class WorkerDied(Exception):
    """The worker ended (signal or exit) or hung on a case."""


class Worker:
    """A child Python running ``fuzz_worker.py`` (or ``argv``); restarted after a death."""

    def __init__(self, argv: list[str] | None = None) -> None:
        self.argv = argv or [sys.executable, WORKER]
        self.proc: subprocess.Popen | None = None
        self.err: Any = None
        self.buf = b""

    def start(self) -> None:
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.err, cwd=HERE)
        self.buf = b""
        self._read(TIMEOUT)  # the "ready" line: lucid imported

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.stdin.close()  # type: ignore[union-attr]
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.proc.stdout.close()  # type: ignore[union-attr]
            self.err.close()
        self.proc = None

    def stderr_tail(self, n: int = 3000) -> str:
        self.err.seek(0)
        return self.err.read().decode(errors="replace")[-n:]

    def _read(self, timeout: float) -> dict:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        end = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self.buf:
                left = end - time.monotonic()
                if left <= 0 or not sel.select(left):
                    self.proc.kill()
                    self.proc.wait()
                    raise WorkerDied(f"hang: no reply within {timeout:.0f} s")
                chunk = os.read(fd, 65536)
                if not chunk:
                    rc = self.proc.wait()
                    if rc < 0:
                        raise WorkerDied(f"killed by {signal.Signals(-rc).name} (returncode {rc})")
                    raise WorkerDied(f"worker exited with returncode {rc}")
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def run(self, case: dict, timeout: float = TIMEOUT) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self.close()
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(case) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass  # the read below reports how the worker ended
        return self._read(timeout)


def serve(handle: Any) -> None:
    """The child's side of the protocol: a "ready" line, then one JSON reply line per JSON
    request line read from stdin (``handle(request) -> reply``). Replies go to a private copy
    of stdout; anything an op prints lands on stderr instead."""
    reply = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    reply.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        if line.strip():
            reply.write(json.dumps(handle(json.loads(line))) + "\n")


def repro(case: dict) -> str:
    """Source or a replay command that reproduces ``case``."""
    if case.get("op") == "code":
        return (f"import lucid, lucid.nn.functional as F\ndev = {case['dev']!r}\n"
                + case["src"])
    return f"python {os.path.relpath(WORKER)} --replay {shlex.quote(json.dumps(case))}"


def check(worker: Worker, case: dict, expect: str | None = None) -> dict:
    """Run ``case``; fail on a worker death or hang (and, given ``expect``, unless the case
    raised an exception whose text contains it)."""
    STATS["cases"] += 1
    try:
        res = worker.run(case)
    except WorkerDied as e:
        STATS["hangs" if str(e).startswith("hang") else "crashes"] += 1
        msg = (f"lucid crashed the interpreter: {e}\ncase: {json.dumps(case)}\nrepro:\n"
               f"{repro(case)}\nworker stderr (tail):\n{worker.stderr_tail()}")
        worker.close()
        log = os.environ.get("LUCID_FUZZ_LOG")
        if log:
            with open(log, "a") as f:
                f.write(json.dumps({"why": str(e), "case": case}) + "\n")
            return {"ok": False, "exc": str(e)}
        raise AssertionError(msg) from None
    if not res["ok"]:
        STATS["errors"] += 1
    if expect is not None and (res["ok"] or expect not in res["exc"]):
        raise AssertionError(f"expected an exception containing {expect!r}, got "
                             f"{res.get('exc', 'no exception')}\nrepro:\n{repro(case)}")
    return res
