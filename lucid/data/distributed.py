"""``DistributedSampler``: each rank of a data-parallel job reads its own share of a data set
(``torch.utils.data.distributed.DistributedSampler``)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized

import numpy as np

from .. import distributed as dist
from .sampler import Sampler

__all__ = ["DistributedSampler", "torch_randperm"]


def torch_randperm(n: int, seed: int) -> list[int]:
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()``,
    computed without torch: torch's CPU generator is the 32-bit Mersenne Twister seeded
    with the low 32 bits of ``seed`` (numpy's legacy ``MT19937`` seeding is the same), and
    its ``randperm`` is a forward Fisher-Yates shuffle taking ``random() % (n - i)`` (two
    draws per 64-bit number from 2**32 / 20 elements on). lucid's own ``lucid.randperm``
    draws from a different generator, so it does not reproduce torch's permutations.

    Example::

        torch_randperm(5, 0)        # [4, 0, 1, 3, 2], as torch.randperm with seed 0
    """
    bits = np.random.MT19937(0)
    bits._legacy_seeding(int(seed) & 0xFFFFFFFF)
    perm = list(range(n))
    if n < 2:
        return perm
    if n < (2**32 - 1) // 20:
        draws = bits.random_raw(n - 1).tolist()
    else:  # pragma: no cover - data sets of over 214 million samples
        raw = bits.random_raw(2 * (n - 1)).astype(np.uint64)
        draws = ((raw[0::2] << np.uint64(32)) | raw[1::2]).tolist()
    for i, r in enumerate(draws):
        z = r % (n - i) + i
        perm[i], perm[z] = perm[z], perm[i]
    return perm


class DistributedSampler(Sampler):
    """Indices of this rank's share of ``dataset``, with torch's exact semantics: for the
    same (length, ``num_replicas``, ``rank``, ``shuffle``, ``seed``, epoch, ``drop_last``)
    it yields the same indices as ``torch.utils.data.DistributedSampler``.

    The shuffle is a permutation seeded with ``seed + epoch`` (independent of the global
    random state, identical on every rank); call ``set_epoch(epoch)`` before each epoch to
    reshuffle. Rank ``r`` takes every ``num_replicas``-th index from position ``r``. Without
    ``drop_last`` the list is padded by wrapping around to a multiple of ``num_replicas``;
    with it, the tail is dropped. ``num_replicas``/``rank`` default to the process group's.

    Example::

        sampler = DistributedSampler(train_set, shuffle=True, seed=0)
        loader = DataLoader(train_set, batch_size=64, sampler=sampler)
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            for x, y in loader: ...
    """

    def __init__(self, dataset: Sized, num_replicas: int | None = None,
                 rank: int | None = None, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False) -> None:
        if num_replicas is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size()
        if rank is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, "
                             f"{num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        indices = torch_randperm(n, self.seed + self.epoch) if self.shuffle else list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(f"Number of indices ({len(indices)}) does not match "
                                 f"total_size ({self.total_size})")
        indices = indices[self.rank:self.total_size:self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(f"Number of subsampled indices ({len(indices)}) does not "
                                 f"match num_samples ({self.num_samples})")
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch, which seeds the next shuffle (``seed + epoch``).

        Example::

            sampler.set_epoch(3)
        """
        self.epoch = epoch
