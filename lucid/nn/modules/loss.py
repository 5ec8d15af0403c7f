"""Loss modules over the functional losses."""

from __future__ import annotations

import warnings
from collections.abc import Callable

from ..._tensor import Tensor
from .. import functional as F
from ..module import Module

__all__ = ["L1Loss", "MSELoss", "CrossEntropyLoss", "NLLLoss", "NLLLoss2d", "BCELoss",
           "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss"]


def _reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


class _Loss(Module):
    """A loss layer: ``forward(input, target) = _fn(input, target, reduction=...)`` with the
    attributes named in ``_kw`` passed as keywords too."""

    _fn: Callable[..., Tensor]
    _kw: tuple[str, ...] = ()

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = _reduction(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Compute the loss.

        Example::

            nn.MSELoss()(pred, target)
        """
        kw = {name: getattr(self, name) for name in self._kw}
        return self._fn(input, target, reduction=self.reduction, **kw)


class _WeightedLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Mean absolute error, as ``torch.nn.L1Loss``.

    Example::

        nn.L1Loss()(pred, target)
    """

    _fn = staticmethod(F.l1_loss)


class MSELoss(_Loss):
    """Mean squared error, as ``torch.nn.MSELoss``.

    Example::

        nn.MSELoss()(pred, target)
    """

    _fn = staticmethod(F.mse_loss)


class CrossEntropyLoss(_WeightedLoss):
    """Log-softmax + negative log-likelihood in one fused op, as ``torch.nn.CrossEntropyLoss``.

    Example::

        nn.CrossEntropyLoss(label_smoothing=0.1)(logits, labels)
    """

    __constants__ = ["ignore_index", "reduction", "label_smoothing"]
    _fn = staticmethod(F.cross_entropy)
    _kw = ("weight", "ignore_index", "label_smoothing")

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of log-probabilities, as ``torch.nn.NLLLoss``.

    Example::

        nn.NLLLoss()(log_probs, labels)
    """

    __constants__ = ["ignore_index", "reduction"]
    _fn = staticmethod(F.nll_loss)
    _kw = ("weight", "ignore_index")

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index


class NLLLoss2d(NLLLoss):
    """Deprecated alias of ``NLLLoss``, as ``torch.nn.NLLLoss2d`` (warns with torch's
    FutureWarning).

    Example::

        nn.NLLLoss2d()(log_probs, labels)       # log_probs (N, C, H, W), labels (N, H, W)
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement and see https://pytorch.org/docs/main/nn.html"
                      "#torch.nn.NLLLoss for more details.", FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities, as ``torch.nn.BCELoss``.

    Example::

        nn.BCELoss()(probs, targets)
    """

    _fn = staticmethod(F.binary_cross_entropy)
    _kw = ("weight",)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross-entropy, computed stably, as ``torch.nn.BCEWithLogitsLoss``.

    Example::

        nn.BCEWithLogitsLoss(pos_weight=lucid.tensor([2.0]))(logits, targets)
    """

    _fn = staticmethod(F.binary_cross_entropy_with_logits)
    _kw = ("weight", "pos_weight")

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)


class SmoothL1Loss(_Loss):
    """Smooth L1 (quadratic below ``beta``), as ``torch.nn.SmoothL1Loss``.

    Example::

        nn.SmoothL1Loss(beta=0.5)(pred, target)
    """

    _fn = staticmethod(F.smooth_l1_loss)
    _kw = ("beta",)

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta


class HuberLoss(_Loss):
    """Huber loss with threshold ``delta``, as ``torch.nn.HuberLoss``.

    Example::

        nn.HuberLoss(delta=2.0)(pred, target)
    """

    _fn = staticmethod(F.huber_loss)
    _kw = ("delta",)

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of log-probabilities, as ``torch.nn.KLDivLoss``.

    Example::

        nn.KLDivLoss(reduction="batchmean")(log_probs, probs)
    """

    _fn = staticmethod(F.kl_div)
    _kw = ("log_target",)

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target
