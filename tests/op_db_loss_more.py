"""op_db entries for the margin, embedding, likelihood and CTC losses of
``lucid.nn.functional``, each with a numpy reference (CTC's enumerates every alignment) and
the calls that must fail. Targets that torch does not differentiate are non-grad leaves."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from opinfo import ErrorInput, OpInfo, Sample, T, U

import lucid.nn.functional as F


def _red(loss: np.ndarray, reduction: str = "mean") -> np.ndarray:
    if reduction == "mean":
        return np.asarray(loss.mean())
    if reduction == "sum":
        return np.asarray(loss.sum())
    return np.asarray(loss)


def _sp(x: np.ndarray) -> np.ndarray:
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)


def _dist(a: np.ndarray, b: np.ndarray, p: float = 2.0, eps: float = 1e-6) -> np.ndarray:
    return (np.abs(a - b + eps) ** p).sum(-1) ** (1 / p)


def _triplet_ref(a, p, n, margin=1.0, pn=2.0, eps=1e-6, swap=False, reduction="mean"):
    dp, dn = _dist(a, p, pn, eps), _dist(a, n, pn, eps)
    if swap:
        dn = np.minimum(dn, _dist(p, n, pn, eps))
    return _red(np.maximum(margin + dp - dn, 0), reduction)


def _triplet_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (4, 5))), T(U(rng, (4, 5))), T(U(rng, (4, 5))))
    yield Sample(T(U(rng, (4, 5))), T(U(rng, (4, 5))), T(U(rng, (4, 5))), 2.0, 1.0, 1e-6, True,
                 reduction="sum")
    yield Sample(T(U(rng, (5,))), T(U(rng, (5,))), T(U(rng, (5,))), 3.0, reduction="none")


def _twd_ref(a, p, n, *, margin=1.0, swap=False, reduction="mean"):
    return _triplet_ref(a, p, n, margin, 2.0, 1e-6, swap, reduction)


def _twd_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (4, 5))), T(U(rng, (4, 5))), T(U(rng, (4, 5))), margin=2.5,
                 swap=True)
    yield Sample(T(U(rng, (3, 2))), T(U(rng, (3, 2))), T(U(rng, (3, 2))), reduction="none")


def _mrl_ref(x1, x2, t, margin=0.0, reduction="mean"):
    return _red(np.maximum(-t * (x1 - x2) + margin, 0), reduction)


def _sign(rng: np.random.Generator, shape: tuple) -> T:
    return T(rng.choice([-1.0, 1.0], shape), grad=False)


def _mrl_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (6,))), T(U(rng, (6,))), _sign(rng, (6,)), 0.3)
    yield Sample(T(U(rng, (2, 3))), T(U(rng, (2, 3))), _sign(rng, (2, 3)), reduction="none")


def _cel_ref(x1, x2, t, margin=0.0, reduction="mean"):
    d = x1.ndim - 1
    cos = (x1 * x2).sum(d) / np.sqrt(((x1 * x1).sum(d) + 1e-12) * ((x2 * x2).sum(d) + 1e-12))
    loss = np.where(t == 1, 1 - cos, 0) + np.where(t == -1, np.maximum(cos - margin, 0), 0)
    return _red(loss, reduction)


def _cel_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (5, 3))), T(U(rng, (5, 3))), _sign(rng, (5,)), 0.2)
    yield Sample(T(U(rng, (4,))), T(U(rng, (4,))), T(np.array(-1.0), grad=False), -0.5,
                 reduction="sum")


def _hel_ref(x, t, margin=1.0, reduction="mean"):
    loss = np.where(t != 1, np.maximum(margin - x, 0), 0) + np.where(t != -1, x, 0)
    return _red(loss, reduction)


def _hel_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (6,))), _sign(rng, (6,)), 0.7)
    yield Sample(T(U(rng, (2, 3))), _sign(rng, (2, 3)), reduction="none")


def _sml_ref(x, t, reduction="mean"):
    return _red(_sp(-t * x), reduction)


def _sml_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (2, 3))), _sign(rng, (2, 3)))
    yield Sample(T(U(rng, (5,))), _sign(rng, (5,)), reduction="none")


def _mlsm_ref(x, t, weight=None, reduction="mean"):
    loss = t * _sp(-x) + (1 - t) * _sp(x)
    if weight is not None:
        loss = loss * weight
    return _red(loss.sum(-1) / x.shape[-1], reduction)


def _mlsm_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3, 4))), T(rng.integers(0, 2, (3, 4)).astype(float), grad=False))
    yield Sample(T(U(rng, (3, 4))), T(rng.integers(0, 2, (3, 4)).astype(float), grad=False),
                 T(U(rng, (4,), 0.5, 1.5)), reduction="none")


def _mm_ref(x, y, p=1, margin=1.0, weight=None, reduction="mean"):
    x2 = x.reshape(-1, x.shape[-1])
    y1 = y.reshape(-1)
    out = np.zeros(len(y1))
    for i, yi in enumerate(y1):
        z = np.maximum(margin - x2[i, yi] + x2[i], 0) ** p
        z[yi] = 0
        out[i] = z.sum() / x2.shape[1] * (1.0 if weight is None else weight[yi])
    if x.ndim == 1 and reduction == "none":
        return out.reshape(y.shape)
    return _red(out, reduction)


def _mm_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (4, 5))), T(np.array([0, 4, 2, 2])))
    yield Sample(T(U(rng, (4, 5))), T(np.array([0, 4, 2, 1])), 2, 0.6,
                 T(U(rng, (5,), 0.5, 2), grad=False),
                 reduction="sum")
    yield Sample(T(U(rng, (5,))), T(np.array([3])), reduction="none")


def _mlm_ref(x, y, reduction="mean"):
    x2, y2 = x.reshape(-1, x.shape[-1]), y.reshape(-1, x.shape[-1])
    out = np.zeros(len(x2))
    c = x2.shape[1]
    for i in range(len(x2)):
        tg = []
        for v in y2[i]:
            if v < 0:
                break
            tg.append(v)
        for j in tg:
            for k in range(c):
                if k not in tg:
                    out[i] += max(0.0, 1 - (x2[i, j] - x2[i, k]))
    out /= c
    if x.ndim == 1:
        out = out.reshape(())
    return _red(out, reduction)


def _mlm_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3, 4))), T(np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 0, 0, 0]])))
    yield Sample(T(U(rng, (4,))), T(np.array([2, -1, 0, 0])), reduction="none")


def _gnll_ref(x, t, var, full=False, eps=1e-6, reduction="mean"):
    if var.shape != x.shape and var.shape == x.shape[:-1]:
        var = var[..., None]
    v = np.maximum(var, eps)
    loss = 0.5 * (np.log(v) + (x - t) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _red(loss, reduction)


def _gnll_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (4, 3))), T(U(rng, (4, 3))), T(U(rng, (4, 3), 0.2, 1.5)), full=True)
    yield Sample(T(U(rng, (4, 3))), T(U(rng, (4, 3))), T(U(rng, (4,), 0.2, 1.5)),
                 reduction="none")
    yield Sample(T(U(rng, (4, 3))), T(U(rng, (4, 3))), T(U(rng, (4, 1), 0.2, 1.5)),
                 reduction="sum")


def _pnll_ref(x, t, log_input=True, full=False, eps=1e-8, reduction="mean"):
    loss = np.exp(x) - t * x if log_input else x - t * np.log(x + eps)
    if full:
        ts = np.where(t > 1, t, 2.0)
        st = ts * np.log(ts) - ts + 0.5 * np.log(2 * math.pi * ts)
        loss = loss + np.where(t > 1, st, 0)
    return _red(loss, reduction)


def _pnll_samples(rng: np.random.Generator) -> Iterable[Sample]:
    counts = lambda s: T(rng.integers(0, 5, s).astype(float), grad=False)  # noqa: E731
    yield Sample(T(U(rng, (4, 3))), counts((4, 3)))
    yield Sample(T(U(rng, (4, 3), 0.2, 2.0)), counts((4, 3)), False, True, reduction="sum")
    yield Sample(T(U(rng, (5,))), counts((5,)), True, True, reduction="none")


# ---- CTC: the reference sums over every alignment ------------------------------------------------


def _collapse(path: tuple, blank: int) -> list:
    out, prev = [], None
    for s in path:
        if s != prev and s != blank:
            out.append(s)
        prev = s
    return out


def _ctc_ref(lp, targets, in_lens, tg_lens, blank=0, reduction="mean",
             zero_infinity=False) -> np.ndarray:
    c = lp.shape[-1]
    batched = lp.ndim == 3
    lp3 = lp if batched else lp[:, None]
    tg = targets if targets.ndim == 2 or not batched else None
    ends = np.cumsum(tg_lens)
    losses = []
    for b in range(lp3.shape[1]):
        if tg is None:
            lab = list(targets[ends[b] - tg_lens[b]:ends[b]])
        else:
            lab = list((tg[b] if tg.ndim == 2 else tg)[:tg_lens[b]])
        t_len = in_lens[b]
        total = -np.inf
        for path in itertools.product(range(c), repeat=t_len):
            if _collapse(path, blank) == lab:
                total = np.logaddexp(total, sum(lp3[t, b, s] for t, s in enumerate(path)))
        nll = -total
        if zero_infinity and not np.isfinite(nll):
            nll = 0.0
        losses.append(nll)
    out = np.array(losses)
    if reduction == "mean":
        return np.asarray((out / np.maximum(np.asarray(tg_lens), 1)).mean())
    if reduction == "sum":
        return np.asarray(out.sum())
    return out if batched else out.reshape(())


def _lsm(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    x = rng.standard_normal(shape)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _ctc_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(_lsm(rng, (5, 2, 3))), T(np.array([[1, 2], [1, 1]])), [5, 4], [2, 2], fd=False)
    yield Sample(T(_lsm(rng, (4, 2, 3))), T(np.array([2, 1, 1])), [4, 3], [1, 2],
                 reduction="sum", fd=False)
    yield Sample(T(_lsm(rng, (4, 3))), T(np.array([1, 2])), [4], [2], blank=0,
                 reduction="none", fd=False)
    yield Sample(T(_lsm(rng, (3, 2, 3))), T(np.array([[1, 1, 1], [2, 0, 0]])), [3, 3], [3, 1],
                 reduction="none", zero_infinity=True, fd=False)


def _loss(name: str, ref: Any, samples: Any, errors: list | None = None, op: Any = None,
          **kw: Any) -> OpInfo:
    return OpInfo(name, op or getattr(F, name), ref, samples, torch_op=f"nn.functional.{name}",
                  error_inputs=errors or [], **kw)


_RED = ErrorInput(lambda m: m.F.soft_margin_loss(m.randn(3), m.randn(3), reduction="x"),
                  ValueError, "x is not a valid value for reduction")

MORE_LOSSES = [
    OpInfo("triplet_margin_loss", F.triplet_margin_loss, _triplet_ref, _triplet_samples,
           torch_op="nn.functional.triplet_margin_loss", error_inputs=[
               ErrorInput(lambda m: m.F.triplet_margin_loss(m.randn(3, 4), m.randn(4),
                                                            m.randn(3, 4)), RuntimeError,
                          "The anchor, positive, and negative tensors are expected to have the "
                          "same number of dimensions, but got: anchor 2D, positive 1D, and "
                          "negative 2D inputs"),
               ErrorInput(lambda m: m.F.triplet_margin_loss(m.randn(3, 4), m.randn(3, 4),
                                                            m.randn(3, 4), margin=0),
                          ValueError, "margin must be greater than 0, got 0")]),
    _loss("triplet_margin_with_distance_loss", _twd_ref, _twd_samples, [
        ErrorInput(lambda m: m.F.triplet_margin_with_distance_loss(
            m.randn(3, 4), m.randn(3, 4), m.randn(3, 4), reduction="avg"), ValueError,
            "avg is not a valid value for reduction")]),
    _loss("margin_ranking_loss", _mrl_ref, _mrl_samples, [
        ErrorInput(lambda m: m.F.margin_ranking_loss(m.randn(3), m.randn(3), m.randn(3, 1)),
                   RuntimeError, "margin_ranking_loss : All input tensors should have same "
                                 "dimension")]),
    _loss("cosine_embedding_loss", _cel_ref, _cel_samples, [
        ErrorInput(lambda m: m.F.cosine_embedding_loss(m.randn(3, 4), m.randn(3, 4),
                                                       m.randn(3, 1)), RuntimeError,
                   "0D or 1D target tensor expected, multi-target not supported"),
        ErrorInput(lambda m: m.F.cosine_embedding_loss(m.randn(3), m.randn(3, 4), m.randn(3)),
                   RuntimeError, "1D target tensor expects 2D input tensors, but found inputs "
                                 "with sizes \\[3\\] and \\[3, 4\\]")]),
    _loss("hinge_embedding_loss", _hel_ref, _hel_samples, [
        ErrorInput(lambda m: m.F.hinge_embedding_loss(m.randn(3), m.randn(4)), RuntimeError,
                   "must match the size of tensor")]),
    _loss("soft_margin_loss", _sml_ref, _sml_samples, [_RED]),
    _loss("multilabel_soft_margin_loss", _mlsm_ref, _mlsm_samples, [
        ErrorInput(lambda m: m.F.multilabel_soft_margin_loss(m.randn(3, 4), m.rand(3, 4),
                                                             reduction="avg"),
                   ValueError, "avg is not valid")]),
    _loss("multi_margin_loss", _mm_ref, _mm_samples, [
        ErrorInput(lambda m: m.F.multi_margin_loss(m.randn(3, 4), m.tensor([0, 1, 2]), p=3),
                   ValueError, "only p == 1 and p == 2 supported"),
        ErrorInput(lambda m: m.F.multi_margin_loss(m.randn(3, 4), m.tensor([0, 1, 2]),
                                                   weight=m.randn(4, 1)),
                   ValueError, "weight must be one-dimensional"),
        ErrorInput(lambda m: m.F.multi_margin_loss(m.randn(3, 4), m.tensor([0, 1, 4])),
                   RuntimeError, "target out of range"),
        ErrorInput(lambda m: m.F.multi_margin_loss(m.randn(3, 4), m.tensor([0, 1])),
                   RuntimeError, "multi_margin_loss: target tensor should be 1-D with size "
                                 "equal to the number of input samples"),
        ErrorInput(lambda m: m.F.multi_margin_loss(m.randn(3, 4, 2), m.tensor([0, 1, 2])),
                   RuntimeError, "Expected non-empty vector or matrix with optional 0-dim "
                                 "batch size, but got: \\[3, 4, 2\\]")]),
    _loss("multilabel_margin_loss", _mlm_ref, _mlm_samples, [
        ErrorInput(lambda m: m.F.multilabel_margin_loss(m.randn(3, 4), m.tensor([0, 1, 2])),
                   RuntimeError, "inconsistent target size: \\[3\\] for input of size: "
                                 "\\[3, 4\\]"),
        ErrorInput(lambda m: m.F.multilabel_margin_loss(
            m.randn(2, 4), m.tensor([[0, 5, -1, 0], [1, -1, 0, 0]])), RuntimeError,
            "argument #2 'target' is out of range")]),
    _loss("gaussian_nll_loss", _gnll_ref, _gnll_samples, [
        ErrorInput(lambda m: m.F.gaussian_nll_loss(m.randn(3, 2), m.randn(3, 2),
                                                   -m.ones(3, 2)), ValueError,
                   "var has negative entry/entries"),
        ErrorInput(lambda m: m.F.gaussian_nll_loss(m.randn(3, 2), m.randn(3, 2), m.ones(2, 3)),
                   ValueError, "var is of incorrect size"),
        ErrorInput(lambda m: m.F.gaussian_nll_loss(m.randn(3, 2), m.randn(3, 2), m.ones(3, 2),
                                                   reduction="x"), ValueError, "x is not valid")]),
    _loss("poisson_nll_loss", _pnll_ref, _pnll_samples, [
        ErrorInput(lambda m: m.F.poisson_nll_loss(m.randn(3), m.randn(4)), RuntimeError,
                   "must match the size of tensor")]),
    # torch's CTC gradient is the logits' gradient through log_softmax, not the finite-difference
    # gradient of log_probs: the samples are fd=False (compared with torch's gradients; the
    # gradcheck through log_softmax is in tests/nn/test_nn_layers_more.py)
    _loss("ctc_loss", _ctc_ref, _ctc_samples, errors=[
        ErrorInput(lambda m: m.F.ctc_loss(m.randn(5, 2, 4), m.tensor([[1, 2, 3], [1, 1, 0]]),
                                          [6, 4], [3, 2]), RuntimeError,
                   "Expected input_lengths to have value at most 5, but got value 6"),
        ErrorInput(lambda m: m.F.ctc_loss(m.randn(5, 2, 4), m.tensor([[1, 2, 3], [1, 1, 0]]),
                                          [5, 4], [4, 2]), RuntimeError,
                   "Expected tensor to have size at least 4 at dimension 1, but got size 3 for "
                   "argument #2 'targets'"),
        ErrorInput(lambda m: m.F.ctc_loss(m.randn(5, 2, 4), m.tensor([[1, 2, 3], [1, 1, 0]]),
                                          [5], [3, 2]), RuntimeError,
                   "input_lengths must be of size batch_size"),
        ErrorInput(lambda m: m.F.ctc_loss(m.randn(5, 2, 4), m.tensor([[1, 2, 3], [1, 1, 0]]),
                                          [5, 4], [3, 2], blank=4), RuntimeError,
                   "blank must be in label range"),
        ErrorInput(lambda m: m.F.ctc_loss(m.randn(5, 2, 4), m.tensor([1, 2, 3, 1]), [5, 4],
                                          [3, 2]), RuntimeError,
                   "Expected tensor to have size 5 at dimension 0, but got size 4"),
        ErrorInput(lambda m: m.F.ctc_loss(m.randn(5, 2, 4), m.tensor([[1, 2, 7], [1, 1, 0]]),
                                          [5, 4], [3, 2]), RuntimeError,
                   "ctc_loss: target values must be in \\[0, 4\\)", torch=False)]),
]
