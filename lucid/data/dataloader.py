"""``DataLoader`` and ``default_collate``."""

from __future__ import annotations

import collections.abc as cabc
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .. import _dtype, gpu
from .._tensor import Tensor
from ..ops.creation import tensor
from ..ops.movement import stack
from ._workers import MultiProcessIter, worker_context
from .dataset import Dataset, IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert"]


def default_collate(batch: list[Any]) -> Any:
    """Stack a list of samples into a batch, as PyTorch's ``default_collate`` does:
    tensors and numpy arrays are stacked, numbers become tensors (int64 / float64 / bool),
    strings stay a list, and dicts, tuples and lists are collated field by field."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OUS":
            raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, "
                            f"numbers, dicts or lists; found array of {elem.dtype}")
        return tensor(np.stack(batch))
    if isinstance(elem, (bool, np.bool_)):
        return tensor(batch)
    if isinstance(elem, (int, np.integer)):
        return tensor(batch)
    if isinstance(elem, (float, np.floating)):
        return tensor(batch, dtype=_dtype.float64)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, cabc.Mapping):
        return type(elem)({k: default_collate([d[k] for d in batch]) for k in elem}) \
            if not isinstance(elem, dict) or type(elem) is dict else \
            {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, cabc.Sequence):
        n = len(elem)
        if any(len(e) != n for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch)]
    raise TypeError(
        "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        f"found {type(elem)}"
    )


def default_convert(data: Any) -> Any:
    if isinstance(data, np.ndarray):
        return tensor(data)
    return data


class DataLoader:
    """Iterate over a data set in (shuffled) mini-batches.

    With ``num_workers > 0`` batches are loaded in worker processes, as in PyTorch:
    ``worker_init_fn``, ``prefetch_factor``, ``persistent_workers``, ``timeout``,
    ``in_order`` and ``get_worker_info()`` behave as there and every worker is seeded with
    ``base_seed + worker_id``. Workers start with Python's default start method, as
    PyTorch's do ("fork" on Linux: no main guard needed, lambdas work; elsewhere the data
    set, ``collate_fn`` and ``worker_init_fn`` must be picklable); see
    lucid/data/_workers.py. ``pin_memory`` is accepted: lucid's "gpu" device
    (MLX) shares memory with the host, so there is nothing to pin.

    Example::

        loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
        for xb, yb in loader:
            ...
    """

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable[[list], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Any = None,
                 multiprocessing_context: Any = None, generator: Any = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if num_workers > 0:
            worker_context(multiprocessing_context)  # validate it now, as PyTorch does
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._iterator: MultiProcessIter | None = None
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, but "
                    f"got shuffle={shuffle}")
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else \
                SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if batch_size is not None or batch_sampler is not None \
                else default_convert
        self.collate_fn = collate_fn
        if pin_memory and not gpu.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=2)

    def __iter__(self) -> Iterator[Any]:
        """Iterate over batches: in this process, or with ``num_workers > 0`` in worker
        processes (see lucid/data/_workers.py: seeding, ``get_worker_info``, start method).
        With ``persistent_workers`` the workers live on between passes."""
        if self.num_workers > 0:
            it = self._iterator
            if self.persistent_workers and it is not None and not it._shutdown:
                it._reset()
                return it
            it = MultiProcessIter(self)
            if self.persistent_workers:
                self._iterator = it
            return it
        return self._single_process_iter()

    def _single_process_iter(self) -> Iterator[Any]:
        ds = self.dataset
        if self._iterable:
            it = iter(ds)  # type: ignore[call-overload]
            if self.batch_size is None:
                yield from (self.collate_fn(x) for x in it)
                return
            batch: list = []
            for x in it:
                batch.append(x)
                if len(batch) == self.batch_size:
                    yield self.collate_fn(batch)
                    batch = []
            if batch and not self.drop_last:
                yield self.collate_fn(batch)
            return
        if self.batch_sampler is None:
            for i in self.sampler:
                yield self.collate_fn(ds[i])
            return
        if type(ds) is TensorDataset and self.collate_fn is default_collate:
            # one gather per tensor instead of per-sample indexing + stack (same result)
            for idx in self.batch_sampler:
                it = tensor(idx)
                yield [t[it] for t in ds.tensors]
            return
        fetch = getattr(ds, "__getitems__", None)
        for idx in self.batch_sampler:
            samples = fetch(idx) if fetch is not None else [ds[i] for i in idx]
            yield self.collate_fn(samples)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)
