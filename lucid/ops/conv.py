"""Convolutions as torch.nn.functional: conv1d, conv2d, conv_transpose1d, conv_transpose2d,
and unfold / fold (im2col / col2im). Arguments, defaults, shapes and error messages follow
PyTorch; the array work is the backend's ``conv2d`` / ``conv2d_grad_input`` /
``conv2d_grad_weight`` / ``unfold`` / ``fold`` (1-D and unbatched inputs are reshaped views).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Op
from ..kernels._geometry import (
    conv_output_size,
    conv_transpose_output_size,
    effective_kernel,
    same_padding,
)
from . import _autocast as _ac

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "unfold", "fold"]


def _lst(shape: Any) -> str:
    return str([int(s) for s in shape])


def _ints(v: Any, n: int, name: str, fname: str) -> tuple[int, ...]:
    """An int or a sequence of ints as n ints (a 1-element sequence is repeated)."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return (int(v),) * n
    if not isinstance(v, (tuple, list)) or not all(
            isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in v):
        raise TypeError(f"{fname}(): argument '{name}' must be tuple of ints, not {v!r}")
    t = tuple(int(i) for i in v)
    if len(t) == 1:
        return t * n
    if len(t) != n:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {n} values to match "
            f"the convolution dimensions, but got {name}={list(t)}")
    return t


class _Geom:
    """Everything a convolution call fixed: 4-D views, stride/padding/dilation, groups."""

    __slots__ = ("xs", "ws", "x4", "w4", "y4", "y", "stride", "pads", "dilation", "groups",
                 "transposed", "empty")

    def __init__(self, **kw: Any) -> None:
        for k, v in kw.items():
            setattr(self, k, v)
        # NOTE: a convolution with nothing to sum (no batch, channels or output) never reaches
        # a backend kernel: its result is the bias (or zeros), its gradients zeros. MLX's conv
        # dies on zero-size operands (SIGFPE, or BLAS's xerbla exiting the process).
        self.empty = 0 in (*self.x4, *self.w4, *self.y4)


class Convolution(Op):
    """conv1d/conv2d and their transposes: one node, as torch's ConvolutionBackward0."""

    def forward(self, x, w, b, geom):  # type: ignore[override]
        be = self.be
        p = geom
        self.geom = p
        # both kept, as torch's ConvolutionBackward0 keeps them: an in-place change to either
        # refuses the backward (neither costs memory: the node holds its inputs anyway)
        self.saved = (x, w)
        if p.empty:
            y = be.zeros(p.y4, be.dtype_of(x))
            if b is not None and p.y4[1]:
                y = be.add(y, be.reshape(b, (1, p.y4[1], 1, 1)))
            return be.reshape(y, p.y)
        x4, w4 = be.reshape(x, p.x4), be.reshape(w, p.w4)
        if not p.transposed:
            y = be.conv2d(x4, w4, b, p.stride, p.pads, p.dilation, p.groups)
        else:
            y = be.conv2d_grad_input(x4, w4, p.y4, p.stride, p.pads, p.dilation, p.groups)
            if b is not None:
                y = be.add(y, be.reshape(b, (1, p.y4[1], 1, 1)))
        return be.reshape(y, p.y)

    def backward(self, g):  # type: ignore[override]
        be = self.be
        p = self.geom
        x, w = self.saved
        g4 = be.reshape(g, p.y4)
        gx = gw = gb = None
        if p.empty:
            d = be.dtype_of(g)
            if self.parents[0] is not None:
                gx = be.zeros(p.xs, d)
            if self.parents[1] is not None:
                gw = be.zeros(p.ws, d)
        elif self.parents[0] is not None:
            w4 = be.reshape(w, p.w4)
            if not p.transposed:
                gx = be.conv2d_grad_input(g4, w4, p.x4, p.stride, p.pads, p.dilation, p.groups)
            else:
                gx = be.conv2d(g4, w4, None, p.stride, p.pads, p.dilation, p.groups)
                if tuple(gx.shape) != tuple(p.x4):  # output_padding >= stride (dilated case)
                    gx = be.getitem(gx, (slice(None), slice(None), slice(0, p.x4[2]),
                                         slice(0, p.x4[3])))
            gx = be.reshape(gx, p.xs)
        if self.parents[1] is not None and not p.empty:
            x4 = be.reshape(x, p.x4)
            if not p.transposed:
                gw = be.conv2d_grad_weight(x4, g4, p.w4, p.stride, p.pads, p.dilation, p.groups)
            else:
                gw = be.conv2d_grad_weight(g4, x4, p.w4, p.stride, p.pads, p.dilation, p.groups)
            gw = be.reshape(gw, p.ws)
        if self.parents[2] is not None and p.y4[1] != p.ws[0] and not p.transposed:
            gb = be.zeros((p.ws[0],), be.dtype_of(g))  # the bias went unused (no channels)
        elif self.parents[2] is not None:  # two reductions: 2x faster than one over (0, 2, 3)
            gb = be.sum(be.sum(be.reshape(g4, (p.y4[0], p.y4[1], p.y4[2] * p.y4[3])), 2), 0)
        return gx, gw, gb, None


def _check_common(input: Tensor, weight: Tensor, bias: Tensor | None, n: int, name: str) -> bool:
    """Rank checks; returns True for an unbatched input."""
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise TypeError(f"{name}(): argument 'input' and 'weight' must be Tensor")
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(
            f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, but got "
            f"input of size: {_lst(input.shape)}")
    if weight.dim() != n + 2:
        xdim = n + 2
        raise RuntimeError(
            f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight "
            f"{_lst(weight.shape)}, but got {xdim}-dimensional input of size "
            f"{_lst(input.shape if input.dim() == xdim else (1, *input.shape))} instead")
    return input.dim() == n + 1


def _check_dtypes(input: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    for t, what in ((weight, "weight"), (bias, "bias")):
        if t is not None and t.dtype is not input.dtype:
            n1, n2 = _dtype.torch_name(input.dtype), _dtype.torch_name(t.dtype)
            raise RuntimeError(
                f"Input type (lucid.{n1}Tensor) and {what} type (lucid.{n2}Tensor) should be "
                "the same")


def _check_shape(xs: tuple, ws: tuple, bias: Tensor | None, groups: int, pads: tuple,
                 stride: tuple, dilation: tuple, transposed: bool, n: int, shown: tuple) -> None:
    """torch's check_shape_forward, on batched shapes with 2 or 3 spatial dims (1-D
    convolutions carry H = 1); messages name the ``n`` spatial dims of the ``shown`` (batched
    input, weight) shapes."""
    nd = len(ws) - 2
    if any(p < 0 for pr in pads for p in pr):
        raise RuntimeError("negative padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    wl = _lst(shown[1])
    if ws[0] < groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, "
            f"but got weight of size {wl} instead")
    if ws[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size [{wl}] instead")
    want_c = ws[0] if transposed else ws[1] * groups
    if xs[1] != want_c:
        lead = "transposed=1" if transposed else f"groups={groups}"
        raise RuntimeError(
            f"Given {lead}, weight of size {wl}, expected input{_lst(shown[0])} to have {want_c} "
            f"channels, but got {xs[1]} channels instead")
    n_out = ws[1] * groups if transposed else ws[0]
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != n_out):
        lead = "transposed=1, weight" if transposed else "weight"
        raise RuntimeError(
            f"Given {lead} of size {wl}, expected bias to be 1-dimensional with {n_out} "
            f"elements, but got bias of size {_lst(bias.shape)} instead")
    if min(ws[2:]) <= 0:
        sizes = " ".join(f"kernel_{d}: {k}" for d, k in zip(("depth", "height", "width")[-nd:],
                                                            ws[2:]))
        raise RuntimeError(f"kernel size should be greater than zero, but got {sizes}")
    if transposed and nd == 2 and 0 in ws[:2]:
        raise RuntimeError(f"non-empty 2D or 4D weight tensor expected, but got: {list(ws)}")
    if not transposed:
        padded = [xs[2 + i] + pads[i][0] + pads[i][1] for i in range(nd)]
        kernel = [effective_kernel(ws[2 + i], dilation[i]) for i in range(nd)]
        if any(p < k for p, k in zip(padded, kernel)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({_fmt(padded[nd - n:])}). Kernel "
                f"size: ({_fmt(kernel[nd - n:])}). Kernel size can't be greater than actual "
                "input size")
    if xs[0] and xs[1] and 0 in xs[2:]:
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got "
                           f"input shape: {list(xs)}")


def _fmt(vals: Any) -> str:
    return " x ".join(str(int(v)) for v in vals)


def _conv_pads(padding: Any, ks: tuple, stride: tuple, dilation: tuple, name: str) -> tuple:
    """A convolution's ``padding`` (an int, one per dim, "valid" or "same") as a
    ``(before, after)`` pair per spatial dim of the kernel sizes ``ks``."""
    n = len(ks)
    if not isinstance(padding, str):
        return tuple((p, p) for p in _ints(padding, n, "padding", name))
    if padding == "valid":
        return ((0, 0),) * n
    if padding == "same":
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        return tuple(same_padding(k, d) for k, d in zip(ks, dilation))
    raise RuntimeError(f"Invalid padding string: '{padding}'")


def _conv(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
          dilation: Any, groups: int, n: int, name: str) -> Tensor:
    if _ac.state.on:
        input, weight, bias = _ac.cast(name, input, weight, bias)
    unbatched = _check_common(input, weight, bias, n, name)
    stride_t = _ints(stride, n, "stride", name)
    dil = _ints(dilation, n, "dilation", name)
    pads = _conv_pads(padding, tuple(weight.shape[2:]), stride_t, dil, name)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    xs = tuple(input.shape)
    x4 = (1, *xs) if unbatched else xs
    if n == 1:
        x4 = (x4[0], x4[1], 1, x4[2])
        w4 = (weight.shape[0], weight.shape[1], 1, weight.shape[2])
        pads, stride_t, dil = ((0, 0), *pads), (1, *stride_t), (1, *dil)
    else:
        w4 = tuple(weight.shape)
    _check_shape(x4, w4, bias, groups, pads, stride_t, dil, False, n,
                 (xs if not unbatched else (1, *xs), tuple(weight.shape)))
    _check_dtypes(input, weight, bias)
    oh = conv_output_size(x4[2], w4[2], stride_t[0], *pads[0], dil[0])
    ow = conv_output_size(x4[3], w4[3], stride_t[1], *pads[1], dil[1])
    y4 = (x4[0], w4[0] if x4[1] else 0, oh, ow)  # torch: no input channels, no output ones
    y = y4 if n == 2 else (y4[0], y4[1], ow)
    geom = _Geom(xs=xs, ws=tuple(weight.shape), x4=x4, w4=w4, y4=y4,
                 y=y[1:] if unbatched else y, stride=stride_t, pads=pads, dilation=dil,
                 groups=groups, transposed=False)
    return Convolution.apply(input, weight, bias, geom)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation over (N, C, H, W) or unbatched (C, H, W) input, as torch's.

    ``weight`` is (out_channels, in_channels / groups, kH, kW); ``padding`` is an int, a
    pair, or "valid" / "same" (stride 1 only; even kernels pad one more on the bottom/right).

    Example::

        x = lucid.randn(8, 3, 28, 28)
        w = lucid.randn(16, 3, 3, 3, requires_grad=True)
        y = F.conv2d(x, w, padding=1)            # (8, 16, 28, 28)
        F.conv2d(x, lucid.randn(3, 1, 3, 3), groups=3).shape   # depthwise: (8, 3, 26, 26)
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D cross-correlation over (N, C, L) or unbatched (C, L) input, as torch's.

    Example::

        y = F.conv1d(lucid.randn(4, 2, 50), lucid.randn(6, 2, 5), padding="same")  # (4, 6, 50)
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def _conv_t(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
            output_padding: Any, groups: int, dilation: Any, n: int, name: str) -> Tensor:
    if _ac.state.on:
        input, weight, bias = _ac.cast(name, input, weight, bias)
    unbatched = _check_common(input, weight, bias, n, name)
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    st = _ints(stride, n, "stride", name)
    pd = _ints(padding, n, "padding", name)
    op = _ints(output_padding, n, "output_padding", name)
    dil = _ints(dilation, n, "dilation", name)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(o < 0 for o in op):
        raise RuntimeError("negative output_padding is not supported")
    xs = tuple(input.shape)
    x4 = (1, *xs) if unbatched else xs
    w4 = tuple(weight.shape)
    if n == 1:
        x4 = (x4[0], x4[1], 1, x4[2])
        w4 = (w4[0], w4[1], 1, w4[2])
        st, pd, op, dil = (1, *st), (0, *pd), (0, *op), (1, *dil)
    pads = tuple((p, p) for p in pd)
    _check_shape(x4, w4, bias, groups, pads, st, dil, True, n,
                 (xs if not unbatched else (1, *xs), tuple(weight.shape)))
    if any(o >= s and o >= d for o, s, d in zip(op[-n:], st[-n:], dil[-n:])):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got " + (
                f"output_padding_height: {op[0]} output_padding_width: {op[1]} stride_height: "
                f"{st[0]} stride_width: {st[1]} dilation_height: {dil[0]} dilation_width: "
                f"{dil[1]}" if n == 2 else
                f"output_padding: {op[1]} stride: {st[1]} dilation: {dil[1]}"))
    _check_dtypes(input, weight, bias)
    out = [conv_transpose_output_size(x4[2 + i], w4[2 + i], st[i], pd[i], dil[i], op[i])
           for i in range(2)]
    if any(o < 0 for o in out) or (x4[0] and 0 in out):  # torch: no batch, any size >= 0
        ins = [x4[2], x4[3]][2 - n:]
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, ins))}). Calculated output "
            f"size per channel: ({' x '.join(map(str, out[2 - n:]))}). Output size is too small")
    y4 = (x4[0], w4[1] * groups, out[0], out[1])
    y = y4 if n == 2 else (y4[0], y4[1], y4[3])
    geom = _Geom(xs=xs, ws=tuple(weight.shape), x4=x4, w4=w4, y4=y4,
                 y=y[1:] if unbatched else y, stride=st, pads=pads, dilation=dil,
                 groups=groups, transposed=True)
    return Convolution.apply(input, weight, bias, geom)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """2-D transposed convolution ("deconvolution"), as torch's (note: groups before dilation).

    ``weight`` is (in_channels, out_channels / groups, kH, kW); the output is
    (N, out_channels, (H-1)*stride - 2*padding + dilation*(kH-1) + output_padding + 1, ...).

    Example::

        up = F.conv_transpose2d(lucid.randn(1, 8, 7, 7), lucid.randn(8, 4, 2, 2), stride=2)
        up.shape                                  # (1, 4, 14, 14)
    """
    return _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                   "conv_transpose2d")


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """1-D transposed convolution over (N, C, L) or (C, L), as torch's.

    Example::

        y = F.conv_transpose1d(lucid.randn(2, 4, 10), lucid.randn(4, 3, 3), stride=2)
        y.shape                                   # (2, 3, 21)
    """
    return _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                   "conv_transpose1d")


# ---- unfold / fold --------------------------------------------------------------------------


def _pair(v: Any, name: str) -> tuple[int, int]:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v), int(v)
    t = tuple(int(i) for i in v)
    if len(t) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(t)}")
    return t  # type: ignore[return-value]


def _window_args(kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> tuple:
    k, d = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    p, s = _pair(padding, "padding"), _pair(stride, "stride")
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{k[0]} kernel_width: {k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: "
                           f"{s[0]} stride_width: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{d[0]} dilation_width: {d[1]}")
    if p[0] < 0 or p[1] < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} "
                           f"pad_width: {p[1]}")
    return k, d, p, s


def _blocks(hw: tuple, k: tuple, d: tuple, p: tuple, s: tuple) -> tuple[int, int]:
    return tuple(conv_output_size(hw[i], k[i], s[i], p[i], p[i], d[i]) for i in range(2))


class Im2Col(Op):
    def forward(self, x, k, d, p, s):  # type: ignore[override]
        self.args = (k, d, p, s)
        self.hw = tuple(x.shape[2:])
        return self.be.unfold(x, k, d, p, s)

    def backward(self, g):  # type: ignore[override]
        k, d, p, s = self.args
        return self.be.fold(g, self.hw, k, d, p, s), None, None, None, None


class Col2Im(Op):
    def forward(self, cols, hw, k, d, p, s):  # type: ignore[override]
        self.args = (k, d, p, s)
        return self.be.fold(cols, hw, k, d, p, s)

    def backward(self, g):  # type: ignore[override]
        k, d, p, s = self.args
        return self.be.unfold(g, k, d, p, s), None, None, None, None, None


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """Sliding local blocks (im2col): (N, C, H, W) -> (N, C*kH*kW, L), as torch's.

    Example::

        cols = F.unfold(lucid.randn(2, 3, 5, 5), kernel_size=2)   # (2, 12, 16)
    """
    k, d, p, s = _window_args(kernel_size, dilation, padding, stride)
    if input.dim() not in (3, 4) or 0 in tuple(input.shape[-3:]):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
            f"non-zero dimensions for input, but got: {_lst(input.shape)}")
    hw = tuple(input.shape[-2:])
    ob = _blocks(hw, k, d, p, s)
    if ob[0] < 1 or ob[1] < 1:
        raise RuntimeError(
            f"Given input with spatial size {hw}, kernel_size={k}, dilation={d}, padding={p}, "
            f"calculated shape of the array of sliding blocks as {ob}, but its components must "
            "be at least one.")
    if input.dim() == 3:
        return unfold(input.unsqueeze(0), k, d, p, s).squeeze(0)
    return Im2Col.apply(input, k, d, p, s)


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Tensor:
    """Sum sliding local blocks back into an image (col2im): (N, C*kH*kW, L) -> (N, C, H, W).

    Example::

        x = lucid.randn(2, 3, 5, 5)
        y = F.fold(F.unfold(x, 2), (5, 5), 2)     # each pixel times the blocks covering it
    """
    hw = _pair(output_size, "output_size")
    k, d, p, s = _window_args(kernel_size, dilation, padding, stride)
    if input.dim() not in (2, 3) or 0 in tuple(input.shape[-2:]):
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
            f"non-zero dimensions for input, but got: {_lst(input.shape)}")
    ck = input.shape[-2]
    if ck % (k[0] * k[1]):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={ck} and kernel_size={k}.")
    ob = _blocks(hw, k, d, p, s)
    if input.shape[-1] != ob[0] * ob[1] or ob[0] < 1 or ob[1] < 1:
        raise RuntimeError(
            f"Given output_size={hw}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
            f"expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {max(ob[0], 0)} * {max(ob[1], 0)} = {max(ob[0], 0) * max(ob[1], 0)}, "
            f"but got input.size(2)={input.shape[-1]}.")
    if input.dim() == 2:
        return fold(input.unsqueeze(0), hw, k, d, p, s).squeeze(0)
    return Col2Im.apply(input, hw, k, d, p, s)
