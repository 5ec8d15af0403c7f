"""torch's top-level forms of ``nn.functional`` ops (``torch.conv2d``, ``torch.dropout``,
``torch.layer_norm``, ``torch.embedding``, ...), with torch's top-level signatures.

Most are the functional op itself (same arguments, same order). The ones whose top-level
signature differs from the functional one are written out here: ``dropout(input, p, train)``,
the norms (weights before the running statistics, a trailing ``cudnn_enabled`` flag that
selects nothing here) and ``embedding(weight, indices, padding_idx=-1, ...)`` (a negative
``padding_idx`` means none).
"""

from __future__ import annotations

from typing import Any

from ._tensor import Tensor
from .nn import functional as F
from .ops.random import bernoulli
from .ops.rrelu import _rrelu

__all__ = [
    "adaptive_avg_pool1d", "avg_pool1d", "batch_norm", "bilinear", "celu",
    "channel_shuffle", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "cosine_similarity", "dropout", "embedding", "group_norm", "hardshrink",
    "instance_norm", "layer_norm", "max_pool1d", "max_pool2d", "max_pool3d", "pairwise_distance",
    "pixel_shuffle", "pixel_unshuffle", "prelu", "selu", "threshold",
    "binary_cross_entropy_with_logits", "constant_pad_nd", "convolution", "cosine_embedding_loss",
    "ctc_loss", "hinge_embedding_loss", "kl_div", "margin_ranking_loss", "max_pool1d_with_indices",
    "adaptive_max_pool1d", "poisson_nll_loss", "rms_norm", "triplet_margin_loss",
    "alpha_dropout", "alpha_dropout_", "celu_", "dropout_", "feature_alpha_dropout",
    "feature_alpha_dropout_", "feature_dropout", "feature_dropout_", "pdist", "rrelu", "rrelu_",
    "selu_", "threshold_",
]

adaptive_avg_pool1d = F.adaptive_avg_pool1d
avg_pool1d = F.avg_pool1d
bilinear = F.bilinear
channel_shuffle = F.channel_shuffle
conv1d = F.conv1d
conv2d = F.conv2d
conv3d = F.conv3d
conv_transpose1d = F.conv_transpose1d
conv_transpose2d = F.conv_transpose2d
conv_transpose3d = F.conv_transpose3d
cosine_similarity = F.cosine_similarity
hardshrink = F.hardshrink
pairwise_distance = F.pairwise_distance
pixel_shuffle = F.pixel_shuffle
pixel_unshuffle = F.pixel_unshuffle
prelu = F.prelu


def selu(input: Tensor) -> Tensor:
    """``torch.selu``: SELU of ``input``."""
    return F.selu(input)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``torch.celu``: CELU of ``input`` with ``alpha``."""
    return F.celu(input, alpha)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """``torch.threshold``: ``input`` where it is above ``threshold``, else ``value``."""
    return F.threshold(input, threshold, value)


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    """``torch.max_pool1d`` (an empty ``stride`` means the kernel size)."""
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    """``torch.max_pool2d`` (an empty ``stride`` means the kernel size)."""
    return F.max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    """``torch.max_pool3d`` (an empty ``stride`` means the kernel size)."""
    return F.max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.dropout(input, p, train)``: ``F.dropout`` with ``training=train``.

    Example::

        lucid.dropout(lucid.ones(4), 0.5, True)
    """
    return F.dropout(input, p, training=train)


def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05,
               cudnn_enable: bool = True) -> Tensor:
    """``torch.layer_norm`` (``cudnn_enable`` is accepted and selects nothing)."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05,
               cudnn_enabled: bool = True) -> Tensor:
    """``torch.group_norm`` (``cudnn_enabled`` is accepted and selects nothing)."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool = True) -> Tensor:
    """``torch.batch_norm``: weights first, then the running statistics (``F.batch_norm``
    takes them the other way round)."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                  running_mean: Tensor | None, running_var: Tensor | None,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool = True) -> Tensor:
    """``torch.instance_norm``: weights first, then the running statistics."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """``torch.embedding(weight, indices, ...)``: rows of ``weight`` (a negative
    ``padding_idx`` means none, as in torch's top-level form)."""
    return F.embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


# torch's top-level losses take ``reduction`` as ATen's enum: 0 none, 1 mean, 2 sum
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction: int) -> str:
    if isinstance(reduction, bool) or reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction (0: none, 1: mean, "
                         "2: sum)")
    return _REDUCTIONS[reduction]


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None,
                                     reduction: int = 1) -> Tensor:
    """``torch.binary_cross_entropy_with_logits`` (``reduction`` 0/1/2: none/mean/sum)."""
    return F.binary_cross_entropy_with_logits(input, target, weight,
                                              reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 1) -> Tensor:
    """``torch.cosine_embedding_loss`` (``reduction`` 0/1/2: none/mean/sum)."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: int = 1, zero_infinity: bool = False) -> Tensor:
    """``torch.ctc_loss`` (``reduction`` 0/1/2: none/mean/sum)."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction), zero_infinity)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 1) -> Tensor:
    """``torch.hinge_embedding_loss`` (``reduction`` 0/1/2: none/mean/sum)."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def kl_div(input: Tensor, target: Tensor, reduction: int = 1, *,
           log_target: bool = False) -> Tensor:
    """``torch.kl_div`` (``reduction`` 0/1/2: none/mean/sum; mean is over every element)."""
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 1) -> Tensor:
    """``torch.margin_ranking_loss`` (``reduction`` 0/1/2: none/mean/sum)."""
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """``torch.poisson_nll_loss`` (every argument required, as torch's top-level form)."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-06, swap: bool = False,
                        reduction: int = 1) -> Tensor:
    """``torch.triplet_margin_loss`` (``reduction`` 0/1/2: none/mean/sum)."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction))


def rms_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """``torch.rms_norm``: ``F.rms_norm``."""
    return F.rms_norm(input, normalized_shape, weight, eps)


def constant_pad_nd(input: Tensor, pad: Any, value: float = 0) -> Tensor:
    """``torch.constant_pad_nd``: ``F.pad`` with a constant (negative pads crop)."""
    return F.pad(input, list(pad), "constant", value)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """``torch.max_pool1d_with_indices``: the pooled values and their positions."""
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode,
                        return_indices=True)


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    """``torch.adaptive_max_pool1d``: the pooled values and their positions (torch's
    top-level form always returns both)."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
                dilation: Any, transposed: bool, output_padding: Any, groups: int) -> Tensor:
    """``torch.convolution``: the 1-, 2- or 3-d convolution (or transposed convolution) the
    weight's rank names, with every argument given."""
    nd = weight.ndim - 2
    if nd not in _CONV:
        raise RuntimeError(f"convolution(): expected a 3-, 4- or 5-d weight, got {weight.ndim}-d")
    if transposed:
        return _CONV_T[nd](input, weight, bias, stride, padding, output_padding, groups,
                           dilation)
    return _CONV[nd](input, weight, bias, stride, padding, dilation, groups)


pdist = F.pdist
celu_ = F.celu_
selu_ = F.selu_
threshold_ = F.threshold_
rrelu_ = F.rrelu_


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, generator: Any = None) -> Tensor:
    """``torch.rrelu``: ``F.rrelu``, its training slopes drawn from ``generator`` (default:
    the global one)."""
    return _rrelu(input, lower, upper, training, False, generator)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.dropout_``: ``dropout`` written into ``input``."""
    return F.dropout(input, p, training=train, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.alpha_dropout(input, p, train)``."""
    return F.alpha_dropout(input, p, training=train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``alpha_dropout`` written into ``input``."""
    return F.alpha_dropout(input, p, training=train, inplace=True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.feature_alpha_dropout(input, p, train)``: whole channels at once."""
    return F.feature_alpha_dropout(input, p, training=train)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``feature_alpha_dropout`` written into ``input``."""
    return F.feature_alpha_dropout(input, p, training=train, inplace=True)


def _feature_mask(input: Tensor, p: float) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError(f"Feature dropout requires at least 2 dimensions in the input, got "
                           f"{input.ndim}")
    shape = (input.shape[0], input.shape[1]) + (1,) * (input.ndim - 2)
    if p >= 1:
        return input.new_zeros(shape)  # type: ignore[attr-defined]
    keep = bernoulli(input.new_full(shape, 1.0 - p))  # type: ignore[attr-defined]
    return keep / (1.0 - p)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.feature_dropout(input, p, train)``: each (sample, channel) slice is zeroed
    with probability ``p`` and the rest scaled by ``1 / (1 - p)``."""
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0:
        return input
    return input * _feature_mask(input, p)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``feature_dropout`` written into ``input``."""
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0:
        return input
    return input.mul_(_feature_mask(input, p))  # type: ignore[attr-defined]
