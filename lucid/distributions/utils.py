"""Helpers shared by the distributions, as ``torch.distributions.utils``: broadcasting of
parameters, probability / logit conversions and the ``lazy_property`` descriptor."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .. import _dtype
from .. import ops as _ops
from .._tensor import Size, Tensor
from ..autograd import enable_grad
from ..ops import activation as _act

__all__ = [
    "broadcast_all", "clamp_probs", "euler_constant", "finfo", "lazy_property",
    "logits_to_probs", "probs_to_logits", "tril_matrix_to_vec", "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def finfo(d: _dtype.dtype) -> np.finfo:
    """Machine limits of a float dtype (``eps``, ``tiny``, ``max``), as ``torch.finfo``."""
    return np.finfo(d.np)


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Broadcast tensors and numbers to one shape; numbers become tensors of the first
    tensor's dtype and device (the default dtype when all are numbers).

    Example::

        loc, scale = broadcast_all(lucid.zeros(3), 1.0)
    """
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "lucid.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        ref = next((v for v in values if isinstance(v, Tensor)), None)
        dtype = _dtype.get_default_dtype() if ref is None else ref.dtype
        device = None if ref is None else ref.device
        values = tuple(v if isinstance(v, Tensor) else
                       _ops.tensor(v, dtype=dtype, device=device) for v in values)
    return tuple(_ops.broadcast_tensors(*values))


def _standard_normal(shape: tuple[int, ...], dtype: _dtype.dtype, device: Any) -> Tensor:
    return _ops.randn(*shape, dtype=dtype, device=device)


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the ``dim`` rightmost dims of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped into ``[eps, 1 - eps]`` for its dtype."""
    eps = float(finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits: a sigmoid when ``is_binary``, else a softmax over the last
    dim."""
    if is_binary:
        return _ops.sigmoid(logits)
    return _act.softmax(logits, dim=-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from probabilities (clamped away from 0 and 1 first): log-odds when
    ``is_binary``, else log-probabilities."""
    ps = clamp_probs(probs)
    if is_binary:
        return ps.log() - (-ps).log1p()
    return ps.log()


class lazy_property:  # noqa: N801  (named as torch's)
    """A property computed on first access and then stored on the instance (with grad
    enabled, so a parameter derived lazily keeps its graph).

    Example::

        @lazy_property
        def logits(self):
            return probs_to_logits(self.probs)
    """

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _batch_shape_of(first: Tensor, *raw: Any) -> Size:
    """The batch shape of parameters given as ``raw`` and broadcast to ``first``'s shape:
    empty when every one was a plain number."""
    return Size() if all(isinstance(r, numbers.Number) for r in raw) else Size(tuple(first.shape))


def _size(shape: Any) -> Size:
    """A ``Size`` from a shape-like argument (tuple, list, Size or int)."""
    if isinstance(shape, int):
        return Size((shape,))
    return Size(tuple(int(s) for s in shape))


def _tril_flat_index(n: int, diag: int) -> np.ndarray:
    """Flat positions (row-major) of the entries ``j <= i + diag`` of an ``n x n`` matrix."""
    rows, cols = np.nonzero(np.arange(n)[None, :] < np.arange(n)[:, None] + (diag + 1))
    return rows * n + cols


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower-triangular entries (``j <= i + diag``) of a batch of ``D x D`` matrices, in
    row order.

    Example::

        tril_matrix_to_vec(lucid.eye(3), diag=-1)   # the 3 entries below the diagonal
    """
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    idx = _ops.tensor(_tril_flat_index(n, diag), device=mat.device)
    return mat.reshape(tuple(mat.shape[:-2]) + (n * n,))[..., idx]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """A batch of ``D x D`` lower-triangular matrices filled in row order from ``vec``
    (the inverse of ``tril_matrix_to_vec``).

    Example::

        vec_to_tril_matrix(lucid.tensor([1.0, 2.0, 3.0]))   # [[1, 0], [2, 3]]
    """
    m = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if abs(round(n) - n) > float(np.finfo(vec.dtype.np).eps):
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    source = np.full(n * n, m, dtype=np.int64)  # position m reads the appended zero
    source[_tril_flat_index(n, diag)] = np.arange(m)
    padded = _ops.cat([vec, vec.new_zeros(tuple(vec.shape[:-1]) + (1,))], -1)
    idx = _ops.tensor(source, device=vec.device)
    return padded[..., idx].reshape(tuple(vec.shape[:-1]) + (n, n))
