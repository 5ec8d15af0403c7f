"""Margin and embedding losses, as ``torch.nn.functional``: triplet (plain and with a
distance function), margin ranking, cosine embedding, hinge embedding, soft margin,
multi-label soft margin, multi-class margin and multi-label margin. Each is composed from
elementwise ops, so the gradients are theirs."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _make
from . import elementwise as _e
from . import index as _i
from . import reduce as _r
from . import select as _sel
from . import shape as _s
from ._util import loss_reduction, reduce_loss
from .activation import logsigmoid, softplus
from .distance import pairwise_distance

__all__ = [
    "triplet_margin_loss", "triplet_margin_with_distance_loss", "margin_ranking_loss",
    "cosine_embedding_loss", "hinge_embedding_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
]


def _same_ndim(a: Tensor, p: Tensor, n: Tensor) -> None:
    if not a.ndim == p.ndim == n.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a.ndim}D, positive "
                           f"{p.ndim}D, and negative {n.ndim}D inputs")


def _triplet(dist: Callable[[Tensor, Tensor], Tensor], anchor: Tensor, positive: Tensor,
             negative: Tensor, margin: float, swap: bool, reduction: str) -> Tensor:
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _same_ndim(anchor, positive, negative)
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _e.minimum(d_neg, dist(positive, negative))
    return reduce_loss(_sel.clamp(_e.sub(_e.add(d_pos, margin), d_neg), 0, None), reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the ``p``-norm pairwise distance;
    ``swap`` uses ``min(d(a, n), d(p, n))`` as the negative distance.

    Example::

        F.triplet_margin_loss(lucid.randn(8, 16), lucid.randn(8, 16), lucid.randn(8, 16))
    """
    reduction = loss_reduction(reduction, size_average, reduce)
    return _triplet(lambda x, y: pairwise_distance(x, y, p, eps), anchor, positive, negative,
                    margin, swap, reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable | None = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """The triplet margin loss with any ``distance_function(x, y) -> distances`` (default
    ``pairwise_distance``).

    Example::

        d = lambda x, y: 1.0 - F.cosine_similarity(x, y)
        F.triplet_margin_with_distance_loss(a, p, n, distance_function=d, margin=0.5)
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _triplet(distance_function or pairwise_distance, anchor, positive, negative, margin,
                    swap, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)`` with ``target`` in {1, -1}.

    Example::

        F.margin_ranking_loss(lucid.randn(4), lucid.randn(4), lucid.tensor([1., -1., 1., 1.]))
    """
    reduction = loss_reduction(reduction, size_average, reduce)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    loss = _e.add(_e.mul(_e.neg(target), _e.sub(input1, input2)), margin)
    return reduce_loss(_sel.clamp(loss, 0, None), reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1`` (rows of 2-D inputs, or one pair of 1-D inputs with a 0-D target).

    Example::

        F.cosine_embedding_loss(lucid.randn(4, 8), lucid.randn(4, 8), lucid.tensor([1, -1, 1, -1]))
    """
    reduction = loss_reduction(reduction, size_average, reduce)
    td = target.ndim
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.ndim != td + 1 or input2.ndim != td + 1:
        raise RuntimeError(f"{td}D target tensor expects {td + 1}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    prod = _r.sum(_e.mul(input1, input2), td)
    m1 = _e.add(_r.sum(_e.mul(input1, input1), td), 1e-12)
    m2 = _e.add(_r.sum(_e.mul(input2, input2), td), 1e-12)
    cos = _e.div(prod, _e.sqrt(_e.mul(m1, m2)))
    pos = _sel.where(target == 1, _e.sub(1.0, cos), 0.0)
    neg = _sel.where(target == -1, _sel.clamp(_e.sub(cos, margin), 0, None), 0.0)
    return reduce_loss(_e.add(pos, neg), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``.

    Example::

        F.hinge_embedding_loss(lucid.rand(5), lucid.tensor([1., -1., 1., -1., 1.]))
    """
    reduction = loss_reduction(reduction, size_average, reduce)
    marg = _sel.where(target != 1, _sel.clamp(_e.sub(margin, input), 0, None), 0.0)
    own = _sel.where(target != -1, input, 0.0)
    return reduce_loss(_e.add(marg, own), reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))``, the two-class logistic loss with targets in {1, -1}.

    Example::

        F.soft_margin_loss(lucid.randn(5), lucid.tensor([1., -1., 1., -1., 1.]))
    """
    reduction = loss_reduction(reduction, size_average, reduce)
    return reduce_loss(softplus(_e.neg(_e.mul(target, input))), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """Per-class logistic loss against 0/1 ``target`` averaged over the classes (last dim),
    optionally weighted per class.

    Example::

        F.multilabel_soft_margin_loss(lucid.randn(2, 3), lucid.tensor([[1., 0., 1.], [0., 0., 1.]]))
    """
    if size_average is not None or reduce is not None:
        reduction = loss_reduction(reduction, size_average, reduce)
    loss = _e.neg(_e.add(_e.mul(target, logsigmoid(input)),
                         _e.mul(_e.sub(1.0, target), logsigmoid(_e.neg(input)))))
    if weight is not None:
        loss = _e.mul(loss, weight)
    cdim = input.ndim - 1
    loss = _e.div(_r.sum(loss, cdim), input.shape[cdim] if input.ndim else 1)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return reduce_loss(loss, reduction)


def _vector_or_matrix(input: Tensor) -> tuple[int, int]:
    if input.ndim > 2 or (input.ndim == 2 and input.shape[1] == 0) or \
            (input.ndim < 2 and input.numel() == 0):  # type: ignore[attr-defined]
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    return (input.shape[0], input.shape[1]) if input.ndim == 2 else \
        (1, input.shape[0] if input.ndim else 1)


def _host_ints(t: Tensor) -> np.ndarray:
    if t.dtype.is_floating_point or t.dtype.name == "bool":
        raise RuntimeError(f"expected scalar type Long but found {_dtype.torch_name(t.dtype)}")
    return np.asarray(t.numpy()).astype(np.int64)  # type: ignore[attr-defined]


def _positive(z: Tensor) -> Tensor:
    """The hinge ``z if z > 0 else 0`` of torch's multi-margin kernels: a NaN term counts 0
    (value and gradient), where ``clamp`` would pass it on."""
    return _sel.where(_sel.gt(z, 0), z, 0.0)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: bool | None = None,
                      reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss: ``sum over j != y of max(0, margin - x[y] + x[j]) ** p / C``
    (times ``weight[y]``) for class-index ``target``.

    Example::

        F.multi_margin_loss(lucid.randn(3, 5), lucid.tensor([0, 4, 2]))
    """
    reduction = loss_reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    n, c = _vector_or_matrix(input)
    if target.numel() != n or target.ndim > 1:  # type: ignore[attr-defined]
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{n}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    y = _host_ints(target).reshape(-1)
    if ((y < 0) | (y >= c)).any():
        raise RuntimeError("target out of range")
    x = _s.reshape(input, n, c)
    be = input._be
    yt = _make(be.from_numpy(y.reshape(n, 1)), be, False, None)
    xy = _i.gather(x, 1, yt)
    z = _positive(_e.add(_e.sub(x, xy), margin))
    if p == 2:
        z = _e.mul(z, z)
    others = _make(be.from_numpy(np.arange(c)[None, :] != y[:, None]), be, False, None)
    z = _sel.where(others, z, 0.0)
    if weight is not None:
        z = _e.mul(z, _s.reshape(_i.index_select(weight, 0, _s.reshape(yt, n)), n, 1))
    loss = _e.div(_r.sum(z, 1), c)
    if input.ndim < 2 and reduction == "none":
        return _s.reshape(loss, tuple(target.shape))
    return reduce_loss(loss, reduction)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Multi-label hinge loss: ``target`` lists each sample's classes, ended by the first -1;
    ``sum over target classes j and other classes k of max(0, 1 - (x[j] - x[k])) / C``.

    Example::

        F.multilabel_margin_loss(lucid.randn(1, 4), lucid.tensor([[3, 0, -1, 1]]))
    """
    reduction = loss_reduction(reduction, size_average, reduce)
    n, c = _vector_or_matrix(input)
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    y = _host_ints(target).reshape(n, c)
    if ((y < -1) | (y >= c)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    neg = y < 0  # each row's classes end at its first -1
    end = np.where(neg.any(1), neg.argmax(1), c)
    active = np.arange(c)[None, :] < end[:, None]
    member = np.zeros((n, c), dtype=bool)
    rows, cols = np.nonzero(active)
    member[rows, y[rows, cols]] = True
    pair = member[:, :, None] & ~member[:, None, :]  # (n, j in targets, k not in targets)
    be = input._be
    mask = _make(be.from_numpy(pair), be, False, None)
    x = _s.reshape(input, n, c)
    diff = _e.sub(_s.unsqueeze(x, 2), _s.unsqueeze(x, 1))  # x[j] - x[k]
    z = _sel.where(mask, _positive(_e.sub(1.0, diff)), 0.0)
    loss = _e.div(_r.sum(z, (1, 2)), c)
    if input.ndim < 2:
        loss = _s.reshape(loss, ())
    return reduce_loss(loss, reduction)


