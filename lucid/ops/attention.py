"""``scaled_dot_product_attention`` (causal and boolean/float masks, dropout, GQA head
repeat).

Without dropout it is one op, ``Attention``: the scale is folded into the query (L x D
instead of L x S), the mask is added to the scores in place as a cached additive bias, the
softmax is the backend's fused row kernel, and the backward reads the attention weights it
saved (``softmax_backward``, then the two products), so no mask, scaled score or masked copy
is materialised per call. With dropout it is composed from the same ops.
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
    """``softmax(q k^T scale + bias) v`` in one node; saves q, k, v and the weights."""

    def forward(self, q, k, v, bias, scale):
        be = self.be
        self.scale = scale
        qs = be.mul(q, scale)
        scores = be.matmul(qs, be.swapaxes(k, -1, -2))
        if bias is not None:
            scores = be.add(scores, bias)
        attn = be.softmax(scores, -1)
        self.saved = (q, k, v, attn)
        self.bias = bias
        return be.matmul(attn, v)

    def backward(self, g):
        be, p = self.be, self.parents
        q, k, v, attn = self.saved
        gv = be.matmul(be.swapaxes(attn, -1, -2), g) if p[2] is not None else None
        gq = gk = None
        if p[0] is not None or p[1] is not None:
            ds = be.softmax_backward(attn, be.matmul(g, be.swapaxes(v, -1, -2)), -1)
            if p[0] is not None:
                gq = be.mul(be.matmul(ds, k), self.scale)
            if p[1] is not None:
                gk = be.matmul(be.swapaxes(ds, -1, -2), be.mul(q, self.scale))
        return gq, gk, gv, None

    def composite(self, ins):
        q, k, v, bias = ins[:4]
        scores = _mm.matmul(_e.mul(q, self.scale), _s.transpose(k, -2, -1))
        if bias is not None:
            scores = _e.add(scores, bias)
        return _mm.matmul(softmax(scores, -1), v)


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
    added to the scores. ``is_causal`` masks the upper triangle.

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
    sc = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and key.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = _m.repeat_interleave(key, rep, -3)
        value = _m.repeat_interleave(value, rep, -3)
    be = query._be
    if dropout_p == 0.0 and _fused_ok(query, key, value):
        bias = None
        if is_causal:
            bias = _make(be.from_numpy(_causal_bias(lq, s, query.dtype.np.name)), be, False,
                         None)
        elif attn_mask is not None:
            bias = attn_mask if attn_mask.dtype is not _dtype.bool_ else _sel.where(
                attn_mask, 0.0, -math.inf).to(query.dtype)
        return Attention.apply(query, key, value, bias, sc)
    scores = _e.mul(_mm.matmul(query, _s.transpose(key, -2, -1)), sc)
    if is_causal:
        attn_mask = _make(be.from_numpy(np.tril(np.ones((lq, s), dtype=bool))), be, False, None)
    if attn_mask is not None:
        if attn_mask.dtype is _dtype.bool_:
            scores = _sel.masked_fill(scores, _sel.logical_not(attn_mask), -math.inf)
        else:
            scores = _e.add(scores, attn_mask)
    attn = softmax(scores, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return _mm.matmul(attn, value)
