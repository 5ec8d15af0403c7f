"""Indexing: ``__getitem__``, ``__setitem__``, gather/scatter, index_select, masked_fill,
nonzero, sort/topk."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from .. import _dtype
from .._dims import norm_dim
from .._tensor import Tensor, _make
from ..autograd import grad_mode
from ..autograd.function import Op, _device_mismatch
from ..backend import transfer
from ._util import cast, shape_of, sum_to, wrap
from .creation import full
from .shape import broadcast_tensors, expand, reshape
from .views import ViewOp, inplace

_grad_on = grad_mode._state

_BASIC = (int, slice, type(None), type(Ellipsis))


def _convert_index(idx: Any, be: Any) -> tuple[Any, bool, tuple[Tensor, ...]]:
    """Backend-ready index, whether it is basic (a view: ints, slices, None, ...), and the
    index tensors in it (a backward that reads them must see them unchanged)."""
    items = idx if isinstance(idx, tuple) else (idx,)
    basic = True
    out = []
    held = []
    for it in items:
        if isinstance(it, Tensor):
            if it._be is not be and it._be.name == "cpu" and be.name == "gpu":
                # cpu indices are accepted for a tensor on another device, as in PyTorch
                it = _make(transfer(it._data, it._be, be, copy=False), be, False, None)
            if it._be is not be:
                raise RuntimeError(
                    "indices should be either on cpu or on the same device as the indexed tensor "
                    f"({be.name})"
                )
            d = it.dtype
            if d.is_floating_point:
                raise IndexError(
                    "tensors used as indices must be long, int, byte or bool tensors"
                )
            out.append(it._data)
            held.append(it)
            basic = False
        elif isinstance(it, (list, range, np.ndarray)):
            a = np.asarray(it)
            if a.size == 0 and not isinstance(it, np.ndarray):
                a = a.astype(np.int64)  # x[[]] and x[range(0)] select nothing
            if a.dtype.kind == "f":
                raise IndexError(
                    "tensors used as indices must be long, int, byte or bool tensors"
                )
            out.append(be.from_numpy(a))
            basic = False
        elif isinstance(it, bool) or isinstance(it, np.bool_):
            out.append(bool(it))
            basic = False
        elif isinstance(it, slice):
            if it.step is not None and not isinstance(it.step, Tensor) and it.step <= 0:
                # torch refuses both (and MLX dies with SIGFPE on a zero step)
                raise ValueError("slice step cannot be zero" if it.step == 0
                                 else "step must be greater than zero")
            out.append(it)
        elif isinstance(it, _BASIC) or isinstance(it, np.integer):
            out.append(int(it) if isinstance(it, np.integer) else it)
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(it).__name__})"
            )
    return tuple(out), basic, tuple(held)


def _mask_error(items: tuple, shape: tuple[int, ...]) -> IndexError | None:
    """PyTorch's message for a bool mask whose shape does not match the dims it indexes
    (None and bool scalars index a new size-1 dim, as PyTorch counts them)."""

    def is_mask(it: Any) -> bool:  # a numpy or MLX bool array
        d = getattr(it, "dtype", None)
        return d is not None and (getattr(d, "kind", "") == "b" or str(d).endswith("bool"))

    def width(it: Any) -> int:
        return it.ndim if is_mask(it) else 1

    real = [it for it in items if it is not None and it is not Ellipsis
            and not isinstance(it, bool)]
    ell = len(shape) - sum(width(it) for it in real)
    vshape: list[int] = []
    pos = 0
    starts = []
    for it in items:
        starts.append(len(vshape))
        if it is None or isinstance(it, bool):
            vshape.append(1)
            continue
        n = max(ell, 0) if it is Ellipsis else width(it)
        vshape.extend(shape[pos:pos + n])
        pos += n
    vshape.extend(shape[pos:])
    for it, p in zip(items, starts):
        if is_mask(it):
            for k in range(it.ndim):
                if p + k < len(vshape) and it.shape[k] != vshape[p + k]:
                    return IndexError(
                        f"The shape of the mask {list(it.shape)} at index {k} does not match "
                        f"the shape of the indexed tensor {vshape} at index {p + k}"
                    )
    return None


def _index_error(e: IndexError, shape: Any, items: tuple = ()) -> IndexError:
    if "boolean index did not match" in str(e):
        err = _mask_error(items, tuple(shape))
        if err is not None:
            return err
    msg = str(e).replace("axis", "dimension")
    if "too many indices" in msg:
        msg = f"too many indices for tensor of dimension {len(shape)}"
    return IndexError(msg)


class GetItemView(ViewOp):
    scatters = True  # the engine writes several slices' gradients into one buffer

    def forward(self, x, idx):
        self.shape, self.idx = x.shape, idx
        return self.be.getitem(x, idx)

    @property
    def grad_shape(self) -> tuple:
        return self.shape

    def scatter_into(self, buf, g, fresh):
        """``buf[idx] = g`` into fresh zeros, else ``buf[idx] += g``; returns the buffer
        (a new array on backends whose arrays are immutable)."""
        be = self.be
        if not fresh:
            view = be.getitem(buf, self.idx)
            if be.views_share_memory and getattr(view, "ndim", 0):
                be.iadd(view, g)  # the sum in the buffer's own memory
                return buf
            g = be.add(view, g)  # an integer index reads a scalar: write the sum back
        return be.setitem(buf, self.idx, g)

    def region(self) -> tuple[int, int, int] | None:
        """``(axis, start, stop)`` when the index is one unit-step range along one axis, the
        rest whole (``split``, ``chunk``, ``narrow``): the engine then writes the slices'
        gradients into an unfilled buffer and zeroes only what none of them covered."""
        idx = self.idx if isinstance(self.idx, tuple) else (self.idx,)
        if len(idx) > len(self.shape) or not all(isinstance(i, slice) for i in idx):
            return None
        found = None
        for axis, sl in enumerate(idx):
            start, stop, step = sl.indices(self.shape[axis])
            if (start, stop, step) == (0, self.shape[axis], 1):
                continue
            if found is not None or step != 1 or stop <= start:
                return None
            found = (axis, start, stop)
        if found is None:  # the whole tensor: one range over its first axis
            return (0, 0, self.shape[0]) if self.shape else None
        return found

    def backward(self, g):
        return self.scatter_into(self.be.zeros(self.shape, self.be.dtype_of(g)), g, True), None


class GetItemAdvanced(Op):
    # the index tensors inside ``idx`` follow as inputs, so the version check covers them
    def forward(self, x, idx, *held):
        self.shape = x.shape
        self.saved = (idx,)
        out = self.be.getitem(x, idx)
        # numpy lays out x[:, i] with the indexed dims outermost; torch returns it row-major
        return self.be.contiguous(out)

    def backward(self, g):
        # scatter-add so repeated indices accumulate
        return (self.be.index_add(self.shape, self.saved[0], g),) + (None,) * len(self.parents)


def getitem(input: Tensor, idx: Any) -> Tensor:
    """``x[idx]`` with ints, slices, None, Ellipsis, bool masks and integer tensors."""
    bidx, basic, held = _convert_index(idx, input._be)
    try:
        if basic:
            return GetItemView.apply(input, bidx)
        return GetItemAdvanced.apply(input, bidx, *held)
    except IndexError as e:
        raise _index_error(e, input.shape, bidx) from None


class SetItem(Op):
    def forward(self, x, v, idx, *held):
        self.sv = shape_of(v)
        self.saved = (idx,)
        return self.be.setitem(self.be.copy(x), idx, v)

    def backward(self, g):
        be = self.be
        (idx,) = self.saved
        gx = be.setitem(be.copy(g), idx, 0) if self.parents[0] is not None else None
        gv = None
        if self.parents[1] is not None:
            gv = sum_to(be, be.getitem(g, idx), self.sv)
        return (gx, gv) + (None,) * (len(self.parents) - 2)


def setitem(input: Tensor, idx: Any, value: Any) -> None:
    """``x[idx] = value`` in place; recorded for backward when either side requires grad."""
    be = input._be
    bidx, basic, held = _convert_index(idx, be)
    if isinstance(value, Tensor):
        if value._be is not be:
            _device_mismatch(be, value._be)
        if value.dtype is not input.dtype:
            value = cast(value, input.dtype)
    try:
        inplace(input, lambda src: SetItem.apply(src, value, bidx, *held), (value,))
    except IndexError as e:
        raise _index_error(e, input.shape, bidx) from None
    except ValueError as e:
        target = tuple(be.getitem(input._data, bidx).shape)
        if basic and isinstance(value, Tensor):
            expand(value, *target)  # raises PyTorch's message for a view target
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(shape_of(value))} cannot be broadcast "
            f"to indexing result of shape {list(target)}"
        ) from e


class IndexSelect(Op):
    def forward(self, x, idx, axis):
        idx = self.be.reshape(idx, (-1,))
        self.shape, self.axis = x.shape, axis
        self.saved = (idx,)
        return self.be.take(x, idx, axis)

    def backward(self, g):
        full = (slice(None),) * self.axis + self.saved
        return self.be.index_add(self.shape, full, g), None, None


def _int_index(index: Tensor, name: str, input: Tensor | None = None) -> Tensor:
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if input is not None and index._be is not input._be:
        _device_mismatch(input._be, index._be)
    if index.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32 or int64 for index")
    return index


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    index = _int_index(index, "index_select", input)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = norm_dim(dim, input.ndim)
    if not input.ndim:  # a 0-d tensor selects as a 1-element vector
        if index.numel() != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                               f"{index.numel()} value(s)")
        return reshape(index_select(reshape(input, (1,)), 0, reshape(index, (1,))), ())
    n = input.shape[d]
    lo, hi = _bounds(index)
    if lo < 0 or hi >= n:
        raise IndexError(f"index out of range in self (index {hi if hi >= n else lo}, size {n} "
                         f"at dimension {d})")
    return IndexSelect.apply(input, index, d)


def _bounds(index: Tensor) -> tuple[int, int]:
    """The smallest and largest index (0, -1 when empty): two numbers read back, not the
    whole index."""
    be, a = index._be, index._data
    if not index.numel():
        return 0, -1
    return int(be.item(be.min(a))), int(be.item(be.max(a)))


class Gather(Op):
    def forward(self, x, idx, axis):
        self.shape, self.axis = x.shape, axis
        self.saved = (idx,)
        return self.be.take_along_axis(x, idx, axis)

    def backward(self, g):
        return self.be.scatter_add(self.shape, self.saved[0], g, self.axis), None, None


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j] = input[index[i][j]][j]`` for ``dim=0`` (and likewise for other dims).

    ``sparse_grad=True`` asks torch for a sparse gradient of ``input``; lucid's gradients are
    dense, so it raises ``NotImplementedError`` when that gradient would be recorded (and
    changes nothing otherwise)."""
    if sparse_grad and input._rg and _grad_on.on:
        raise NotImplementedError("gather(sparse_grad=True): lucid computes dense gradients "
                                  "only; use sparse_grad=False (the same gradient, dense)")
    index = _int_index(index, "gather", input)
    if not input.ndim and index.ndim <= 1:  # a 0-d tensor gathers as a 1-element vector
        return reshape(gather(reshape(input, (1,)), 0, reshape(index, (-1,))), index.shape)
    d = norm_dim(dim, input.ndim)
    if index.ndim != input.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    for k in range(input.ndim):
        if k != d and index.shape[k] > input.shape[k]:
            raise RuntimeError(
                f"Size does not match at dimension {k} expected index {list(index.shape)} to be "
                f"no larger than self {list(input.shape)} apart from dimension {d}"
            )
    _check_range(index, input, d)
    x = input
    if any(index.shape[k] < input.shape[k] for k in range(input.ndim) if k != d):
        x = getitem(input, tuple(slice(0, index.shape[k]) if k != d else slice(None)
                                 for k in range(input.ndim)))
    return Gather.apply(x, index, d)


def _check_range(index: Tensor, input: Tensor, d: int) -> None:
    """torch's bounds for gather/scatter: ``0 <= index < size`` (no negative wrap-around)."""
    lo, hi = _bounds(index)
    n = input.shape[d] if input.ndim else 1
    if lo < 0 or hi >= n:
        bad = hi if hi >= n else lo
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")


class ScatterAdd(Op):
    def forward(self, x, src, idx, axis):
        self.axis = axis
        self.saved = (idx,)
        return self.be.add(x, self.be.scatter_add(x.shape, idx, src, axis))

    def backward(self, g):
        return g, _gather_src_grad(self.be, g, self.saved[0], self.axis, self.parents[1]), \
            None, None


def _gather_src_grad(be: Any, g: Any, idx: Any, axis: int, parent: Any) -> Any:
    """The gradient of a scattered ``src``: ``g`` gathered at ``idx``; an index smaller than
    ``g`` off ``axis`` (torch allows it) reads the leading block of ``g``."""
    if parent is None:
        return None
    if any(i != axis and n < m for i, (n, m) in enumerate(zip(idx.shape, g.shape))):
        g = be.getitem(g, tuple(slice(None) if i == axis else slice(0, n)
                                for i, n in enumerate(idx.shape)))
    return be.take_along_axis(g, idx, axis)


class Scatter(Op):
    def forward(self, x, src, idx, axis):
        self.axis = axis
        self.saved = (idx,)
        return self.be.scatter(x, idx, src, axis)

    def backward(self, g):
        be, (idx,) = self.be, self.saved
        gx = be.scatter(g, idx, 0, self.axis) if self.parents[0] is not None else None
        return gx, _gather_src_grad(be, g, idx, self.axis, self.parents[1]), None, None


def _scatter_check(name: str, input: Tensor, d: int, index: Tensor, src: Any) -> bool:
    """torch's checks for a scatter (dtype, then shape, then range); False when the index is
    empty with another number of dimensions (nothing to write, no op to record). Only
    ``index``'s extent is written (and read from ``src``)."""
    tsrc = isinstance(src, Tensor)
    if tsrc and src.dtype is not input.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    ishape, xshape = tuple(index._data.shape), tuple(input._data.shape)  # no Size built
    sshape = tuple(src._data.shape) if tsrc else ishape
    if 0 in ishape:
        return len(ishape) == len(xshape)  # an empty index writes nothing, and raises nothing
    if max(len(xshape), 1) != max(len(ishape), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if max(len(sshape), 1) != max(len(ishape), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if ishape != xshape or sshape != ishape:
        bad = any(k != d and n > m for k, (n, m) in enumerate(zip(ishape, xshape))) or \
            any(n > m for n, m in zip(ishape, sshape))
        if bad:
            tail = f" and to be no larger size than src {list(sshape)}" if tsrc else ""
            raise RuntimeError(f"Expected index {list(ishape)} to be no larger than self "
                               f"{list(xshape)} apart from dimension {d}{tail}")
    _check_range(index, input, d)
    return True


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``input`` with ``src`` added at ``index`` along ``dim`` (repeated indices accumulate);
    only ``index``'s extent of ``src`` is read.

    Example::

        lucid.zeros(3).scatter_add(0, lucid.tensor([0, 0, 2]), lucid.ones(3))  # [2., 0., 1.]
    """
    index = _int_index(index, "scatter_add", input)
    if not input.ndim and index.ndim <= 1 and isinstance(src, Tensor):  # as a 1-element vector
        return reshape(scatter_add(reshape(input, (1,)), 0, reshape(index, (-1,)),
                                   reshape(src, (-1,))), ())
    d = norm_dim(dim, input.ndim)
    if not _scatter_check("scatter", input, d, index, src):  # torch's name, for both
        return input.clone()
    src = src[tuple(slice(0, s) for s in index.shape)] if src.shape != index.shape else src
    return ScatterAdd.apply(input, src, index, d)


def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
            reduce: str | None = None) -> Tensor:
    """``input`` with ``src`` (or ``value``) written at ``index`` along ``dim``: for ``dim=0``,
    ``out[index[i][j]][j] = src[i][j]`` for every ``(i, j)`` in ``index``'s extent.

    Example::

        lucid.zeros(2, 3).scatter(0, lucid.tensor([[1, 0]]), 5.0)  # [[0, 5, 0], [5, 0, 0]]
    """
    index = _int_index(index, "scatter", input)
    if src is None:
        src = value
    if not input.ndim and index.ndim <= 1:  # a 0-d tensor scatters as a 1-element vector
        return reshape(scatter(reshape(input, (1,)), 0, reshape(index, (-1,)), reshape(
            src, (-1,)) if isinstance(src, Tensor) else src, reduce=reduce), ())
    d = norm_dim(dim, input.ndim)
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if not _scatter_check("scatter", input, d, index, src):
        return input.clone()
    if reduce is not None:
        if not isinstance(src, Tensor):
            src = full(index.shape, src, dtype=input.dtype, device=input.device)
        if reduce == "add":
            return scatter_add(input, d, index, src)
        return _scatter_multiply(input, d, index, src)
    if isinstance(src, Tensor) and src.shape != index.shape:
        src = src[tuple(slice(0, s) for s in index.shape)]
    return Scatter.apply(input, src, index, d)


def _scatter_multiply(input: Tensor, d: int, index: Tensor, src: Tensor) -> Tensor:
    """``reduce="multiply"``: ``input`` times what lands on each position, computed on the
    host outside the graph (torch has no derivative for it either)."""
    be = input._be
    out = np.array(be.to_numpy(input._data))
    pos = list(np.indices(index.shape, sparse=True))
    pos[d] = np.asarray(be.to_numpy(index._data))
    vals = np.asarray(be.to_numpy(src._data))[tuple(slice(0, s) for s in index.shape)]
    np.multiply.at(out, tuple(pos), vals)
    return wrap(be.from_numpy(out), be)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    x, m = broadcast_tensors(input, mask)
    return getitem(x, m)


def take(input: Tensor, index: Tensor) -> Tensor:
    return getitem(reshape(input, -1), index)


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    be = input._be
    idx = be.nonzero(input._data)
    if as_tuple:
        return tuple(wrap(be.astype(i, _dtype.int64), be) for i in idx)
    if not idx:
        return wrap(be.zeros((1 if be.item(be.ne(input._data, 0)) else 0, 0), _dtype.int64), be)
    return wrap(be.astype(be.stack(list(idx), 1), _dtype.int64), be)


argwhere = nonzero

sort_return = namedtuple("sort_return", ["values", "indices"])
topk_return = namedtuple("topk_return", ["values", "indices"])


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False
         ) -> sort_return:
    be = input._be
    if not input.ndim:
        return sort_return(input.clone(), wrap(be.zeros((), _dtype.int64), be))
    d = norm_dim(dim, input.ndim)
    _, idx = be.sort(input._data, d, descending)
    it = wrap(be.astype(idx, _dtype.int64), be)
    return sort_return(Gather.apply(input, it, d), it)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False
            ) -> Tensor:
    return sort(input, dim, descending).indices


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
         ) -> topk_return:
    d = norm_dim(dim, input.ndim)
    if k > (input.shape[d] if input.ndim else 1) or k < 0:
        raise RuntimeError("selected index k out of range")
    if not input.ndim:
        v, i = sort(input, d, descending=largest)
        sl = (slice(None),) * d + (slice(0, k),)
        return topk_return(getitem(v, sl), getitem(i, sl))
    return topk_return(*sorted_range(input, d, largest, 0, k))


def sorted_range(input: Tensor, d: int, descending: bool, start: int, stop: int
                 ) -> tuple[Tensor, Tensor]:
    """Places ``start:stop`` of ``input`` sorted along ``d``: (values, indices), both
    row-major, the values gathered through the very indices returned (so an in-place edit of
    them is caught before backward, as in torch)."""
    be = input._be
    _, idx = be.sort(input._data, d, descending)
    if start or stop != input.shape[d]:
        idx = be.contiguous(be.getitem(idx, (slice(None),) * d + (slice(start, stop),)))
    it = wrap(be.astype(idx, _dtype.int64), be)
    return Gather.apply(input, it, d), it


__all__ = [
    "argsort", "argwhere", "gather", "getitem", "index_select", "masked_select", "nonzero",
    "scatter", "scatter_add", "setitem", "sort", "take", "topk"
]
