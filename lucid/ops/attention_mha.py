"""``multi_head_attention_forward``, as ``torch.nn.functional``: the whole multi-head
attention of ``nn.MultiheadAttention`` from explicit weights (packed or separate in-
projections, ``bias_k`` / ``bias_v``, ``add_zero_attn``, static keys and values, key-padding
and attention masks), following torch's reference code step by step. With ``need_weights``
the attention is written out (scaled scores, softmax, dropout); without it the fused
``scaled_dot_product_attention`` computes it."""

from __future__ import annotations

import math
import warnings
from typing import Any

from .. import _dtype
from .._tensor import Tensor
from . import matmul as _mm
from . import movement as _m
from . import select as _sel
from .activation import softmax
from .attention import scaled_dot_product_attention
from .creation import zeros
from .dropout import dropout

__all__ = ["multi_head_attention_forward"]


def _shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                 attn_mask: Tensor | None, num_heads: int) -> bool:
    """torch's ``_mha_shape_check``: whether the input is batched."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D"
                                 f" but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be "
                                 f"2-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                     "instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _canonical_mask(mask: Tensor | None, mask_name: str, other_type: Any, other_name: str,
                    target_type: Any, check_other: bool = True) -> Tensor | None:
    """A bool mask as an additive float mask (True -> -inf); float masks pass through."""
    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask.dtype is not _dtype.bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      "same type for both instead.", stacklevel=3)
    if not is_float:
        mask = _sel.masked_fill(zeros(tuple(mask.shape), dtype=target_type, device=mask.device),
                                mask, -math.inf)
    return mask


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Tensor | None
                          ) -> tuple[Tensor, Tensor, Tensor]:
    e = q.shape[-1]
    if k is v and q is k:
        proj = _mm.linear(q, w, b).unflatten(-1, (3, e))
        return proj[..., 0, :], proj[..., 1, :], proj[..., 2, :]
    if k is v:
        w_q, w_kv = w.split([e, 2 * e])
        b_q, b_kv = (None, None) if b is None else b.split([e, 2 * e])
        kv = _mm.linear(k, w_kv, b_kv).unflatten(-1, (2, e))
        return _mm.linear(q, w_q, b_q), kv[..., 0, :], kv[..., 1, :]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return _mm.linear(q, w_q, b_q), _mm.linear(k, w_k, b_k), _mm.linear(v, w_v, b_v)


def _in_projection(q: Tensor, k: Tensor, v: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor,
                   b_q: Tensor | None, b_k: Tensor | None, b_v: Tensor | None
                   ) -> tuple[Tensor, Tensor, Tensor]:
    eq, ek, ev = q.shape[-1], k.shape[-1], v.shape[-1]
    for what, t, shape in (("query weights", w_q, (eq, eq)), ("key weights", w_k, (eq, ek)),
                           ("value weights", w_v, (eq, ev)), ("query bias", b_q, (eq,)),
                           ("key bias", b_k, (eq,)), ("value bias", b_v, (eq,))):
        if t is not None and tuple(t.shape) != shape:
            raise AssertionError(f"expecting {what} shape of {shape}, but got {t.shape}")
    return _mm.linear(q, w_q, b_q), _mm.linear(k, w_k, b_k), _mm.linear(v, w_v, b_v)


def _static(t: Tensor, name: str, bh: int, head_dim: int) -> Tensor:
    if t.shape[0] != bh:
        raise AssertionError(f"expecting {name}.size(0) of {bh}, but got {t.shape[0]}")
    if t.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {t.shape[2]}")
    return t


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention from explicit weights, as torch's (sequence-first layout:
    query (L, N, E) or (L, E), key / value (S, N, E) or (S, E)). Returns the output and,
    with ``need_weights``, the attention weights (averaged over heads unless
    ``average_attn_weights=False``).

    Example::

        out, w = F.multi_head_attention_forward(x, x, x, 16, 4, in_w, in_b, None, None,
                                                False, 0.0, out_w, out_b)
    """
    batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = (int(s) for s in query.shape)
    src_len = int(key.shape[0])
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       None if attn_mask is None else attn_mask.dtype,
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the fused attention applies the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, b_q, b_k, b_v)  # type: ignore[arg-type]
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _m.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _m.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _m.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = _m.pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    bh = bsz * num_heads
    q = q.reshape(tgt_len, bh, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bh, head_dim).transpose(0, 1) if static_k is None \
        else _static(static_k, "static_k", bh, head_dim)
    v = v.reshape(v.shape[0], bh, head_dim).transpose(0, 1) if static_v is None \
        else _static(static_v, "static_v", bh, head_dim)
    if add_zero_attn:
        k = _m.cat([k, zeros((bh, 1, head_dim), dtype=k.dtype, device=k.device)], 1)
        v = _m.cat([v, zeros((bh, 1, head_dim), dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = _m.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = _m.pad(key_padding_mask, (0, 1))
    src_len = int(k.shape[1])
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(
            -1, num_heads, -1, -1).reshape(bh, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        scores = _mm.matmul(q * math.sqrt(1.0 / float(q.shape[-1])), k.transpose(-2, -1))
        if attn_mask is not None:
            scores = attn_mask + scores
        weights = softmax(scores, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        out = _mm.matmul(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = _mm.linear(out, out_proj_weight, out_proj_bias)
        out = out.reshape(tgt_len, bsz, out.shape[1])
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = _mm.linear(out, out_proj_weight, out_proj_bias)
    out = out.reshape(tgt_len, bsz, out.shape[1])
    return (out if batched else out.squeeze(1)), None
