"""``scaled_dot_product_attention`` (causal and boolean/float masks, dropout, GQA head
repeat), composed from matmul and softmax."""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _make
from . import _autocast as _ac
from . import elementwise as _e
from . import matmul as _mm
from . import movement as _m
from . import select as _sel
from . import shape as _s
from .activation import softmax
from .dropout import dropout

__all__ = ["scaled_dot_product_attention"]


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
    scores = _e.mul(_mm.matmul(query, _s.transpose(key, -2, -1)), sc)
    be = query._be
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
