"""Samplers: the order in which a ``DataLoader`` visits a data set."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sized
from typing import Any

import numpy as np

from .. import _dtype
from ..ops.creation import tensor
from ..ops.random import default_generator

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "BatchSampler", "WeightedRandomSampler"]


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


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices of ``range(len(weights))``, index ``i`` drawn with probability
    proportional to ``weights[i]`` (as ``torch.utils.data.WeightedRandomSampler``); with
    ``replacement=False`` every index at most once. Draws come from ``generator`` or lucid's
    global generator (``lucid.manual_seed``).

    Example::

        # oversample the rare class: weight each sample by 1 / its class frequency
        sampler = WeightedRandomSampler(sample_weights, num_samples=len(ds))
        loader = DataLoader(ds, batch_size=32, sampler=sampler)
    """

    def __init__(self, weights: Any, num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or \
                num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = np.asarray(weights.detach().numpy() if hasattr(weights, "detach") else weights,
                       dtype=np.float64)
        if w.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights = tensor(w, dtype=_dtype.float64)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        w = self.weights.numpy()
        if not np.isfinite(w).all():
            raise RuntimeError("invalid multinomial distribution (encountering probability "
                               "entry = infinity or NaN)")
        if (w < 0).any():
            raise RuntimeError("invalid multinomial distribution (encountering probability "
                               "entry < 0)")
        if w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not self.replacement and self.num_samples > w.size:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                               "replacement")
        rng = _seeded_rng(self.generator)
        positive = int((w > 0).sum())
        if self.replacement or self.num_samples <= positive:
            draws = rng.choice(w.size, self.num_samples, replace=self.replacement,
                               p=w / w.sum()).tolist()
        else:  # as PyTorch: every positive-weight index, then zero-weight ones in order
            draws = rng.choice(w.size, positive, replace=False, p=w / w.sum()).tolist()
            draws += np.flatnonzero(w == 0)[:self.num_samples - positive].tolist()
        yield from draws

    def __len__(self) -> int:
        return self.num_samples
