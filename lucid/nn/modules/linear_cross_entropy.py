"""``LinearCrossEntropyLoss``: a linear projection to class logits and the cross-entropy
against a target in one loss module, as ``torch.nn.LinearCrossEntropyLoss`` (with torch's
``LinearCrossEntropyOptions``)."""

from __future__ import annotations

import math
from typing import Any

from ..._tensor import Tensor
from ...ops.linear_cross_entropy import LinearCrossEntropyOptions, linear_cross_entropy
from .linear import Linear
from .loss import _WeightedLoss

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross-entropy of ``linear(input)`` against ``target``, as
    ``torch.nn.LinearCrossEntropyLoss``: the projection is a child ``Linear``
    (``in_features`` -> ``num_classes * prod(out_features)``, ``bias`` off by default),
    reshaped to (C, *out_features) for a K-dimensional loss; ``weight``, ``reduction``,
    ``ignore_index`` (None: -100 for class indices), ``label_smoothing`` and ``options`` go to
    ``F.linear_cross_entropy``.

    Example::

        loss_fn = nn.LinearCrossEntropyLoss(5, 10, out_features=(4, 3))
        loss = loss_fn(lucid.randn(2, 5), lucid.randint(0, 10, (2, 4, 3)))
    """

    __constants__ = ["num_classes", "out_features", "reduction", "ignore_index",
                     "label_smoothing"]

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple[int, ...] = (),
                 bias: bool = False, device: Any = None, dtype: Any = None,
                 reduction: str = "mean", weight: Tensor | None = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: LinearCrossEntropyOptions | None = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(
                f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(
                f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias,
                             device=device, dtype=dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of ``input`` (in_features,) or (N, in_features) against ``target``.

        Example::

            loss = loss_fn(x, labels)
        """
        linear_weight = self.linear.weight.reshape(
            (self.num_classes, *self.out_features, self.linear.in_features))
        bias = self.linear.bias
        linear_bias = None if bias is None else bias.reshape(
            (self.num_classes, *self.out_features))
        return linear_cross_entropy(input, linear_weight, target, linear_bias=linear_bias,
                                    weight=self.weight, reduction=self.reduction,
                                    ignore_index=self.ignore_index,
                                    label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
