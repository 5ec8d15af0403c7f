"""lucid.data: datasets, samplers, DataLoader and collation."""

from __future__ import annotations

import itertools
from collections import namedtuple

import numpy as np
import pytest
from lucid.utils.data import dataloader, dataset, sampler
from lucid.utils.data.dataloader import DataLoader as DL
from lucid.utils.data.dataset import TensorDataset as TD
from lucid.utils.data.sampler import RandomSampler as RS

import lucid
from lucid.data import (
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)


def test_utils_data_is_data():
    import lucid.utils.data as ud
    from lucid.utils.data import DataLoader as DL

    assert ud is lucid.data and DL is DataLoader


def test_tensor_dataset_and_loader_order():
    x = lucid.arange(10).float().reshape(10, 1)
    y = lucid.arange(10)
    ds = TensorDataset(x, y)
    assert len(ds) == 10 and ds[3][1].item() == 3
    batches = list(DataLoader(ds, batch_size=4))
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][0].shape == (4, 1)
    assert len(DataLoader(ds, batch_size=4)) == 3
    assert len(DataLoader(ds, batch_size=4, drop_last=True)) == 2
    assert [b[1].tolist() for b in DataLoader(ds, batch_size=4, drop_last=True)][-1] == [4, 5, 6, 7]


def test_shuffle_reproducible_and_a_permutation():
    ds = TensorDataset(lucid.arange(50))
    lucid.manual_seed(1)
    a = [b[0].tolist() for b in DataLoader(ds, batch_size=8, shuffle=True)]
    lucid.manual_seed(1)
    b = [b[0].tolist() for b in DataLoader(ds, batch_size=8, shuffle=True)]
    assert a == b
    flat = sum(a, [])
    assert sorted(flat) == list(range(50)) and flat != list(range(50))
    g = lucid.Generator().manual_seed(3)
    c = [b[0].tolist() for b in DataLoader(ds, batch_size=8, shuffle=True, generator=g)]
    g.manual_seed(3)
    d = [b[0].tolist() for b in DataLoader(ds, batch_size=8, shuffle=True, generator=g)]
    assert c == d
    # a second epoch is a different order
    loader = DataLoader(ds, batch_size=50, shuffle=True)
    e1, e2 = next(iter(loader))[0].tolist(), next(iter(loader))[0].tolist()
    assert e1 != e2


class _Dicts(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"x": np.full(3, i, np.float32), "y": i, "w": float(i) / 2, "name": f"s{i}"}


def test_default_collation_of_dicts_arrays_numbers_strings():
    b = next(iter(DataLoader(_Dicts(), batch_size=3)))
    assert b["x"].shape == (3, 3) and b["x"].dtype == lucid.float32
    assert b["y"].tolist() == [0, 1, 2] and b["y"].dtype == lucid.int64
    assert b["w"].dtype == lucid.float64
    assert b["name"] == ["s0", "s1", "s2"]


def test_default_collate_matches_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_collate as tcollate

    P = namedtuple("P", "a b")
    batch = [P(np.ones(2, np.float32) * i, i) for i in range(3)]
    ours, theirs = default_collate(batch), tcollate(batch)
    assert type(ours).__name__ == type(theirs).__name__ == "P"
    np.testing.assert_array_equal(ours.a.numpy(), theirs.a.numpy())
    assert ours.b.tolist() == theirs.b.tolist()
    tb = [(1.5, [1, 2]), (2.5, [3, 4])]
    o, t = default_collate(tb), tcollate(tb)
    assert isinstance(o, list) and isinstance(t, list)
    assert o[0].tolist() == t[0].tolist() and str(t[0].dtype) == "torch." + o[0].dtype.name
    assert [x.tolist() for x in o[1]] == [x.tolist() for x in t[1]]
    del torch


def test_subset_concat_random_split():
    ds = TensorDataset(lucid.arange(10))
    sub = Subset(ds, [1, 3, 5])
    assert len(sub) == 3 and sub[1][0].item() == 3
    cat = ConcatDataset([ds, sub])
    assert len(cat) == 13 and cat[11][0].item() == 3 and cat[-1][0].item() == 5
    lucid.manual_seed(0)
    a, b = random_split(ds, [7, 3])
    lucid.manual_seed(0)
    c, d = random_split(ds, [0.7, 0.3])
    assert list(a.indices) == list(c.indices) and len(b) == len(d) == 3
    assert sorted(list(a.indices) + list(b.indices)) == list(range(10))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [5, 6])


def test_iterable_dataset():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))

    out = [b.tolist() for b in DataLoader(Stream(), batch_size=3)]
    assert out == [[0, 1, 2], [3, 4, 5], [6]]
    with pytest.raises(ValueError):
        DataLoader(Stream(), shuffle=True)


def test_loader_errors():
    ds = TensorDataset(lucid.arange(4))
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        DataLoader(ds, batch_size=0)
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(ds, sampler=[0, 1], shuffle=True)
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(lucid.zeros(3), lucid.zeros(4))


def test_digits_dataset():
    (xtr, ytr), (xte, yte) = lucid.datasets.load_digits()
    assert xtr.shape[1:] == (1, 8, 8) and xtr.shape[0] + xte.shape[0] == 1797
    assert ytr.dtype == lucid.int64 and sorted(set(yte.tolist())) == list(range(10))
    assert 0.0 <= float(xtr.min()) and float(xtr.max()) <= 1.0
    (a, _), _ = lucid.datasets.load_digits(seed=0, as_images=False)
    assert a.shape[1] == 64
    np.testing.assert_array_equal(a.numpy().reshape(-1, 1, 8, 8), xtr.numpy())


def test_torch_module_paths_import():
    """``from torch.utils.data.dataloader import DataLoader`` swapped to lucid works."""
    assert DL is lucid.data.DataLoader and TD is lucid.data.TensorDataset
    assert RS is lucid.data.RandomSampler
    assert dataloader.DataLoader is DL and dataset.Dataset is lucid.data.Dataset
    assert sampler is lucid.data.sampler


def test_random_sampler_draws_lazily():
    """torch draws replacement samples in chunks; 10**10 samples must not allocate 75 GiB."""
    s = lucid.data.RandomSampler(range(10), replacement=True, num_samples=10**10)
    assert len(s) == 10**10
    first = list(itertools.islice(iter(s), 10000))
    assert len(first) == 10000 and min(first) >= 0 and max(first) <= 9
    assert len(set(first)) == 10
    lucid.manual_seed(3)
    a = list(lucid.data.RandomSampler(range(3), num_samples=7))
    assert len(a) == 7 and sorted(a[:3]) == [0, 1, 2] and sorted(a[3:6]) == [0, 1, 2]
    lucid.manual_seed(3)
    assert list(lucid.data.RandomSampler(range(3), num_samples=7)) == a
