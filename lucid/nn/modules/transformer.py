"""``Transformer`` and its encoder / decoder layers and stacks, as ``torch.nn.modules.transformer``
(``MultiheadAttention`` lives in attention.py). Parameter names match PyTorch's, so a torch
``state_dict()`` loads as is."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ... import ops
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..module import Module
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .normalization import LayerNorm

__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
           "TransformerDecoderLayer", "TransformerDecoder", "Transformer"]


def _activation(activation: str | Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    """``"relu"`` / ``"gelu"`` as their functions; a callable (or a Module) as given."""
    if isinstance(activation, str):
        if activation == "relu":
            return F.relu
        if activation == "gelu":
            return F.gelu
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


class _LayerBlocks(Module):
    """What the encoder and decoder layers share: the feed-forward block, the norms and
    dropouts around each block, and the self-attention block."""

    def _add_blocks(self, n: int, d_model: int, dim_feedforward: int, dropout: float,
                    activation: str | Callable[[Tensor], Tensor], layer_norm_eps: float,
                    norm_first: bool, bias: bool, kw: dict) -> None:
        """Register ``linear1``, ``dropout``, ``linear2``, ``norm1``..``norm{n}``,
        ``dropout1``..``dropout{n}`` and ``activation``, in torch's order."""
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        for i in range(1, n + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        for i in range(1, n + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.activation = _activation(activation)

    def _sa_block(self, x: Tensor, attn_mask: Any, key_padding_mask: Any, is_causal: bool
                  ) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)


class TransformerEncoderLayer(_LayerBlocks):
    """Self-attention + feed-forward block, as ``torch.nn.TransformerEncoderLayer``.

    Example::

        layer = nn.TransformerEncoderLayer(d_model=16, nhead=4, batch_first=True)
        layer(lucid.randn(2, 5, 16)).shape      # (2, 5, 16)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = F.relu,
                 layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self._add_blocks(2, d_model, dim_feedforward, dropout, activation, layer_norm_eps,
                         norm_first, bias, kw)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        """Encode ``src``.

        Example::

            layer(lucid.randn(2, 5, 16))
        """
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x


class TransformerEncoder(Module):
    """A stack of ``num_layers`` copies of an encoder layer, as ``torch.nn.TransformerEncoder``.

    Example::

        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4), num_layers=2)
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool | None = None
                ) -> Tensor:
        """Run every layer in turn.

        Example::

            enc(lucid.randn(5, 2, 16))
        """
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                        is_causal=bool(is_causal))
        return self.norm(out) if self.norm is not None else out


class TransformerDecoderLayer(_LayerBlocks):
    """Self-attention, attention over the encoder's output (``memory``) and feed-forward,
    as ``torch.nn.TransformerDecoderLayer`` (submodules ``self_attn``, ``multihead_attn``,
    ``linear1``/``linear2``, ``norm1``..``norm3``, ``dropout``, ``dropout1``..``dropout3``).

    ``activation`` is "relu", "gelu" or any callable; ``norm_first`` applies each LayerNorm
    before its block (pre-norm) instead of after the residual sum.

    Example::

        layer = nn.TransformerDecoderLayer(d_model=16, nhead=4, batch_first=True)
        tgt, memory = lucid.randn(2, 5, 16), lucid.randn(2, 7, 16)
        mask = nn.Transformer.generate_square_subsequent_mask(5)
        layer(tgt, memory, tgt_mask=mask).shape      # (2, 5, 16)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **kw)
        self._add_blocks(3, d_model, dim_feedforward, dropout, activation, layer_norm_eps,
                         norm_first, bias, kw)

    def _mha_block(self, x: Tensor, mem: Tensor, attn_mask: Any, key_padding_mask: Any,
                   is_causal: bool) -> Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        """Decode ``tgt`` attending to ``memory``.

        Masks follow ``MultiheadAttention``: a bool mask marks the positions that may NOT be
        attended, a float mask is added to the scores. ``tgt_is_causal`` is a hint that
        ``tgt_mask`` is the causal mask (the mask itself is still required).

        Example::

            layer(tgt, memory, tgt_key_padding_mask=pad)
        """
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x


class TransformerDecoder(Module):
    """A stack of ``num_layers`` copies of a decoder layer (deep copies, so every layer starts
    from the same parameters), then an optional ``norm``, as ``torch.nn.TransformerDecoder``.

    Example::

        dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(16, 4), num_layers=2)
        dec(lucid.randn(5, 2, 16), lucid.randn(7, 2, 16)).shape     # (5, 2, 16)
    """

    __constants__ = ["norm"]

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None
                 ) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        """Run every layer in turn on ``tgt``, each attending to ``memory``.

        Example::

            dec(tgt, memory, tgt_mask=nn.Transformer.generate_square_subsequent_mask(5))
        """
        # NOTE: torch turns tgt_is_causal=None into True when tgt_mask equals the causal
        # mask; the layers here attend through the mask either way, so None reads as False.
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask,
                        tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return self.norm(out) if self.norm is not None else out


class Transformer(Module):
    """Encoder-decoder transformer, as ``torch.nn.Transformer`` (submodules ``encoder`` and
    ``decoder``, each a stack with a final LayerNorm, unless ``custom_encoder`` /
    ``custom_decoder`` replace them). Every parameter with more than one dimension starts
    xavier-uniform.

    Example::

        model = nn.Transformer(d_model=16, nhead=4, num_encoder_layers=2,
                               num_decoder_layers=2, dim_feedforward=32, batch_first=True)
        src, tgt = lucid.randn(2, 7, 16), lucid.randn(2, 5, 16)
        out = model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(5))  # (2, 5, 16)
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = F.relu,
                 custom_encoder: Any | None = None, custom_decoder: Any | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            enc_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                activation, layer_norm_eps, batch_first,
                                                norm_first, bias, **kw)
            self.encoder = TransformerEncoder(
                enc_layer, num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            dec_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                activation, layer_norm_eps, batch_first,
                                                norm_first, bias, **kw)
            self.decoder = TransformerDecoder(
                dec_layer, num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        """Encode ``src`` into a memory, then decode ``tgt`` against it.

        Shapes: src (S, N, E), tgt (T, N, E) (batch first with ``batch_first``; unbatched
        (S, E) / (T, E)); src_mask (S, S), tgt_mask (T, T), memory_mask (T, S); key padding
        masks (N, S) / (N, T). The output has tgt's shape.

        Example::

            out = model(src, tgt, tgt_mask=mask, src_key_padding_mask=pad)
        """
        batched = src.dim() == 3
        bdim = 0 if self.batch_first else 1
        if batched and src.shape[bdim] != tgt.shape[bdim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None
                                        ) -> Tensor:
        """The (sz, sz) causal mask: -inf above the diagonal, 0.0 elsewhere (float32 unless
        ``dtype`` says otherwise), as torch's.

        Example::

            nn.Transformer.generate_square_subsequent_mask(3)
            # [[0., -inf, -inf], [0., 0., -inf], [0., 0., 0.]]
        """
        return ops.full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(1)
