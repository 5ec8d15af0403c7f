"""lucid vs torch on whole-model training steps, each framework in its own process.

    python benchmarks/compare.py [--rounds 5] [--models mlp gpt ...] [--profile]
    python benchmarks/compare.py --interleave [--rounds 30] [--models ...]

Every round runs, for each model, one fresh interpreter per framework (the order alternates
from round to round): a few warm steps, then timed steps; the round's figure is the median
step time. The table gives the median over rounds of each framework's time, the median of
the per-round ratios lucid / torch (below 1.0: lucid is faster) and their geometric mean.

``--interleave`` keeps one warm process per framework alive for each model and alternates
short batches of steps between them, so each ratio compares steps taken seconds apart
instead of minutes: on a shared machine whose speed drifts from minute to minute that needs
fewer rounds for the same spread. Each framework still runs alone: a pause before each
batch lets the other's worker threads go idle, and each batch starts with untimed steps,
because the first steps after an idle pause are slow for both frameworks (MLP, 0.3 s pause,
ms per step by position: lucid 10.5 8.7 5.9 5.7 against 6.1 back to back, torch 7.9 6.2
6.0 5.7 against 5.2-5.7), and a training loop runs its steps back to back.
``--profile`` then runs the lucid step of every model above 1.0x under cProfile and prints
the functions with the most own time (numba kernels under their Python names; BLAS time
behind an ``@`` counts as the own time of the function using it), each with its main callers.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import json
import math
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

from bench_models import MODELS, TITLES, make_step, time_steps

ROOT = Path(__file__).resolve().parents[1]
FRAMEWORKS = ("lucid", "torch")
# (warm, timed) steps per round: the heavy models get fewer; the MLP's 3 ms step gets more,
# so that one of its batches lasts ~35 ms, not 12 (per-round MLP ratios spread 0.64-1.20
# in 10 rounds of 4 steps)
STEPS = {"resnet18": (1, 2), "dcgan": (2, 4), "lstm_lm": (2, 4), "gpt": (2, 5), "mlp": (3, 24),
         "transformer": (2, 5), "mingpt": (2, 5)}
DEFAULT_STEPS = (3, 8)


# --------------------------------------------------------------------------- child processes


def _worker(fw_name: str, model: str, warm: int, steps: int) -> None:
    fw = importlib.import_module(fw_name)
    ms = time_steps(make_step(fw, model), warm, steps)
    print(json.dumps({"ms": ms}))


def _serve(fw_name: str, model: str, warm: int) -> None:
    """Build and warm ``model``, then for each stdin line "W N" run W untimed and N timed
    steps and answer with the timed ones (``--interleave``'s worker)."""
    fw = importlib.import_module(fw_name)
    step = make_step(fw, model)
    time_steps(step, warm, 0)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        w, n = (int(x) for x in line.split())
        print(json.dumps({"ms": time_steps(step, w, n)}), flush=True)


def _where(func: tuple[str, int, str]) -> str:
    path, line, name = func
    if path == "~":
        return name
    try:
        path = str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        parts = Path(path).parts
        path = "/".join(parts[-2:])
    return f"{path}:{line}({name})"


def _profile_worker(model: str, warm: int, steps: int, top: int) -> None:
    fw = importlib.import_module("lucid")
    step = make_step(fw, model)
    for _ in range(warm):
        step().item()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        step().item()
    prof.disable()
    st = pstats.Stats(prof)
    rows = sorted(st.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    total = sum(v[2] for v in st.stats.values()) * 1e3 / steps
    out = []
    for func, (_cc, nc, tt, ct, callers) in rows:
        by_caller = sorted(callers.items(), key=lambda kv: kv[1][2], reverse=True)[:3]
        out.append({
            "function": _where(func), "tottime_ms": tt * 1e3 / steps, "calls": nc / steps,
            "cumtime_ms": ct * 1e3 / steps,
            "callers": [(_where(c), v[2] * 1e3 / steps) for c, v in by_caller],
        })
    print(json.dumps({"total_ms": total, "rows": out}))


THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS")
_THREADS: int | None = None  # --threads: the same thread count for every pool of both


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    if _THREADS:
        env.update({k: str(_THREADS) for k in THREAD_VARS})
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def _child(args: list[str]) -> dict[str, Any]:
    res = subprocess.run([sys.executable, str(Path(__file__).resolve()), *args],
                         env=_child_env(), cwd=ROOT, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- driver


def _results(models: list[str]) -> dict[str, dict[str, Any]]:
    return {m: {"lucid": [], "torch": [], "ratio": []} for m in models}


def _round(record: dict[str, Any], r: int, measure: Any) -> dict[str, float]:
    """One round of one model: ``measure(fw)`` (a median ms) for both frameworks, the order
    alternating with ``r``; appends both and their ratio to ``record``."""
    got = {}
    for fw in (FRAMEWORKS if r % 2 == 0 else FRAMEWORKS[::-1]):
        got[fw] = measure(fw)
        record[fw].append(got[fw])
    record["ratio"].append(got["lucid"] / got["torch"])
    return got


def _fresh_ms(fw: str, model: str, warm: int, steps: int) -> float:
    """Median step of ``steps`` timed ones in a fresh interpreter."""
    return statistics.median(_child(["--worker", fw, model, "--warm", str(warm), "--steps",
                                     str(steps)])["ms"])


def compare(models: list[str], rounds: int, log: Any = sys.stderr) -> dict[str, dict[str, Any]]:
    """Per model: per-round median ms for each framework and the per-round ratios."""
    res = _results(models)
    for r in range(rounds):
        for m in models:
            warm, steps = STEPS.get(m, DEFAULT_STEPS)
            got = _round(res[m], r, partial(_fresh_ms, model=m, warm=warm, steps=steps))
            print(f"round {r + 1}/{rounds} {m:12s} lucid {got['lucid']:9.2f} ms  "
                  f"torch {got['torch']:9.2f} ms  {got['lucid'] / got['torch']:6.2f}x",
                  file=log, flush=True)
    return res


class _Server:
    """One framework's warm ``--serve`` process for one model."""

    def __init__(self, fw: str, model: str, warm: int) -> None:
        # stderr to a file: an unread pipe would block a child that writes more than it holds
        self.err = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve", fw, model,
             "--warm", str(warm)], env=_child_env(), cwd=ROOT, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err)
        self.name = f"{fw} {model}"
        self._read()

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout=60)
            self.err.seek(0)
            err = self.err.read()
            raise RuntimeError(f"{self.name} failed:\n{err[-3000:]}")
        return json.loads(line)

    def steps(self, warm: int, n: int) -> list[float]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{warm} {n}\n")
        self.proc.stdin.flush()
        return self._read()["ms"]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.err.close()


PAUSE_S = 0.3  # before each batch: the other framework's spinning worker threads go idle


def _batch_ms(servers: dict[str, _Server], warm: int, n: int, pause: float, fw: str) -> float:
    """Median of ``n`` timed steps in ``fw``'s warm process, after a pause and ``warm``
    untimed steps."""
    time.sleep(pause)
    return statistics.median(servers[fw].steps(warm, n))


def compare_interleaved(models: list[str], rounds: int, log: Any = sys.stderr,
                        pause: float = PAUSE_S, batch: int | None = None
                        ) -> dict[str, dict[str, Any]]:
    """``compare``'s figures from one warm process per framework and model, alternating
    batches of steps between the two (``--interleave``): ``batch`` timed steps each (default:
    half the model's ``STEPS``), after ``pause`` seconds and up to two untimed steps."""
    res = _results(models)
    for m in models:
        warm, steps = STEPS.get(m, DEFAULT_STEPS)
        rewarm = min(warm, 2)
        n = batch or max(1, steps // 2)
        servers = {fw: _Server(fw, m, warm) for fw in FRAMEWORKS}  # started one after another
        try:
            for r in range(rounds):
                _round(res[m], r, partial(_batch_ms, servers, rewarm, n, pause))
            print(f"{m:12s} {rounds} rounds of {n} step(s): lucid "
                  f"{statistics.median(res[m]['lucid']):9.2f} ms  torch "
                  f"{statistics.median(res[m]['torch']):9.2f} ms  "
                  f"{statistics.median(res[m]['ratio']):6.2f}x", file=log, flush=True)
        finally:
            for srv in servers.values():
                srv.close()
    return res


def table(res: dict[str, dict[str, Any]]) -> str:
    """The comparison as a fixed-width text table, with the geometric mean of the ratios."""
    lines = [f"{'model':42s} {'lucid ms':>10s} {'torch ms':>10s} {'ratio':>7s}", "-" * 72]
    ratios = []
    for m, v in res.items():
        ratio = statistics.median(v["ratio"])
        ratios.append(ratio)
        lines.append(f"{m + ' (' + TITLES[m] + ')':42.42s} {statistics.median(v['lucid']):10.2f} "
                     f"{statistics.median(v['torch']):10.2f} {ratio:6.2f}x")
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    lines += ["-" * 72, f"{'geometric mean of ratios':64s} {geo:6.2f}x"]
    return "\n".join(lines)


def profile_report(model: str, top: int = 5) -> str:
    """Top ``top`` functions by own time in lucid's step of ``model`` (fresh process)."""
    warm, steps = STEPS.get(model, DEFAULT_STEPS)
    p = _child(["--profile-worker", model, "--warm", str(warm), "--steps", str(steps),
                "--top", str(top)])
    lines = [f"lucid {model}: {p['total_ms']:.1f} ms profiled per step, top {top} by tottime"]
    for row in p["rows"]:
        lines.append(f"  {row['tottime_ms']:8.2f} ms own  {row['cumtime_ms']:8.2f} ms cum  "
                     f"{row['calls']:6.0f} calls/step  {row['function']}")
        for caller, ms in row["callers"]:
            lines.append(f"      {ms:8.2f} ms from {caller}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    p = argparse.ArgumentParser(prog="python benchmarks/compare.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    p.add_argument("--profile", action="store_true",
                   help="cProfile lucid's step of every model slower than torch")
    p.add_argument("--top", type=int, default=5, help="rows per profile")
    p.add_argument("--threads", type=int, default=None,
                   help="thread count for every pool of both frameworks (default: theirs)")
    p.add_argument("--json", metavar="PATH", help="also write the raw figures here")
    p.add_argument("--interleave", action="store_true",
                   help="alternate batches of steps between two warm processes per model")
    p.add_argument("--pause", type=float, default=PAUSE_S, metavar="S",
                   help="--interleave: seconds of idle before each batch (default %(default)s)")
    p.add_argument("--batch", type=int, default=None, metavar="N",
                   help="--interleave: timed steps per batch for every model "
                        "(default: a few, by model)")
    p.add_argument("--worker", nargs=2, metavar=("FRAMEWORK", "MODEL"), help=argparse.SUPPRESS)
    p.add_argument("--profile-worker", metavar="MODEL", help=argparse.SUPPRESS)
    p.add_argument("--serve", nargs=2, metavar=("FRAMEWORK", "MODEL"), help=argparse.SUPPRESS)
    p.add_argument("--warm", type=int, default=DEFAULT_STEPS[0], help=argparse.SUPPRESS)
    p.add_argument("--steps", type=int, default=DEFAULT_STEPS[1], help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        _worker(args.worker[0], args.worker[1], args.warm, args.steps)
        return 0
    if args.serve:
        _serve(args.serve[0], args.serve[1], args.warm)
        return 0
    if args.profile_worker:
        _profile_worker(args.profile_worker, args.warm, args.steps, args.top)
        return 0
    global _THREADS
    _THREADS = args.threads
    if args.interleave:
        res = compare_interleaved(args.models, args.rounds, pause=args.pause, batch=args.batch)
    else:
        res = compare(args.models, args.rounds)
    print(table(res))
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    if args.profile:
        for m, v in res.items():
            if statistics.median(v["ratio"]) > 1.0:
                print()
                print(profile_report(m, args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
