"""Vector and matrix norms of ``lucid.linalg``: ``vector_norm``, ``matrix_norm`` and the
dispatching ``norm``, composed from differentiable reductions and ``svdvals``."""

from __future__ import annotations

import math
from typing import Any

from .. import _dtype
from .._dims import norm_dim
from .._tensor import Tensor
from ._util import cast
from .linalg_base import check_float
from .linalg_decomp import svdvals
from .reduce import Norm, amax, amin
from .reduce import sum as _sum

__all__ = ["vector_norm", "matrix_norm", "norm"]

_MATRIX_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)


def _dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims:
        return None
    out = tuple(norm_dim(d, ndim) for d in dims)
    if len(set(out)) != len(out):
        raise RuntimeError(f"dim {out[0]} appears multiple times in the list of dims")
    return tuple(sorted(out))


def _cast_for(x: Tensor, dtype: Any, name: str) -> Tensor:
    check_float(x, name, allow_complex=True)
    if dtype is not None:
        d = _dtype.to_dtype(dtype)
        if d is not x.dtype:
            x = cast(x, d)
    return x


def _mag(x: Tensor) -> Tensor:
    """``|x|`` for a complex tensor (the norms of the moduli), ``x`` itself otherwise."""
    return x.abs() if x.dtype.is_complex else x  # type: ignore[attr-defined]


def vector_norm(input: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """The vector ``ord``-norm over ``dim`` (all elements when None): ``sum(|input|^ord)^(1/ord)``,
    ``inf`` the largest ``|input|``, ``-inf`` the smallest, ``0`` the count of nonzeros.

    Example::

        lucid.linalg.vector_norm(lucid.tensor([3.0, 4.0]))      # tensor(5.)
    """
    if isinstance(ord, str) or isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError("linalg_vector_norm(): argument 'ord' must be Number, not "
                        f"{type(ord).__name__}")
    input = _mag(_cast_for(input, dtype, "linalg.vector_norm"))
    axes = _dims(dim, input.ndim)
    if axes is None and keepdim:
        axes = tuple(range(input.ndim))
    return Norm.apply(input, float(ord), axes, keepdim)


def _move_last(A: Tensor, d0: int, d1: int) -> Tensor:
    return A.movedim((d0, d1), (-2, -1))  # type: ignore[attr-defined]


def matrix_norm(input: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """A matrix norm over the two dims ``dim``: ``"fro"`` (Frobenius), ``"nuc"`` (sum of the
    singular values), ``2`` / ``-2`` (largest / smallest singular value), ``1`` / ``-1``
    (largest / smallest absolute column sum), ``inf`` / ``-inf`` (absolute row sums).

    Example::

        lucid.linalg.matrix_norm(lucid.eye(3), "nuc")      # tensor(3.)
    """
    if input.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    input = _cast_for(input, dtype, "linalg.matrix_norm")
    if isinstance(ord, bool) or not any(
            ord == o and isinstance(ord, str) == isinstance(o, str) for o in _MATRIX_ORDS):
        shown = ord if isinstance(ord, str) else (int(ord) if isinstance(ord, (int, float))
                                                 and float(ord).is_integer() else ord)
        raise RuntimeError(f"linalg.matrix_norm: Order {shown} not supported.")
    dims = tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {list(dims)}")
    d0, d1 = norm_dim(dims[0], input.ndim), norm_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, "
                           f"{dims[1]})")
    if ord == "fro":
        return Norm.apply(_mag(input), 2.0, tuple(sorted((d0, d1))), keepdim)
    if ord in ("nuc", 2, -2):
        s = svdvals(_move_last(input, d0, d1))
        out = _sum(s, -1) if ord == "nuc" else amax(s, -1) if ord == 2 else amin(s, -1)
        if keepdim:
            for d in sorted((d0, d1)):
                out = out.unsqueeze(d)  # type: ignore[attr-defined]
        return out
    sum_dim, max_dim = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = _sum(input.abs(), sum_dim, keepdim=True)  # type: ignore[attr-defined]
    out = amax(sums, max_dim, keepdim=True) if ord > 0 else amin(sums, max_dim, keepdim=True)
    return out if keepdim else out.squeeze((d0, d1))  # type: ignore[attr-defined]


def norm(input: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """A vector or matrix norm: a matrix norm when ``ord`` is a string or ``dim`` has two
    dims (or ``dim`` is None, ``ord`` given and input is 2-D); a vector norm otherwise. With
    neither ``ord`` nor ``dim``, the 2-norm of all elements.

    Example::

        lucid.linalg.norm(lucid.ones(2, 2))          # tensor(2.)
        lucid.linalg.norm(lucid.ones(2, 2), 1)       # tensor(2.), the max column sum
    """
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(input, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        if len(dims) == 2:
            return matrix_norm(input, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        raise RuntimeError("linalg.norm: If dim is specified, it must be of length 1 or 2. "
                           f"Got {list(dims)}")
    if ord is None:
        return vector_norm(input, 2, None, keepdim, dtype=dtype)
    if input.ndim not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {input.ndim}D.")
    if input.ndim == 1:
        return vector_norm(input, ord, None, keepdim, dtype=dtype)
    return matrix_norm(input, ord, (-2, -1), keepdim, dtype=dtype)
