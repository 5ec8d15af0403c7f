"""``CosineSimilarity`` and ``PairwiseDistance``."""

from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from ..module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """Cosine similarity of ``x1`` and ``x2`` along ``dim``.

    Example::

        nn.CosineSimilarity(dim=1)(lucid.randn(4, 8), lucid.randn(4, 8)).shape   # [4]
    """

    __constants__ = ["dim", "eps"]

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """The similarities.

        Example::

            cos(x1, x2)
        """
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``p``-norm of ``x1 - x2 + eps`` over the last dim.

    Example::

        nn.PairwiseDistance(p=1)(lucid.randn(4, 8), lucid.randn(4, 8)).shape   # [4]
    """

    __constants__ = ["norm", "eps", "keepdim"]

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """The distances.

        Example::

            dist(x1, x2)
        """
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
