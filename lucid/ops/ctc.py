"""``ctc_loss``: connectionist temporal classification. One op whose forward runs the
alpha (forward-variable) recursion in log space and whose backward runs the beta recursion,
on host arrays (the recursion is sequential in time; each step is vectorised over the
extended label sequence)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _make
from ..autograd.function import Op
from . import elementwise as _e
from . import reduce as _r
from . import shape as _s
from ._util import loss_reduction

__all__ = ["ctc_loss"]

_NEG = -np.inf


def _extended(labels: np.ndarray, blank: int) -> tuple[np.ndarray, np.ndarray]:
    """l' = (blank, l1, blank, l2, ..., blank) and where the skip transition s-2 -> s is
    allowed (l'[s] is a label that differs from l'[s-2])."""
    ext = np.full(2 * len(labels) + 1, blank, dtype=np.int64)
    ext[1::2] = labels
    skip = np.zeros(len(ext), dtype=bool)
    skip[3::2] = labels[1:] != labels[:-1]
    return ext, skip


def _alpha(lp: np.ndarray, ext: np.ndarray, skip: np.ndarray, t_len: int) -> np.ndarray:
    s_len = len(ext)
    alpha = np.full((t_len, s_len), _NEG)
    alpha[0, 0] = lp[0, ext[0]]
    if s_len > 1:
        alpha[0, 1] = lp[0, ext[1]]
    for t in range(1, t_len):
        prev = alpha[t - 1]
        a = prev.copy()
        a[1:] = np.logaddexp(a[1:], prev[:-1])
        a[2:] = np.where(skip[2:], np.logaddexp(a[2:], prev[:-2]), a[2:])
        alpha[t] = a + lp[t, ext]
    return alpha


def _beta(lp: np.ndarray, ext: np.ndarray, skip: np.ndarray, t_len: int) -> np.ndarray:
    s_len = len(ext)
    beta = np.full((t_len, s_len), _NEG)
    beta[t_len - 1, s_len - 1] = lp[t_len - 1, ext[-1]]
    if s_len > 1:
        beta[t_len - 1, s_len - 2] = lp[t_len - 1, ext[-2]]
    nxt_skip = np.zeros(s_len, dtype=bool)
    nxt_skip[:-2] = skip[2:]  # s -> s+2 allowed
    for t in range(t_len - 2, -1, -1):
        nxt = beta[t + 1]
        b = nxt.copy()
        b[:-1] = np.logaddexp(b[:-1], nxt[1:])
        b[:-2] = np.where(nxt_skip[:-2], np.logaddexp(b[:-2], nxt[2:]), b[:-2])
        beta[t] = b + lp[t, ext]
    return beta


class CTCLoss(Op):
    """Per-sample negative log-likelihoods (N,) of the target sequences. The gradient is
    torch's: ``exp(log_probs) - posterior occupancy`` per frame (the gradient with respect to
    the logits when ``log_probs`` come from ``log_softmax``), zero past each input length."""

    def forward(self, lp, labels, in_lens, blank, zero_inf):
        be = self.be
        host = np.asarray(be.to_numpy(lp), dtype=np.float64)  # (T, N, C)
        n = host.shape[1]
        nll = np.zeros(n)
        self.paths = []
        for b in range(n):
            ext, skip = _extended(labels[b], blank)
            t_len = int(in_lens[b])
            if t_len == 0:
                nll[b] = 0.0 if len(labels[b]) == 0 else np.inf
                self.paths.append((ext, skip, None))
                continue
            alpha = _alpha(host[:, b], ext, skip, t_len)
            tail = alpha[t_len - 1, -2:] if len(ext) > 1 else alpha[t_len - 1, -1:]
            nll[b] = -np.logaddexp.reduce(tail)
            self.paths.append((ext, skip, alpha))
        self.inf = ~np.isfinite(nll)
        if zero_inf:
            nll = np.where(self.inf, 0.0, nll)
        self.host, self.nll, self.in_lens, self.zero_inf = host, nll, in_lens, zero_inf
        self.dtype = be.dtype_of(lp)
        return be.astype(be.from_numpy(nll), self.dtype)

    def backward(self, g):
        be = self.be
        gout = np.asarray(be.to_numpy(g), dtype=np.float64)
        host = self.host
        grad = np.zeros_like(host)
        for b, (ext, skip, alpha) in enumerate(self.paths):
            t_len = int(self.in_lens[b])
            if alpha is None or t_len == 0 or (self.zero_inf and self.inf[b]):
                continue
            lp = host[:t_len, b]
            beta = _beta(host[:, b], ext, skip, t_len)
            ab = alpha + beta  # (t_len, S'), lp counted twice
            lcab = np.full((t_len, host.shape[2]), _NEG)
            for s, c in enumerate(ext):
                lcab[:, c] = np.logaddexp(lcab[:, c], ab[:, s])
            with np.errstate(invalid="ignore", over="ignore"):
                gb = (np.exp(lp) - np.exp(lcab + self.nll[b] - lp)) * gout[b]
            grad[:t_len, b] = gb
        return be.astype(be.from_numpy(grad), self.dtype), None, None, None, None


def _lengths(v: Any, name: str, n: int) -> np.ndarray:
    arr = np.asarray(v.numpy() if isinstance(v, Tensor) else v).astype(np.int64).reshape(-1)
    if arr.shape[0] != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return arr


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The CTC loss of ``log_probs`` (T, N, C) (or unbatched (T, C)), log-softmaxed class
    scores per frame, against ``targets`` (N, S) padded or 1-D concatenated (sum of
    ``target_lengths``). ``reduction="mean"`` divides each loss by its target length, then
    averages over the batch; ``zero_infinity`` zeroes impossible alignments and their
    gradients. Targets outside [0, C) raise (torch reads them unchecked).

    Example::

        lp = lucid.randn(50, 4, 20).log_softmax(2)
        loss = F.ctc_loss(lp, lucid.randint(1, 20, (4, 10)), [50] * 4, [10, 8, 9, 10])
    """
    reduction = loss_reduction(reduction)
    if not log_probs.dtype.is_floating_point:
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for "
                                  f"'{_dtype.torch_name(log_probs.dtype)}'")
    unbatched = log_probs.ndim == 2
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional "
                           f"tensor for argument #1 'log_probs' (while checking arguments for "
                           f"ctc_loss_allocate_outputs)")
    lp = _s.unsqueeze(log_probs, 1) if unbatched else log_probs
    t_max, n, c = lp.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    in_lens = _lengths(input_lengths, "input_lengths", n)
    tg_lens = _lengths(target_lengths, "target_lengths", n)
    tg = np.asarray(targets.numpy()).astype(np.int64)  # type: ignore[attr-defined]
    if unbatched and tg.ndim == 1:
        tg = tg[None]
    for name, arr, top in (("input_lengths", in_lens, t_max),):
        for v in arr:
            if v < 0 or v > top:
                bound = f"at least 0, but got value {v}" if v < 0 else \
                    f"at most {top}, but got value {v}"
                raise RuntimeError(f"Expected {name} to have value {bound} (while checking "
                                   f"arguments for ctc_loss_allocate_outputs)")
    if (tg_lens < 0).any():
        raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value "
                           f"{int(tg_lens.min())}")
    if tg.ndim == 1:
        if tg.shape[0] != int(tg_lens.sum()):
            raise RuntimeError(f"Expected tensor to have size {int(tg_lens.sum())} at dimension "
                               f"0, but got size {tg.shape[0]} for argument #2 'targets' (while "
                               f"checking arguments for ctc_loss_allocate_outputs)")
        ends = np.cumsum(tg_lens)
        labels = [tg[e - k:e] for e, k in zip(ends, tg_lens)]
    else:
        if tg.shape[1] < int(tg_lens.max(initial=0)):
            raise RuntimeError(f"Expected tensor to have size at least {int(tg_lens.max())} at "
                               f"dimension 1, but got size {tg.shape[1]} for argument #2 "
                               f"'targets' (while checking arguments for "
                               f"ctc_loss_allocate_outputs)")
        labels = [tg[b, :k] for b, k in enumerate(tg_lens)]
    for lab in labels:
        if lab.size and (lab.min() < 0 or lab.max() >= c):
            raise RuntimeError(f"ctc_loss: target values must be in [0, {c}), got "
                               f"{int(lab.min() if lab.min() < 0 else lab.max())}")
    loss = CTCLoss.apply(lp, labels, in_lens, blank, bool(zero_infinity))
    if reduction == "mean":
        be = log_probs._be
        denom = _make(be.from_numpy(np.maximum(tg_lens, 1).astype(log_probs.dtype.np)), be,
                      False, None)
        return _r.mean(_e.div(loss, denom))
    if reduction == "sum":
        return _r.sum(loss)
    return _s.reshape(loss, ()) if unbatched else loss
