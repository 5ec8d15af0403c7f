"""``lucid.nn.grad``, as ``torch.nn.grad``: the gradients of a convolution with respect to
its input (``conv{1,2,3}d_input``) and its weight (``conv{1,2,3}d_weight``) for a given
output gradient.

The input gradient is the transposed convolution of ``grad_output`` with ``weight`` (its
output padding chosen to give ``input_size``); the weight gradient is the backward of the
convolution itself. Both are differentiable again.

Example::

    import lucid.nn.grad as G
    gx = G.conv2d_input(x.shape, w, gy, stride=2, padding=1)
    gw = G.conv2d_weight(x, w.shape, gy, stride=2, padding=1)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import autograd
from .._tensor import Tensor
from ..kernels._geometry import conv_transpose_output_size
from ..ops.conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from ..ops.conv3d import conv3d, conv_transpose3d
from ..ops.creation import zeros

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _ntuple(v: Any, n: int) -> tuple[int, ...]:
    if isinstance(v, (tuple, list)):
        return tuple(int(i) for i in v)
    return (int(v),) * n


def _input_grad(n: int, transpose: Callable[..., Tensor], input_size: Any, weight: Tensor,
                grad_output: Tensor, stride: Any, padding: Any, dilation: Any,
                groups: int) -> Tensor:
    s, p, d = _ntuple(stride, n), _ntuple(padding, n), _ntuple(dilation, n)
    size = tuple(int(v) for v in input_size)[-n:]
    k = tuple(int(v) for v in weight.shape[2:])
    out = grad_output.shape[-n:]
    op = tuple(size[i] - conv_transpose_output_size(out[i], k[i], s[i], p[i], d[i], 0)
               for i in range(n))
    return transpose(grad_output, weight, None, s, p, op, groups, d)


def _weight_grad(conv: Callable[..., Tensor], input: Tensor, weight_size: Any,
                 grad_output: Tensor, stride: Any, padding: Any, dilation: Any,
                 groups: int) -> Tensor:
    higher = autograd.is_grad_enabled() and (input.requires_grad or grad_output.requires_grad)
    w = zeros(tuple(int(v) for v in weight_size), dtype=input.dtype, device=input.device,
              requires_grad=True)
    with autograd.enable_grad():
        out = conv(input, w, None, stride, padding, dilation, groups)
    return autograd.grad(out, w, grad_output, create_graph=higher)[0]


def conv1d_input(input_size: Any, weight: Tensor, grad_output: Tensor, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """Gradient of ``conv1d`` with respect to an input of ``input_size``.

    Example::

        G.conv1d_input((2, 3, 10), w, gy)
    """
    return _input_grad(1, conv_transpose1d, input_size, weight, grad_output, stride, padding,
                       dilation, groups)


def conv2d_input(input_size: Any, weight: Tensor, grad_output: Tensor, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """Gradient of ``conv2d`` with respect to an input of ``input_size``.

    Example::

        G.conv2d_input((2, 3, 8, 8), w, gy, padding=1)
    """
    return _input_grad(2, conv_transpose2d, input_size, weight, grad_output, stride, padding,
                       dilation, groups)


def conv3d_input(input_size: Any, weight: Tensor, grad_output: Tensor, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """Gradient of ``conv3d`` with respect to an input of ``input_size``.

    Example::

        G.conv3d_input((1, 2, 4, 6, 6), w, gy)
    """
    return _input_grad(3, conv_transpose3d, input_size, weight, grad_output, stride, padding,
                       dilation, groups)


def conv1d_weight(input: Tensor, weight_size: Any, grad_output: Tensor, stride: Any = 1,
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """Gradient of ``conv1d`` with respect to a weight of ``weight_size``.

    Example::

        G.conv1d_weight(x, (4, 3, 3), gy)
    """
    return _weight_grad(conv1d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)


def conv2d_weight(input: Tensor, weight_size: Any, grad_output: Tensor, stride: Any = 1,
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """Gradient of ``conv2d`` with respect to a weight of ``weight_size``.

    Example::

        G.conv2d_weight(x, (8, 3, 3, 3), gy, padding=1)
    """
    return _weight_grad(conv2d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)


def conv3d_weight(input: Tensor, weight_size: Any, grad_output: Tensor, stride: Any = 1,
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """Gradient of ``conv3d`` with respect to a weight of ``weight_size``.

    Example::

        G.conv3d_weight(x, (4, 2, 3, 3, 3), gy)
    """
    return _weight_grad(conv3d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)
