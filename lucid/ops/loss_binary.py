"""The binary losses, as ``torch.nn.functional``: ``binary_cross_entropy`` over probabilities
(both logs clamped at -100, as torch) and ``binary_cross_entropy_with_logits`` (sigmoid and
cross-entropy in one stable op, with ``pos_weight``)."""

from __future__ import annotations

import numpy as np

from .._tensor import Size, Tensor
from ..autograd.function import Op
from . import _autocast as _ac
from . import elementwise as _e
from . import select as _sel
from ._util import coerce, loss_reduction, reduce_loss, sum_to

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits"]


class BCE(Op):
    """``-(t * log(x) + (1 - t) * log(1 - x))`` with both logs clamped at -100 (torch)."""

    def forward(self, x, t):
        be = self.be
        with np.errstate(divide="ignore"):  # NOTE: log(0) = -inf is clamped, as in torch
            lx = be.maximum(be.log(x), -100)
            l1x = be.maximum(be.log1p(be.neg(x)), -100)
        self.saved = (x, t, lx, l1x)
        return be.neg(be.add(be.mul(t, lx), be.mul(be.sub(1, t), l1x)))

    def backward(self, g):
        be = self.be
        x, t, lx, l1x = self.saved
        gx = be.div(be.mul(g, be.sub(x, t)), be.maximum(be.mul(be.sub(1, x), x), 1e-12))
        gt = be.mul(g, be.sub(l1x, lx)) if self.parents[1] is not None else None
        return gx, gt

    def composite(self, ins):
        x, t = ins
        lx = _sel.clamp(_e.log(x), -100)
        l1x = _sel.clamp(_e.log1p(_e.neg(x)), -100)
        return _e.neg(_e.add(_e.mul(t, lx), _e.mul(_e.sub(1, t), l1x)))


@_ac.policy("binary_cross_entropy")
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """Binary cross-entropy between probabilities ``input`` and ``target`` (same shape).

    Example::

        binary_cross_entropy(lucid.tensor([0.5]), lucid.tensor([1.0]))    # tensor(0.6931)
    """
    red = loss_reduction(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({Size(target.shape)!r}) that is different to "
                         f"the input size ({Size(input.shape)!r}) is deprecated. Please ensure "
                         "they have the same size.")
    be = input._be
    ok = be.logical_and(be.ge(input._data, 0), be.le(input._data, 1))
    if not bool(be.all(ok)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = BCE.apply(*coerce(input, target))
    if weight is not None:
        loss = _e.mul(loss, weight)
    return reduce_loss(loss, red)


class BCEWithLogits(Op):
    """``(1 - t) * x + lw * softplus(-x)`` with ``lw = 1 + (pos_weight - 1) * t``."""

    def forward(self, x, t, pw):
        be = self.be
        sp = be.add(be.maximum(be.neg(x), 0), be.log1p(be.exp(be.neg(be.abs(x)))))
        lw = None if pw is None else be.add(be.mul(be.sub(pw, 1), t), 1)
        self.saved = (x, t, pw, sp, lw)
        return be.add(be.mul(be.sub(1, t), x), sp if lw is None else be.mul(lw, sp))

    def backward(self, g):
        be = self.be
        x, t, pw, sp, lw = self.saved
        p = self.parents
        s = be.sigmoid(be.neg(x))
        gx = be.mul(g, be.sub(be.sub(1, t), s if lw is None else be.mul(lw, s)))
        gt = gpw = None
        if p[1] is not None:
            d = be.neg(x) if pw is None else be.add(be.neg(x), be.mul(be.sub(pw, 1), sp))
            gt = be.mul(g, d)
        if pw is not None and p[2] is not None:
            gpw = sum_to(be, be.mul(g, be.mul(t, sp)), pw.shape)
        return gx, gt, gpw

    def composite(self, ins):
        x, t, pw = ins
        sp = _e.add(_e.relu(_e.neg(x)), _e.log1p(_e.exp(_e.neg(_e.abs(x)))))
        if pw is not None:
            sp = _e.mul(_e.add(_e.mul(_e.sub(pw, 1), t), 1), sp)
        return _e.add(_e.mul(_e.sub(1, t), x), sp)


@_ac.policy("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None,
                                     size_average: bool | None = None,
                                     reduce: bool | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid + binary cross-entropy in one stable op; ``pos_weight`` weighs positives per
    class (broadcast along the last dim).

    Example::

        binary_cross_entropy_with_logits(lucid.tensor([0.0]), lucid.tensor([1.0]))  # 0.6931
    """
    red = loss_reduction(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({Size(target.shape)!r}) must be the same as input size "
                         f"({Size(input.shape)!r})")
    x, t = coerce(input, target)
    loss = BCEWithLogits.apply(x, t, pos_weight)
    if weight is not None:
        loss = _e.mul(loss, weight)
    return reduce_loss(loss, red)
