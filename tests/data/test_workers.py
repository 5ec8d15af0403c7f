"""DataLoader with worker processes, get_worker_info, and WeightedRandomSampler.

Every multiprocess test is bounded twice: the loaders get a ``timeout`` (a hung worker fails
that wait) and an alarm fails the whole test after ``LIMIT`` seconds."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import lucid
from lucid.data import (
    DataLoader,
    IterableDataset,
    TensorDataset,
    WeightedRandomSampler,
    get_worker_info,
)

LIMIT = 120  # seconds per multiprocess test
WAIT = 60  # DataLoader timeout: the longest wait for one batch (worker start-up included)


@pytest.fixture
def deadline():
    """Fail the test (instead of hanging the run) if it takes longer than LIMIT seconds."""
    def fire(signum, frame):
        raise TimeoutError(f"multiprocess test exceeded {LIMIT} s")

    if not hasattr(signal, "SIGALRM"):  # the loaders' own timeouts still bound each wait
        yield
        return
    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(LIMIT)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


# ---- module-level data sets and hooks: workers receive them by pickling ---------------------

class Shards(IterableDataset):
    """0..n-1, each worker yielding its share (the pattern PyTorch documents)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        wid, k = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(wid, self.n, k))


class Probe:
    """Reports which worker loaded each sample, its seed, its pid and a random draw."""

    def __len__(self) -> int:
        return 6

    def __getitem__(self, i: int):
        info = get_worker_info()
        return {"i": i, "id": info.id, "n": info.num_workers, "seed": info.seed,
                "pid": os.getpid(), "draw": float(lucid.rand(1).item()),
                "np": float(np.random.rand()), "init": os.environ.get("LUCID_TEST_INIT", "")}


class Failing:
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int):
        if i == 2:
            raise ValueError("bad sample 2")
        return lucid.tensor([float(i)])


class Slow:
    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int):
        if i == 1:
            time.sleep(60)
        return i


class Dies:
    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int):
        os._exit(3)


def mark_init(worker_id: int) -> None:
    os.environ["LUCID_TEST_INIT"] = f"init{worker_id}"


def _data(n: int = 10) -> TensorDataset:
    x = lucid.arange(2 * n).float().reshape(n, 2)
    return TensorDataset(x, lucid.arange(n))


# ---- tests ---------------------------------------------------------------------------------

def test_workers_give_the_same_batches_as_one_process(deadline):
    ds = _data()
    lucid.manual_seed(5)
    one = [[t.tolist() for t in b] for b in DataLoader(ds, batch_size=3)]
    lucid.manual_seed(5)
    many = [[t.tolist() for t in b] for b in DataLoader(ds, batch_size=3, num_workers=2,
                                                        timeout=WAIT)]
    assert many == one and one[-1][1] == [9]
    g = lucid.Generator().manual_seed(3)
    kw = {"batch_size": 4, "shuffle": True, "drop_last": True, "generator": g}
    one = [b[1].tolist() for b in DataLoader(ds, **kw)]
    g.manual_seed(3)
    many = [b[1].tolist() for b in DataLoader(ds, num_workers=2, prefetch_factor=1,
                                              timeout=WAIT, **kw)]
    assert many == one and len(one) == 2


def test_iterable_dataset_shards_by_worker_info(deadline):
    got = [b.tolist() for b in DataLoader(Shards(10), batch_size=2, num_workers=2,
                                          timeout=WAIT)]
    # PyTorch's order: workers answer in turn until each is exhausted
    assert got == [[0, 2], [1, 3], [4, 6], [5, 7], [8], [9]]
    got = [b.tolist() for b in DataLoader(Shards(5), batch_size=2, num_workers=2,
                                          drop_last=True, timeout=WAIT)]
    assert got == [[0, 2], [1, 3]]
    assert [b.tolist() for b in DataLoader(Shards(5), batch_size=2)] == [[0, 1], [2, 3], [4]]


def test_worker_info_seeds_init_fn_and_persistence(deadline):
    assert get_worker_info() is None
    lucid.manual_seed(11)
    loader = DataLoader(Probe(), batch_size=None, num_workers=2, worker_init_fn=mark_init,
                        persistent_workers=True, timeout=WAIT)
    first = list(loader)
    second = list(loader)
    assert [s["i"] for s in first] == list(range(6))
    assert {s["id"] for s in first} == {0, 1} and all(s["n"] == 2 for s in first)
    assert all(s["init"] == f"init{s['id']}" for s in first)
    seeds = {s["id"]: s["seed"] for s in first}
    assert seeds[1] == seeds[0] + 1
    pids = {s["id"]: s["pid"] for s in first}
    assert {s["id"]: s["pid"] for s in second} == pids and os.getpid() not in pids.values()
    draws = [s["draw"] for s in first]
    assert len(set(draws)) == 6  # workers are seeded differently
    assert {s["draw"] for s in second}.isdisjoint(draws)  # their generators continue
    lucid.manual_seed(11)
    again = list(DataLoader(Probe(), batch_size=None, num_workers=2, timeout=WAIT))
    assert [s["draw"] for s in again] == draws and [s["np"] for s in again] == \
        [s["np"] for s in first]
    loader._iterator._stop()


def test_worker_exception_is_reraised_with_its_traceback(deadline):
    with pytest.raises(ValueError, match=r"(?s)Caught ValueError in DataLoader worker "
                       r"process \d\.\nOriginal Traceback.*bad sample 2"):
        list(DataLoader(Failing(), batch_size=1, num_workers=2, timeout=WAIT))


def test_dead_worker_and_timeout_fail_fast(deadline):
    t = time.time()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+.*\) exited "
                       "unexpectedly"):
        list(DataLoader(Dies(), batch_size=1, num_workers=1, timeout=WAIT))
    with pytest.raises(RuntimeError, match="DataLoader timed out after 4 seconds"):
        list(DataLoader(Slow(), batch_size=1, num_workers=1, timeout=4))
    assert time.time() - t < LIMIT


def test_unpicklable_collate_fn_gets_a_clear_error(deadline):
    with pytest.raises(TypeError, match="must be picklable"):
        list(DataLoader(_data(), batch_size=2, num_workers=1, collate_fn=lambda b: b,
                        timeout=WAIT, multiprocessing_context="spawn"))


# a torch-style script: no main guard, a lambda collate_fn and a data set defined in the
# script, workers forked after the parent ran parallel kernels, and items computed with ops
# large enough for parallel builds (which a forked worker must run serially)
SCRIPT = r"""
import sys
import numpy as np
import lucid, lucid.nn as nn, lucid.nn.functional as F
from lucid.data import DataLoader, Dataset

big = lucid.randn(1 << 20)
(big * 2 + 1).sum().item()  # parallel kernels in the parent first

class Items(Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        g = lucid.Generator().manual_seed(i)
        x = lucid.randn(1 << 18, generator=g)
        v = ((x * 0.5 + 1.0).relu().sum() / x.numel()).item()  # parallel sizes in the worker
        return lucid.full((8,), v + i * 0.01), i % 3

def run(workers):
    lucid.manual_seed(0)
    model = nn.Linear(8, 3)
    opt = lucid.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(Items(), batch_size=16, num_workers=workers, timeout=60,
                        collate_fn=lambda b: (lucid.stack([x for x, _ in b]),
                                              lucid.tensor([y for _, y in b])))
    losses = []
    for _ in range(2):
        for x, y in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses

print(run(0) == run(2), run(2)[:2])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or
                    mp.get_start_method(allow_none=False) != "fork",
                    reason="Python's default start method here is not fork")
def test_forked_workers_run_a_script_without_main_guard_as_torch_does(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SCRIPT)
    env = dict(os.environ, LUCID_BACKGROUND_COMPILE="0")  # the parent's kernels run at once
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                       timeout=LIMIT, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.startswith("True"), r.stdout


def test_argument_errors_match_torch(torch):
    cases = [{"num_workers": 0, "prefetch_factor": 2}, {"persistent_workers": True},
             {"timeout": -1}, {"num_workers": 1, "prefetch_factor": -1},
             {"num_workers": 1, "multiprocessing_context": "nope"}]
    for kw in cases:
        with pytest.raises(ValueError) as ref:
            torch.utils.data.DataLoader(list(range(4)), **kw)
        with pytest.raises(ValueError) as mine:
            DataLoader(list(range(4)), **kw)
        assert str(mine.value).split(" in [")[0] == str(ref.value).split(" in [")[0]


# ---- WeightedRandomSampler ------------------------------------------------------------------

def test_weighted_sampler_frequencies_follow_weights():
    w = [1.0, 0.0, 3.0, 6.0]
    draws = np.array(list(WeightedRandomSampler(w, 20000)))
    freq = np.bincount(draws, minlength=4) / draws.size
    np.testing.assert_allclose(freq, np.array(w) / sum(w), atol=0.015)
    assert freq[1] == 0
    lucid.manual_seed(4)
    a = list(WeightedRandomSampler(w, 50))
    lucid.manual_seed(4)
    assert list(WeightedRandomSampler(w, 50)) == a
    g = lucid.Generator().manual_seed(1)
    once = list(WeightedRandomSampler(lucid.tensor(w), 3, replacement=False, generator=g))
    assert len(set(once)) == 3 and 1 not in once
    s = WeightedRandomSampler(w, 7)
    assert len(s) == 7 and s.weights.dtype is lucid.float64
    loader = DataLoader(_data(4), batch_size=5, sampler=WeightedRandomSampler(w, 10))
    assert [len(b[1]) for b in loader] == [5, 5]


@pytest.mark.parametrize("args", [([1.0, 2.0], 0), ([1.0, 2.0], 2.5), ([[1.0, 2.0]], 2),
                                  ([1.0, 2.0], True), ([1.0, 2.0], 2, 1)])
def test_weighted_sampler_constructor_errors_match_torch(args, torch):
    with pytest.raises(ValueError) as ref:
        torch.utils.data.WeightedRandomSampler(*args)
    with pytest.raises(ValueError) as mine:
        WeightedRandomSampler(*args)
    assert str(mine.value) == str(ref.value)


def test_weighted_sampler_zero_weights_come_last_without_replacement(torch):
    for args in (([1.0, 0.0], 2, False), ([0.0, 2.0, 0.0, 1.0], 4, False)):
        mine = list(WeightedRandomSampler(*args))
        ref = list(torch.utils.data.WeightedRandomSampler(*args))
        positive = sum(1 for v in args[0] if v > 0)
        assert sorted(mine[:positive]) == sorted(ref[:positive])
        assert sorted(mine[positive:]) == sorted(ref[positive:])


@pytest.mark.parametrize("args", [([1.0, -1.0], 2), ([0.0, 0.0], 2), ([1.0, 0.0], 3, False)])
def test_weighted_sampler_draw_errors_match_torch(args, torch):
    with pytest.raises(RuntimeError) as ref:
        list(torch.utils.data.WeightedRandomSampler(*args))
    with pytest.raises(RuntimeError) as mine:
        list(WeightedRandomSampler(*args))
    assert str(mine.value) == str(ref.value)
