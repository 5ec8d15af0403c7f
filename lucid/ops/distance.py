"""Distances between rows: ``cosine_similarity``, ``pairwise_distance`` and ``pdist``,
composed from elementwise ops and norms."""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from . import elementwise as _e
from . import reduce as _r
from . import select as _sel
from . import shape as _s
from ._util import broadcast_error, cast
from .creation import tensor

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def _float_pair(x1: Tensor, x2: Tensor) -> tuple[Tensor, Tensor]:
    d = _dtype.result_type(x1, x2)
    if not d.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_dtype.torch_name(d)}")
    return cast(x1, d), cast(x2, d)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcast together):
    ``sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps))``.

    Example::

        F.cosine_similarity(lucid.tensor([[1.0, 0.0]]), lucid.tensor([[1.0, 1.0]]))  # [0.7071]
    """
    x1, x2 = _float_pair(x1, x2)
    err = broadcast_error(x1, x2)
    if err is not None:
        raise err
    x1, x2 = _s.broadcast_tensors(x1, x2)
    n1 = _sel.clamp(_r.norm(x1, 2, dim, keepdim=True), eps, None)
    n2 = _sel.clamp(_r.norm(x2, 2, dim, keepdim=True), eps, None)
    return _r.sum(_e.mul(_e.div(x1, n1), _e.div(x2, n2)), dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dim (broadcast together).

    Example::

        F.pairwise_distance(lucid.zeros(2, 3), lucid.ones(2, 3))     # [1.7321, 1.7321]
    """
    # torch's ``x1 - x2 + eps``: integer operands promote to the default float with eps
    diff = _e.add(_e.sub(x1, x2), eps)
    if diff.ndim == 0:
        out = _r.norm(_s.reshape(diff, 1), p, 0, keepdim=keepdim)
        return out if keepdim else _s.reshape(out, ())
    return _r.norm(diff, p, -1, keepdim=keepdim)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm distance between every pair of rows of an (N, M) input: the upper
    triangle (diagonal excluded) of ``cdist(input, input)``, row by row, N * (N - 1) / 2
    values. For ``p = inf`` every coordinate that attains the maximum gets the gradient, as
    in torch.

    Example::

        F.pdist(lucid.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))   # [5.0, 1.0, 4.2426]
    """
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    i, j = np.triu_indices(int(input.shape[0]), 1)
    dev = input.device
    diff = _e.sub(input[tensor(i, device=dev)], input[tensor(j, device=dev)])
    if p != math.inf:
        return _r.norm(diff, p, 1)
    a = _e.abs(diff)
    top = _r.amax(a, 1, keepdim=True).detach()
    hits = _r.sum(_e.mul(a, _sel.eq(a, top).to(a.dtype)), 1)
    return _e.add(_s.reshape(top, -1), _e.sub(hits, hits.detach()))
