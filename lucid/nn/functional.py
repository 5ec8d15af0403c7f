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
from ..ops.attention import scaled_dot_product_attention
from ..ops.conv import (
    conv1d,
    conv2d,
    conv_transpose1d,
    conv_transpose2d,
    fold,
    unfold,
)
from ..ops.dropout import dropout, dropout1d, dropout2d, dropout3d
from ..ops.embedding import embedding, one_hot
from ..ops.interpolate import interpolate
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
]


def relu_(input: Tensor) -> Tensor:
    """In-place ``relu``.

    Example::

        F.relu_(x)
    """
    return input.relu_()
