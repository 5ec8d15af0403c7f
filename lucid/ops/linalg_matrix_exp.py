"""``lucid.linalg.matrix_exp``: the matrix exponential by scaling and squaring a degree-18
Taylor polynomial (evaluated by Paterson-Stockmeyer in 7 products), batched over leading
dims; each matrix of a batch gets its own number of squarings.

It is composed of ``matmul`` alone (as PyTorch's own Taylor-based kernel), so it is
differentiable to any order and runs on every device. (A Padé approximant would need a
``solve``, whose backward here cannot be differentiated again.)
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from ._util import wrap
from .creation import eye
from .linalg_base import check_float
from .matmul import matmul
from .select import where

__all__ = ["matrix_exp"]

_DEGREE = 18
_COEF = tuple(1.0 / math.factorial(k) for k in range(_DEGREE + 1))
# NOTE: with ||X||_1 <= 1 the Taylor remainder ||X||^19 / 19! * 20/19 is below 1e-17
_THETA = 1.0
_BLOCK = 4  # Paterson-Stockmeyer: X^2..X^4, then 4 Horner steps in X^4


def _squarings(A: Tensor) -> np.ndarray:
    """The number of squarings per matrix: ``ceil(log2(||A||_1 / theta))``, at least 0."""
    a = np.asarray(A._be.to_numpy(A._data))
    norm = np.abs(a).sum(-2).max(-1) if a.shape[-1] else np.zeros(a.shape[:-2])
    with np.errstate(all="ignore"):
        s = np.ceil(np.log2(norm / _THETA))
    return np.where(np.isfinite(s) & (s > 0), s, 0).astype(np.int64)


def matrix_exp(input: Tensor) -> Tensor:
    """The matrix exponential ``exp(input) = sum_k input^k / k!`` of a square matrix (or batch).

    Example::

        lucid.linalg.matrix_exp(lucid.zeros(2, 2))                      # the identity
        lucid.linalg.matrix_exp(lucid.tensor([[0.0, 1.0], [-1.0, 0.0]]))  # a rotation by 1 rad
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"linalg_matrix_exp(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    if input.ndim < 2 or input.shape[-1] != input.shape[-2]:
        rows = input.shape[-2] if input.ndim >= 2 else 1
        raise RuntimeError("linalg.matrix_exp: A must be batches of square matrices, but they "
                           f"are {rows} by {input.shape[-1] if input.ndim else 1} matrices")
    check_float(input, "linalg.matrix_exp")
    n = input.shape[-1]
    if input.numel() == 0:
        return input.clone()  # type: ignore[attr-defined]
    if n == 1:
        return input.exp()  # type: ignore[attr-defined]
    s = _squarings(input)
    be = input._be
    top = int(s.max()) if s.size else 0
    X = input
    if top:
        scale = wrap(be.from_numpy(np.require((0.5 ** s)[..., None, None].astype(input.dtype.np),
                                              requirements="C")), be)
        X = input * scale
    eye_ = eye(n, dtype=input.dtype, device=input.device)
    powers = [eye_, X]
    for _ in range(2, _BLOCK + 1):
        powers.append(matmul(powers[-1], X))
    Xs = powers[_BLOCK]

    def block(j: int) -> Tensor:
        terms = [powers[i] * _COEF[j * _BLOCK + i]
                 for i in range(_BLOCK) if j * _BLOCK + i <= _DEGREE]
        out = terms[0]
        for t in terms[1:]:
            out = out + t
        return out

    last = _DEGREE // _BLOCK
    E = block(last)
    for j in range(last - 1, -1, -1):
        E = matmul(E, Xs) + block(j)
    for j in range(top):
        if (s > j).all():
            E = matmul(E, E)
        else:
            mask = wrap(be.from_numpy(np.require((s > j)[..., None, None], requirements="C")), be)
            E = where(mask, matmul(E, E), E)
    return E

