"""Loss modules over the margin, embedding, likelihood and CTC losses of
``lucid.nn.functional``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._tensor import Tensor
from .. import functional as F
from .distance import PairwiseDistance
from .loss import _Loss, _WeightedLoss

__all__ = [
    "TripletMarginLoss", "TripletMarginWithDistanceLoss", "MarginRankingLoss",
    "CosineEmbeddingLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss",
    "MultiMarginLoss", "MultiLabelMarginLoss", "GaussianNLLLoss", "PoissonNLLLoss", "CTCLoss",
]


class TripletMarginLoss(_Loss):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with the ``p``-norm pairwise distance.

    Example::

        nn.TripletMarginLoss(margin=0.5)(anchor, positive, negative)
    """

    __constants__ = ["margin", "p", "eps", "swap", "reduction"]

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:  # type: ignore[override]
        """Compute the loss.

        Example::

            loss_fn(anchor, positive, negative)
        """
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """The triplet margin loss with any ``distance_function`` (default pairwise distance).

    Example::

        nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(p=1))(a, p, n)
    """

    __constants__ = ["margin", "swap", "reduction"]

    def __init__(self, *, distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                 margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        self.distance_function = distance_function if distance_function is not None \
            else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:  # type: ignore[override]
        """Compute the loss.

        Example::

            loss_fn(anchor, positive, negative)
        """
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class _PairLoss(_Loss):
    """``forward(input1, input2, target)`` losses with a ``margin``."""

    _default_margin = 0.0

    def __init__(self, margin: float | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = self._default_margin if margin is None else margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:  # type: ignore[override]
        """Compute the loss.

        Example::

            loss_fn(x1, x2, target)
        """
        return self._fn(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MarginRankingLoss(_PairLoss):
    """``max(0, -target * (input1 - input2) + margin)``.

    Example::

        nn.MarginRankingLoss(margin=0.1)(x1, x2, lucid.tensor([1.0, -1.0]))
    """

    __constants__ = ["margin", "reduction"]
    _fn = staticmethod(F.margin_ranking_loss)

    def __init__(self, margin: float = 0.0, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)


class CosineEmbeddingLoss(_PairLoss):
    """``1 - cos`` for ``target == 1``, ``max(0, cos - margin)`` for ``target == -1``.

    Example::

        nn.CosineEmbeddingLoss()(x1, x2, lucid.tensor([1, -1]))
    """

    __constants__ = ["margin", "reduction"]
    _fn = staticmethod(F.cosine_embedding_loss)

    def __init__(self, margin: float = 0.0, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)


class HingeEmbeddingLoss(_Loss):
    """``input`` for ``target == 1``, ``max(0, margin - input)`` for ``target == -1``.

    Example::

        nn.HingeEmbeddingLoss(margin=2.0)(dist, lucid.tensor([1.0, -1.0]))
    """

    __constants__ = ["margin", "reduction"]
    _fn = staticmethod(F.hinge_embedding_loss)
    _kw = ("margin",)

    def __init__(self, margin: float = 1.0, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class SoftMarginLoss(_Loss):
    """``log(1 + exp(-target * input))`` with targets in {1, -1}.

    Example::

        nn.SoftMarginLoss()(scores, lucid.tensor([1.0, -1.0]))
    """

    __constants__ = ["reduction"]
    _fn = staticmethod(F.soft_margin_loss)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class logistic loss against 0/1 targets, averaged over the classes.

    Example::

        nn.MultiLabelSoftMarginLoss()(logits, lucid.tensor([[1.0, 0.0, 1.0]]))
    """

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Compute the loss.

        Example::

            loss_fn(logits, target)
        """
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss with class-index targets (``p`` 1 or 2).

    Example::

        nn.MultiMarginLoss()(scores, lucid.tensor([3, 0]))
    """

    __constants__ = ["p", "margin", "reduction"]

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got "
                             f"{weight.ndim}D instead")
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Compute the loss.

        Example::

            loss_fn(scores, target)
        """
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss; each target row lists classes, ended by -1.

    Example::

        nn.MultiLabelMarginLoss()(scores, lucid.tensor([[3, 0, -1, 1]]))
    """

    __constants__ = ["reduction"]
    _fn = staticmethod(F.multilabel_margin_loss)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood; ``forward(input, target, var)``.

    Example::

        nn.GaussianNLLLoss()(mean, target, var)
    """

    __constants__ = ["full", "eps", "reduction"]

    def __init__(self, *, full: bool = False, eps: float = 1e-6,
                 reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:  # type: ignore[override]
        """Compute the loss.

        Example::

            loss_fn(mean, target, var)
        """
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood of count targets.

    Example::

        nn.PoissonNLLLoss()(log_rate, counts)
    """

    __constants__ = ["log_input", "full", "eps", "reduction"]
    _fn = staticmethod(F.poisson_nll_loss)
    _kw = ("log_input", "full", "eps")

    def __init__(self, log_input: bool = True, full: bool = False,
                 size_average: bool | None = None, eps: float = 1e-8,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps


class CTCLoss(_Loss):
    """Connectionist temporal classification loss;
    ``forward(log_probs, targets, input_lengths, target_lengths)``.

    Example::

        ctc = nn.CTCLoss(blank=0)
        ctc(lucid.randn(50, 4, 20).log_softmax(2), targets, [50] * 4, [10, 8, 9, 10])
    """

    __constants__ = ["blank", "reduction"]

    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        super().__init__(None, None, reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Any,  # type: ignore[override]
                target_lengths: Any) -> Tensor:
        """Compute the loss.

        Example::

            ctc(log_probs, targets, input_lengths, target_lengths)
        """
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)
