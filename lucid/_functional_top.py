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

__all__ = [
    "adaptive_avg_pool1d", "avg_pool1d", "batch_norm", "bilinear", "celu",
    "channel_shuffle", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "cosine_similarity", "dropout", "embedding", "group_norm", "hardshrink",
    "instance_norm", "layer_norm", "max_pool1d", "max_pool2d", "max_pool3d", "pairwise_distance",
    "pixel_shuffle", "pixel_unshuffle", "prelu", "selu", "threshold",
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
