"""Loss functions, as ``torch.nn.functional``. Class-index ``cross_entropy`` is one op over the
backend's fused kernel (log-softmax, class weights, label smoothing, one pass per row; backward
``softmax - onehot``); probability targets compose ``log_softmax``. Pointwise losses are one op
each for the unreduced loss, then a sum or mean."""

from __future__ import annotations

import math
import warnings
from typing import Any

from .. import _dtype
from .._tensor import Size, Tensor
from ..autograd.function import Op
from . import _autocast as _ac
from . import elementwise as _e
from . import reduce as _r
from . import select as _sel
from ._util import coerce, loss_reduction, reduce_loss
from .activation import log_softmax
from .loss_binary import binary_cross_entropy, binary_cross_entropy_with_logits
from .shape import broadcast_tensors
from .views import keep_on_write

__all__ = [
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
]


# ---- class-index losses -------------------------------------------------------------------------


def _rows_layout(be: Any, x: Any) -> Any:
    """(N, C, d1, ...) -> (N * d1 * ..., C) rows, class dim last."""
    if x.ndim == 2:
        return x
    if x.ndim == 1:
        return be.reshape(x, (1, x.shape[0]))
    perm = (0, *range(2, x.ndim), 1)
    rows = x.shape[0] * math.prod(x.shape[2:])
    y = be.contiguous(be.transpose(x, perm))
    if rows == x.shape[0] or x.shape[1] == 1:
        # the transpose moved nothing, so ``y`` may be x's own memory: a copy, as in every
        # other layout, keeps an in-place change of x out of the backward
        y = be.copy(y)
    return be.reshape(y, (rows, x.shape[1]))


def _from_rows(be: Any, g2: Any, shape: tuple[int, ...]) -> Any:
    if len(shape) <= 2:
        return be.reshape(g2, shape)
    moved = (shape[0], *shape[2:], shape[1])
    inv = (0, len(shape) - 1, *range(1, len(shape) - 1))
    return be.transpose(be.reshape(g2, moved), inv)


def _weighted_reduce(op: Op, loss: Any, wt: Any, reduction: str) -> Any:
    """none / sum / mean divided by the summed target weights (kept on ``op.denom``)."""
    be = op.be
    if reduction == "none":
        return loss
    if reduction == "sum":
        return be.sum(loss)
    op.denom = be.sum(wt)
    return be.div(be.sum(loss), op.denom)


class CrossEntropy(Op):
    """Cross-entropy of logits against class indices, log-softmax fused, reduction included."""

    def forward(self, x, t, w, ignore, smooth, reduction):
        be = self.be
        x2 = _rows_layout(be, x)
        t1 = be.reshape(t, (-1,))
        loss, lse, wt = be.cross_entropy(x2, t1, w, ignore, smooth)
        self.shape, self.tshape, self.red = x.shape, t.shape, reduction
        self.args = (ignore, smooth)
        self.saved = (x2, t1, w, lse)
        return _weighted_reduce(self, be.reshape(loss, t.shape), wt, reduction)

    def backward(self, g):
        be = self.be
        x2, t1, w, lse = self.saved
        if self.red == "none":
            grow = be.reshape(g, (-1,))
        else:
            gs = g if self.red == "sum" else be.div(g, self.denom)
            grow = be.broadcast_to(be.reshape(gs, (1,)), (x2.shape[0],))
        if not x2.size:  # no rows or no classes: nothing to differentiate
            return be.zeros(self.shape, be.dtype_of(x2)), None, None
        gx = be.cross_entropy_backward(x2, t1, lse, w, grow, *self.args)
        return _from_rows(be, gx, self.shape), None, None

    def composite(self, ins):
        x, t, w = ins[0], ins[1], ins[2]
        ignore, smooth = self.args
        c = self.shape[1] if len(self.shape) > 1 else self.shape[0]
        x2 = x.reshape(1, c) if x.ndim == 1 else x if x.ndim == 2 else \
            x.movedim(1, -1).reshape(-1, c)
        logp = log_softmax(x2, 1)
        t1 = t.reshape(-1)
        keep = t1 != ignore
        tc = _sel.where(keep, t1, 0)
        wc = w.detach() if w is not None else x2.new_ones(c).detach()  # type: ignore
        wt = _sel.where(keep, wc[tc], 0.0)
        nll = _e.neg(logp.gather(1, tc.unsqueeze(1)).squeeze(1))
        loss = _e.mul(_e.mul(nll, wt), 1 - smooth)
        if smooth > 0:
            spread = _e.mul(_r.sum(_e.mul(logp, wc), 1), -smooth / c)
            loss = _e.add(loss, _sel.where(keep, spread, 0.0))
        loss = loss.reshape(self.tshape)
        if self.red == "none":
            return loss
        total = _r.sum(loss)
        return total if self.red == "sum" else _e.div(total, _r.sum(wt))


class NLLLoss(Op):
    """Negative log-likelihood: ``-w[t] * x[t]`` picked along dim 1, reduction included."""

    def forward(self, x, t, w, ignore, reduction):
        be = self.be
        keep = be.ne(t, ignore)
        tc = be.where(keep, t, 0)
        wt = be.astype(keep, self.be.dtype_of(x))
        idx = be.expand_dims(tc, 1)
        if x.shape[1]:
            if w is not None:
                wt = be.mul(wt, be.take(w, tc, 0))
            loss = be.neg(be.mul(be.squeeze(be.take_along_axis(x, idx, 1), 1), wt))
        else:  # no classes: every target is ignored (others were refused), nothing to pick
            loss = be.zeros_like(wt)
        # x is saved as torch's NLLLossBackward saves it: an in-place change to it refuses
        self.saved = (idx, wt, keep, x)
        self.shape, self.red = x.shape, reduction
        return _weighted_reduce(self, loss, wt, reduction)

    def backward(self, g):
        be = self.be
        idx, wt, keep = self.saved[:3]
        if not self.shape[1]:
            return be.zeros(self.shape, be.dtype_of(wt)), None, None
        src = be.neg(be.mul(wt, g))
        if self.red == "mean":
            src = be.div(src, self.denom)
        # ignored targets get 0, even when every one is (0 / 0) or the gradient is NaN
        src = be.where(keep, src, be.zeros_like(src))
        return be.scatter_add(self.shape, idx, be.expand_dims(src, 1), 1), None, None


def _class_target(input: Tensor, target: Tensor, ignore_index: int, check_range: bool = True
                  ) -> tuple[Tensor, Tensor]:
    """Validate shapes and (``check_range``) class indices; unbatched (C,) inputs become
    (1, C). Backends' ``cross_entropy`` checks the indices itself, inside its kernel."""
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError(f"Expected target to be 0-dimensional for an unbatched input, "
                               f"got target of shape {list(target.shape)}")
        input = input.reshape(1, -1)  # type: ignore[attr-defined]
        target = target.reshape(1)  # type: ignore[attr-defined]
    elif input.ndim == 0:
        raise RuntimeError("input tensor should be 1D or 2D or more, got 0D")
    if target.shape[:1] != input.shape[:1]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if target.ndim else 1}).")
    want = (input.shape[0], *input.shape[2:])
    if tuple(target.shape) != want:
        raise RuntimeError(f"Expected target size {list(want)}, got {list(target.shape)}")
    if target.dtype is not _dtype.int64 and target.dtype is not _dtype.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_dtype.torch_name(target.dtype)}")
    if not input.shape[1] and input.ndim != 4 and input.ndim > 2 and target.numel():
        # torch views (N, 0, *) as (N, 0, 1, -1), which infers 0 where the target has more
        raise RuntimeError(f"size mismatch (got input: [{input.shape[0]}, 0, 0, 0] , target: "
                           f"[{input.shape[0]}, 1, {math.prod(input.shape[2:])}]")
    be = target._be
    t = target._data
    n = input.shape[1]
    # in range (the usual case): two reductions; else the element-wise test below
    if check_range and target.numel() and (be.item(be.min(t)) < 0 or be.item(be.max(t)) >= n):
        bad = be.logical_and(be.ne(t, ignore_index), be.logical_or(be.lt(t, 0), be.ge(t, n)))
        if be.item(be.any(bad)):  # the targets stay on their device
            tn, bn = be.to_numpy(t), be.to_numpy(bad)
            v = int(tn[bn].flat[0])
            raise IndexError(f"Target {v} is out of bounds. Expected class indices in "
                             f"[0, {n}) or ignore_index={ignore_index}.")
    if target.dtype is not _dtype.int64:
        target = target.long()  # type: ignore[attr-defined]
    return input, target


def _check_weight(weight: Tensor | None, n: int) -> None:
    if weight is not None and (weight.ndim != 1 or weight.numel() != n):
        raise RuntimeError(f"weight tensor should be defined either for all {n} classes or "
                           f"no classes but got weight tensor of shape: {list(weight.shape)}")


@_ac.policy("cross_entropy")
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy between logits ``input`` (N, C, *) or (C,) and ``target``: class indices
    (N, *) or class probabilities of ``input``'s shape.

    ``mean`` divides by the summed class weights of non-ignored targets (by the number of
    samples for probability targets). Raises IndexError naming an out-of-range class index.

    Example::

        loss = cross_entropy(lucid.randn(4, 10), lucid.tensor([1, 0, 9, 3]))
    """
    reduction = loss_reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    n = input.shape[1] if input.ndim >= 2 else (input.shape[0] if input.ndim else 0)
    _check_weight(weight, n)
    if tuple(target._data.shape) == tuple(input._data.shape):
        if not target.dtype.is_floating_point:
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {_dtype.torch_name(target.dtype)}")
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing)
    shape = tuple(input.shape)
    x, t = _class_target(input, target, ignore_index, check_range=False)
    out = CrossEntropy.apply(x, t, weight, int(ignore_index), float(label_smoothing),
                             reduction)
    fn = out.grad_fn
    if fn is not None and fn.saved[0] is x._data:
        keep_on_write(fn, 0, 0)  # torch saves log-softmax, so the logits may change in place
    if len(shape) == 1 and reduction == "none":
        return out.reshape(())  # type: ignore[attr-defined]
    return out


def _cross_entropy_probs(input: Tensor, target: Tensor, weight: Tensor | None,
                         reduction: str, label_smoothing: float) -> Tensor:
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected target size {list(input.shape)}, got "
                           f"{list(target.shape)}")
    cdim = 1 if input.ndim >= 2 else 0
    n = input.shape[cdim]
    logp = log_softmax(input, cdim)
    if label_smoothing > 0:
        target = _e.add(_e.mul(target, 1 - label_smoothing), label_smoothing / n if n else 0.0)
    prod = _e.mul(logp, target)
    if weight is not None:
        prod = _e.mul(prod, weight.reshape(-1, *([1] * (input.ndim - cdim - 1))))  # type: ignore
    loss = _e.neg(_r.sum(prod, cdim))
    if reduction == "mean":
        return _e.div(_r.sum(loss), max(input.numel() // n, 1) if input.numel() else 0.0)
    return reduce_loss(loss, reduction)


@_ac.policy("nll_loss")
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: bool | None = None, ignore_index: int = -100,
             reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of log-probabilities ``input`` (N, C, *) at class ``target``.

    Example::

        loss = nll_loss(log_softmax(lucid.randn(4, 10), 1), lucid.tensor([1, 0, 9, 3]))
    """
    reduction = loss_reduction(reduction, size_average, reduce)
    n = input.shape[1] if input.ndim >= 2 else (input.shape[0] if input.ndim else 0)
    _check_weight(weight, n)
    shape = tuple(input.shape)
    x, t = _class_target(input, target, ignore_index)
    out = NLLLoss.apply(x, t, weight, int(ignore_index), reduction)
    if len(shape) == 1 and reduction == "none":
        return out.reshape(())  # type: ignore[attr-defined]
    return out


# ---- pointwise losses ---------------------------------------------------------------------------


class _PairLoss(Op):
    """Elementwise ``loss(d)`` of ``d = input - target`` (same shapes); ``dloss`` its derivative."""

    def forward(self, a, b, **kw):
        be = self.be
        self.kw = kw
        self.saved = (a, b)  # d is recomputed: create_graph differentiates through it
        return self.f(be, be.sub(a, b), **kw)

    def backward(self, g):
        be = self.be
        ga = be.mul(g, self.df(be, be.sub(*self.saved), **self.kw))
        return ga, (be.neg(ga) if self.parents[1] is not None else None)


def _pair(name: str, f: Any, df: Any) -> type[Op]:
    return type(name, (_PairLoss,), {"f": staticmethod(f), "df": staticmethod(df)})


MSE = _pair("MSE", lambda be, d: be.mul(d, d), lambda be, d: be.mul(d, 2))


class L1(Op):
    """``|input - target|``: the difference is saved, not the operands (torch's l1_loss is
    ``abs`` of a difference), so either operand may be changed in place after the forward."""

    def forward(self, a, b):
        d = self.be.sub(a, b)
        if not d.shape:  # numpy's 0-d difference is a scalar: kept an array for create_graph
            d = self.be.asarray(d)
        self.saved = (d,)
        return self.be.abs(d)

    def backward(self, g):
        ga = self.be.mul(g, self.be.sign(self.saved[0]))
        return ga, (self.be.neg(ga) if self.parents[1] is not None else None)


SmoothL1 = _pair(
    "SmoothL1",
    lambda be, d, beta: be.where(be.lt(be.abs(d), beta), be.div(be.mul(be.mul(d, d), 0.5), beta),
                                 be.sub(be.abs(d), 0.5 * beta)),
    lambda be, d, beta: be.clip(be.div(d, beta), -1.0, 1.0),  # NaN stays NaN, as torch's
)
Huber = _pair(
    "Huber",
    lambda be, d, delta: be.where(be.lt(be.abs(d), delta), be.mul(be.mul(d, d), 0.5),
                                  be.mul(be.sub(be.abs(d), 0.5 * delta), delta)),
    lambda be, d, delta: be.clip(d, -delta, delta),
)


def _broadcast_pair(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({Size(target.shape)!r}) that is different to the input size "
            f"({Size(input.shape)!r}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.", stacklevel=3)
        input, target = broadcast_tensors(input, target)
    if input.dtype is not target.dtype:
        input, target = coerce(input, target)
    return input, target


def _pointwise(cls: type[Op], input: Tensor, target: Tensor, reduction: str,
               weight: Tensor | None = None, weighted_mean: str = "sum", **kw: Any) -> Tensor:
    if _ac.state.on:  # mse, l1, smooth_l1, huber: float32 on every autocast list
        input, target, weight = _ac.cast("mse_loss", input, target, weight)
    a, b = _broadcast_pair(input, target)
    loss = cls.apply(a, b, **kw)
    if weight is None:
        return reduce_loss(loss, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = _e.mul(loss, weight)
    if reduction == "mean" and weighted_mean == "sum":
        return _e.div(_r.sum(loss), _r.sum(weight))
    return reduce_loss(loss, reduction)


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
             reduce: bool | None = None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """Mean squared error ``(input - target) ** 2`` (weighted mean: ``sum(w * l) / sum(w)``).

    Example::

        mse_loss(lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 4.0]))   # tensor(2.)
    """
    return _pointwise(MSE, input, target, loss_reduction(reduction, size_average, reduce), weight)


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    """Mean absolute error ``|input - target|``.

    Example::

        l1_loss(lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 4.0]))    # tensor(1.)
    """
    return _pointwise(L1, input, target, loss_reduction(reduction, size_average, reduce), weight)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta`` (``beta=0``: L1).

    Example::

        smooth_l1_loss(lucid.tensor([0.0, 3.0]), lucid.zeros(2))        # tensor(1.2500)
    """
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    red = loss_reduction(reduction, size_average, reduce)
    if beta == 0:
        return _pointwise(L1, input, target, red)
    return _pointwise(SmoothL1, input, target, red, beta=float(beta))


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``.

    Example::

        huber_loss(lucid.tensor([0.0, 3.0]), lucid.zeros(2))            # tensor(1.2500)
    """
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    return _pointwise(Huber, input, target, loss_reduction(reduction), weight, "mean",
                      delta=float(delta))


class KLDiv(Op):
    """Pointwise ``t * (log t - x)`` (``log_target``: ``exp(t) * (t - x)``); 0 where t == 0."""

    def forward(self, x, t, log_target):
        be = self.be
        self.log_target, self.saved = log_target, (x, t)
        if log_target:
            return be.mul(be.exp(t), be.sub(t, x))
        zero = be.eq(t, 0)
        return be.sub(be.where(zero, 0, be.mul(t, be.log(be.where(zero, 1, t)))), be.mul(t, x))

    def backward(self, g):
        be = self.be
        x, t = self.saved
        et = be.exp(t) if self.log_target else t
        gx = be.neg(be.mul(g, et))
        gt = None
        if self.parents[1] is not None:
            if self.log_target:
                gt = be.mul(g, be.mul(be.add(be.sub(t, x), 1), et))
            else:
                zero = be.eq(t, 0)
                d = be.sub(be.add(be.log(be.where(zero, 1, t)), 1), x)
                gt = be.where(zero, be.zeros_like(g), be.mul(g, d))
        return gx, gt


@_ac.policy("kl_div")
def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None,
           reduce: bool | None = None, reduction: str = "mean", log_target: bool = False
           ) -> Tensor:
    """Kullback-Leibler divergence with ``input`` in log space; ``reduction="batchmean"``
    divides the sum by the batch size (the mathematical KL), ``"mean"`` by every element.

    Example::

        kl_div(lucid.tensor([[-0.7, -0.7]]), lucid.tensor([[0.5, 0.5]]), reduction="batchmean")
    """
    if size_average is not None or reduce is not None:
        reduction = loss_reduction(reduction, size_average, reduce)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.", stacklevel=2)
    if reduction not in ("mean", "sum", "none", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    loss = KLDiv.apply(*coerce(input, target), bool(log_target))
    if reduction == "batchmean":
        total = _r.sum(loss)
        return _e.div(total, input.shape[0]) if input.ndim else total
    return reduce_loss(loss, reduction)
