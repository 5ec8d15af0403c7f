"""Data-parallel scaling: MLP 784-512-256-10, batch 128 per rank, SGD, on 1 process vs 2
processes (DistributedDataParallel over MPI), each started by ``python -m
lucid.distributed.run`` so every rank gets ``cores // ranks`` threads. Rounds alternate the
two jobs; the figures are medians over the steps of all rounds:

- step time ratio: 2-process step / 1-process step (target on a quiet 2-core machine:
  <= 1.3; 1.0 would be perfect scaling, as each rank does the 1-process work);
- throughput ratio: samples per second, 2 processes / 1 process (2 * step ratio^-1);
- exposed sync: time from the end of backward's computation to the end of the gradient
  sync (what the overlap did not hide), as a fraction of the step (target <= 15%);
- allreduce bandwidth: in-place float32 ``dist.all_reduce`` of 1 MB and 16 MB on 2 ranks;
- for reference, the 1-process step with one thread (each rank's share of the cores): on a
  loaded machine a process with two threads can be far slower than with one, which makes
  the plain ratio look better than the scaling is.

    python -m pytest benchmarks/test_distributed.py --benchmark-enable -s -p no:cacheprovider

The worker (this file run as a script) prints one JSON line per job.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import pytest
from bench_models import mlp_net

import lucid
import lucid.distributed as dist
import lucid.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ROUNDS = 3


def _launch(nproc: int, *args: str, threads: int | None = None) -> dict:
    """One job of ``nproc`` ranks through the launcher (``threads`` per rank, default
    cores // nproc); rank 0's JSON result."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                "MKL_NUM_THREADS", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
        env.pop(var, None)   # the launcher decides the threads per rank
    extra = ["--threads-per-proc", str(threads)] if threads else []
    out = subprocess.run([sys.executable, "-m", "lucid.distributed.run", "--nproc-per-node",
                          str(nproc), *extra, os.path.abspath(__file__), *args],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    return json.loads(lines[-1])


def test_ddp_mlp_scaling(benchmark):
    pytest.importorskip("mpi4py")
    benchmark.group = "DDP MLP 784-512-256-10 b128/rank SGD, 1 vs 2 processes"
    one: list[float] = []
    one_1t: list[float] = []
    two: list[float] = []
    exposed: list[float] = []
    bw: dict[str, list[float]] = {}

    def round_() -> None:
        a = _launch(1, "--steps", "60")
        a1 = _launch(1, "--steps", "60", threads=1)
        b = _launch(2, "--steps", "60", "--bandwidth")
        one.extend(a["step_s"])
        one_1t.extend(a1["step_s"])
        two.extend(b["step_s"])
        exposed.extend(b["exposed_s"])
        for k, v in b["allreduce_s"].items():
            bw.setdefault(k, []).append(v)

    benchmark.pedantic(round_, rounds=ROUNDS, iterations=1)
    t1, t2 = statistics.median(one), statistics.median(two)
    t1t = statistics.median(one_1t)
    info = {
        "step_1proc_ms": round(t1 * 1e3, 3), "step_2proc_ms": round(t2 * 1e3, 3),
        "step_1proc_1thread_ms": round(t1t * 1e3, 3),
        "step_time_ratio_vs_1proc_1thread": round(t2 / t1t, 3),
        "step_time_ratio": round(t2 / t1, 3), "throughput_ratio": round(2 * t1 / t2, 3),
        "exposed_sync_ms": round(statistics.median(exposed) * 1e3, 3),
        "exposed_sync_fraction": round(statistics.median(exposed) / t2, 3),
    }
    for k, v in bw.items():
        t = statistics.median(v)
        nbytes = int(k.rstrip("MB")) * 2**20
        info[f"allreduce_{k}_ms"] = round(t * 1e3, 3)
        info[f"allreduce_{k}_busbw_GBps"] = round(nbytes / t / 1e9, 3)  # 2(p-1)/p = 1
    benchmark.extra_info.update(info)
    print("\n" + json.dumps(info, indent=1))


# ---- the worker ---------------------------------------------------------------------------
def _worker(argv: list[str]) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--bandwidth", action="store_true")
    a = p.parse_args(argv)
    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(rank)
    x = lucid.tensor(rng.standard_normal((128, 784), dtype=np.float32))
    y = lucid.tensor(rng.integers(0, 10, 128))
    lucid.manual_seed(0)
    net = mlp_net(lucid.nn)
    model = lucid.nn.parallel.DistributedDataParallel(net) if world > 1 else net
    opt = lucid.optim.SGD(model.parameters(), lr=0.01)
    steps, exposed = [], []
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        if i >= a.warmup:
            steps.append(time.perf_counter() - t0)
            exposed.append(model.reducer.last_exposed_s if world > 1 else 0.0)
    result = {"world": world, "step_s": steps, "exposed_s": exposed, "allreduce_s": {}}
    if a.bandwidth:
        for mb in (1, 16):
            buf = lucid.zeros(mb * 2**20 // 4)
            times = []
            for i in range(23):
                dist.barrier()
                t0 = time.perf_counter()
                dist.all_reduce(buf)
                if i >= 3:
                    times.append(time.perf_counter() - t0)
            result["allreduce_s"][f"{mb}MB"] = statistics.median(times)
    if rank == 0:
        print(json.dumps(result), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    _worker(sys.argv[1:])
