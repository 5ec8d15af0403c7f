"""Fold an eval-mode BatchNorm into the preceding Conv or Linear (``torch.nn.utils.fusion``).

Example::

    conv, bn = nn.Conv2d(3, 8, 3).eval(), nn.BatchNorm2d(8).eval()
    fused = nn.utils.fuse_conv_bn_eval(conv, bn)       # fused(x) == bn(conv(x))
"""

from __future__ import annotations

import copy
from typing import TypeVar

from ... import ops
from ..._tensor import Tensor
from ..module import Module
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]

ConvT = TypeVar("ConvT", bound=Module)
LinearT = TypeVar("LinearT", bound=Module)


def fuse_conv_bn_eval(conv: ConvT, bn: Module, transpose: bool = False) -> ConvT:
    """A copy of ``conv`` whose weight and bias include the eval-mode ``bn`` that follows
    it (``transpose=True`` for a ConvTranspose). Both must be in eval mode.

    Example::

        fused = nn.utils.fuse_conv_bn_eval(conv.eval(), bn.eval())
    """
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_conv = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_conv.weight, fused_conv.bias = fuse_conv_bn_weights(
        fused_conv.weight, fused_conv.bias, bn.running_mean, bn.running_var, bn.eps,
        bn.weight, bn.bias, transpose)
    return fused_conv


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor,
                         bn_eps: float, bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """The fused ``(weight, bias)`` Parameters of a conv followed by an eval BatchNorm.

    Example::

        w, b = nn.utils.fuse_conv_bn_weights(conv.weight, conv.bias, bn.running_mean,
                                             bn.running_var, bn.eps, bn.weight, bn.bias)
    """
    conv_weight_dtype = conv_w.dtype
    conv_bias_dtype = conv_b.dtype if conv_b is not None else conv_weight_dtype
    if conv_b is None:
        conv_b = ops.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = ops.ones_like(bn_rm)
    if bn_b is None:
        bn_b = ops.zeros_like(bn_rm)
    bn_var_rsqrt = ops.rsqrt(bn_rv + bn_eps)
    if transpose:
        shape = [1, -1] + [1] * (len(conv_w.shape) - 2)
    else:
        shape = [-1, 1] + [1] * (len(conv_w.shape) - 2)
    fused_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(dtype=conv_weight_dtype)
    fused_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(dtype=conv_bias_dtype)
    return (Parameter(fused_w, conv_w.requires_grad),
            Parameter(fused_b, conv_b.requires_grad))


def fuse_linear_bn_eval(linear: LinearT, bn: Module) -> LinearT:
    """A copy of ``linear`` whose weight and bias include the eval-mode ``bn`` that follows
    it. Both must be in eval mode.

    Example::

        fused = nn.utils.fuse_linear_bn_eval(nn.Linear(4, 8).eval(), nn.BatchNorm1d(8).eval())
    """
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_linear = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, "
            f"got linear.out_features={linear.out_features} and "
            f"bn.num_features={bn.num_features}")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_linear.weight, fused_linear.bias = fuse_linear_bn_weights(
        fused_linear.weight, fused_linear.bias, bn.running_mean, bn.running_var, bn.eps,
        bn.weight, bn.bias)
    return fused_linear


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor,
                           bn_rv: Tensor, bn_eps: float, bn_w: Tensor, bn_b: Tensor
                           ) -> tuple[Parameter, Parameter]:
    """The fused ``(weight, bias)`` Parameters of a Linear followed by an eval BatchNorm.

    Example::

        w, b = nn.utils.fuse_linear_bn_weights(lin.weight, lin.bias, bn.running_mean,
                                               bn.running_var, bn.eps, bn.weight, bn.bias)
    """
    linear_weight_dtype = linear_w.dtype
    linear_bias_dtype = linear_b.dtype if linear_b is not None else linear_weight_dtype
    if linear_b is None:
        linear_b = ops.zeros_like(bn_rm)
    bn_scale = bn_w * ops.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * bn_scale.unsqueeze(-1).to(dtype=linear_weight_dtype)
    fused_b = ((linear_b - bn_rm) * bn_scale + bn_b).to(dtype=linear_bias_dtype)
    return (Parameter(fused_w, linear_w.requires_grad),
            Parameter(fused_b, linear_b.requires_grad))
