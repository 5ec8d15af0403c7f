"""Samplers: the order in which a ``DataLoader`` visits a data set."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sized
from typing import Any

import numpy as np

from ..ops.random import default_generator

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "BatchSampler"]


class Sampler:
    """Base class: an iterable of indices (or of index lists for batch samplers)."""

    def __init__(self, data_source: Any = None) -> None:
        pass

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _seeded_rng(generator: Any) -> Any:
    if generator is not None:
        return generator.rng
    # a fresh stream per epoch, drawn from the global generator (reproducible by manual_seed)
    seed = int(default_generator.rng.integers(0, 2**63 - 1))
    return np.random.default_rng(seed)


class RandomSampler(Sampler):
    """Indices in random order (with or without replacement), from lucid's generator."""

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator: Any = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if num_samples is not None and (not isinstance(num_samples, int) or num_samples <= 0):
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        rng = _seeded_rng(self.generator)
        return _draw_with(rng, n, self.num_samples) if self.replacement \
            else _draw_without(rng, n, self.num_samples)

    def __len__(self) -> int:
        return self.num_samples


def _draw_with(rng: Any, n: int, total: int, chunk: int = 4096) -> Iterator[int]:
    """``total`` draws from ``range(n)`` with replacement, made lazily a chunk at a time (as
    torch's sampler does), so a huge ``num_samples`` costs no memory up front."""
    left = total
    while left > 0:
        k = min(chunk, left)
        yield from rng.integers(0, n, k).tolist()
        left -= k


def _draw_without(rng: Any, n: int, total: int) -> Iterator[int]:
    """Whole permutations of ``range(n)`` until ``total`` indices were given, one at a time."""
    left = total
    while left > 0:
        perm = rng.permutation(n).tolist()
        yield from perm[:left]
        left -= n


class SubsetRandomSampler(Sampler):
    def __init__(self, indices: Any, generator: Any = None) -> None:
        self.indices = list(indices)
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        rng = _seeded_rng(self.generator)
        return iter(self.indices[i] for i in rng.permutation(len(self.indices)))

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of ``batch_size``."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
