"""Functional forms of the layers, as ``torch.nn.functional`` (over ``lucid.ops``).

Every name is imported below from the ``lucid.ops`` file that defines it.

Example::

    import lucid.nn.functional as F
    y = F.relu(F.linear(x, w, b))
    loss = F.cross_entropy(logits, labels)
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops.activation import (
    celu,
    elu,
    gelu,
    glu,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softshrink,
    softsign,
    tanh,
    tanhshrink,
    threshold,
)
from ..ops.activation_inplace import celu_, elu_, hardtanh_, leaky_relu_, selu_, threshold_
from ..ops.attention import scaled_dot_product_attention
from ..ops.attention_mha import multi_head_attention_forward
from ..ops.conv import (
    conv1d,
    conv2d,
    conv_transpose1d,
    conv_transpose2d,
    fold,
    unfold,
)
from ..ops.conv3d import conv3d, conv_transpose3d
from ..ops.ctc import ctc_loss
from ..ops.distance import cosine_similarity, pairwise_distance, pdist
from ..ops.dropout import dropout, dropout1d, dropout2d, dropout3d
from ..ops.dropout_alpha import alpha_dropout, feature_alpha_dropout
from ..ops.embedding import embedding, one_hot
from ..ops.embedding_bag import embedding_bag
from ..ops.grid_sample import affine_grid, grid_sample
from ..ops.gumbel import gumbel_softmax
from ..ops.interpolate import interpolate, upsample, upsample_bilinear, upsample_nearest
from ..ops.linear_cross_entropy import linear_cross_entropy
from ..ops.loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from ..ops.loss_margin import (
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from ..ops.loss_nll import gaussian_nll_loss, poisson_nll_loss
from ..ops.lrn import local_response_norm
from ..ops.matmul import bilinear, linear
from ..ops.movement import pad
from ..ops.normalization import (
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    normalize,
    rms_norm,
)
from ..ops.pixel import channel_shuffle, native_channel_shuffle, pixel_shuffle, pixel_unshuffle
from ..ops.pool import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from ..ops.pool3d import adaptive_avg_pool3d, adaptive_max_pool3d, avg_pool3d, max_pool3d
from ..ops.pool_fractional import (
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from ..ops.pool_lp import lp_pool1d, lp_pool2d, lp_pool3d
from ..ops.pool_with_indices import (
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d_with_indices,
    max_pool1d_with_indices,
    max_pool2d_with_indices,
    max_pool3d_with_indices,
)
from ..ops.rrelu import rrelu, rrelu_
from ..ops.unpool import max_unpool1d, max_unpool2d, max_unpool3d
from . import grad  # noqa: F401  (torch.nn.functional.grad is torch.nn.grad too)

__all__ = [
    "linear", "pad", "relu_", "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu",
    "silu", "mish", "softplus", "hardtanh", "hardsigmoid", "hardswish", "sigmoid", "tanh",
    "logsigmoid", "softsign", "tanhshrink", "threshold", "hardshrink", "softshrink", "prelu",
    "glu", "softmax", "log_softmax", "softmin", "batch_norm", "layer_norm", "group_norm",
    "instance_norm", "rms_norm", "normalize", "cross_entropy", "nll_loss", "mse_loss",
    "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "dropout", "dropout1d", "dropout2d",
    "dropout3d", "embedding", "one_hot", "interpolate", "scaled_dot_product_attention",
    "bilinear", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "unfold", "fold",
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "cosine_similarity",
    "pairwise_distance", "embedding_bag", "affine_grid", "grid_sample", "gumbel_softmax",
    "local_response_norm", "ctc_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
    "margin_ranking_loss", "cosine_embedding_loss", "hinge_embedding_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
    "gaussian_nll_loss", "poisson_nll_loss",
    "conv3d", "conv_transpose3d", "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d",
    "adaptive_max_pool3d",
    "elu_", "celu_", "selu_", "hardtanh_", "leaky_relu_", "threshold_", "rrelu", "rrelu_",
    "alpha_dropout", "feature_alpha_dropout", "max_pool1d_with_indices",
    "max_pool2d_with_indices", "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices", "max_unpool1d",
    "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d",
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices", "multi_head_attention_forward",
    "native_channel_shuffle", "pdist", "upsample", "upsample_bilinear", "upsample_nearest",
    "linear_cross_entropy",
]


def relu_(input: Tensor) -> Tensor:
    """In-place ``relu``.

    Example::

        F.relu_(x)
    """
    return input.relu_()
