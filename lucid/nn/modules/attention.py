"""``MultiheadAttention``, as ``torch.nn.MultiheadAttention`` (PyTorch keeps it in
``torch.nn.modules.activation``; it is importable from lucid's activation.py too)."""

from __future__ import annotations

import math
from typing import Any

from ... import _dtype, ops
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear

__all__ = ["MultiheadAttention"]


def _merge_masks(attn_mask: Tensor | None, key_padding_mask: Tensor | None, b: int, h: int,
                 lq: int, lk: int, dtype: Any) -> Tensor | None:
    """One additive float mask of shape (B, H, Lq, Lk) (or broadcastable), or None."""
    def additive(m: Tensor) -> Tensor:
        if m.dtype is _dtype.bool_:
            return ops.zeros(m.shape, dtype=dtype, device=m.device).masked_fill(m, -math.inf)
        return m.to(dtype)

    mask = None
    if attn_mask is not None:
        m = additive(attn_mask)
        if m.dim() == 2:
            m = m.reshape(1, 1, lq, lk)
        elif m.dim() == 3:
            m = m.reshape(b, h, lq, lk)
        mask = m
    if key_padding_mask is not None:
        kp = additive(key_padding_mask).reshape(b, 1, 1, lk)
        mask = kp if mask is None else mask + kp
    return mask


class MultiheadAttention(Module):
    """Multi-head attention, as ``torch.nn.MultiheadAttention`` (same parameters and
    state_dict keys: ``in_proj_weight``, ``in_proj_bias``, ``out_proj.weight``, ...).

    Example::

        mha = nn.MultiheadAttention(16, 4, batch_first=True)
        out, weights = mha(x, x, x)        # x: (batch, seq, 16)
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        if add_bias_kv or add_zero_attn or (kdim not in (None, embed_dim)) or \
                (vdim not in (None, embed_dim)):
            raise NotImplementedError("add_bias_kv, add_zero_attn and kdim/vdim != embed_dim "
                                      "are not supported")
        self.embed_dim = embed_dim
        self.kdim = self.vdim = embed_dim
        self._qkv_same_embed_dim = True
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self.in_proj_weight = Parameter(ops.empty((3 * embed_dim, embed_dim), device=device,
                                                  dtype=dtype))
        self.register_parameter("q_proj_weight", None)
        self.register_parameter("k_proj_weight", None)
        self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(ops.empty(3 * embed_dim, device=device, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        device=device, dtype=dtype)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` to ``key``/``value``; returns (output, weights or None).

        Example::

            out, w = mha(q, k, v, key_padding_mask=pad, need_weights=True)
        """
        unbatched = query.dim() == 2
        packed = query is key and key is value  # self-attention: one in-projection GEMM
        if unbatched:
            query, key, value = (t.unsqueeze(0 if self.batch_first else 1)
                                 for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        if not self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        b, lq, e = query.shape
        lk = key.shape[1]
        h, d = self.num_heads, self.head_dim
        w, bias = self.in_proj_weight, self.in_proj_bias
        if packed:
            q, k, v = F.linear(query, w, bias).split(e, dim=-1)
        else:
            bq, bk, bv = (None, None, None) if bias is None else (
                bias[:e], bias[e:2 * e], bias[2 * e:])
            q = F.linear(query, w[:e], bq)
            k = F.linear(key, w[e:2 * e], bk)
            v = F.linear(value, w[2 * e:], bv)
        q = q.reshape(b, lq, h, d).transpose(1, 2)
        k = k.reshape(b, lk, h, d).transpose(1, 2)
        v = v.reshape(b, lk, h, d).transpose(1, 2)
        if is_causal and attn_mask is None:  # is_causal is a hint about attn_mask, as torch's
            raise RuntimeError(
                "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                "module method `generate_square_subsequent_mask` to create this mask.")
        mask = _merge_masks(attn_mask, key_padding_mask, b, h, lq, lk, q.dtype)
        p = self.dropout if self.training else 0.0
        attn = None
        if need_weights:
            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d))
            if mask is not None:
                scores = scores + mask
            attn = F.softmax(scores, dim=-1)
            if p > 0.0:
                attn = F.dropout(attn, p)
            out = attn @ v
        else:  # as torch: the weights are not wanted, so the fused attention op computes it
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        out = out.transpose(1, 2).reshape(b, lq, e)
        out = self.out_proj(out)
        if not self.batch_first:
            out = out.transpose(0, 1)
        if unbatched:
            out = out.squeeze(0 if self.batch_first else 1)
        weights = None
        if attn is not None:
            weights = attn.mean(1) if average_attn_weights else attn
            if unbatched:
                weights = weights.squeeze(0)
        return out, weights
