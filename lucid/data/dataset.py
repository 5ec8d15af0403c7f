"""Datasets: ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``Subset``, ``ConcatDataset``,
``ChainDataset``, ``StackDataset``, ``random_split``."""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from .._tensor import Tensor
from ..ops.random import randperm

T = TypeVar("T")

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "ChainDataset", "StackDataset", "random_split"]


class Dataset(Generic[T]):
    """A map-style data set: subclasses define ``__getitem__`` and ``__len__``.

    Example::

        class Squares(lucid.data.Dataset):
            def __len__(self): return 10
            def __getitem__(self, i): return lucid.tensor(float(i)), lucid.tensor(float(i * i))
    """

    def __getitem__(self, index: Any) -> T:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T]) -> ConcatDataset[T]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T]):
    """A data set read as a stream: subclasses define ``__iter__``."""

    def __iter__(self) -> Any:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset[T]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Rows of tensors that share their first dimension.

    Example::

        ds = TensorDataset(x, y)     # ds[i] == (x[i], y[i])
    """

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        n = tensors[0].shape[0]
        if any(t.shape[0] != n for t in tensors):
            raise ValueError(
                "Size mismatch between tensors: "
                + ", ".join(str(tuple(t.shape)) for t in tensors)
            )
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset[T]):
    """The items of ``dataset`` at ``indices``."""

    def __init__(self, dataset: Dataset[T], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]  # type: ignore[index]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset[T]):
    """Several data sets one after another."""

    def __init__(self, datasets: Sequence[Dataset[T]]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise ValueError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)  # type: ignore[arg-type]
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        prev = self.cumulative_sizes[d - 1] if d > 0 else 0
        return self.datasets[d][idx - prev]


class ChainDataset(IterableDataset):
    """Several iterable data sets read one after another, on the fly (``a + b`` of two
    iterable data sets builds one).

    Example::

        stream = ChainDataset([shard0, shard1])
        for sample in stream:
            ...
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]
        return total


class StackDataset(Dataset[Any]):
    """Data sets of one length side by side: ``StackDataset(a, b)[i] == (a[i], b[i])`` and
    ``StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}``. Batched reads go through each
    data set's ``__getitems__`` where it has one.

    Example::

        ds = StackDataset(image=images, label=labels)
        ds[0]              # {"image": images[0], "label": labels[0]}
    """

    datasets: tuple | dict

    def __init__(self, *args: Dataset[Any], **kwargs: Dataset[Any]) -> None:
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or"
                                 "``dict``- (via ``kwargs``) like input/output, but both types "
                                 "are given.")
            self._length = len(args[0])  # type: ignore[arg-type]
            if any(self._length != len(d) for d in args):  # type: ignore[arg-type]
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])  # type: ignore[arg-type]
            if any(self._length != len(d) for d in tmp):  # type: ignore[arg-type]
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list) -> list:
        named = self.datasets.items() if isinstance(self.datasets, dict) else \
            enumerate(self.datasets)
        columns: list[tuple[Any, list]] = []
        for k, d in named:
            getitems = getattr(d, "__getitems__", None)
            if callable(getitems):
                items = getitems(indices)
                if len(items) != len(indices):
                    raise ValueError("Nested dataset's output size mismatch. Expected "
                                     f"{len(indices)}, got {len(items)}")
            else:
                items = [d[i] for i in indices]
            columns.append((k, items))
        if isinstance(self.datasets, dict):
            return [{k: items[j] for k, items in columns} for j in range(len(indices))]
        return [tuple(items[j] for _, items in columns) for j in range(len(indices))]

    def __len__(self) -> int:
        return self._length


def random_split(dataset: Dataset[T], lengths: Sequence[int | float],
                 generator: Any = None) -> list[Subset[T]]:
    """Split a data set into non-overlapping random subsets of the given lengths (or
    fractions summing to 1), reproducibly from ``lucid.manual_seed`` or ``generator``."""
    n = len(dataset)  # type: ignore[arg-type]
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError(
            "Sum of input lengths does not equal the length of the input dataset!"
        )
    perm = randperm(n, generator=generator).tolist()
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[start:start + int(length)]))
        start += int(length)
    return out
