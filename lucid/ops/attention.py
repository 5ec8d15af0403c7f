"""``scaled_dot_product_attention`` (causal and boolean/float masks, dropout, GQA head
repeat).

Without dropout it is one op, ``Attention``, over the backend's fused ``attention`` and
``attention_backward`` (on "cpu" one numba kernel per head, kernels/attention.py): the scale
is folded into the query, a causal mask is applied inside the row softmax, and the backward
reads the attention weights the forward saved, so no mask, scaled score or masked copy is
materialised per call. With dropout it is composed from the ops.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _make
from ..autograd.function import Op
from . import _autocast as _ac
from . import elementwise as _e
from . import matmul as _mm
from . import movement as _m
from . import reduce as _red
from . import select as _sel
from . import shape as _s
from .activation import softmax
from .dropout import dropout

__all__ = ["scaled_dot_product_attention"]


@lru_cache(maxsize=16)
def _causal_bias(lq: int, s: int, dt: str) -> np.ndarray:
    """0 on and below the diagonal (torch's ``tril`` of ones), -inf above, read-only."""
    b = np.where(np.tril(np.ones((lq, s), dtype=bool)), 0, -np.inf).astype(dt)
    b.setflags(write=False)
    return b


class Attention(Op):
    """``softmax(q k^T scale + bias) v`` in one node (the backend's fused ``attention``);
    saves q, k, v and the weights. ``causal`` masks the upper triangle instead of a bias."""

    def forward(self, q, k, v, bias, scale, causal):
        self.scale, self.causal = scale, causal
        out, attn = self.be.attention(q, k, v, bias, scale, causal)
        self.saved = (q, k, v, attn)
        return out

    def backward(self, g):
        q, k, v, attn = self.saved
        gq, gk, gv = self.be.attention_backward(q, k, v, attn, g, self.scale, self.causal)
        p = self.parents
        return (gq if p[0] is not None else None, gk if p[1] is not None else None,
                gv if p[2] is not None else None, None)

    def composite(self, ins):
        q, k, v, bias = ins[:4]
        scores = _mm.matmul(_e.mul(q, self.scale), _s.transpose(k, -2, -1))
        if self.causal:
            lq, s = q.shape[-2], k.shape[-2]
            bias = _make(q._be.from_numpy(_causal_bias(lq, s, q.dtype.np.name)), q._be, False,
                         None)
        if bias is not None:
            scores = _e.add(scores, bias)
        return _mm.matmul(_safe_softmax(scores), v)


def _safe_softmax(scores: Tensor) -> Tensor:
    """Softmax over the last dim where a row whose every score is -inf (a query that may
    see no key) gets the weights 0, not NaN: torch's softmax inside attention."""
    blind = _red.all(_sel.eq(scores, -math.inf), -1, True)
    return _sel.where(blind, 0.0, softmax(_sel.where(blind, 0.0, scores), -1))


def _fused_ok(q: Tensor, k: Tensor, v: Tensor) -> bool:
    return q.ndim >= 2 and q.dtype.is_floating_point and q.dtype is k.dtype is v.dtype and \
        tuple(k.shape[:-2]) == tuple(q.shape[:-2]) == tuple(v.shape[:-2])


# ---- attention, bilinear ------------------------------------------------------------------------


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(q @ k^T * scale + mask) @ v`` over the last two dims (torch's reference math).

    A bool ``attn_mask`` marks the positions that take part (False -> -inf); a float mask is
    added to the scores. ``is_causal`` masks the upper triangle. A query whose every key is
    masked gets zero weights and a zero output (torch's safe softmax), not NaN.

    Example::

        q = k = v = lucid.randn(2, 4, 5, 8)
        out = scaled_dot_product_attention(q, k, v, is_causal=True)    # (2, 4, 5, 8)
    """
    if _ac.state.on:
        query, key, value, attn_mask = _ac.cast("scaled_dot_product_attention", query, key,
                                                value, attn_mask)
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if attn_mask is not None and attn_mask.dtype is not _dtype.bool_ and \
            attn_mask.dtype is not query.dtype:
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_dtype.c10_name(attn_mask.dtype)} and  query.dtype: "
            f"{_dtype.c10_name(query.dtype)} instead.")
    lq, s = query.shape[-2], key.shape[-2]
    if scale is not None:
        sc = scale
    else:  # torch's 1 / sqrt(E) in double: +inf for an empty head dim
        sc = 1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else math.inf
    if enable_gqa and key.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = _m.repeat_interleave(key, rep, -3)
        value = _m.repeat_interleave(value, rep, -3)
    be = query._be
    if dropout_p == 0.0 and _fused_ok(query, key, value):
        bias = None
        if attn_mask is not None:
            bias = attn_mask if attn_mask.dtype is not _dtype.bool_ else _sel.where(
                attn_mask, 0.0, -math.inf).to(query.dtype)
        return Attention.apply(query, key, value, bias, sc, bool(is_causal))
    scores = _e.mul(_mm.matmul(query, _s.transpose(key, -2, -1)), sc)
    if is_causal:
        attn_mask = _make(be.from_numpy(np.tril(np.ones((lq, s), dtype=bool))), be, False, None)
    if attn_mask is not None:
        if attn_mask.dtype is _dtype.bool_:
            scores = _sel.masked_fill(scores, _sel.logical_not(attn_mask), -math.inf)
        else:
            scores = _e.add(scores, attn_mask)
    attn = _safe_softmax(scores)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return _mm.matmul(attn, value)
