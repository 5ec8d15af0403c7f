"""DistributedSampler: torch's indices exactly, coverage, padding, drop_last, reshuffle."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from lucid.utils.data import DistributedSampler

from lucid.data.distributed import torch_randperm


def test_randperm_known_values() -> None:
    # torch.randperm(5, generator=torch.Generator().manual_seed(0)).tolist()
    assert torch_randperm(5, 0) == [4, 0, 1, 3, 2]
    assert torch_randperm(0, 3) == [] and torch_randperm(1, 3) == [0]
    p = torch_randperm(1000, 123)
    assert sorted(p) == list(range(1000)) and p != list(range(1000))


def test_randperm_matches_torch(torch) -> None:
    for n, seed in [(2, 0), (10, 7), (1000, 123456789), (37, 2**32 + 5), (17, -3)]:
        g = torch.Generator()
        g.manual_seed(seed)
        assert torch_randperm(n, seed) == torch.randperm(n, generator=g).tolist()


CASES = list(itertools.product([1, 7, 10, 13], [1, 2, 3, 4], [True, False], [0, 42],
                               [0, 3], [False, True]))


def test_indices_match_torch(torch) -> None:
    from torch.utils.data import DistributedSampler as TorchSampler  # NOTE: optional torch

    for n, reps, shuffle, seed, epoch, drop in CASES:
        for rank in range(reps):
            ours = DistributedSampler(range(n), reps, rank, shuffle, seed, drop)
            theirs = TorchSampler(range(n), reps, rank, shuffle, seed, drop)
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs), (n, reps, rank, shuffle, seed, epoch, drop)
            assert len(ours) == len(theirs) and ours.total_size == theirs.total_size


def test_coverage_padding_and_drop_last() -> None:
    n, reps = 10, 4
    shards = [list(DistributedSampler(range(n), reps, r, shuffle=False)) for r in range(reps)]
    assert shards[0] == [0, 4, 8] and shards[1] == [1, 5, 9] and shards[2] == [2, 6, 0]
    assert sorted(sum(shards, [])) == sorted(list(range(n)) + [0, 1])   # wrapped around
    dropped = [list(DistributedSampler(range(n), reps, r, False, drop_last=True))
               for r in range(reps)]
    assert [len(s) for s in dropped] == [2] * 4 and sorted(sum(dropped, [])) == list(range(8))
    tiny = [list(DistributedSampler(range(2), 5, r, shuffle=False)) for r in range(5)]
    assert tiny == [[0], [1], [0], [1], [0]]


def test_epochs_reshuffle_and_are_reproducible() -> None:
    s = DistributedSampler(range(100), 2, 0, shuffle=True, seed=3)
    e0 = list(s)
    assert list(s) == e0
    s.set_epoch(1)
    e1 = list(s)
    assert e1 != e0
    other = DistributedSampler(range(100), 2, 1, shuffle=True, seed=3)
    other.set_epoch(1)
    assert sorted(e1 + list(other)) == list(range(100))
    np.random.seed(123)   # the global random state plays no part
    s.set_epoch(0)
    assert list(s) == e0


def test_bad_rank_and_no_group() -> None:
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="Invalid rank -1"):
        DistributedSampler(range(4), num_replicas=2, rank=-1)
    pytest.importorskip("mpi4py")
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(4))
