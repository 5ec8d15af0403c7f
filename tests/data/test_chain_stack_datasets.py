"""ChainDataset and StackDataset against torch.utils.data: items, lengths, errors, batched
reads through ``__getitems__`` and the batches a DataLoader makes of them."""

from __future__ import annotations

import numpy as np
import pytest
from lucid.utils.data import (
    ChainDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    StackDataset,
    TensorDataset,
)
from lucid.utils.data import dataset as dataset_module

import lucid
from lucid.data import ChainDataset as DataChainDataset
from lucid.data import StackDataset as DataStackDataset


class _Range(IterableDataset):
    def __init__(self, start: int, stop: int) -> None:
        self.start, self.stop = start, stop

    def __iter__(self):
        return iter(range(self.start, self.stop))

    def __len__(self) -> int:
        return self.stop - self.start


class _Squares(Dataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __getitem__(self, i: int) -> int:
        return i * i

    def __len__(self) -> int:
        return self.n


class _Batched(_Squares):
    """Records the batched reads it served."""

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self.batches: list[list[int]] = []

    def __getitems__(self, indices: list[int]) -> list[int]:
        self.batches.append(list(indices))
        return [-i for i in indices]


def test_chain_dataset_reads_in_order_and_counts(torch) -> None:
    tdata = torch.utils.data

    class TRange(tdata.IterableDataset):
        def __init__(self, a, b):
            self.a, self.b = a, b

        def __iter__(self):
            return iter(range(self.a, self.b))

        def __len__(self):
            return self.b - self.a

    ours = ChainDataset([_Range(0, 3), _Range(10, 12), _Range(5, 5)])
    theirs = tdata.ChainDataset([TRange(0, 3), TRange(10, 12), TRange(5, 5)])
    assert list(ours) == list(theirs) == [0, 1, 2, 10, 11]
    assert len(ours) == len(theirs) == 5
    assert list(ours) == list(ours)  # iterable again


def test_chain_dataset_rejects_map_style() -> None:
    ds = ChainDataset([_Range(0, 2), _Squares(3)])
    it = iter(ds)
    assert [next(it), next(it)] == [0, 1]
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        next(it)
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        len(ds)


def test_adding_iterable_datasets_chains_them() -> None:
    chained = _Range(0, 2) + _Range(7, 9)
    assert isinstance(chained, ChainDataset)
    assert list(chained) == [0, 1, 7, 8]
    assert isinstance(_Squares(2) + _Squares(3), lucid.utils.data.ConcatDataset)


def test_chain_dataset_in_a_dataloader(torch) -> None:
    class TRange(torch.utils.data.IterableDataset):
        def __init__(self, a, b):
            self.a, self.b = a, b

        def __iter__(self):
            return iter(range(self.a, self.b))

    loader = DataLoader(ChainDataset([_Range(0, 5), _Range(20, 23)]), batch_size=3)
    tloader = torch.utils.data.DataLoader(
        torch.utils.data.ChainDataset([TRange(0, 5), TRange(20, 23)]), batch_size=3)
    got = [b.tolist() for b in loader]
    assert got == [b.tolist() for b in tloader] == [[0, 1, 2], [3, 4, 20], [21, 22]]


def test_stack_dataset_tuple_and_dict_match_torch(torch) -> None:
    x = np.arange(12.0).reshape(6, 2)
    y = np.arange(6)
    ds = StackDataset(TensorDataset(lucid.tensor(x)), _Squares(6))
    tds = torch.utils.data.StackDataset(torch.utils.data.TensorDataset(torch.tensor(x)),
                                        _Squares(6))
    assert len(ds) == len(tds) == 6
    for i in range(6):
        (a,), b = ds[i]
        (ta,), tb = tds[i]
        np.testing.assert_array_equal(a.numpy(), ta.numpy())
        assert b == tb == i * i
    named = StackDataset(feat=TensorDataset(lucid.tensor(x)), label=_Squares(6))
    tnamed = torch.utils.data.StackDataset(feat=torch.utils.data.TensorDataset(torch.tensor(x)),
                                           label=_Squares(6))
    item, titem = named[4], tnamed[4]
    assert list(item) == list(titem) == ["feat", "label"]
    np.testing.assert_array_equal(item["feat"][0].numpy(), titem["feat"][0].numpy())
    assert item["label"] == titem["label"] == 16
    assert y.size == len(named)


def test_stack_dataset_getitems_uses_nested_batched_reads(torch) -> None:
    batched, plain = _Batched(5), _Squares(5)
    ds = StackDataset(batched, plain)
    tds = torch.utils.data.StackDataset(_Batched(5), _Squares(5))
    assert ds.__getitems__([3, 1]) == tds.__getitems__([3, 1]) == [(-3, 9), (-1, 1)]
    assert batched.batches == [[3, 1]]
    named = StackDataset(a=_Batched(5), b=_Squares(5))
    assert named.__getitems__([2, 0]) == [{"a": -2, "b": 4}, {"a": 0, "b": 0}]


def test_stack_dataset_in_a_dataloader(torch) -> None:
    x = np.arange(10.0).reshape(5, 2)
    ds = StackDataset(feat=TensorDataset(lucid.tensor(x)), sq=_Squares(5))
    tds = torch.utils.data.StackDataset(feat=torch.utils.data.TensorDataset(torch.tensor(x)),
                                        sq=_Squares(5))
    for b, tb in zip(DataLoader(ds, batch_size=2), torch.utils.data.DataLoader(tds,
                                                                            batch_size=2)):
        assert list(b) == list(tb)
        np.testing.assert_array_equal(b["feat"][0].numpy(), tb["feat"][0].numpy())
        np.testing.assert_array_equal(b["sq"].numpy(), tb["sq"].numpy())


class _Short(Dataset):
    def __getitems__(self, indices: list[int]) -> list[int]:
        return [0]

    def __getitem__(self, i: int) -> int:
        return 0

    def __len__(self) -> int:
        return 5


@pytest.mark.parametrize("make,msg", [
    (lambda: StackDataset(), "At least one dataset should be passed"),
    (lambda: StackDataset(_Squares(2), b=_Squares(2)), "both types are given"),
    (lambda: StackDataset(_Squares(2), _Squares(3)), "Size mismatch between datasets"),
    (lambda: StackDataset(a=_Squares(2), b=_Squares(3)), "Size mismatch between datasets"),
    (lambda: StackDataset(_Short(), _Squares(5)).__getitems__([0, 1]),
     "Nested dataset's output size mismatch. Expected 2, got 1"),
])
def test_stack_dataset_errors_match_torch(make, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        make()


def test_names_importable_from_both_paths() -> None:
    assert DataChainDataset is dataset_module.ChainDataset is ChainDataset
    assert DataStackDataset is StackDataset
