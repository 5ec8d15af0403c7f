"""Shape and matrix helpers torch scripts use beside the core ops: ``ravel``, ``select``,
``tensor_split`` and ``hsplit``/``vsplit``/``dsplit``, ``take_along_dim``, ``atleast_Nd``,
``column_stack``/``row_stack``/``dstack``, ``diagflat``, ``tril_indices``/``triu_indices``,
``unravel_index``, ``vander``, the window functions, ``vdot``, ``addmv``, ``addr``,
``baddbmm``, ``addbmm``, ``chain_matmul``, ``scatter_reduce``, ``index_put``,
``fill_diagonal_``. Compositions of differentiable ops."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import _dtype
from .._dims import norm_dim
from .._tensor import Tensor
from ..autograd.function import Op
from ..backend import get_backend
from . import _autocast as _ac
from . import elementwise as _e
from . import select as _s
from .creation import arange, tensor, zeros_like
from .factory_options import check_layout, leaf
from .index import _scatter_check, gather, scatter, scatter_add, setitem
from .linalg import diag, scaled_input
from .linalg_misc import cross as _linalg_cross
from .matmul import bmm, mm, mv, out_dtype_operands, outer
from .movement import cat, hstack, narrow
from .reduce import sum as _sum
from .views import inplace

__all__ = [
    "addbmm", "addmv", "addr", "atleast_1d", "atleast_2d", "atleast_3d", "baddbmm",
    "bartlett_window", "blackman_window", "chain_matmul", "column_stack", "cross", "diagflat",
    "dsplit",
    "dstack", "fill_diagonal_", "hamming_window", "hann_window", "hsplit", "index_put",
    "index_put_", "kaiser_window", "ravel", "row_stack", "scatter_reduce", "select",
    "take_along_dim", "tensor_split", "tril_indices", "triu_indices", "unravel_index",
    "vander", "vdot", "vsplit",
]


def _host(t: Tensor) -> np.ndarray:
    """``t``'s values as a host (numpy) array, outside the graph."""
    return np.asarray(t._be.to_numpy(t._data))


def ravel(input: Tensor) -> Tensor:
    """``input`` flattened to 1-D (a view where possible)."""
    return input.reshape(-1)


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at ``index`` along ``dim`` (that dim removed); a view."""
    d = norm_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {dim}")
    return input[(slice(None),) * d + (index,)]


def _sections_or_indices(name: str, given: Any, sections: Any, indices: Any,
                         tensor_ok: bool) -> Any:
    """The one split argument of ``tensor_split``/``hsplit``/... among its forms: positional
    (an int, a list of ints, or for ``tensor_split`` a 0-D/1-D int64 tensor), or by torch's
    overload names ``sections=`` (an int), ``indices=`` (a list)."""
    forms = [a for a in (given, sections, indices) if a is not None]
    if len(forms) != 1:
        raise TypeError(f"{name}() received an invalid combination of arguments: give one of "
                        "an int (sections), a list of ints (indices)"
                        + (" or a tensor" if tensor_ok else ""))
    if sections is not None and not isinstance(sections, (int, np.integer, Tensor)):
        raise TypeError(f"{name}(): argument 'sections' must be int, not "
                        f"{type(sections).__name__}")
    if indices is not None and not isinstance(indices, (list, tuple)):
        raise TypeError(f"{name}(): argument 'indices' must be tuple of ints, not "
                        f"{type(indices).__name__}")
    ios = forms[0]
    if isinstance(ios, Tensor):
        if not tensor_ok:
            raise TypeError(f"{name}() received an invalid combination of arguments: got a "
                            "Tensor, expected an int or a list of ints")
        if ios.dtype is not _dtype.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {_dtype.torch_name(ios.dtype)}")
        if ios.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {ios.ndim} dims")
        return ios.tolist()
    if isinstance(ios, (float, bool)) or not isinstance(ios, (int, np.integer, list, tuple)):
        raise TypeError(f"{name}() received an invalid combination of arguments: got "
                        f"{type(ios).__name__}, expected an int or a list of ints")
    return int(ios) if isinstance(ios, (int, np.integer)) else list(ios)


def tensor_split(input: Tensor, tensor_indices_or_sections: Any = None, dim: int = 0, *,
                 sections: Any = None, indices: Any = None) -> tuple[Tensor, ...]:
    """Split along ``dim`` into ``n`` nearly equal parts (the first ``size % n`` one longer),
    or at the given indices (views). The split is given positionally (an int, a list, or a
    0-D/1-D int64 tensor) or by torch's overload names: ``sections=``, ``indices=``,
    ``tensor_indices_or_sections=``.

    Example::

        lucid.tensor_split(lucid.arange(6), indices=[1, 3])   # sizes 1, 2, 3
    """
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    ios = _sections_or_indices("tensor_split", tensor_indices_or_sections, sections, indices,
                               True)
    d = norm_dim(dim, input.ndim)
    size = input.shape[d]
    if isinstance(ios, int):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        q, r = divmod(size, ios)
        bounds, start = [], 0
        for i in range(ios):
            start += q + (1 if i < r else 0)
            bounds.append(start)
        bounds = bounds[:-1]
    else:
        bounds = list(ios)
    out, start = [], 0
    for b in bounds + [size]:  # each part is input[prev:b] with Python's slice rules
        b = min(max(b + size if b < 0 else b, 0), size)
        out.append(narrow(input, d, min(start, b), max(b - start, 0)))
        start = b
    return tuple(out)


def _nsplit(input: Tensor, ios: Any, dim: int, need: int, name: str) -> tuple[Tensor, ...]:
    if input.ndim < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, "
                           f"but got a tensor with {input.ndim} dimensions!")
    if isinstance(ios, int) and input.shape[dim] % ios:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                           f"size of the dimension {input.shape[dim]} is not divisible by the "
                           f"split_size {ios}!")
    return tensor_split(input, ios, dim)


def hsplit(input: Tensor, sections: Any = None, *, indices: Any = None) -> tuple[Tensor, ...]:
    """Split along dim 1 (dim 0 for 1-D tensors) into ``sections`` equal parts or at the
    list ``indices`` (positionally either one)."""
    ios = _sections_or_indices("hsplit", sections, None, indices, False)
    return _nsplit(input, ios, 0 if input.ndim == 1 else 1, 1, "hsplit")


def vsplit(input: Tensor, sections: Any = None, *, indices: Any = None) -> tuple[Tensor, ...]:
    """Split along dim 0 (needs 2 or more dims), as ``hsplit``."""
    ios = _sections_or_indices("vsplit", sections, None, indices, False)
    return _nsplit(input, ios, 0, 2, "vsplit")


def dsplit(input: Tensor, sections: Any = None, *, indices: Any = None) -> tuple[Tensor, ...]:
    """Split along dim 2 (needs 3 or more dims), as ``hsplit``."""
    ios = _sections_or_indices("dsplit", sections, None, indices, False)
    return _nsplit(input, ios, 2, 3, "dsplit")


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``gather`` with ``indices`` broadcast against ``input`` (flattened when ``dim`` is
    None), as numpy's ``take_along_axis``."""
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    d = norm_dim(dim, input.ndim)
    if input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    shape_i = list(np.broadcast_shapes(
        tuple(1 if i == d else s for i, s in enumerate(input.shape)),
        tuple(1 if i == d else s for i, s in enumerate(indices.shape))))
    si, sx = list(shape_i), list(shape_i)
    si[d], sx[d] = indices.shape[d], input.shape[d]
    return gather(input.expand(*sx), d, indices.expand(*si))


_ATLEAST = {  # (n, ndim) -> new shape from the old one
    (1, 0): lambda s: (1,), (2, 0): lambda s: (1, 1), (2, 1): lambda s: (1,) + s,
    (3, 0): lambda s: (1, 1, 1), (3, 1): lambda s: (1,) + s + (1,), (3, 2): lambda s: s + (1,),
}


def _atleast(n: int, tensors: tuple) -> Any:
    one = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    seq = tensors if one or len(tensors) != 1 else tensors[0]
    out = []
    for t in seq:
        f = _ATLEAST.get((n, t.ndim))
        out.append(t if f is None else t.reshape(f(tuple(t.shape))))
    return out[0] if one else tuple(out)


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least one dimension."""
    return _atleast(1, tensors)


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least two dimensions (1-D becomes a row)."""
    return _atleast(2, tensors)


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least three dimensions (as numpy's ``atleast_3d``)."""
    return _atleast(3, tensors)


def column_stack(tensors: Any) -> Tensor:
    """1-D tensors as columns, others stacked along dim 1."""
    return hstack([t.reshape(-1, 1) if t.ndim <= 1 else t for t in tensors])


def row_stack(tensors: Any) -> Tensor:
    """Alias of ``vstack``."""
    return cat([atleast_2d(t) for t in tensors], 0)


def dstack(tensors: Any) -> Tensor:
    """Stack along the third dimension (after ``atleast_3d``)."""
    return cat([atleast_3d(t) for t in tensors], 2)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A 2-D tensor with the flattened ``input`` on its ``offset``-th diagonal."""
    if not isinstance(offset, (int, np.integer)):
        raise TypeError("diagflat(): argument 'offset' (position 2) must be int, not "
                        f"{type(offset).__name__}")
    return diag(input.reshape(-1), offset)


def _tri_indices(name: str, row: int, col: int, offset: int, upper: bool, dtype: Any,
                 layout: Any, device: Any, pin_memory: bool, requires_grad: bool) -> Tensor:
    be = get_backend(device)
    if layout is not None or pin_memory:
        check_layout(name, layout, pin_memory, be)
    r, c = (np.triu_indices if upper else np.tril_indices)(row, offset, col)
    d = _dtype.int64 if dtype is None else _dtype.to_dtype(dtype)
    return leaf(be.from_numpy(np.stack([r, c]).reshape(2, -1).astype(d.np)), be,
                requires_grad)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None, layout: Any = None, pin_memory: bool = False,
                 requires_grad: bool = False) -> Tensor:
    """The (2, N) coordinates of the lower triangle of a ``row x col`` matrix."""
    return _tri_indices("tril_indices", row, col, offset, False, dtype, layout, device,
                        pin_memory, requires_grad)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None, layout: Any = None, pin_memory: bool = False,
                 requires_grad: bool = False) -> Tensor:
    """The (2, N) coordinates of the upper triangle of a ``row x col`` matrix."""
    return _tri_indices("triu_indices", row, col, offset, True, dtype, layout, device,
                        pin_memory, requires_grad)


def unravel_index(indices: Any, shape: Any) -> tuple[Tensor, ...]:
    """Flat indices to coordinate tensors for ``shape``."""
    idx = indices if isinstance(indices, Tensor) else tensor(indices)
    if idx.dtype.is_floating_point or idx.dtype is _dtype.bool_:
        raise TypeError("expected 'indices' to be integer dtype, but got "
                        f"{_dtype.torch_name(idx.dtype)}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    n = math.prod(shape)
    flat = _host(idx).astype(np.int64, copy=False)
    if ((flat < -n) | (flat >= n)).any():
        raise RuntimeError("unravel_index: index out of bounds")
    coords = np.unravel_index(np.where(flat < 0, flat + n, flat), shape)
    return tuple(tensor(c.astype(np.int64), device=idx.device) for c in coords)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of the 1-D ``x`` (powers decreasing unless ``increasing``)."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    p = arange(n, device=x.device)
    if not increasing:
        p = _e.sub(n - 1, p)
    d = x.dtype if x.dtype.is_floating_point else _dtype.int64
    return _e.pow(x.to(d).reshape(-1, 1), p.to(d).reshape(1, -1))


def _window(name: str, n: int, periodic: bool, fn: Any, dtype: Any, layout: Any, device: Any,
            pin_memory: bool, requires_grad: bool) -> Tensor:
    if layout is not None or pin_memory:
        check_layout(name, layout, pin_memory, get_backend(device))
    d = _dtype.get_default_dtype() if dtype is None else dtype
    if n == 0:
        vals = np.zeros(0)
    elif n == 1:
        vals = np.ones(1)
    else:
        m = n + 1 if periodic else n
        vals = fn(m)[:n]
    return tensor(vals, dtype=d, device=device, requires_grad=requires_grad)


def _cos_window(a: float, b: float, c: float = 0.0) -> Any:
    def f(m: int) -> np.ndarray:
        k = np.arange(m) * (2.0 * math.pi / (m - 1))
        return a - b * np.cos(k) + c * np.cos(2 * k)
    return f


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                layout: Any = None, device: Any = None, pin_memory: bool = False,
                requires_grad: bool = False) -> Tensor:
    """The Hann window."""
    return _window("hann_window", window_length, periodic, _cos_window(0.5, 0.5), dtype,
                   layout, device, pin_memory, requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, pin_memory: bool = False,
                   requires_grad: bool = False) -> Tensor:
    """The Hamming window, ``alpha - beta * cos(2 pi k / (N - 1))``."""
    return _window("hamming_window", window_length, periodic, _cos_window(alpha, beta), dtype,
                   layout, device, pin_memory, requires_grad)


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None,
                    pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The Blackman window."""
    return _window("blackman_window", window_length, periodic, _cos_window(0.42, 0.5, 0.08),
                   dtype, layout, device, pin_memory, requires_grad)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None,
                    pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window."""
    def f(m: int) -> np.ndarray:
        k = np.arange(m) * (2.0 / (m - 1))
        return 1.0 - np.abs(k - 1.0)
    return _window("bartlett_window", window_length, periodic, f, dtype, layout, device,
                   pin_memory, requires_grad)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: Any = None, layout: Any = None, device: Any = None,
                  pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The Kaiser window with shape parameter ``beta``."""
    def f(m: int) -> np.ndarray:
        k = np.arange(m)
        r = 2.0 * k / (m - 1) - 1.0
        return np.i0(beta * np.sqrt(np.clip(1.0 - r * r, 0.0, None))) / np.i0(beta)
    return _window("kaiser_window", window_length, periodic, f, dtype, layout, device,
                   pin_memory, requires_grad)


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """The dot product of two 1-D tensors (conjugating the first, for complex)."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    if input.shape[0] != other.shape[0]:
        n, m = input.shape[0], other.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           "respectively")
    x = input.conj() if getattr(input.dtype, "is_complex", False) else input
    return _sum(_e.mul(x, other))


def _scaled(beta: Any, input: Tensor, alpha: Any, prod: Tensor) -> Tensor:
    """``beta * input + alpha * prod``; ``beta=0`` ignores ``input``'s values (NaN and inf
    included), as torch's addmv, addr, baddbmm and addbmm do."""
    return _e.add(scaled_input(input, beta), prod if alpha == 1 else _e.mul(prod, alpha))


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1
          ) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``."""
    if _ac.state.on:
        input, mat, vec = _ac.cast("addmv", input, mat, vec)
    return _scaled(beta, input, alpha, mv(mat, vec))


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1
         ) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    if _ac.state.on:
        input, vec1, vec2 = _ac.cast("addr", input, vec1, vec2)
    return _scaled(beta, input, alpha, outer(vec1, vec2))


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1, out_dtype: Any = None) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` per batch; ``out_dtype`` as ``mm``'s."""
    if out_dtype is not None:
        input, batch1, batch2 = out_dtype_operands("baddbmm", out_dtype, input, batch1, batch2)
    if _ac.state.on:
        input, batch1, batch2 = _ac.cast("baddbmm", input, batch1, batch2)
    return _scaled(beta, input, alpha, bmm(batch1, batch2))


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
           alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    if batch1.ndim == 3 and batch2.ndim == 3 and batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError("batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if _ac.state.on:
        input, batch1, batch2 = _ac.cast("addbmm", input, batch1, batch2)
    return _scaled(beta, input, alpha, _sum(bmm(batch1, batch2), 0))


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim``; with ``dim=None``, along the first
    dimension of size 3 (torch's deprecated default, with its warning)."""
    if dim is None:
        a, b = (input, other) if input.shape == other.shape else \
            (input.expand(*np.broadcast_shapes(tuple(input.shape), tuple(other.shape))), other)
        dim = next((i for i, s in enumerate(a.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use torch.linalg.cross."
                      "\nThe default value of dim will change to agree with that of "
                      "linalg.cross in a future release.", UserWarning, stacklevel=2)
    return _linalg_cross(input, other, dim=dim)


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of 2-D matrices, left to right (deprecated in torch for
    ``linalg.multi_dot``)."""
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    out = matrices[0]
    for m in matrices[1:]:
        out = mm(out, m)
    return out


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """Reduce ``src`` into ``input`` at ``index`` along ``dim`` with ``reduce`` ("sum",
    "prod", "mean", "amax", "amin"); ``include_self=False`` leaves ``input``'s values out
    where something is scattered. Differentiable for every reduction, with PyTorch's
    gradients (a max / min shares its gradient evenly among equal values).

    Example::

        lucid.zeros(2).scatter_reduce(0, lucid.tensor([0, 0, 1]), lucid.tensor([1., 5., 2.]),
                                      "amax", include_self=False)  # tensor([5., 2.])
    """
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if src.dtype != input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if not input.ndim and index.ndim <= 1:  # a 0-d tensor reduces as a 1-element vector
        return scatter_reduce(input.reshape(1), 0, index.reshape(-1), src.reshape(-1), reduce,
                              include_self=include_self).reshape(())
    d = norm_dim(dim, input.ndim)
    if reduce not in ("sum", "mean"):
        if not _scatter_check("scatter", input, d, index, src):
            return input.clone()  # type: ignore[attr-defined]
        if src.shape != index.shape:
            src = src[tuple(slice(0, n) for n in index.shape)]
        return ScatterReduceHost.apply(input, src, index, d, reduce, include_self)
    hit = scatter_add(zeros_like(input), d, index, _e.add(zeros_like(src), 1)) if \
        index.numel() else zeros_like(input)
    hit = _s.gt(hit, 0)
    base = input if include_self else _s.where(hit, zeros_like(input), input)
    out = scatter_add(base, d, index, src)
    if reduce == "mean":
        cnt = scatter_add(zeros_like(input), d, index, _e.add(zeros_like(src), 1))
        if include_self:
            cnt = _e.add(cnt, 1)
        cnt = _s.where(_s.eq(cnt, 0), _e.add(cnt, 1), cnt)
        out = _e.div(out, cnt) if out.dtype.is_floating_point else \
            _e.div(out, cnt, rounding_mode="floor")
    return out


def _reduce_on_host(be: Any, x: Any, idx: Any, src: Any, d: int, reduce: str,
                    include_self: bool) -> Any:
    """``x`` with ``src`` reduced in at ``idx`` along ``d`` by "prod", "amax" or "amin"
    (numpy's ``ufunc.at``); ``include_self=False`` starts the hit places from the identity."""
    out = np.array(np.asarray(be.to_numpy(x)))  # a copy: written below
    ix = np.asarray(be.to_numpy(idx)).astype(np.int64, copy=False)
    sv = np.asarray(be.to_numpy(src)).astype(out.dtype, copy=False)
    pos = list(np.indices(ix.shape, sparse=True))
    pos[d] = ix
    pos = tuple(pos)
    if not include_self and ix.size:
        if reduce == "prod":
            start: Any = 1
        elif out.dtype.kind == "f":
            start = -np.inf if reduce == "amax" else np.inf
        elif out.dtype.kind == "b":
            start = reduce == "amin"
        else:
            info = np.iinfo(out.dtype)
            start = info.min if reduce == "amax" else info.max
        out[pos] = start
    ufunc = {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce]
    ufunc.at(out, pos, sv)
    return be.from_numpy(np.ascontiguousarray(out))


def _take(be: Any, a: Any, idx: Any, d: int) -> Any:
    """``a`` gathered at ``idx`` along ``d``, reading the index's extent of ``a``."""
    if any(i != d and n < m for i, (n, m) in enumerate(zip(idx.shape, a.shape))):
        a = be.getitem(a, tuple(slice(None) if i == d else slice(0, n)
                                for i, n in enumerate(idx.shape)))
    return be.take_along_axis(a, idx, d)


class ScatterReduceHost(Op):
    """``scatter_reduce`` by "prod", "amax" or "amin", computed on the host, with PyTorch's
    gradients (its scatter_reduce_backward): a max / min's gradient is shared evenly among the
    values equal to it (the input's own included), a product's is the product of the others
    (a single zero among them counted exactly); with ``include_self=False`` the input gets none
    where something was scattered."""

    def forward(self, x, src, idx, axis, reduce, include_self):
        self.axis, self.reduce, self.include_self = axis, reduce, include_self
        out = _reduce_on_host(self.be, x, idx, src, axis, reduce, include_self)
        self.saved = (x, src, idx, out)
        return out

    def backward(self, g):
        be, d = self.be, self.axis
        x, src, idx, out = self.saved
        dt = be.dtype_of(x)
        if self.reduce == "prod":
            masked_x = be.where(be.eq(x, 0), 1, x)
            gx = be.div(be.mul(g, _reduce_on_host(be, masked_x, idx, src, d, "prod",
                                                  self.include_self)), masked_x)
            src_zero = be.eq(src, 0)
            zeros_at = _take(be, be.scatter_add(tuple(x.shape), idx, be.astype(src_zero, dt), d),
                             idx, d)
            single = be.logical_and(src_zero, be.eq(zeros_at, 1))
            others = _reduce_on_host(be, x, idx, be.where(single, 1, src), d, "prod",
                                     self.include_self)
            gs = be.where(single, _take(be, be.mul(g, others), idx, d),
                          be.div(_take(be, be.mul(g, out), idx, d),
                                 be.where(src_zero, 1, src)))
        else:
            x_is = be.astype(be.eq(x, out), dt)
            src_is = be.astype(be.eq(src, _take(be, out, idx, d)), dt)
            share = be.div(g, be.add(x_is, be.scatter_add(tuple(x.shape), idx, src_is, d)))
            gx = be.mul(x_is, share)
            gs = be.mul(src_is, _take(be, share, idx, d))
        if not self.include_self:
            gx = be.scatter(gx, idx, 0, d)
        return gx, gs, None, None, None, None


def index_put(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``input[indices] = values`` (``+=`` with ``accumulate``)."""
    out = input.clone()
    return index_put_(out, indices, values, accumulate)


def index_put_(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """``input[indices] = values`` in place (``+=`` with ``accumulate``, duplicates summed)."""
    idx = tuple(indices)
    if not accumulate:
        setitem(input, idx, values)
        return input
    flat = input.numel()
    lin = arange(flat, device=input.device).reshape(tuple(input.shape))[idx].reshape(-1)
    v = values if isinstance(values, Tensor) else tensor(values, dtype=input.dtype,
                                                         device=input.device)
    v = v.expand(*lin.shape) if v.numel() == 1 else v.reshape(-1)

    def add_at(t: Tensor) -> Tensor:
        return scatter_add(t.reshape(-1), 0, lin, v.to(t.dtype)).reshape(tuple(t.shape))

    return inplace(input, add_at, (v,))


def fill_diagonal_(input: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Fill the main diagonal in place (all dims equal for ndim > 2; ``wrap`` continues
    below a tall matrix every ``cols + 1`` rows, as numpy)."""
    if input.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if input.ndim > 2 and len(set(input.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    rows, cols = input.shape[0], input.shape[1]
    flat = input.numel()
    if input.ndim == 2:
        step = cols + 1
        end = flat if wrap or rows <= cols else cols * cols
    else:
        step = sum(input.shape[0] ** i for i in range(input.ndim))
        end = flat
    lin = arange(0, min(end, flat), step, device=input.device)

    def fill(t: Tensor) -> Tensor:
        vals = _e.add(zeros_like(lin, dtype=t.dtype), fill_value)
        return scatter(t.reshape(-1), 0, lin, vals).reshape(tuple(t.shape))

    return inplace(input, fill)

