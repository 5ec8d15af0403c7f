"""Cross-entropy of linearly projected inputs, as ``torch.nn.functional.linear_cross_entropy``,
with torch's ``LinearCrossEntropyOptions`` (the chunking strategy of torch's memory-saving
path).

lucid always runs torch's reference path, ``cross_entropy(linear(input, w, b), target)``:
the values and gradients are the same as torch's chunked path, and ``options`` (validated as
torch does) change neither.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any, Literal

from .. import _dtype
from .._tensor import Tensor
from .loss import cross_entropy
from .matmul import linear

__all__ = ["LinearCrossEntropyOptions", "linear_cross_entropy"]

_ACC_DTYPES = (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Options of torch's chunked ``linear_cross_entropy`` (batch rows processed in chunks
    so the full logits are never stored): ``allow_retain_graph``, ``batch_chunk_size`` (rows
    per chunk, None: one chunk), ``chunking_method`` ("auto", "aspect_ratio",
    "aspect_ratio:N" or None), ``acc_policy`` ("auto", "accurate", "balanced", "compact") and
    ``acc_dtype`` (None or a floating dtype). Validated as torch's; lucid's
    ``linear_cross_entropy`` computes the same values whatever they say.

    Example::

        opts = nn.LinearCrossEntropyOptions(batch_chunk_size=1024)
        loss = F.linear_cross_entropy(x, w, target, options=opts)
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: Literal["accurate", "balanced", "compact", "auto"] = "auto"
    acc_dtype: Any = None

    def __post_init__(self) -> None:
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None
                or (isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)):
            raise ValueError("batch_chunk_size must be positive int or None, got "
                             f"{self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in _ACC_DTYPES:
            raise ValueError(
                "acc_dtype must be one of {None, lucid.float16, lucid.bfloat16, lucid.float32, "
                f"lucid.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op "
                "pick automatically.")


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0,
                         options: LinearCrossEntropyOptions | None = None) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``, as torch's.

    ``input`` is (in_features,) or (N, in_features); ``linear_weight`` (C, in_features) or
    (C, d_1, ..., d_K, in_features) for a K-dimensional loss (batched input only), with
    ``linear_bias`` shaped (C, d_1, ..., d_K). ``target`` holds class indices, or class
    probabilities shaped like the logits (then ``ignore_index`` must stay None; otherwise
    None means -100). ``weight``, ``reduction`` and ``label_smoothing`` are
    ``cross_entropy``'s.

    Example::

        loss = F.linear_cross_entropy(h, lm_head.weight, tokens, reduction="sum")
    """
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None and (out_features or reduction not in {"mean", "sum", "none"}
                                or label_smoothing != 0.0 or target.dtype != _dtype.int64):
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
            "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, "
            f"out_features == (). Got reduction={reduction!r}, "
            f"label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
            f"out_features={out_features}, linear_bias.shape="
            f"{tuple(linear_bias.shape) if linear_bias is not None else None}.", stacklevel=2)
    if out_features:
        rows = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape(rows, in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)
