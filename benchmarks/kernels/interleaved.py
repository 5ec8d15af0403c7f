"""Thread-policy comparison, one fresh interpreter per scenario.

Run: python benchmarks/kernels/interleaved.py

Scenarios: lucid's policy applied before numpy is imported, numpy imported (and BLAS used)
first, and no policy (OpenBLAS and libgomp defaults); each with lucid's size thresholds and
with every kernel forced onto its parallel build. Prints milliseconds per step (best of 7).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# lucid as a bare namespace: the kernels load without lucid/__init__.py (which imports numpy).
PRELUDE = f"""
import sys, types
_m = types.ModuleType("lucid"); _m.__path__ = [{str(ROOT / "lucid")!r}]; sys.modules["lucid"] = _m
"""

BODY = """
import json, time
MODE = {mode!r}
if MODE == "before":
    from lucid.kernels import _threads
    _threads.configure()
import numpy as np
rng = np.random.default_rng(0)
a = rng.standard_normal((256, 784), dtype=np.float32)
b = rng.standard_normal((784, 512), dtype=np.float32)
big = rng.standard_normal((256, 4096), dtype=np.float32)
a @ b
from lucid.kernels import elementwise as E, reduce as R, _threads

def step():
    h = a @ b
    R.sum(h, 1); R.sum(big, 1); E.relu_backward(h, h)

def best(fn, n):
    fn(); ts = []
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(n): fn()
        ts.append((time.perf_counter() - t) / n)
    return min(ts) * 1e3

print(json.dumps({{"matmul": best(lambda: a @ b, 100), "big_sum": best(lambda: R.sum(big, 1), 200),
                  "step": best(step, 100), "protected": _threads.state()["openblas_protected"]}}))
"""

SCENARIOS = {
    "policy before numpy import": ("before", {}),
    "numpy imported first": ("after", {}),
    "no policy (library defaults)": (
        "after",
        {"OPENBLAS_THREAD_TIMEOUT": "0", "GOMP_SPINCOUNT": "300000"},
    ),
}


def run(mode: str, env: dict[str, str]) -> dict:
    full = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENBLAS_THREAD_TIMEOUT", "GOMP_SPINCOUNT")
    }
    full.update(env)
    out = subprocess.run(
        [sys.executable, "-c", PRELUDE + BODY.format(mode=mode)],
        env=full,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    print(f"{'scenario':32s} {'thresholds':12s} {'matmul':>8s} {'1M sum':>8s} {'step':>8s}  (ms)")
    for name, (mode, env) in SCENARIOS.items():
        for label, extra in (("lucid", {}), ("all parallel", {"LUCID_PARALLEL_THRESHOLD": "0"})):
            r = run(mode, {**env, **extra})
            print(f"{name:32s} {label:12s} {r['matmul']:8.3f} {r['big_sum']:8.3f} {r['step']:8.3f}")


if __name__ == "__main__":
    main()
