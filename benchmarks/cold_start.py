"""Cold start: a fresh process from its start to the end of its first training step.

    python benchmarks/cold_start.py [--rounds 3] [--models cnn gpt resnet18 lstm_lm]

Each figure is one fresh interpreter that imports its framework, builds a model of
``bench_models.py`` and runs one training step (forward, loss, backward, optimizer step,
``loss.item()``); the time runs from the moment the parent starts the child to the end of
that step. lucid runs twice per round:

- **cold**: ``LUCID_CACHE_DIR`` points at a new empty folder (a fresh container, an upgrade);
- **warm**: the same folder after a filling run compiled every kernel the model calls.

torch runs once per round in its own fresh process. Frameworks alternate from round to round;
the table gives the median time of each and the median of the per-round ratios to torch.
``--steps N`` also reports the median of the next N steps of each run (the cold run's later
steps show when the kernels take over).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_models import make_step

COLD_MODELS: tuple[str, ...] = ("cnn", "gpt", "resnet18", "lstm_lm")


def child(fw_name: str, model: str, steps: int) -> None:
    """The measured process: import, build, first step, then ``steps`` more (timed apart)."""
    fw = importlib.import_module(fw_name)
    step = make_step(fw, model)
    loss = float(step().item())
    t_first = time.time()
    later = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step().item()
        later.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"first_end": t_first, "loss": loss, "later_ms": later}), flush=True)


def fresh_first_step(fw: str, model: str, cache: str | None = None, steps: int = 0,
                     env: dict[str, str] | None = None, timeout: float = 900) -> dict[str, Any]:
    """Run one fresh process; returns ``{"seconds", "loss", "later_ms", "wall"}``.

    ``cache``: the ``LUCID_CACHE_DIR`` the child uses (lucid only). ``seconds`` runs from the
    child's start to the end of its first step; ``wall`` to the child's exit.
    """
    e = dict(os.environ)
    e.pop("LUCID_COMPILE_NOTICE", None)
    if cache is not None:
        e["LUCID_CACHE_DIR"] = cache
    e.update(env or {})
    t0 = time.time()
    r = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", fw, model,
                        str(steps)], capture_output=True, text=True, env=e, timeout=timeout)
    wall = time.time() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{fw} {model} failed (rc {r.returncode}):\n{r.stderr[-3000:]}")
    out = json.loads(r.stdout.strip().splitlines()[-1])
    return {"seconds": out["first_end"] - t0, "loss": out["loss"], "later_ms": out["later_ms"],
            "wall": wall, "stderr": r.stderr}


def fill(model: str, cache: str) -> None:
    """Compile every kernel ``model``'s steps call into ``cache`` (in the foreground)."""
    fresh_first_step("lucid", model, cache, steps=2, env={"LUCID_BACKGROUND_COMPILE": "0"})


def measure(model: str, rounds: int, steps: int = 0) -> dict[str, list[float]]:
    """Per round: lucid cold, lucid warm and torch, alternating the order."""
    res: dict[str, list[float]] = {"cold": [], "warm": [], "torch": [], "cold_later": [],
                                   "warm_later": []}
    for r in range(rounds):
        with tempfile.TemporaryDirectory(prefix="lucid-cold-") as cache:
            order = ["lucid", "torch"] if r % 2 == 0 else ["torch", "lucid"]
            for fw in order:
                if fw == "torch":
                    res["torch"].append(fresh_first_step("torch", model)["seconds"])
                    continue
                cold = fresh_first_step("lucid", model, cache, steps)
                fill(model, cache)
                warm = fresh_first_step("lucid", model, cache, steps)
                res["cold"].append(cold["seconds"])
                res["warm"].append(warm["seconds"])
                if steps:
                    res["cold_later"].append(statistics.median(cold["later_ms"]))
                    res["warm_later"].append(statistics.median(warm["later_ms"]))
    return res


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--models", nargs="+", default=list(COLD_MODELS))
    p.add_argument("--steps", type=int, default=0, help="time N more steps of each run")
    args = p.parse_args()
    if args.child:
        fw, model, steps = args.child
        child(fw, model, int(steps))
        return 0
    print(f"{'model':10s} {'cold s':>8s} {'warm s':>8s} {'torch s':>8s} {'cold/torch':>11s} "
          f"{'warm/torch':>11s}" + ("  later steps ms cold/warm" if args.steps else ""))
    for model in args.models:
        m = measure(model, args.rounds, args.steps)
        rc = statistics.median(c / t for c, t in zip(m["cold"], m["torch"]))
        rw = statistics.median(w / t for w, t in zip(m["warm"], m["torch"]))
        line = (f"{model:10s} {statistics.median(m['cold']):8.2f} "
                f"{statistics.median(m['warm']):8.2f} {statistics.median(m['torch']):8.2f} "
                f"{rc:10.2f}x {rw:10.2f}x")
        if args.steps:
            line += (f"  {statistics.median(m['cold_later']):.1f} / "
                     f"{statistics.median(m['warm_later']):.1f}")
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
