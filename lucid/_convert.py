"""Data to backend arrays, and arrays between backends: the one owner of both.

``to_array`` takes nested sequences, numbers, numpy arrays, objects with ``__array__`` (a torch
tensor too) and lucid tensors. ``transfer`` moves an array from one backend to another; it is
the one place that pairs ``to_numpy`` with ``from_numpy``. Every backend converts to and from
numpy, so a move goes through a host array. Whether that already copies depends on the pair:
the numpy-backed backends ("cpu", "numpy") hand arrays through unchanged, the "gpu" backend
copies on the way in and out; ``copy`` states what the caller needs, and a copy is made only
where the pair would otherwise share memory.

A leaf module: it imports no other part of lucid but ``_dtype`` (backends are passed in), so
``Tensor(...)``, the backends and the creation ops share it without an import cycle. A lucid
tensor is recognised by its class's ``_lucid_tensor`` marker."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dtype

__all__ = ["is_tensor", "to_array", "transfer"]


def is_tensor(x: Any) -> bool:
    """Whether ``x`` is a lucid tensor (Parameter and Buffer included)."""
    return getattr(type(x), "_lucid_tensor", False)


def _host_array(data: Any) -> np.ndarray:
    """A numpy view of ``data``: nested lists, numbers, numpy or anything with __array__."""
    if isinstance(data, np.ndarray):
        return data
    if hasattr(data, "detach") and hasattr(data, "cpu") and not is_tensor(data):
        data = data.detach().cpu()  # e.g. a torch tensor
        if str(getattr(data, "dtype", "")) == "torch.bfloat16":  # numpy can't read it
            return data.float().numpy().astype(_dtype.bfloat16.np)  # exact both ways
    if isinstance(data, (list, tuple)):
        _check_depth(data)
        if any(is_tensor(x) for x in _flat(data)):
            _check_depth(data, everywhere=True)
            data = _unwrap(data)
    try:
        return np.asarray(data)
    except ValueError:
        err = _ragged_error(data)
        if err is not None:
            raise err from None
        raise


_MAX_DIMS = 64  # numpy's limit on dimensions (PyTorch's is 200)


def _check_depth(data: Any, everywhere: bool = False) -> None:
    """PyTorch's error for sequences nested deeper than a tensor can have dimensions: read
    down the first elements (numpy refuses anything deeper elsewhere as ragged), or
    ``everywhere`` before a walk that recurses."""
    stack = [(data, 1)]
    while stack:
        x, depth = stack.pop()
        while isinstance(x, (list, tuple)):
            if depth > _MAX_DIMS:
                raise ValueError(f"too many dimensions '{type(data).__name__}' (a tensor has "
                                 f"at most {_MAX_DIMS} dimensions here)")
            if everywhere:
                stack.extend((e, depth + 1) for e in x[1:] if isinstance(e, (list, tuple)))
            x = x[0] if len(x) else None
            depth += 1


def _ragged_error(data: Any) -> Exception | None:
    """PyTorch's message for nested sequences of uneven lengths (or a sequence where a
    number belongs)."""
    shape = []
    x = data
    while isinstance(x, (list, tuple)):
        shape.append(len(x))
        x = x[0] if len(x) else None

    def walk(x: Any, dim: int) -> Exception | None:
        if dim == len(shape):
            if isinstance(x, (list, tuple)):
                return TypeError(f"must be real number, not {type(x).__name__}")
            return None
        if not isinstance(x, (list, tuple)) or len(x) != shape[dim]:
            got = len(x) if isinstance(x, (list, tuple)) else type(x).__name__
            return ValueError(f"expected sequence of length {shape[dim]} at dim {dim} "
                              f"(got {got})")
        for e in x:
            r = walk(e, dim + 1)
            if r is not None:
                return r
        return None

    return walk(data, 0)


def _flat(data: Any) -> Any:
    """The leaves of nested lists and tuples, without recursion (any depth)."""
    stack = [iter(data)]
    while stack:
        for x in stack[-1]:
            if isinstance(x, (list, tuple)):
                stack.append(iter(x))
                break
            yield x
        else:
            stack.pop()


def _unwrap(data: Any) -> Any:
    if isinstance(data, (list, tuple)):
        return [_unwrap(x) for x in data]
    if is_tensor(data):
        return data.detach().numpy()
    return data


def _infer_dtype(data: Any, arr: np.ndarray) -> _dtype.dtype:
    if isinstance(data, np.ndarray) or (hasattr(data, "__array__") and not isinstance(
            data, (list, tuple))):
        return _dtype.from_numpy_dtype(arr.dtype)
    kind = arr.dtype.kind
    if kind == "b":
        return _dtype.bool_
    if kind in "iu":
        return _dtype.int64
    if kind == "f":
        return _dtype.get_default_dtype()
    if kind == "c":
        return _dtype.get_default_dtype().to_complex()
    if arr.size == 0:
        return _dtype.get_default_dtype()
    raise TypeError(f"can't convert data of type {type(data).__name__} (numpy kind "
                    f"{arr.dtype}) to a tensor")


def to_array(data: Any, dtype: Any, be: Any, copy: bool = True) -> Any:
    """``data`` (a tensor, numpy array, nested sequence or number) as an array of backend
    ``be`` in ``dtype`` (inferred as PyTorch does when None); ``copy=False`` may share a
    numpy array's memory."""
    if is_tensor(data):
        d = data.dtype if dtype is None else _dtype.to_dtype(dtype)
        arr, src = data._data, data._be
        if d is not data.dtype:  # cast where the data is: a fresh array, so no second copy
            arr, copy = src.astype(arr, d), False
        return transfer(arr, src, be, copy)
    arr = _host_array(data)
    d = _infer_dtype(data, arr) if dtype is None else _dtype.to_dtype(dtype)
    if arr.dtype.kind == "O":
        raise TypeError(f"can't convert data of type {type(data).__name__} to a tensor")
    if d in _dtype.HALF and arr.dtype == np.float64:  # rounded twice, as torch does
        arr = arr.astype(np.float32)
    out = np.array(arr, dtype=d.np, order="C") if copy else np.asarray(arr, dtype=d.np)
    return be.from_numpy(out)


def transfer(arr: Any, src: Any, dst: Any, copy: bool) -> Any:
    """``arr`` (an array of backend ``src``) as an array of backend ``dst``, same values and
    dtype.

    ``copy=True``: the result never shares memory with ``arr`` (a new leaf's storage).
    ``copy=False``: it may share it where both backends hold numpy arrays (a differentiable
    device move, an index used at once).

    Example::

        gpu = get_backend("gpu")
        y = transfer(x, get_backend("cpu"), gpu, copy=False)
    """
    if src is dst:
        return src.copy(arr) if copy else arr
    host = src.to_numpy(arr)
    out = dst.from_numpy(host)
    if copy and isinstance(out, np.ndarray) and isinstance(arr, np.ndarray) \
            and np.may_share_memory(out, arr):
        out = dst.from_numpy(np.array(host))
    return out
