"""Data loading: datasets, samplers and ``DataLoader`` (also importable as
``lucid.utils.data``, mirroring ``torch.utils.data``)."""

from ._workers import WorkerInfo, get_worker_info
from .dataloader import DataLoader, default_collate, default_convert
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = ["DataLoader", "default_collate", "default_convert", "Dataset", "IterableDataset",
           "TensorDataset", "Subset", "ConcatDataset", "ChainDataset", "StackDataset",
           "random_split", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler",
           "WeightedRandomSampler", "get_worker_info", "WorkerInfo", "DistributedSampler"]
