"""lucid.nn.utils.rnn: padding and packing variable-length batches, against torch and against
hand-built expectations, with gradients through the gathers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from devices import DEVICES

import lucid
from lucid.nn.utils.rnn import (
    PackedSequence,
    invert_permutation,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)


def _seqs(lens: list[int], feat: tuple[int, ...] = (2,)) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal((n, *feat)) for n in lens]


def test_module_paths_exist() -> None:
    import lucid.nn.modules.rnn as m

    assert m.LSTM is lucid.nn.LSTM and m.RNNCellBase is lucid.nn.RNNCellBase
    assert lucid.nn.utils.rnn.PackedSequence is PackedSequence


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side) -> None:
    seqs = _seqs([2, 4, 1])
    out = pad_sequence([lucid.tensor(s) for s in seqs], batch_first=batch_first,
                       padding_value=-1.0, padding_side=side).numpy()
    exp = np.full((3, 4, 2), -1.0)
    for b, s in enumerate(seqs):
        if side == "right":
            exp[b, :len(s)] = s
        else:
            exp[b, 4 - len(s):] = s
    np.testing.assert_array_equal(out, exp if batch_first else exp.transpose(1, 0, 2))


def test_pad_sequence_matches_torch(torch) -> None:
    seqs = _seqs([3, 1, 2], (2, 3))
    for kw in ({}, {"batch_first": True, "padding_value": 7.0}, {"padding_side": "left"}):
        a = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], **kw)
        b = pad_sequence([lucid.tensor(s) for s in seqs], **kw)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(ValueError, match="Expected padding_side to be one of left or right"):
        pad_sequence([lucid.ones(2)], padding_side="middle")


def test_pack_padded_sorted_by_hand() -> None:
    x = lucid.tensor(np.arange(12.0).reshape(4, 3))  # (T=4, B=3), value = 3 t + b
    p = pack_padded_sequence(x, [4, 2, 1])
    assert isinstance(p, tuple) and p._fields == ("data", "batch_sizes", "sorted_indices",
                                                  "unsorted_indices")
    assert p.data.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 9.0]
    assert p.batch_sizes.tolist() == [3, 2, 1, 1]
    assert p.batch_sizes.dtype == lucid.int64
    assert p.sorted_indices is None and p.unsorted_indices is None
    padded, lens = pad_packed_sequence(p, padding_value=-1.0, total_length=5)
    assert lens.tolist() == [4, 2, 1]
    exp = np.arange(12.0).reshape(4, 3)
    exp[2:, 1] = -1
    exp[1:, 2] = -1
    np.testing.assert_array_equal(padded.numpy(), np.vstack([exp, [[-1, -1, -1]]]))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_pack_and_pad_match_torch(torch, batch_first, enforce_sorted, as_tensor) -> None:
    lens = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    x = np.random.default_rng(1).standard_normal((4, 5, 2) if batch_first else (5, 4, 2))
    tl = torch.tensor(lens) if as_tensor else lens
    ll = lucid.tensor(lens) if as_tensor else lens
    pt = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), tl, batch_first=batch_first,
                                                 enforce_sorted=enforce_sorted)
    pl = pack_padded_sequence(lucid.tensor(x), ll, batch_first=batch_first,
                              enforce_sorted=enforce_sorted)
    np.testing.assert_array_equal(pt.data.numpy(), pl.data.numpy())
    assert pt.batch_sizes.tolist() == pl.batch_sizes.tolist()
    for a, b in ((pt.sorted_indices, pl.sorted_indices),
                 (pt.unsorted_indices, pl.unsorted_indices)):
        assert (a is None and b is None) or a.tolist() == b.tolist()
    for kw in ({}, {"batch_first": not batch_first, "total_length": 7, "padding_value": 2.5}):
        yt, lt = torch.nn.utils.rnn.pad_packed_sequence(pt, **kw)
        yl, ll2 = pad_packed_sequence(pl, **kw)
        np.testing.assert_array_equal(yt.numpy(), yl.numpy())
        assert lt.tolist() == ll2.tolist()


def test_pack_sequence_and_unpack_round_trip(torch) -> None:
    seqs = _seqs([2, 4, 1, 3])
    pt = torch.nn.utils.rnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    pl = pack_sequence([lucid.tensor(s) for s in seqs], enforce_sorted=False)
    np.testing.assert_array_equal(pt.data.numpy(), pl.data.numpy())
    back = unpack_sequence(pl)
    assert len(back) == 4
    for a, b in zip(seqs, back):
        np.testing.assert_array_equal(a, b.numpy())
    padded = pad_sequence([lucid.tensor(s) for s in seqs], batch_first=True)
    for a, b in zip(seqs, unpad_sequence(padded, lucid.tensor([2, 4, 1, 3]), batch_first=True)):
        np.testing.assert_array_equal(a, b.numpy())
    for a, b in zip(seqs, unpad_sequence(pad_sequence([lucid.tensor(s) for s in seqs]),
                                         [2, 4, 1, 3])):
        np.testing.assert_array_equal(a, b.numpy())


def test_gradients_flow_through_pack_and_pad() -> None:
    x = lucid.randn(4, 3, 2, dtype=lucid.float64, requires_grad=True)

    def f(x):
        p = pack_padded_sequence(x, [2, 4, 3], enforce_sorted=False)
        y, _ = pad_packed_sequence(PackedSequence(p.data * p.data, p.batch_sizes,
                                                  p.sorted_indices, p.unsorted_indices),
                                   batch_first=True, total_length=5)
        return y

    assert lucid.autograd.gradcheck(f, [x])
    y = f(x)
    y.sum().backward()
    g = x.grad.numpy()
    assert np.all(g[2:, 0] == 0) and np.all(g[3:, 2] == 0) and np.all(g[:2, 0] != 0)


def test_packed_sequence_helpers() -> None:
    p = pack_sequence([lucid.ones(3, 2), lucid.ones(1, 2)])
    assert p.batch_sizes.tolist() == [2, 1, 1]
    d = p.double()
    assert d.data.dtype == lucid.float64 and d.batch_sizes is p.batch_sizes
    assert p.to(lucid.float32) is p
    assert p.float().data.dtype == lucid.float32 and not p.is_cuda
    q = pack_sequence([lucid.ones(1), lucid.ones(3)], enforce_sorted=False)
    assert q.sorted_indices.tolist() == [1, 0] and q.unsorted_indices.tolist() == [1, 0]
    assert invert_permutation(lucid.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    assert invert_permutation(None) is None
    r = PackedSequence(q.data, q.batch_sizes, lucid.tensor([1, 0]))
    assert r.unsorted_indices.tolist() == [1, 0]


def test_errors() -> None:
    x = lucid.randn(4, 3, 2)
    with pytest.raises(RuntimeError, match="`lengths` array must be sorted in decreasing order"):
        pack_padded_sequence(x, [2, 3, 1])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        pack_padded_sequence(x, [2, 0, 1], enforce_sorted=False)
    with pytest.raises(RuntimeError, match=r"Expected `len\(lengths\)` to be equal to "
                                           r"batch_size, but got 2 \(batch_size=3\)"):
        pack_padded_sequence(x, [3, 2])
    with pytest.raises(ValueError, match="Expected total_length to be at least the length of "
                                         "the longest sequence in input, but got "
                                         "total_length=2 and max sequence length being 3"):
        pad_packed_sequence(pack_padded_sequence(x, [3, 2, 1]), total_length=2)
    bad = PackedSequence(lucid.randn(5, 2), lucid.tensor([2, 2]))
    with pytest.raises(RuntimeError, match=r"batch_sizes \[2, 2\] must be positive"):
        lucid.nn.GRU(2, 3)(bad)


@pytest.mark.parametrize("device", DEVICES)
def test_packed_gru_on_every_device(device) -> None:
    warnings.simplefilter("ignore")
    gru = lucid.nn.GRU(2, 3, bidirectional=True)
    x = lucid.randn(4, 3, 2)
    res = {}
    for dev in ("cpu", device):
        m = gru.to(dev)
        xd = x.to(dev).detach().requires_grad_(True)
        out, h = m(pack_padded_sequence(xd, [2, 4, 3], enforce_sorted=False))
        y, lens = pad_packed_sequence(out, padding_value=-1.0)
        assert y.device.type == dev and lens.tolist() == [2, 4, 3]
        (y.sum() + h.sum()).backward()
        res[dev] = (y.detach().cpu().numpy(), h.detach().cpu().numpy(), xd.grad.cpu().numpy())
        gru = m.to("cpu")
    for a, b in zip(res["cpu"], res[device]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
