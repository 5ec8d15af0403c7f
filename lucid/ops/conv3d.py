"""3-D convolutions as torch.nn.functional: conv3d and conv_transpose3d, composed from the 2-D
ones, so they run (and differentiate) on every backend.

conv3d gathers each output depth's kD input slices with ``unfold`` along depth (a depth-only
im2col), folds those slices into the channels and runs one 2-D convolution over
(N * oD, C * kD, H, W) with the weight viewed as (O, C / groups * kD, kH, kW). conv_transpose3d
runs one transposed 2-D convolution per input depth slice with the weight viewed as
(C_in, C_out / groups * kD, kH, kW), then ``fold`` sums the kD taps into their output depths
(a depth-only col2im) and the padding is cropped. Gradients flow through those ops. Arguments,
output shapes and error messages follow PyTorch.
"""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from ..kernels._geometry import (
    conv_output_size,
    conv_transpose_output_size,
    effective_kernel,
)
from .conv import (
    _check_common,
    _check_dtypes,
    _check_shape,
    _conv_pads,
    _fmt,
    _ints,
    conv2d,
    conv_transpose2d,
    fold,
    unfold,
)
from .movement import pad as _pad
from .shape import contiguous

__all__ = ["conv3d", "conv_transpose3d"]


def _empty(input: Tensor, weight: Tensor, bias: Tensor | None, shape: tuple) -> Tensor:
    """A zero-element result of ``shape`` in the graph of the operands (their gradients are
    zeros), for a batch or channels of 0 that the composed path cannot take."""
    t = input.reshape(-1)[:0].sum() + weight.reshape(-1)[:0].sum()  # type: ignore[attr-defined]
    if bias is not None:
        t = t + bias.reshape(-1)[:0].sum()  # type: ignore[attr-defined]
    return t.expand(*shape)  # type: ignore[attr-defined]


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D cross-correlation over (N, C, D, H, W) or unbatched (C, D, H, W) input, as torch's.

    ``weight`` is (out_channels, in_channels / groups, kD, kH, kW); ``padding`` is an int, a
    triple, or "valid" / "same" (stride 1 only).

    Example::

        x = lucid.randn(2, 3, 8, 16, 16)
        w = lucid.randn(4, 3, 3, 3, 3, requires_grad=True)
        F.conv3d(x, w, padding=1).shape            # (2, 4, 8, 16, 16)
    """
    name = "conv3d"
    unbatched = _check_common(input, weight, bias, 3, name)
    st = _ints(stride, 3, "stride", name)
    dil = _ints(dilation, 3, "dilation", name)
    ks = tuple(int(k) for k in weight.shape[2:])
    pads = _conv_pads(padding, ks, st, dil, name)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    x = input.unsqueeze(0) if unbatched else input
    xs, ws = tuple(int(s) for s in x.shape), tuple(int(s) for s in weight.shape)
    _check_shape(xs, ws, bias, groups, pads, st, dil, False, 3, (xs, ws))
    _check_dtypes(input, weight, bias)
    n, c, d, h, w = xs
    o, kd = ws[0], ks[0]
    od = conv_output_size(d, kd, st[0], *pads[0], dil[0])
    if not (n and c):  # torch: no input channels, no output ones
        oh, ow = (conv_output_size(xs[i], ks[i - 2], st[i - 2], *pads[i - 2], dil[i - 2])
                  for i in (3, 4))
        y = _empty(input, weight, bias, (n, o if c else 0, od, oh, ow))
        return y.squeeze(0) if unbatched else y
    (p0, p1) = pads[0]
    if p0 != p1:  # "same" with an even depth kernel: pad the extra row at the back
        x = _pad(x, (0, 0, 0, 0, p0, p1))
        d, p0 = d + p0 + p1, 0
    # (N, C, D, H*W) -> (N, C * kD, oD * H * W): the kD depth taps of every output depth
    cols = unfold(x.reshape(n, c, d, h * w), (kd, 1), (dil[0], 1), (p0, 0), (st[0], 1))
    x2 = cols.reshape(n, c * kd, od, h, w).permute(0, 2, 1, 3, 4).reshape(n * od, c * kd, h, w)
    w2 = weight.reshape(o, ws[1] * kd, ks[1], ks[2])
    hw_pad: Any = "same" if padding == "same" else (pads[1][0], pads[2][0])
    y = conv2d(x2, w2, bias, st[1:], hw_pad, dil[1:], groups)
    # back to (N, O, oD, oH, oW), row-major as torch's
    y = contiguous(y.reshape(n, od, o, y.shape[2], y.shape[3]).permute(0, 2, 1, 3, 4))
    return y.squeeze(0) if unbatched else y


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """3-D transposed convolution over (N, C, D, H, W) or (C, D, H, W), as torch's (note:
    groups before dilation).

    ``weight`` is (in_channels, out_channels / groups, kD, kH, kW); each output size is
    torch's (``conv_transpose_output_size`` in ``lucid/kernels/_geometry.py``).

    Example::

        up = F.conv_transpose3d(lucid.randn(1, 8, 4, 4, 4), lucid.randn(8, 2, 2, 2, 2), stride=2)
        up.shape                                   # (1, 2, 8, 8, 8)
    """
    name = "conv_transpose3d"
    unbatched = _check_common(input, weight, bias, 3, name)
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    st = _ints(stride, 3, "stride", name)
    pd = _ints(padding, 3, "padding", name)
    op = _ints(output_padding, 3, "output_padding", name)
    dil = _ints(dilation, 3, "dilation", name)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(v < 0 for v in op):
        raise RuntimeError("negative output_padding is not supported")
    x = input.unsqueeze(0) if unbatched else input
    xs, ws = tuple(int(s) for s in x.shape), tuple(int(s) for s in weight.shape)
    _check_shape(xs, ws, bias, groups, tuple((p, p) for p in pd), st, dil, True, 3, (xs, ws))
    if any(o >= s and o >= d for o, s, d in zip(op, st, dil)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_depth: {op[0]} output_padding_height: {op[1]} "
            f"output_padding_width: {op[2]} stride_depth: {st[0]} stride_height: {st[1]} "
            f"stride_width: {st[2]} dilation_depth: {dil[0]} dilation_height: {dil[1]} "
            f"dilation_width: {dil[2]}")
    _check_dtypes(input, weight, bias)
    n, c, d, h, w = xs
    kd = ws[2]
    out = [conv_transpose_output_size(xs[2 + i], ws[2 + i], st[i], pd[i], dil[i], op[i])
           for i in range(3)]
    if any(v < 0 for v in out) or (n and 0 in out):  # torch: no batch, any size >= 0
        raise RuntimeError(
            f"Given input size per channel: ({_fmt(xs[2:])}). Calculated output size per "
            f"channel: ({_fmt(out)}). Output size is too small")
    co = ws[1] * groups
    if not n:
        return _empty(input, weight, bias, (0, co, *out))
    # every input depth slice through a 2-D transposed convolution, the kD taps as channels
    x2 = x.permute(0, 2, 1, 3, 4).reshape(n * d, c, h, w)
    w2 = weight.reshape(c, ws[1] * kd, ws[3], ws[4])
    y2 = conv_transpose2d(x2, w2, None, st[1:], pd[1:], op[1:], groups, dil[1:])
    oh, ow = out[1], out[2]
    # (N, D, Cout, kD, oH, oW) -> (N, Cout * kD, D * oH * oW); fold sums the taps into depths
    cols = y2.reshape(n, d, co, kd, oh, ow).permute(0, 2, 3, 1, 4, 5).reshape(
        n, co * kd, d * oh * ow)
    full = (d - 1) * st[0] + effective_kernel(kd, dil[0])
    y = fold(cols, (full, oh * ow), (kd, 1), (dil[0], 1), 0, (st[0], 1))
    y = _pad(y, (0, 0, -pd[0], op[0] - pd[0]))        # crop the padding, add output_padding
    y = y.reshape(n, co, out[0], oh, ow)
    if bias is not None:
        y = y + bias.reshape(1, co, 1, 1, 1)
    return y.squeeze(0) if unbatched else y
