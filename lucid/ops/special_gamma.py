"""The multivariate log-gamma function ``mvlgamma`` (``torch.mvlgamma``,
``torch.special.multigammaln``), composed from ``lgamma`` so its gradients are lgamma's."""

from __future__ import annotations

import math

from .._tensor import Tensor
from . import elementwise as _e
from . import select as _s
from .math_extra import _as_float
from .special import lgamma

__all__ = ["mvlgamma"]


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """``sum_{j<p} lgamma(x - j/2) + p (p - 1) / 4 log(pi)``, elementwise; every element
    must exceed ``(p - 1) / 2``.

    Example::

        lucid.mvlgamma(lucid.tensor([2.5]), 2)
    """
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _as_float(input)
    if x.numel() and not bool(_s.gt(x, (p - 1) / 2).all()):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    out = _e.add(lgamma(x), p * (p - 1) / 4 * math.log(math.pi))
    for j in range(1, p):
        out = _e.add(out, lgamma(_e.sub(x, j / 2)))
    return out
