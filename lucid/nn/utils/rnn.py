"""Variable-length batches for recurrent layers, as ``torch.nn.utils.rnn``: padding, packing
(``PackedSequence``) and the way back.

A packed batch stores the sequences sorted by decreasing length, time step after time step:
``data`` holds the ``batch_sizes[t]`` rows that are still running at step ``t``. Packing and
unpacking are single gathers, so gradients flow through them.

Example::

    from lucid.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    packed = pack_padded_sequence(x, [5, 3, 2], enforce_sorted=False)   # x: (T, B, F)
    out, h = gru(packed)
    y, lengths = pad_packed_sequence(out)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ... import _dtype, ops
from ..._tensor import Tensor
from ...ops.rnn import gather_rows
from ...ops.rnn_functional import active_rows

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


class _PackedSequenceBase(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceBase):
    """A packed batch of variable-length sequences (a named tuple: ``data``, ``batch_sizes``,
    ``sorted_indices``, ``unsorted_indices``), as ``torch.nn.utils.rnn.PackedSequence``.
    Build one with ``pack_padded_sequence`` or ``pack_sequence``; every recurrent layer
    accepts it and answers with one.

    Example::

        p = pack_sequence([lucid.ones(3, 2), lucid.ones(1, 2)])
        p.batch_sizes        # tensor([2, 1, 1])
    """

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            raise ValueError("PackedSequence needs batch_sizes; build one with "
                             "pack_padded_sequence or pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Move or cast ``data`` (the index tensors follow its device; ``batch_sizes`` stays
        on the cpu), as ``Tensor.to``.

        Example::

            p.to(lucid.float64)
        """
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        dev = data.device

        def mv(t: Tensor | None) -> Tensor | None:
            return None if t is None else t.to(dev)

        return type(self)(data, self.batch_sizes, mv(self.sorted_indices),
                          mv(self.unsorted_indices))

    def cpu(self) -> PackedSequence:
        """This batch on the cpu."""
        return self.to("cpu")

    def double(self) -> PackedSequence:
        """This batch with float64 data."""
        return self.to(dtype=_dtype.float64)

    def float(self) -> PackedSequence:
        """This batch with float32 data."""
        return self.to(dtype=_dtype.float32)

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` lives on a cuda device (never, in lucid)."""
        return bool(getattr(self.data, "is_cuda", False))

    def is_pinned(self) -> bool:
        """Whether ``data`` is in pinned memory (never, in lucid)."""
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of an index permutation (``None`` stays ``None``).

    Example::

        invert_permutation(lucid.tensor([2, 0, 1]))    # tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    p = np.asarray(permutation.tolist(), dtype=np.int64)
    inv = np.empty_like(p)
    inv[p] = np.arange(p.size, dtype=np.int64)
    return ops.as_tensor(inv, device=permutation.device)


def _ints(x: Any) -> np.ndarray:
    if isinstance(x, Tensor):
        x = x.tolist()
    return np.asarray(x, dtype=np.int64).reshape(-1)


def _index(idx: np.ndarray, like: Tensor) -> Tensor:
    return ops.as_tensor(np.ascontiguousarray(idx, dtype=np.int64), device=like.device)


def pad_sequence(sequences: Tensor | Iterable[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack sequences of shape (L_i, *) into (L_max, B, *) (``batch_first``: (B, L_max, *)),
    padding each with ``padding_value`` on ``padding_side`` ("right" or "left").

    Example::

        pad_sequence([lucid.ones(2), lucid.ones(3)], batch_first=True).shape   # (2, 3)
    """
    if padding_side not in ("left", "right"):
        raise ValueError(
            f"Expected padding_side to be one of left or right, but got {padding_side}.")
    seqs = list(sequences.unbind(0)) if isinstance(sequences, Tensor) else list(sequences)
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    rest = tuple(seqs[0].shape[1:])
    for s in seqs[1:]:
        if tuple(s.shape[1:]) != rest:
            raise RuntimeError(
                f"pad_sequence: every sequence must have the same trailing dimensions, got "
                f"{list(rest)} and {list(s.shape[1:])}")
    m = max(s.shape[0] for s in seqs)
    out = []
    for s in seqs:
        k = m - s.shape[0]
        if k:
            pad = ops.full((k, *rest), padding_value, dtype=s.dtype, device=s.device)
            s = ops.cat([s, pad] if padding_side == "right" else [pad, s], 0)
        out.append(s)
    return ops.stack(out, 0 if batch_first else 1)


def pack_padded_sequence(input: Tensor, lengths: Tensor | Sequence[int], batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *) (``batch_first``: (B, T, *)) of sequences with the given
    ``lengths``. With ``enforce_sorted`` the lengths must decrease; otherwise the batch is
    sorted here and ``sorted_indices`` remembers the order.

    Example::

        packed = pack_padded_sequence(x, [4, 2, 3], enforce_sorted=False)
    """
    lens = _ints(lengths)
    b_len = input.shape[0] if batch_first else input.shape[1]
    t_in = input.shape[1] if batch_first else input.shape[0]
    if lens.size != b_len:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lens.size} (batch_size={b_len})")
    if enforce_sorted:
        if lens.size > 1 and np.any(lens[:-1] < lens[1:]):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
        order = np.arange(b_len)
        sorted_indices = None
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_indices = _index(order, input)
    lens = lens[order]
    if lens.size and lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if lens.size and lens[0] > t_in:
        raise RuntimeError(f"pack_padded_sequence: a length ({int(lens[0])}) exceeds the "
                           f"sequence dimension ({t_in})")
    t_len = int(lens[0]) if lens.size else 0
    bs = (lens[None, :] > np.arange(t_len)[:, None]).sum(1).astype(np.int64)
    tt, bb = active_rows(bs)
    ob = order[bb]
    idx = ob * t_in + tt if batch_first else tt * b_len + ob
    data = gather_rows(input.reshape(-1, *input.shape[2:]), idx)
    return PackedSequence(data, ops.as_tensor(bs), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Undo ``pack_padded_sequence``: ``(padded, lengths)`` with the batch in its original
    order, padded with ``padding_value`` to ``total_length`` steps when given.

    Example::

        y, lengths = pad_packed_sequence(packed, batch_first=True)
    """
    data = sequence.data
    bs = _ints(sequence.batch_sizes)
    t_len = bs.size
    b_len = int(bs[0]) if bs.size else 0
    if total_length is not None:
        if total_length < t_len:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{t_len}")
        t_out = total_length
    else:
        t_out = t_len
    uns = (np.arange(b_len) if sequence.unsorted_indices is None
           else _ints(sequence.unsorted_indices))
    offs = np.concatenate([[0], np.cumsum(bs)[:-1]]).astype(np.int64)
    t = np.arange(t_out)[:, None]
    s = uns[None, :]
    tc = np.minimum(t, max(t_len - 1, 0))
    valid = (t < t_len) & (s < bs[tc])
    idx = np.where(valid, offs[tc] + s, -1)  # (T_out, B)
    if batch_first:
        idx = idx.T
    padded = gather_rows(data, idx.reshape(-1), padding_value).reshape(
        *idx.shape, *data.shape[1:])
    lens = (bs[None, :] > np.arange(b_len)[:, None]).sum(1).astype(np.int64)
    return padded, ops.as_tensor(lens[uns])


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (L_i, *) directly (``pad_sequence`` then
    ``pack_padded_sequence``).

    Example::

        pack_sequence([lucid.ones(3), lucid.ones(1)])
    """
    lengths = [int(v.shape[0]) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor | Sequence[int],
                   batch_first: bool = False) -> list[Tensor]:
    """Split a padded batch back into its sequences (a list of (L_i, *) tensors).

    Example::

        unpad_sequence(pad_sequence(seqs), [len(s) for s in seqs])
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, _ints(lengths))]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences inside a ``PackedSequence``, in their original order.

    Example::

        unpack_sequence(pack_sequence(seqs, enforce_sorted=False))
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
