"""op_db entries for the losses: cross_entropy (class weights, ignore_index, label smoothing,
spatial and probability targets), nll, the pointwise losses, bce, bce-with-logits and kl_div,
with numpy references and the calls that must fail."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from opinfo import ErrorInput, OpInfo, Sample, T

import lucid.nn.functional as F


def np_log_softmax(x: np.ndarray, axis: int = 1) -> np.ndarray:
    z = x - x.max(axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis, keepdims=True))


def _reduce(loss: np.ndarray, reduction: str, denom: Any = None) -> np.ndarray:
    if reduction == "none":
        return loss
    return np.asarray(loss.sum() / (loss.size if denom is None else denom)
                      if reduction == "mean" else loss.sum())


def _rows(x: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple]:
    """(N, C, d...) logits -> (N*d..., C) rows and flat targets; unbatched (C,) -> one row."""
    if x.ndim == 1:
        return x[None], t.reshape(-1, *t.shape[1:]) if t.ndim else t.reshape(1), ()
    c = x.shape[1]
    rows = np.moveaxis(x, 1, -1).reshape(-1, c)
    shape = (x.shape[0], *x.shape[2:])
    return rows, t.reshape(-1, c) if t.dtype.kind == "f" else t.reshape(-1), shape


def np_cross_entropy(x: np.ndarray, t: np.ndarray, weight: Any = None, *,
                     ignore_index: int = -100, reduction: str = "mean",
                     label_smoothing: float = 0.0) -> np.ndarray:
    rows, tt, shape = _rows(x, t)
    c = rows.shape[1]
    w = np.ones(c) if weight is None else weight
    lp = np_log_softmax(rows)
    if tt.dtype.kind == "f":  # class probabilities
        q = tt * (1 - label_smoothing) + label_smoothing / c
        loss = -(lp * q * w).sum(1)
        return _reduce(loss.reshape(shape), reduction, len(loss))
    keep = tt != ignore_index
    tc = np.where(keep, tt, 0)
    wt = w[tc] * keep
    nll = -lp[np.arange(len(tc)), tc] * wt
    smooth = -(lp * w).sum(1) * keep
    loss = (1 - label_smoothing) * nll + label_smoothing / c * smooth
    return _reduce(loss.reshape(shape), reduction, wt.sum())


def np_nll_loss(x: np.ndarray, t: np.ndarray, weight: Any = None, *, ignore_index: int = -100,
                reduction: str = "mean") -> np.ndarray:
    rows, tt, shape = _rows(x, t)
    w = np.ones(rows.shape[1]) if weight is None else weight
    keep = tt != ignore_index
    tc = np.where(keep, tt, 0)
    per = -rows[np.arange(len(tc)), tc] * w[tc] * keep
    return _reduce(per.reshape(shape), reduction, (w[tc] * keep).sum())


def _ce_samples(rng: np.random.Generator) -> Iterable[Sample]:
    t = np.array([0, 2, -100, 1])
    w = T(rng.random(3) + 0.2, grad=False)
    for red in ("mean", "sum", "none"):
        for ls in (0.0, 0.3):
            yield Sample(T(rng.standard_normal((4, 3)) * 2), T(t), w, reduction=red,
                         label_smoothing=ls)
            yield Sample(T(rng.standard_normal((2, 3, 2))), T(np.array([[0, 2], [1, -100]])),
                         reduction=red, label_smoothing=ls)
    yield Sample(T(rng.standard_normal((2, 4, 3, 2))), T(rng.integers(0, 4, (2, 3, 2))),
                 ignore_index=1, name="spatial_ignore_1")
    yield Sample(T(rng.standard_normal(5)), T(np.array(2)), name="unbatched")
    p = rng.random((3, 4))
    yield Sample(T(rng.standard_normal((3, 4))), T(p / p.sum(1, keepdims=True)),
                 T(rng.random(4) + 0.1, grad=False), label_smoothing=0.2, name="probs")
    yield Sample(T(rng.standard_normal((3, 4)), "t"), T(rng.random((3, 4))), name="probs_raw")


def _nll_samples(rng: np.random.Generator) -> Iterable[Sample]:
    t = np.array([0, 3, 1, -100, 2, 3])
    for red in ("mean", "sum", "none"):
        yield Sample(T(np_log_softmax(rng.standard_normal((6, 4)))), T(t),
                     T(np.arange(1.0, 5.0), grad=False), reduction=red)
    yield Sample(T(rng.standard_normal((2, 3, 4))), T(np.array([[0, 2, 1, 1], [2, 2, 0, 1]])),
                 name="spatial")


def _pair(rng: np.random.Generator, shape: tuple) -> tuple[T, T]:
    return T(rng.standard_normal(shape) * 2), T(rng.standard_normal(shape) + 0.05)


def _pointwise_samples(**extra: Any) -> Any:
    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        for red in ("mean", "sum", "none"):
            yield Sample(*_pair(rng, (3, 4)), reduction=red, **extra)
        a, b = _pair(rng, (4, 3))
        yield Sample(T(a.value, "t"), b, **extra)
        yield Sample(*_pair(rng, ()), **extra)

    return samples


def _pointwise(name: str, fn: Any, weighted: bool = False, **extra: Any) -> OpInfo:
    def ref(a: np.ndarray, b: np.ndarray, reduction: str = "mean", weight: Any = None,
            **k: Any) -> np.ndarray:
        if weight is None:
            return _reduce(fn(a - b), reduction)
        return _reduce(fn(a - b) * weight, reduction, weight.sum())

    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        yield from _pointwise_samples(**extra)(rng)
        if weighted:
            for red in ("mean", "sum"):
                yield Sample(*_pair(rng, (3, 4)), reduction=red,
                             weight=T(rng.random((3, 4)), grad=False), name=f"weight_{red}")

    return OpInfo(name, getattr(F, name), ref, samples, torch_op=f"nn.functional.{name}")


def _smooth_l1(d: np.ndarray, beta: float = 0.5) -> np.ndarray:
    ad = np.abs(d)
    return np.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta)


def _huber(d: np.ndarray, delta: float = 0.6) -> np.ndarray:
    ad = np.abs(d)
    return np.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta))


def _prob(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.random(shape) * 0.8 + 0.1


def np_bce(p: np.ndarray, y: np.ndarray, weight: Any = None, *,
           reduction: str = "mean") -> np.ndarray:
    loss = -(y * np.maximum(np.log(p), -100) + (1 - y) * np.maximum(np.log(1 - p), -100))
    return _reduce(loss if weight is None else loss * weight, reduction)


def _bce_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(_prob(rng, 2, 3)), T(rng.random((2, 3))), T(rng.random((2, 3)), grad=False))
    for red in ("sum", "none"):
        yield Sample(T(_prob(rng, 3, 4)), T(rng.random((3, 4))), reduction=red)
    yield Sample(T(_prob(rng, 4, 3), "t"), T(rng.random((4, 3))), T(rng.random(3), grad=False))


def np_bce_logits(x: np.ndarray, y: np.ndarray, weight: Any = None, *, reduction: str = "mean",
                  pos_weight: Any = None) -> np.ndarray:
    pw = 1.0 if pos_weight is None else pos_weight
    sp = np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)  # softplus(-x)
    loss = (1 - y) * x + (1 + (pw - 1) * y) * sp
    return _reduce(loss if weight is None else loss * weight, reduction)


def _bcel_samples(rng: np.random.Generator) -> Iterable[Sample]:
    x = lambda *s: T(rng.standard_normal(s) * 3)  # noqa: E731
    yield Sample(x(2, 3), T(rng.random((2, 3))), T(rng.random((2, 3)), grad=False))
    yield Sample(x(2, 3), T(rng.random((2, 3))), None, reduction="sum", name="plain_sum")
    yield Sample(x(3, 4), T(rng.random((3, 4))), reduction="none")
    yield Sample(x(3, 4), T(rng.random((3, 4))), T(rng.random((3, 4)), grad=False),
                 reduction="sum", name="weighted_sum")
    for red in ("mean", "sum"):
        pw = T(rng.random(3) * 2, grad=False)  # torch has no gradient for pos_weight
        yield Sample(x(2, 3), T(rng.random((2, 3))), T(rng.random((2, 3)), grad=False),
                     reduction=red, pos_weight=pw, name=f"pos_weight_{red}")


def np_kl_div(a: np.ndarray, b: np.ndarray, *, reduction: str = "mean",
              log_target: bool = False) -> np.ndarray:
    if log_target:
        loss = np.exp(b) * (b - a)
    else:
        loss = np.where(b > 0, b * np.log(np.where(b > 0, b, 1)), 0) - b * a
    if reduction == "batchmean":
        return np.asarray(loss.sum() / a.shape[0])
    return _reduce(loss, reduction)


def _kl_samples(rng: np.random.Generator) -> Iterable[Sample]:
    lq = lambda *s: T(np.log(rng.random(s)))  # noqa: E731
    yield Sample(lq(2, 3), T(rng.random((2, 3))), reduction="batchmean")
    yield Sample(T(rng.standard_normal((2, 3)) * 3), lq(2, 3), reduction="sum", log_target=True)
    yield Sample(lq(3, 4), T(rng.random((3, 4))))
    yield Sample(lq(3, 4), T(rng.random((3, 4))), reduction="none")


def _loss(name: str, ref: Any, samples: Any, errors: list | None = None, **kw: Any) -> OpInfo:
    return OpInfo(name, getattr(F, name), ref, samples, torch_op=f"nn.functional.{name}",
                  error_inputs=errors or [], **kw)


LOSSES = [
    _loss("cross_entropy", np_cross_entropy, _ce_samples, [
        ErrorInput(lambda m: m.F.cross_entropy(m.randn(3, 5), m.tensor([0, 5, 1])), IndexError,
                   r"^Target 5 is out of bounds\."),
        ErrorInput(lambda m: m.F.cross_entropy(m.randn(3, 5), m.tensor([0, 5, 1])), IndexError,
                   r"Target 5 is out of bounds\. Expected class indices in \[0, 5\)",
                   torch=False),
        ErrorInput(lambda m: m.F.cross_entropy(m.randn(3, 5), m.tensor([0, 1])), ValueError,
                   r"Expected input batch_size \(3\) to match target batch_size \(2\)")]),
    _loss("nll_loss", np_nll_loss, _nll_samples, [
        ErrorInput(lambda m: m.F.nll_loss(m.randn(3, 5), m.tensor([0, -3, 1])), IndexError,
                   "Target -3 is out of bounds")]),
    _pointwise("mse_loss", lambda d: d * d, weighted=True),
    _pointwise("l1_loss", np.abs),
    _pointwise("smooth_l1_loss", _smooth_l1, beta=0.5),
    _pointwise("huber_loss", _huber, delta=0.6),
    _loss("binary_cross_entropy", np_bce, _bce_samples, [
        ErrorInput(lambda m: m.F.binary_cross_entropy(m.rand(3) + 2, m.rand(3)), RuntimeError,
                   "all elements of input should be between 0 and 1"),
        ErrorInput(lambda m: m.F.binary_cross_entropy(m.rand(3), m.rand(3, 1)), ValueError,
                   "is different to the input size")]),
    _loss("binary_cross_entropy_with_logits", np_bce_logits, _bcel_samples),
    _loss("kl_div", np_kl_div, _kl_samples),
]

MSE_REDUCTION_ERROR = ErrorInput(lambda m: m.F.mse_loss(m.randn(3), m.randn(3), reduction="avg"),
                                 ValueError, "avg is not a valid value for reduction")
LOSSES[2].error_inputs.append(MSE_REDUCTION_ERROR)  # mse_loss
