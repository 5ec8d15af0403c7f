"""op_db entries for convolution (conv1d/2d, conv_transpose1d/2d, unfold, fold) and pooling
(max, avg, adaptive; 1-D and 2-D): loop-over-offsets numpy references, samples for every
stride / padding / dilation / groups / ceil_mode option, and torch's error messages."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from op_db_pool import POOL
from opinfo import ErrorInput, OpInfo, Sample, T, exact

import lucid.nn.functional as F


def _pp(v: Any) -> tuple:
    return (v, v) if isinstance(v, int) else tuple(v)


def np_conv2d(x: np.ndarray, w: np.ndarray, b: Any = None, stride: tuple = (1, 1),
              pads: tuple = ((0, 0), (0, 0)), dil: tuple = (1, 1), groups: int = 1) -> np.ndarray:
    """Reference: zero-pad, then for each kernel offset add w[:, :, i, j] times a strided slice."""
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), pads[0], pads[1]))
    oh = (xp.shape[2] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (xp.shape[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, oc, oh, ow), np.result_type(x, w))
    ocg = oc // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                r, s = i * dil[0], j * dil[1]
                sl = xs[:, :, r:r + (oh - 1) * stride[0] + 1:stride[0],
                        s:s + (ow - 1) * stride[1] + 1:stride[1]]
                y[:, g * ocg:(g + 1) * ocg] += np.einsum("nchw,oc->nohw", sl,
                                                         w[g * ocg:(g + 1) * ocg, :, i, j])
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def np_conv_transpose2d(x: np.ndarray, w: np.ndarray, b: Any = None, stride: tuple = (1, 1),
                        pad: tuple = (0, 0), out_pad: tuple = (0, 0), dil: tuple = (1, 1),
                        groups: int = 1) -> np.ndarray:
    """Reference: scatter every input pixel times the kernel into the (cropped) output."""
    n, cin, h, wd = x.shape
    _, coutg, kh, kw = w.shape
    cing = cin // groups
    hf = (h - 1) * stride[0] + dil[0] * (kh - 1) + 1 + out_pad[0]
    wf = (wd - 1) * stride[1] + dil[1] * (kw - 1) + 1 + out_pad[1]
    full = np.zeros((n, coutg * groups, hf, wf))
    for g in range(groups):
        xs = x[:, g * cing:(g + 1) * cing]
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum("nchw,co->nohw", xs, w[g * cing:(g + 1) * cing, :, i, j])
                r, s = i * dil[0], j * dil[1]
                full[:, g * coutg:(g + 1) * coutg, r:r + (h - 1) * stride[0] + 1:stride[0],
                     s:s + (wd - 1) * stride[1] + 1:stride[1]] += contrib
    y = full[:, :, pad[0]:hf - pad[0], pad[1]:wf - pad[1]]
    return y if b is None else y + b.reshape(1, -1, 1, 1)


def _conv_pads(padding: Any, k: tuple, dil: tuple) -> tuple:
    if padding == "valid":
        return ((0, 0), (0, 0))
    if padding == "same":
        tot = [dil[i] * (k[i] - 1) for i in range(2)]
        return tuple((t // 2, t - t // 2) for t in tot)
    p = _pp(padding)
    return ((p[0], p[0]), (p[1], p[1]))


def conv2d_ref(x: np.ndarray, w: np.ndarray, b: Any = None, stride: Any = 1, padding: Any = 0,
               dilation: Any = 1, groups: int = 1) -> np.ndarray:
    if x.ndim == 3:
        return conv2d_ref(x[None], w, b, stride, padding, dilation, groups)[0]
    return np_conv2d(x, w, b, _pp(stride), _conv_pads(padding, w.shape[2:], _pp(dilation)),
                     _pp(dilation), groups)


def conv1d_ref(x: np.ndarray, w: np.ndarray, b: Any = None, stride: int = 1, padding: Any = 0,
               dilation: int = 1, groups: int = 1) -> np.ndarray:
    p = padding if isinstance(padding, str) else (0, padding)
    return conv2d_ref(x[..., None, :], w[:, :, None], b, (1, stride), p, (1, dilation),
                      groups)[..., 0, :]


def conv_transpose2d_ref(x: np.ndarray, w: np.ndarray, b: Any = None, stride: Any = 1,
                         padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                         dilation: Any = 1) -> np.ndarray:
    if x.ndim == 3:
        return conv_transpose2d_ref(x[None], w, b, stride, padding, output_padding, groups,
                                    dilation)[0]
    return np_conv_transpose2d(x, w, b, _pp(stride), _pp(padding), _pp(output_padding),
                               _pp(dilation), groups)


def conv_transpose1d_ref(x: np.ndarray, w: np.ndarray, b: Any = None, stride: int = 1,
                         padding: int = 0, output_padding: int = 0, groups: int = 1,
                         dilation: int = 1) -> np.ndarray:
    return conv_transpose2d_ref(x[..., None, :], w[:, :, None], b, (1, stride), (0, padding),
                                (0, output_padding), groups, (1, dilation))[..., 0, :]


def unfold_ref(x: np.ndarray, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
               stride: Any = 1) -> np.ndarray:
    """unfold is conv2d with an identity weight."""
    c, k = x.shape[-3], _pp(kernel_size)
    eye = np.eye(c * k[0] * k[1]).reshape(-1, c, *k)
    y = conv2d_ref(x, eye, None, stride, padding, dilation)
    return y.reshape(*y.shape[:-2], -1)


def fold_ref(cols: np.ndarray, output_size: Any, kernel_size: Any, dilation: Any = 1,
             padding: Any = 0, stride: Any = 1) -> np.ndarray:
    """fold is the transpose of unfold: scatter-add the columns through unfold's index map."""
    k = _pp(kernel_size)
    c = cols.shape[-2] // (k[0] * k[1])
    hw = _pp(output_size)
    n = int(np.prod(hw)) * c
    pos = unfold_ref(np.arange(n, dtype=np.float64).reshape(1, c, *hw) + 1, kernel_size,
                     dilation, padding, stride)[0].astype(np.int64) - 1
    batched = cols if cols.ndim == 3 else cols[None]
    out = np.zeros((batched.shape[0], n))
    for i in range(batched.shape[0]):
        np.add.at(out[i], pos[pos >= 0], batched[i][pos >= 0])
    out = out.reshape(-1, c, *hw)
    return out if cols.ndim == 3 else out[0]


def _r(rng: np.random.Generator, *shape: int) -> T:
    return T(rng.standard_normal(shape))


# (N, C, OC, H, W, kernel, stride, padding, dilation, groups)
CONV_CASES = [
    (2, 3, 4, 6, 7, (3, 3), 1, 1, 1, 1),
    (2, 4, 6, 7, 9, (3, 2), (2, 1), (0, 1), (1, 2), 2),
    (1, 4, 4, 6, 6, (3, 3), 2, 1, 1, 4),              # depthwise
    (2, 2, 6, 5, 5, (3, 3), 1, 1, 1, 2),              # depth multiplier 3
    (1, 3, 2, 5, 4, (1, 1), 1, 0, 1, 1),
    (2, 2, 3, 8, 8, (2, 2), 3, 2, 2, 1),
    (1, 2, 2, 3, 3, (3, 3), 1, 0, 1, 1),              # kernel = input
]


def _conv2d_samples(rng: np.random.Generator) -> Iterable[Sample]:
    for i, (n, c, oc, h, w, k, s, p, d, g) in enumerate(CONV_CASES):
        n = n if i == 0 else 1  # one batched case is enough; the rest stay small to gradcheck
        yield Sample(_r(rng, n, c, h, w), _r(rng, oc, c // g, *k), _r(rng, oc), s, p, d, g)
    for padding, k, d in [("same", (3, 3), 1), ("same", (4, 2), 1), ("same", (2, 3), (2, 1)),
                          ("valid", (3, 2), 1)]:
        yield Sample(_r(rng, 1, 2, 5, 6), _r(rng, 3, 2, *k), padding=padding, dilation=d)
    yield Sample(_r(rng, 2, 5, 5), _r(rng, 3, 2, 3, 3), padding=1, name="unbatched_no_bias")
    yield Sample(T(rng.standard_normal((1, 2, 4, 5)), "t"), _r(rng, 3, 2, 2, 2), name="strided")


def _conv1d_samples(rng: np.random.Generator) -> Iterable[Sample]:
    for s, p, d, g in [(1, 0, 1, 1), (2, 1, 1, 2), (1, "same", 2, 1), (3, 2, 2, 1)]:
        yield Sample(_r(rng, 2, 4, 9), _r(rng, 6, 4 // g, 3), _r(rng, 6), s, p, d, g)
    yield Sample(_r(rng, 4, 9), _r(rng, 6, 2, 3), None, 2, 1, 1, 2, name="unbatched")


# (N, Cin, Cout/groups, H, W, kernel, stride, padding, output_padding, dilation, groups)
CT_CASES = [
    (2, 3, 2, 4, 4, (3, 3), 1, 0, 0, 1, 1),
    (1, 4, 3, 3, 5, (3, 2), (2, 1), (1, 0), (1, 0), 1, 2),
    (2, 2, 2, 3, 3, (2, 2), 2, 0, 1, 2, 1),
    (1, 4, 1, 3, 4, (3, 3), 2, 1, 1, 1, 4),
    (1, 2, 3, 3, 3, (2, 2), 1, 0, 1, 2, 1),          # output_padding >= stride (dilation 2)
]


def _ct2d_samples(rng: np.random.Generator) -> Iterable[Sample]:
    for i, (n, cin, coutg, h, w, k, s, p, op, d, g) in enumerate(CT_CASES):
        n = n if i == 0 else 1
        yield Sample(_r(rng, n, cin, h, w), _r(rng, cin, coutg, *k), _r(rng, coutg * g), s, p,
                     op, g, d)
    yield Sample(_r(rng, 4, 3, 3), _r(rng, 4, 2, 2, 2), stride=2, name="unbatched")


def _ct1d_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(_r(rng, 2, 4, 5), _r(rng, 4, 3, 3), stride=2, padding=1, output_padding=1)
    yield Sample(_r(rng, 1, 4, 4), _r(rng, 4, 1, 2), _r(rng, 2), 1, 0, 0, 2, 2)
    yield Sample(_r(rng, 2, 3), _r(rng, 2, 3, 3), name="unbatched")


def _unfold_samples(rng: np.random.Generator) -> Iterable[Sample]:
    for k, d, p, s in [(2, 1, 0, 1), ((2, 3), (1, 2), (1, 0), (2, 1)), (3, 1, 1, 2)]:
        yield Sample(_r(rng, 1, 2, 6, 5), k, d, p, s)
    yield Sample(_r(rng, 2, 4, 3), 2, name="unbatched")


def _fold_samples(rng: np.random.Generator) -> Iterable[Sample]:
    for k, d, p, s, length in [(2, 1, 0, 1, 20), ((2, 3), (1, 2), (1, 0), (2, 1), 4),
                               (3, 1, 1, 2, 9)]:
        kk = _pp(k)
        yield Sample(_r(rng, 1, 2 * kk[0] * kk[1], length), (6, 5), k, d, p, s)
    yield Sample(_r(rng, 8, 6), (3, 4), 2, name="unbatched")


def _conv_err(call: Any, msg: str) -> ErrorInput:
    return ErrorInput(call, RuntimeError, exact(msg))


CONV2D_ERRORS = [_conv_err(c, m) for c, m in [
    (lambda m: m.F.conv2d(m.zeros(28, 28), m.zeros(16, 1, 3, 3)),
     "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [28, 28]"),
    (lambda m: m.F.conv2d(m.zeros(8, 1, 28, 28), m.zeros(16, 3, 3, 3)),
     "Given groups=1, weight of size [16, 3, 3, 3], expected input[8, 1, 28, 28] to have 3 "
     "channels, but got 1 channels instead"),
    (lambda m: m.F.conv2d(m.zeros(8, 1, 2, 2), m.zeros(16, 1, 3, 3)),
     "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size "
     "can't be greater than actual input size"),
    (lambda m: m.F.conv2d(m.zeros(1, 2, 2), m.zeros(16, 1, 3, 3)),
     "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size "
     "can't be greater than actual input size"),
    (lambda m: m.F.conv2d(m.zeros(8, 4, 5, 5), m.zeros(6, 2, 3, 3), groups=3),
     "Given groups=3, weight of size [6, 2, 3, 3], expected input[8, 4, 5, 5] to have 6 "
     "channels, but got 4 channels instead"),
    (lambda m: m.F.conv2d(m.zeros(8, 6, 5, 5), m.zeros(4, 2, 3, 3), groups=3),
     "Given groups=3, expected weight to be divisible by 3 at dimension 0, but got weight of "
     "size [[4, 2, 3, 3]] instead"),
    (lambda m: m.F.conv2d(m.zeros(8, 4, 5, 5), m.zeros(4, 2, 3, 3), groups=0),
     "non-positive groups is not supported"),
    (lambda m: m.F.conv2d(m.zeros(8, 4, 5, 5), m.zeros(4, 4, 3, 3), stride=0),
     "non-positive stride is not supported"),
    (lambda m: m.F.conv2d(m.zeros(8, 4, 5, 5), m.zeros(4, 4, 3, 3), padding=-1),
     "negative padding is not supported"),
    (lambda m: m.F.conv2d(m.zeros(8, 4, 5, 5), m.zeros(4, 4, 3, 3), dilation=0),
     "non-positive dilation is not supported"),
    (lambda m: m.F.conv2d(m.zeros(8, 4, 5, 5), m.zeros(4, 4, 3, 3), padding="same", stride=2),
     "padding='same' is not supported for strided convolutions"),
    (lambda m: m.F.conv2d(m.zeros(8, 4, 5, 5), m.zeros(4, 4, 3, 3), padding="foo"),
     "Invalid padding string: 'foo'"),
    (lambda m: m.F.conv2d(m.zeros(8, 4, 5, 5), m.zeros(4, 4, 3, 3), bias=m.zeros(3)),
     "Given weight of size [4, 4, 3, 3], expected bias to be 1-dimensional with 4 elements, but "
     "got bias of size [3] instead"),
    (lambda m: m.F.conv2d(m.zeros(8, 4, 5, 5), m.zeros(4, 4, 3, 3), stride=(1, 2, 3)),
     "expected stride to be a single integer value or a list of 2 values to match the "
     "convolution dimensions, but got stride=[1, 2, 3]"),
    (lambda m: m.F.conv2d(m.zeros(2, 4, 5, 5), m.zeros(0, 4, 3, 3)),
     "Given groups=1, expected weight to be at least 1 at dimension 0, but got weight of size "
     "[0, 4, 3, 3] instead"),
]] + [ErrorInput(lambda m: m.F.conv2d(m.zeros(1, 1, 3, 3), m.zeros(1, 1, 2, 2, dtype=m.float64)),
                 RuntimeError, "should be the same", torch=False)]

CONV1D_ERRORS = [_conv_err(c, m) for c, m in [
    (lambda m: m.F.conv1d(m.zeros(8, 4, 5, 5), m.zeros(4, 4, 3)),
     "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: "
     "[8, 4, 5, 5]"),
    (lambda m: m.F.conv1d(m.zeros(8, 4, 2), m.zeros(4, 4, 3)),
     "Calculated padded input size per channel: (2). Kernel size: (3). Kernel size can't be "
     "greater than actual input size"),
    (lambda m: m.F.conv1d(m.zeros(8, 3, 5), m.zeros(4, 4, 3)),
     "Given groups=1, weight of size [4, 4, 3], expected input[8, 3, 5] to have 4 channels, "
     "but got 3 channels instead"),
]]

CT2D_ERRORS = [_conv_err(c, m) for c, m in [
    (lambda m: m.F.conv_transpose2d(m.zeros(8, 3, 5, 5), m.zeros(4, 4, 3, 3)),
     "Given transposed=1, weight of size [4, 4, 3, 3], expected input[8, 3, 5, 5] to have 4 "
     "channels, but got 3 channels instead"),
    (lambda m: m.F.conv_transpose2d(m.zeros(3, 5), m.zeros(4, 4, 3, 3)),
     "Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of size: "
     "[3, 5]"),
    (lambda m: m.F.conv_transpose2d(m.zeros(8, 4, 5, 5), m.zeros(4, 4, 3, 3), stride=2,
                                    output_padding=2),
     "output padding must be smaller than either stride or dilation, but got "
     "output_padding_height: 2 output_padding_width: 2 stride_height: 2 stride_width: 2 "
     "dilation_height: 1 dilation_width: 1"),
    (lambda m: m.F.conv_transpose2d(m.zeros(1, 2, 5, 5), m.zeros(2, 2, 3, 3), bias=m.zeros(3)),
     "Given transposed=1, weight of size [2, 2, 3, 3], expected bias to be 1-dimensional with 2 "
     "elements, but got bias of size [3] instead"),
    (lambda m: m.F.conv_transpose2d(m.zeros(1, 2, 5, 5), m.zeros(2, 2, 3, 3), output_padding=-1),
     "negative output_padding is not supported"),
    (lambda m: m.F.conv_transpose2d(m.zeros(1, 2, 2, 2), m.zeros(2, 2, 3, 3), padding=3),
     "Given input size per channel: (2 x 2). Calculated output size per channel: (-2 x -2). "
     "Output size is too small"),
]]

UNFOLD_ERRORS = [_conv_err(c, m) for c, m in [
    (lambda m: m.F.unfold(m.zeros(2, 3, 5, 5), 6),
     "Given input with spatial size (5, 5), kernel_size=(6, 6), dilation=(1, 1), padding=(0, 0), "
     "calculated shape of the array of sliding blocks as (0, 0), but its components must be at "
     "least one."),
    (lambda m: m.F.unfold(m.zeros(2, 3, 5, 5), 2, stride=0),
     "stride should be greater than zero, but got stride_height: 0 stride_width: 0"),
    (lambda m: m.F.unfold(m.zeros(2, 3, 5, 5), 2, padding=-1),
     "padding should be non-negative, but got pad_height: -1 pad_width: -1"),
    (lambda m: m.F.unfold(m.zeros(2, 3, 5, 5, 2), 2),
     "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
     "dimensions for input, but got: [2, 3, 5, 5, 2]"),
]]

FOLD_ERRORS = [_conv_err(c, m) for c, m in [
    (lambda m: m.F.fold(m.zeros(2, 12, 9), (5, 5), 2),
     "Given output_size=(5, 5), kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), "
     "stride=(1, 1), expected size of input's dimension 2 to match the calculated number of "
     "sliding blocks 4 * 4 = 16, but got input.size(2)=9."),
    (lambda m: m.F.fold(m.zeros(2, 13, 16), (5, 5), 2),
     "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
     "got input.size(1)=13 and kernel_size=(2, 2)."),
    (lambda m: m.F.fold(m.zeros(2, 2, 12, 16), (5, 5), 2),
     "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
     "dimensions for input, but got: [2, 2, 12, 16]"),
    (lambda m: m.F.fold(m.zeros(2, 12, 16), (5, 5, 5), 2),
     "It is expected output_size equals to 2, but got size 3"),
]]


def _conv(name: str, ref: Any, samples: Any, errors: list) -> OpInfo:
    return OpInfo(name, getattr(F, name), ref, samples, torch_op=f"nn.functional.{name}",
                  rtol=1e-6, atol=1e-7, torch_rtol=1e-4, torch_atol=1e-4, error_inputs=errors)


CONV = [
    _conv("conv2d", conv2d_ref, _conv2d_samples, CONV2D_ERRORS),
    _conv("conv1d", conv1d_ref, _conv1d_samples, CONV1D_ERRORS),
    _conv("conv_transpose2d", conv_transpose2d_ref, _ct2d_samples, CT2D_ERRORS),
    _conv("conv_transpose1d", conv_transpose1d_ref, _ct1d_samples, []),
    _conv("unfold", unfold_ref, _unfold_samples, UNFOLD_ERRORS),
    _conv("fold", fold_ref, _fold_samples, FOLD_ERRORS),
]

CONV_POOL: list[OpInfo] = CONV + POOL
