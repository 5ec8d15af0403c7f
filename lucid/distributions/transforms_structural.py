"""Transforms that rearrange or combine other transforms, as in
``torch.distributions.transforms``: ``IndependentTransform``, ``ReshapeTransform``,
``CatTransform`` and ``StackTransform``."""

from __future__ import annotations

import math
from typing import Any

from .. import ops as _ops
from .._tensor import Size, Tensor
from . import constraints
from .transform_base import Transform
from .utils import _sum_rightmost, lazy_property

__all__ = ["CatTransform", "IndependentTransform", "ReshapeTransform", "StackTransform"]


class IndependentTransform(Transform):
    """Wraps ``base_transform`` so that ``reinterpreted_batch_ndims`` more rightmost dims
    count as one event: values pass through unchanged, and ``log_abs_det_jacobian`` sums
    over those dims.

    Example::

        t = IndependentTransform(ExpTransform(), 1)
    """

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self) -> Any:
        return self.base_transform.sign

    def _call(self, x: Tensor) -> Tensor:
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y: Tensor) -> Tensor:
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        result = self.base_transform.log_abs_det_jacobian(x, y)
        return _sum_rightmost(result, self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")

    def forward_shape(self, shape: Any) -> Any:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost ``in_shape`` part of a tensor to ``out_shape`` (same number of
    elements); the Jacobian is the identity.

    Example::

        t = ReshapeTransform((4,), (2, 2))
    """

    bijective = True

    def __init__(self, in_shape: Any, out_shape: Any, cache_size: int = 0) -> None:
        self.in_shape = Size(tuple(in_shape))
        self.out_shape = Size(tuple(out_shape))
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x: Tensor) -> Tensor:
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch_shape + tuple(self.out_shape))

    def _inverse(self, y: Tensor) -> Tensor:
        batch_shape = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch_shape + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return _ops.zeros(batch_shape, dtype=x.dtype, device=x.device)

    def forward_shape(self, shape: Any) -> Any:
        return self._reshaped(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self._reshaped(shape, self.out_shape, self.in_shape)

    @staticmethod
    def _reshaped(shape: Any, old: Size, new: Size) -> Size:
        shape = tuple(shape)
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if shape[cut:] != tuple(old):
            raise ValueError(f"Shape mismatch: expected {Size(shape[cut:])} but got {old}")
        return Size(shape[:cut] + tuple(new))


def _check_dim(t: Tensor, dim: int, size: int, what: str) -> None:
    if not -t.dim() <= dim < t.dim():
        raise IndexError(f"dim {dim} out of range for {what} with {t.dim()} dimensions")
    if t.shape[dim] != size:
        raise ValueError(f"{what}.size({dim}) = {t.shape[dim]} must equal {size}")


def _with_cache_each(tseq: Any, cache_size: int) -> list[Transform]:
    """The transforms of ``tseq`` (each checked to be one), with ``cache_size`` when it is
    not 0."""
    if not all(isinstance(t, Transform) for t in tseq):
        raise TypeError("every element of tseq must be a Transform")
    if cache_size:
        tseq = [t.with_cache(cache_size) for t in tseq]
    return list(tseq)


class CatTransform(Transform):
    """Applies the transforms ``tseq`` to consecutive slices of ``lengths`` along ``dim``,
    as ``cat`` joins them.

    Example::

        t = CatTransform([ExpTransform(), identity_transform], dim=0, lengths=[10, 10])
    """

    transforms: list[Transform]

    def __init__(self, tseq: Any, dim: int = 0, lengths: Any = None,
                 cache_size: int = 0) -> None:
        transforms = _with_cache_each(tseq, cache_size)
        super().__init__(cache_size=cache_size)
        self.transforms = transforms
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError(f"lengths ({len(self.lengths)}) must match transforms "
                             f"({len(self.transforms)})")
        self.dim = dim

    @lazy_property
    def event_dim(self) -> int:  # type: ignore[override]
        """The largest event dim of the parts."""
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self) -> int:
        """The total length along ``dim``."""
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _map(self, z: Tensor, inverse: bool) -> Tensor:
        _check_dim(z, self.dim, self.length, "y" if inverse else "x")
        out = []
        start = 0
        for trans, length in zip(self.transforms, self.lengths):
            part = z.narrow(self.dim, start, length)
            out.append(trans.inv(part) if inverse else trans(part))
            start = start + length
        return _ops.cat(out, self.dim)

    def _call(self, x: Tensor) -> Tensor:
        return self._map(x, False)

    def _inverse(self, y: Tensor) -> Tensor:
        return self._map(y, True)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        _check_dim(x, self.dim, self.length, "x")
        _check_dim(y, self.dim, self.length, "y")
        terms = []
        start = 0
        for trans, length in zip(self.transforms, self.lengths):
            term = trans.log_abs_det_jacobian(x.narrow(self.dim, start, length),
                                              y.narrow(self.dim, start, length))
            if trans.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - trans.event_dim)
            terms.append(term)
            start = start + length
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        if dim < 0:
            return _ops.cat(terms, dim)
        total: Any = 0
        for term in terms:
            total = total + term
        return total

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Applies the transforms ``tseq`` to the slices along ``dim``, as ``stack`` joins them.

    Example::

        t = StackTransform([ExpTransform(), identity_transform], dim=1)
    """

    transforms: list[Transform]

    def __init__(self, tseq: Any, dim: int = 0, cache_size: int = 0) -> None:
        transforms = _with_cache_each(tseq, cache_size)
        super().__init__(cache_size=cache_size)
        self.transforms = transforms
        self.dim = dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z: Tensor, what: str) -> list[Tensor]:
        _check_dim(z, self.dim, len(self.transforms), what)
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _call(self, x: Tensor) -> Tensor:
        return _ops.stack([t(xs) for xs, t in zip(self._slice(x, "x"), self.transforms)],
                          self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        return _ops.stack([t.inv(ys) for ys, t in zip(self._slice(y, "y"), self.transforms)],
                          self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        terms = [t.log_abs_det_jacobian(xs, ys) for xs, ys, t in
                 zip(self._slice(x, "x"), self._slice(y, "y"), self.transforms)]
        return _ops.stack(terms, self.dim)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
