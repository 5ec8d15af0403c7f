"""2-D convolution kernels (forward, grad_input, grad_weight) and unfold/fold (im2col/col2im).

3x3, stride-1, undilated, ungrouped layers with enough channels and outputs go to
``winograd.py`` (F(2x2, 3x3): 16 products per 2x2 outputs instead of 36; F(4x4, 3x3): 36 per
4x4 instead of 144). ResNet-18's step, paired runs: 1203 -> 902 ms against this module alone,
then 679 -> 626 ms when the weight transforms were fixed and 4x4 maps of wide layers joined
(torch 841 in that pair), then (Zen 4) 519 -> 475 and 558 -> 527 ms with F(4x4, 3x3) on 8x8
and larger maps. The forward and weight gradient of 4x4, stride-2 layers with enough
channels take ``winograd.forward_s2`` / ``grad_weight_s2`` (F(2x2, 2x2) over the input's
phases). Every other layer takes the im2col kernels below.

Every pass is im2col + GEMM, one image at a time: the image's columns (Cg*KH*KW, OH*OW) are
built in a per-chunk buffer that stays in cache, then one BLAS GEMM per image and group writes
straight into the NCHW output (``w[g] @ cols``), or gives the column gradient
(``w[g].T @ gy``, scattered back by col2im), or adds to the chunk's weight gradient
(``gy @ cols.T``). Chunks of images go to numba's threads, each calling single-threaded BLAS:
the OpenBLAS behind numba's ``np.dot`` (scipy's) is set to one thread for the duration of the
call and restored after (``_threads.ONE_BLAS_THREAD``).
Small problems (and machines where that control is unavailable) run the serial build, whose
GEMMs use BLAS's own threads.

Measured on 2 cores, float32, N=64, 28x28, 3x3, padding 1, 16->32 channels unless noted, ms,
minimum over rounds interleaved with torch 2.13 and taken only while the machine was otherwise
idle (other processes share it; benchmarks/test_conv_pool.py has the side-by-side run):

    forward, one im2col of the whole batch (29 MB) + one numpy GEMM          24.9
    forward, per-image GEMMs in a serial loop, BLAS on 2 threads            11.7
    forward, images over 2 numba threads, BLAS 1 thread each                 3.5  (torch 2.1)
      grad_input 3.0, grad_weight 3.6, bias gradient 0.2
    forward + backward through autograd                                     11.4  (torch 7.2)
    same, first CNN layer 1->16 (no input gradient)                          0.70 (torch 1.03)
    direct loops instead of GEMM (one output plane per task, vectorised rows):
      1->16 4.5 vs 0.83, 16->32 130 vs 12.3, depthwise 32 groups 9.7 vs 5.7 (same run)

Per-image GEMMs run at 86-115 GFLOP/s on one core (64 x 32x144x784 in 4.0-5.4 ms, depending on
which operand is transposed; the layouts here avoid any transpose copy). Direct loops lost at
every shape tried (1, 3, 4, 8, 16 input channels, depthwise), so there is no direct path.
Building each column row as one shifted contiguous copy of the plane (stride 1, OW == W: the
"same" convolutions) instead of row by row took im2col of 64 images from 5.2 to 1.9 ms; loops
over sliced views (zero-based index) vectorise, loops indexing ``row[ow + off]`` did not
(numba's negative-index wraparound check).

Strided convolutions and maps narrower than 16 columns read their columns through a tap
table (``_tap_index``: the input offset of every kernel tap at every output position)
instead of per-row slices, and blocks of small-map images take their column gradient as
``gy^T @ w`` and their weight gradient from transposed columns, the layouts single-threaded
BLAS ran fastest. Measured after that change, float32, batch 32, 2 busy cores, ms per layer
forward + backward (lucid / torch 2.13, same minute): DCGAN's 4x4 stride-2 layers and
transposed layers 38 / 49 in all (was 67); ResNet-18's 512-channel 4x4 stage forward,
grad_input, grad_weight 23 / 23 / 27 (torch 29 / 37 / 59); its whole step 0.85-0.99x torch.

With torch imported first lucid runs numba's "workqueue" layer (see _threads); the same
forward + backward then measured 11.7 ms (torch 7.5), the first layer 1.0 ms (torch 0.93).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import _conv_kernels as K
from . import winograd
from ._chunks import launch
from ._chunks import split as _split
from ._geometry import conv_output_size
from ._threads import PARALLEL_LOCK

__all__ = [
    "conv2d",
    "conv2d_grad_input",
    "conv2d_grad_weight",
    "unfold",
    "fold",
    "supports",
]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
Pads = tuple[tuple[int, int], tuple[int, int]]


def supports(*arrays: np.ndarray) -> bool:
    """True when the kernels handle these arrays (all float32 or all float64)."""
    d = arrays[0].dtype
    return d in _FLOATS and all(a.dtype == d for a in arrays)


def _check_stride(stride: Sequence[int]) -> None:
    """The kernels' in-bounds window spans assume a positive stride (the op layer checks the
    rest; this keeps a direct call from reading outside its arrays)."""
    if stride[0] < 1 or stride[1] < 1:
        raise ValueError(f"stride should be greater than zero, but got stride_height: "
                         f"{stride[0]} stride_width: {stride[1]}")


def _work(n: int, oc: int, oh: int, ow: int, cg: int, kh: int, kw: int) -> int:
    # multiply-adds / 8: a parallel build pays from ~2M multiply-adds (~0.2 ms serial)
    return n * oc * oh * ow * cg * kh * kw // 8


# Images per GEMM: enough to give each product ~BLOCK_COLS columns. Per-image products on a
# small feature map reread the whole weight for a few columns (ResNet-18's 4x4 stage: a
# 512 x 4608 weight for 16 columns per image). Measured there, batch 32 float32, 2 cores:
# grad input 74 -> 47 ms, grad weight 96 -> 44 ms; maps of 16x16 and more gain nothing.
BLOCK_COLS = 256


def _block(n: int, nt: int, l: int) -> int:
    """Images per block: 1 for maps of >= BLOCK_COLS positions, else up to a chunk's count."""
    if l >= BLOCK_COLS or l == 0:
        return 1
    return max(1, min(-(-BLOCK_COLS // l), -(-n // nt)))


# Blocks of small-map images compute their weight gradient transposed, (CK, OCg) = columns @
# gy^T, where the columns are at least 4x the output channels and the product stays in cache
# (CK * OCg <= TRANSPOSED_MAX, at least TRANSPOSED_MIN_K positions a block). Measured, batch
# 32, float32, 2 cores, us, (OCg, CK) -> transposed:
#     DCGAN 32->64 4x4 s2 at 16x16   1029 ->  926     64->128 at 8x8     982 ->  949
#     CNN 16->32 3x3 at 14x14         626 ->  507     64->64 at 14x14   3440 -> 3108
# and against it: 1x1 convolutions (CK < OCg) 1.18-1.37x, 128->256 4x4 at 8x8 (CK * OCg 512k)
# 1.29x, 128->100 4x4 at 4x4 (16 positions a block) 2.0x.
TRANSPOSED_MAX = 1 << 17
TRANSPOSED_MIN_K = 64


def _transposed_grad_weight(ck: int, ocg: int, k: int) -> bool:
    return ck >= 4 * ocg and ck * ocg <= TRANSPOSED_MAX and k >= TRANSPOSED_MIN_K


def _c(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a)


def _geometry(x_shape: Sequence[int], w_shape: Sequence[int], groups: int
              ) -> tuple[int, int, int, int, int]:
    n, c = x_shape[0], x_shape[1]
    oc, cg = w_shape[0], w_shape[1]
    return n, c, oc, cg, groups


# --------------------------------------------------------------------------- public kernels


def conv2d(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None,
    stride: tuple[int, int],
    padding: Pads,
    dilation: tuple[int, int],
    groups: int,
) -> np.ndarray:
    """Cross-correlation of x (N, C, H, W) with w (OC, C/groups, KH, KW), plus bias (OC,).

    ``padding`` is ((top, bottom), (left, right)); returns (N, OC, OH, OW) in x's dtype.
    """
    _check_stride(stride)
    n, c, oc, cg, g = _geometry(x.shape, w.shape, groups)
    h, wd = x.shape[2], x.shape[3]
    kh, kw = w.shape[2], w.shape[3]
    (pt, pb), (pl, pr) = padding
    sh, sw = stride
    dh, dw = dilation
    oh = conv_output_size(h, kh, sh, pt, pb, dh)
    ow = conv_output_size(wd, kw, sw, pl, pr, dw)
    ocg = oc // g
    if n and winograd.applies(w.shape, stride, padding, dilation, g, (oh, ow), (h, wd)):
        return winograd.forward(x, w, bias, padding)
    if n and winograd.applies_s2(w.shape, stride, padding, dilation, g, (oh, ow), (h, wd)):
        return winograd.forward_s2(x, w, bias, padding)
    out = np.empty((n, g, ocg, oh, ow), x.dtype)
    x5 = _c(x).reshape(n, g, cg, h, wd)
    b2 = (np.zeros(oc, x.dtype) if bias is None else _c(bias)).reshape(g, ocg)
    if out.size == 0:
        return out.reshape(n, oc, oh, ow)
    w3 = _c(w).reshape(g, ocg, cg * kh * kw)
    nt = _split(n, _work(n, oc, oh, ow, cg, kh, kw))
    launch(K.GEMM_FORWARD, nt, x5, w3, b2, out, kh, kw, sh, sw, pt, pl, dh, dw,
         _block(n, nt, oh * ow))
    return out.reshape(n, oc, oh, ow)


def conv2d_grad_input(
    gy: np.ndarray,
    w: np.ndarray,
    input_shape: Sequence[int],
    stride: tuple[int, int],
    padding: Pads,
    dilation: tuple[int, int],
    groups: int,
) -> np.ndarray:
    """Gradient of ``conv2d`` w.r.t. x, given the output gradient gy (N, OC, OH, OW).

    Also the forward pass of a transposed convolution; ``input_shape`` may exceed what the
    windows cover (rows and columns no window reads get zero).
    """
    _check_stride(stride)
    n, c, oc, cg, g = _geometry(input_shape, w.shape, groups)
    h, wd = input_shape[2], input_shape[3]
    kh, kw = w.shape[2], w.shape[3]
    (pt, _), (pl, _) = padding
    sh, sw = stride
    dh, dw = dilation
    oh, ow = gy.shape[2], gy.shape[3]
    ocg = oc // g
    dx = np.empty((n, g, cg, h, wd), gy.dtype)
    if dx.size == 0:
        return dx.reshape(n, c, h, wd)
    if gy.size == 0:
        return np.zeros((n, c, h, wd), gy.dtype)
    if winograd.applies(w.shape, stride, padding, dilation, g, (oh, ow), (h, wd), True):
        return winograd.grad_input(gy, w, input_shape, padding)
    g5 = _c(gy).reshape(n, g, ocg, oh, ow)
    w3 = _c(w).reshape(g, ocg, cg * kh * kw)
    nt = _split(n, _work(n, oc, oh, ow, cg, kh, kw))
    launch(K.GEMM_GRAD_INPUT, nt, g5, w3, dx, kh, kw, sh, sw, pt, pl, dh, dw,
         _block(n, nt, oh * ow))
    return dx.reshape(n, c, h, wd)


def conv2d_grad_weight(
    x: np.ndarray,
    gy: np.ndarray,
    weight_shape: Sequence[int],
    stride: tuple[int, int],
    padding: Pads,
    dilation: tuple[int, int],
    groups: int,
) -> np.ndarray:
    """Gradient of ``conv2d`` w.r.t. its weight (OC, C/groups, KH, KW)."""
    _check_stride(stride)
    n, c, oc, cg, g = _geometry(x.shape, weight_shape, groups)
    h, wd = x.shape[2], x.shape[3]
    kh, kw = weight_shape[2], weight_shape[3]
    (pt, _), (pl, _) = padding
    sh, sw = stride
    dh, dw = dilation
    oh, ow = gy.shape[2], gy.shape[3]
    ocg = oc // g
    if n == 0 or gy.size == 0 or x.size == 0:
        return np.zeros(tuple(weight_shape), x.dtype)
    if winograd.applies(weight_shape, stride, padding, dilation, g, (oh, ow), (h, wd)):
        return winograd.grad_weight(x, gy, padding)
    if winograd.applies_s2(weight_shape, stride, padding, dilation, g, (oh, ow), (h, wd),
                           True):
        return winograd.grad_weight_s2(x, gy, padding)
    x5 = _c(x).reshape(n, g, cg, h, wd)
    g5 = _c(gy).reshape(n, g, ocg, oh, ow)
    nt = _split(n, _work(n, oc, oh, ow, cg, kh, kw))
    dwp = np.empty((nt, g, ocg, cg * kh * kw), x.dtype)
    nb = _block(n, nt, oh * ow)
    launch(K.GEMM_GRAD_WEIGHT, nt, x5, g5, dwp, kh, kw, sh, sw, pt, pl, dh, dw, nb,
         int(nb > 1 and _transposed_grad_weight(cg * kh * kw, ocg, nb * oh * ow)))
    res = dwp[0] if nt == 1 else dwp.sum(0)
    return res.reshape(tuple(weight_shape))


def unfold(
    x: np.ndarray,
    kernel_size: tuple[int, int],
    dilation: tuple[int, int],
    padding: tuple[int, int],
    stride: tuple[int, int],
) -> np.ndarray:
    """im2col as torch.nn.functional.unfold: (N, C, H, W) -> (N, C*KH*KW, OH*OW)."""
    _check_stride(stride)
    n, c, h, wd = x.shape
    kh, kw = kernel_size
    ph, pw = padding
    oh = conv_output_size(h, kh, stride[0], ph, ph, dilation[0])
    ow = conv_output_size(wd, kw, stride[1], pw, pw, dilation[1])
    cols = np.empty((n, c * kh * kw, oh * ow), x.dtype)
    if cols.size == 0:
        return cols
    ser, par = K.UNFOLD
    args = (_c(x), cols, kh, kw, stride[0], stride[1], ph, pw, dilation[0], dilation[1], oh, ow)
    if _split(n, cols.size, blas=False) > 1:
        with PARALLEL_LOCK:
            par(*args)
    else:
        ser(*args)
    return cols


def fold(
    cols: np.ndarray,
    output_hw: tuple[int, int],
    kernel_size: tuple[int, int],
    dilation: tuple[int, int],
    padding: tuple[int, int],
    stride: tuple[int, int],
) -> np.ndarray:
    """col2im as torch.nn.functional.fold: (N, C*KH*KW, L) -> (N, C, H, W), overlaps summed."""
    _check_stride(stride)
    n, ck, nl = cols.shape
    kh, kw = kernel_size
    h, wd = output_hw
    ph, pw = padding
    oh = conv_output_size(h, kh, stride[0], ph, ph, dilation[0])
    ow = conv_output_size(wd, kw, stride[1], pw, pw, dilation[1])
    if kh < 1 or kw < 1 or oh < 1 or ow < 1 or nl != oh * ow:
        raise ValueError(f"fold: cols of shape {tuple(cols.shape)} do not match kernel_size "
                         f"{tuple(kernel_size)} and output size {tuple(output_hw)} "
                         f"({max(oh, 0)} * {max(ow, 0)} blocks)")
    out = np.empty((n, ck // (kh * kw), h, wd), cols.dtype)
    if out.size == 0:
        return out
    ser, par = K.FOLD
    args = (_c(cols), out, kh, kw, stride[0], stride[1], ph, pw, dilation[0], dilation[1], oh, ow)
    if _split(n, cols.size, blas=False) > 1:
        with PARALLEL_LOCK:
            par(*args)
    else:
        ser(*args)
    return out
