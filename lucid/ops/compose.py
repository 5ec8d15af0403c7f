"""More PyTorch conveniences, composed from existing ops (so they are differentiable on every
device): addcmul, addcdiv, median, Tensor.unfold (sliding windows), Tensor.stride."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from .._dims import norm_dim
from .._tensor import Tensor
from .creation import arange
from .elementwise import add, div, mul
from .index import sort

__all__ = ["addcmul", "addcdiv", "median"]

median_return = namedtuple("median_return", ["values", "indices"])


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``.

    Example::

        lucid.addcmul(p, g, g, value=0.5)
    """
    prod = mul(tensor1, tensor2)
    return add(input, prod if value == 1 else mul(prod, value))


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 / tensor2``.

    Example::

        lucid.addcdiv(p, m, v.sqrt() + 1e-8, value=-lr)
    """
    q = div(tensor1, tensor2)
    return add(input, q if value == 1 else mul(q, value))


def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median (PyTorch's definition): of all elements, or ``(values, indices)``
    along ``dim``.

    Example::

        lucid.median(lucid.tensor([3.0, 1.0, 2.0, 4.0]))      # tensor(2.)
    """
    if dim is None:
        flat = input.reshape(-1)  # type: ignore[attr-defined]
        if flat.shape[0] == 0:
            raise IndexError("median() input tensor cannot be empty")
        v, _ = sort(flat, 0)
        return v[(flat.shape[0] - 1) // 2]
    d = norm_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if n == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    if not input.ndim:
        return median_return(input.clone(), arange(1).reshape(()))  # type: ignore[attr-defined]
    v, i = sort(input, d)
    k = (n - 1) // 2
    sl = (slice(None),) * d + (slice(k, k + 1) if keepdim else k,)
    return median_return(v[sl], i[sl])


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


def stride(self: Tensor, dim: int | None = None) -> Any:
    """Element strides of this tensor's layout (``torch.Tensor.stride``).

    Example::

        lucid.zeros(2, 3).stride()       # (3, 1)
    """
    shape = tuple(self.shape)
    st = []
    acc = 1
    for s in reversed(shape):
        st.append(acc)
        acc *= max(s, 1)
    contiguous = tuple(reversed(st))
    arr = self._data
    strides = getattr(arr, "strides", None)
    if strides is not None and getattr(arr, "itemsize", 0):
        contiguous = tuple(s // arr.itemsize for s in strides)
    return contiguous if dim is None else contiguous[norm_dim(dim, len(shape))]
