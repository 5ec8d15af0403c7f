"""The child process of the crash fuzz suite: run cases read from stdin, one JSON line each.

Each case runs inside ``try/except Exception``; the reply line is ``{"ok": true}`` or
``{"ok": false, "exc": "TypeName: message"}``. A signal death (segfault, abort, ...) ends the
process, which the parent sees as a negative return code. ``faulthandler`` writes the Python
stack of such a death to stderr, which the parent keeps in a file.

Replay one case by hand (prints the outcome, or dies the way the suite saw it die)::

    python tests/fuzz/fuzz_worker.py --replay '{"op": "gather", "dev": "cpu", ...}'
"""

from __future__ import annotations

import faulthandler
import json
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fuzz_cases  # noqa: E402
from fuzz_harness import serve  # noqa: E402

try:
    import mlx.core as mx
except ImportError:  # machines without the gpu extra
    mx = None


def _run(case: dict) -> dict:
    try:
        fuzz_cases.run_case(case)
        if mx is not None and case.get("dev") == "gpu":
            # NOTE: MLX may evaluate on another thread; wait here so a death is blamed on the
            # case that caused it, not on the next one.
            mx.synchronize()
    except Exception as e:  # a clear Python error is an acceptable outcome
        return {"ok": False, "exc": f"{type(e).__name__}: {e}"[:400]}
    return {"ok": True}


def main() -> None:
    faulthandler.enable(sys.stderr, all_threads=False)
    warnings.simplefilter("ignore")
    if len(sys.argv) == 3 and sys.argv[1] == "--replay":
        print(json.dumps(_run(json.loads(sys.argv[2]))))
        return
    serve(_run)


if __name__ == "__main__":
    main()
