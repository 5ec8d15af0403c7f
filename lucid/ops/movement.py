"""Shape ops that copy: repeat/tile/repeat_interleave, cat/stack, narrow/split/chunk/unbind,
flip/roll, pad."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._dims import norm_dim
from .._tensor import Tensor
from ..autograd.function import Op
from ._util import cast, shape_arg, wrap
from .creation import arange, tensor
from .index import getitem, index_select
from .shape import flatten, reshape


class Repeat(Op):
    def forward(self, x, reps):
        self.shape, self.reps = x.shape, reps
        return self.be.contiguous(self.be.tile(x, reps))  # a transposed input tiles transposed

    def backward(self, g):
        be = self.be
        shape = (1,) * (len(self.reps) - len(self.shape)) + tuple(self.shape)
        split = []
        for r, s in zip(self.reps, shape):
            split += [r, s]
        g = be.sum(be.reshape(g, tuple(split)), tuple(range(0, len(split), 2)), False)
        return be.reshape(g, self.shape), None


def repeat(input: Tensor, *sizes: Any, repeats: Any = None) -> Tensor:
    """Tile the tensor ``sizes`` (or ``repeats=``) times along each dim (``numpy.tile``)."""
    if repeats is not None:
        if sizes:
            raise TypeError("repeat() got multiple values for argument 'repeats'")
        sizes = (repeats,)
    reps = shape_arg(sizes)
    if any(r < 0 for r in reps):
        padded = (1,) * (len(reps) - input.ndim) + tuple(input.shape)
        out = [r * n for r, n in zip(reps, padded)]
        neg = next(n for n in out if n < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {neg}: {out}")
    if len(reps) < input.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    return Repeat.apply(input, reps)


def tile(input: Tensor, dims: Any) -> Tensor:
    reps = shape_arg((dims,))
    reps = (1,) * (input.ndim - len(reps)) + reps
    return Repeat.apply(input, reps)


def repeat_interleave(input: Tensor, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Repeat each element (or each slice along ``dim``) ``repeats`` times; ``repeats`` is an
    int or a 0-/1-D integer tensor (one count per slice). ``repeat_interleave(counts)``
    repeats ``arange(len(counts))``."""
    if repeats is None:
        if input.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return repeat_interleave(arange(input.shape[0], device=input.device), input, 0,
                                 output_size=output_size)
    x = flatten(input) if dim is None else input
    d = 0 if dim is None else norm_dim(dim, input.ndim)
    n = x.shape[d]
    be = x._be
    if isinstance(repeats, Tensor):
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if repeats.dtype.is_floating_point or repeats.dtype is _dtype.bool_:
            raise NotImplementedError('"repeat_interleave_cpu" not implemented for '
                                      f"'{_dtype.torch_name(repeats.dtype)}'")
        counts = np.asarray(repeats.tolist(), dtype=np.int64).reshape(-1)
        if counts.size != 1 and counts.size != n:
            raise RuntimeError(
                "repeats must have the same size as input along dim, but got repeats.size(0) "
                f"= {counts.size} and input.size({d}) = {n}")
        if (counts < 0).any():
            raise RuntimeError("repeats can not be negative")
        counts = np.broadcast_to(counts, (n,))
    else:
        if int(repeats) < 0:
            raise RuntimeError("Repeats must be non-negative")
        counts = np.full(n, int(repeats), dtype=np.int64)
    if output_size is not None and output_size != int(counts.sum()):
        raise RuntimeError("allocated size does not match required size")
    idx = wrap(be.from_numpy(np.repeat(np.arange(n, dtype=np.int64), counts)), be)
    return index_select(x, d, idx)


# ---- join and split -----------------------------------------------------------------------------


class Cat(Op):
    def forward(self, *xs, axis):
        self.axis = axis
        self.sizes = [x.shape[axis] for x in xs]
        out = self.be.concatenate(list(xs), axis)
        # numpy keeps transposed inputs' layout; torch's cat answers row-major
        return self.be.contiguous(out)

    def backward(self, g):
        be = self.be
        out, start = [], 0
        for n, p in zip(self.sizes, self.parents):
            if p is not None:
                idx = [slice(None)] * g.ndim
                idx[self.axis] = slice(start, start + n)
                out.append(be.getitem(g, tuple(idx)))
            else:
                out.append(None)
            start += n
        return tuple(out)


class Stack(Op):
    """Same-shaped tensors joined along a new axis; input i's gradient is ``g`` at index i
    of that axis (a view, as ``Cat``'s slices)."""

    def forward(self, *xs, axis):
        self.axis = axis
        out = self.be.stack(list(xs), axis)
        return self.be.contiguous(out)

    def backward(self, g):
        be = self.be
        idx: list[Any] = [slice(None)] * g.ndim
        out = []
        for i, p in enumerate(self.parents):
            if p is None:
                out.append(None)
                continue
            idx[self.axis] = i
            out.append(be.getitem(g, tuple(idx)))
        return tuple(out)


def _uniform(ts: Any, d: Any, stack: bool) -> int | None:
    """The axis when ``ts`` is a list or tuple of tensors of one dtype and backend whose
    shapes already agree (all but along ``d`` for cat; all for stack), ``d`` a plain int in
    range, and no tensor a 1-D empty one: what ``cat`` and ``stack`` take without checks or
    casts (a per-time-step model joins two small tensors a step). None otherwise: the full
    checks then run and raise torch's errors."""
    if type(ts) not in (list, tuple) or not ts or type(d) is not int:
        return None
    t0 = ts[0]
    if not isinstance(t0, Tensor):
        return None
    a0 = t0._data
    s0, dt, be = a0.shape, a0.dtype, t0._be
    nd = len(s0) + stack
    if not -nd <= d < nd or (len(s0) == 1 and not s0[0]):
        return None
    d %= nd
    for t in ts:
        if not isinstance(t, Tensor) or t._be is not be:
            return None
        a = t._data
        if a.dtype != dt:
            return None
        s = a.shape
        if stack:
            if s != s0:
                return None
        elif len(s) != len(s0) or s[:d] != s0[:d] or s[d + 1:] != s0[d + 1:]:
            return None
    return d


def _common(tensors: Any, name: str) -> list[Tensor]:
    ts = list(tensors)
    if not ts:
        if name == "stack":
            raise RuntimeError("stack expects a non-empty TensorList")
        raise ValueError(f"lucid.{name}(): expected a non-empty list of Tensors")
    for i, t in enumerate(ts):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument 'tensors' must be a sequence of Tensors, but "
                            f"element {i} is {type(t).__name__}")
    d = ts[0].dtype
    for t in ts[1:]:
        if t.dtype is not d:
            d = _dtype.promote_types(d, t.dtype)
    return [cast(t, d) for t in ts]


def cat(tensors: Any, dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Join tensors along an existing dim."""
    d = _uniform(tensors, dim if axis is None else axis, False)
    if d is not None:
        return Cat.apply(*tensors, axis=d)
    ts = _common(tensors, "cat")
    ts_nz = [t for t in ts if not (t.ndim == 1 and t.shape[0] == 0)] or ts[:1]
    ref = ts_nz[0]
    d = norm_dim(dim if axis is None else axis, ref.ndim)
    for i, t in enumerate(ts_nz):
        if t.ndim != ref.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}"
            )
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list."
                )
    return Cat.apply(*ts_nz, axis=d)


concat = concatenate = cat


def stack(tensors: Any, dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dim."""
    d = _uniform(tensors, dim, True)
    if d is not None:
        return Stack.apply(*tensors, axis=d)
    ts = _common(tensors, "stack")
    for i, t in enumerate(ts):
        if t.shape != ts[0].shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(ts[0].shape)} at "
                f"entry 0 and {list(t.shape)} at entry {i}"
            )
    return Stack.apply(*ts, axis=norm_dim(dim, ts[0].ndim + 1))


def hstack(tensors: Any) -> Tensor:
    ts = list(tensors)
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors: Any) -> Tensor:
    return cat([t if t.ndim >= 2 else reshape(t, 1, -1) for t in tensors], 0)


def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:

    d = norm_dim(dim, input.ndim)
    if start < 0:
        start += input.shape[d]
    if start < 0 or start + length > input.shape[d] or length < 0:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({input.shape[d]}).")
    idx = (slice(None),) * d + (slice(start, start + length),)
    return getitem(input, idx)


def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into chunks of a given size, or into the listed section sizes."""
    d = norm_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        sizes = [min(s, n - i) for i in range(0, n, s)] if n else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                f"size at dimension {d}), but got split_sizes={sizes}"
            )
    out, start = [], 0
    for s in sizes:
        out.append(narrow(tensor, d, start, s))
        start += s
    return tuple(out)


def split_method(self: Tensor, split_size: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """``Tensor.split`` (and ``unsafe_split``): chunks of ``split_size`` along ``dim``, or
    the listed sizes (torch's method names its argument ``split_size``)."""
    return split(self, split_size, dim)


def split_with_sizes(self: Tensor, split_sizes: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into pieces of the listed ``split_sizes`` along ``dim``."""
    return split(self, split_sizes, dim)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = norm_dim(dim, input.ndim)
    n = input.shape[d]
    if not n:  # torch: ``chunks`` empty pieces of an empty dim
        return tuple(narrow(input, d, 0, 0) for _ in range(chunks))
    return split(input, -(-n // chunks), d)


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:

    d = norm_dim(dim, input.ndim)
    pre = (slice(None),) * d
    return tuple(getitem(input, pre + (i,)) for i in range(input.shape[d]))


# ---- flip, copies, padding ----------------------------------------------------------------------


class Flip(Op):
    def forward(self, x, axes):
        self.axes = axes
        return self.be.contiguous(self.be.flip(x, axes))  # a copy, as torch: never aliases x

    def backward(self, g):
        return self.be.flip(g, self.axes), None


def flip(input: Tensor, *args: Any, dims: Any = None) -> Tensor:
    """Reverse the order along ``dims``: ``flip(x, (0, 1))``, ``x.flip(0, 1)``."""
    if dims is None:
        dims = args[0] if len(args) == 1 else args
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    axes = tuple(norm_dim(d, input.ndim) for d in dims)
    if not input.ndim:  # nothing to reverse
        return input.clone()  # type: ignore[attr-defined]
    return Flip.apply(input, axes)


def fliplr(input: Tensor) -> Tensor:
    """``input`` with its columns (dim 1) reversed; needs at least 2 dims."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input: Tensor) -> Tensor:
    """``input`` with its rows (dim 0) reversed; needs at least 1 dim."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    if dims is None:
        return reshape(roll(flatten(input), shifts, 0), input.shape)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if not input.ndim:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    out = input
    for s, d in zip(shifts, dims):
        d = norm_dim(d, input.ndim)
        n = input.shape[d]
        if n == 0:
            continue
        s %= n
        if s:
            a, b = narrow(out, d, n - s, s), narrow(out, d, 0, n - s)
            out = cat([a, b], d)
    return out if out is not input else out.clone()  # type: ignore[attr-defined]


class PadConstant(Op):
    def forward(self, x, widths, value):
        self.slices = tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, x.shape))
        out = self.be.pad(x, widths, value)
        return self.be.contiguous(out)

    def backward(self, g):
        return self.be.getitem(g, self.slices), None, None


def _check_nonconstant(input: Tensor, k: int, widths: list, mode: str) -> None:
    """torch's checks for reflect / replicate / circular padding of the last ``k`` dims, on
    the input as given and the signed widths (negative ones crop)."""
    if k > 3 or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {2 * k} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    shape = input.shape
    if mode == "circular":
        for (lo, hi), n in zip(widths[-k:], shape[-k:]):
            if lo > n or hi > n:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            if n + lo + hi < 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
        return
    if 0 in shape[input.ndim - k - 1 + (input.ndim == k + 2):]:
        raise RuntimeError(
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {list(shape)}")
    if mode == "reflect":
        for j in range(k):  # W, then H, then D, as torch reports them
            d = input.ndim - 1 - j
            lo, hi = widths[d]
            if lo >= shape[d] or hi >= shape[d]:
                raise RuntimeError(
                    f"Argument #{4 + 2 * j}: Padding size should be less than the corresponding "
                    f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                    f"{list(shape)}")
    sizes = shape[-k:]
    outs = [n + lo + hi for (lo, hi), n in zip(widths[-k:], sizes)]
    if all(o < 1 for o in outs):
        names = "DHW"[3 - k:]
        given = ", ".join(f"{c}: {n}" for c, n in zip(names, sizes))
        if k == 3:
            given = given.replace(", ", " ", 1)
        elif k == 2 and mode == "replicate":
            given += " "
        calc = " ".join(f"{c}: {o}" for c, o in zip(names, outs))
        raise RuntimeError(f"input ({given}) is too small. Calculated output {calc}")
    if any(o < 0 for o in outs):
        out_shape = list(shape[:-k]) + outs
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(outs)}: "
                           f"{out_shape}")


def _check_constant(shape: tuple[int, ...], widths: list) -> None:
    """torch's constant padding crops with ``narrow`` first, left then right, so a negative
    pad that would leave a negative length fails there."""
    for (lo, hi), n in zip(widths, shape):
        if lo < 0:
            n += lo
            if n < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
        if hi < 0 and n + hi < 0:
            raise RuntimeError("narrow(): length must be non-negative.")


def _crop(input: Tensor, widths: list) -> tuple[Tensor, list]:
    """``input`` with the negative widths cropped off, and the widths left to pad."""
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(widths, input.shape))
    return getitem(input, crop), [(max(lo, 0), max(hi, 0)) for lo, hi in widths]


def pad(input: Tensor, pad: Any, mode: str = "constant", value: Any = None) -> Tensor:
    """Pad the last dims: ``pad = (left, right, top, bottom, ...)`` from the last dim back.

    Negative padding crops, as in PyTorch: reflect and replicate read the input as given
    (their borders are the input's), circular wraps what is left after cropping.

    Example::

        F.pad(lucid.arange(3.0).reshape(1, 3), (1, -1), mode="replicate")  # [[0., 0., 1.]]
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {input.ndim}"
        )
    widths = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        widths[input.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    negative = any(p < 0 for p in pad)
    if mode == "constant":
        if negative:
            _check_constant(input.shape, widths)
            input, widths = _crop(input, widths)
        return PadConstant.apply(input, widths, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    _check_nonconstant(input, len(pad) // 2, widths, mode)
    if mode == "circular" and negative:
        if any(n - max(-lo, 0) - max(-hi, 0) < 0 for (lo, hi), n in zip(widths, input.shape)):
            # cropped past the whole dim: torch leaves nothing to wrap
            shape = tuple(n + lo + hi for (lo, hi), n in zip(widths, input.shape))
            if 0 not in shape:
                raise RuntimeError("Negative padding crops past the whole dimension, leaving "
                                   "nothing to wrap")
            return getitem(input, tuple(slice(0, n) for n in shape))
        input, widths = _crop(input, widths)
    out = input
    for d, (lo, hi) in enumerate(widths):
        if not lo and not hi:
            continue
        n = input.shape[d]
        pos = np.arange(-lo, n + hi)
        if mode == "reflect":
            period = 2 * (n - 1) if n > 1 else 1
            pos = np.abs(pos) % period
            pos = np.where(pos >= n, period - pos, pos)
        elif mode == "replicate":
            pos = np.clip(pos, 0, n - 1)
        else:
            pos = pos % n
        out = index_select(out, d, tensor(pos, device=input.device))
    return out


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Sliding windows of ``size`` with ``step`` along ``dimension``, as a new last dim
    (``torch.Tensor.unfold``).

    Example::

        lucid.arange(7.0).unfold(0, 3, 2)     # shape (3, 3)
    """
    d = norm_dim(dimension, self.ndim)
    n = self.shape[d] if self.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    count = (n - size) // step + 1
    idx = (arange(count).unsqueeze(1) * step + arange(size).unsqueeze(0)).reshape(-1)  # type: ignore
    win = self.index_select(d, idx.to(self.device))  # type: ignore[attr-defined]
    shape = tuple(self.shape[:d]) + (count, size) + tuple(self.shape[d + 1:])
    return win.reshape(shape).movedim(d + 1, -1)  # type: ignore[attr-defined]


__all__ = [
    "cat", "chunk", "concat", "concatenate", "flip", "fliplr", "flipud", "hstack", "narrow", "pad",
    "repeat", "repeat_interleave", "roll", "split", "stack", "tile", "unbind", "vstack"
]
