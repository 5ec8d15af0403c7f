"""Layer helpers, as ``torch.nn.functional``: dropout (element and channel), embedding,
one_hot, interpolate (nearest, nearest-exact, linear, bilinear, trilinear),
scaled_dot_product_attention and bilinear.

Masks come from the global generator (``lucid.manual_seed``). Everything here except the
embedding lookup composes existing ops: the gradients are theirs.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _make
from ..autograd import grad_mode
from ..autograd.function import Op
from . import elementwise as _e
from . import index as _i
from . import matmul as _mm
from . import movement as _m
from . import reduce as _r
from . import select as _sel
from . import shape as _s
from .activation import softmax
from .inplace import inplace as _inplace
from .random import default_generator

__all__ = [
    "dropout", "dropout1d", "dropout2d", "dropout3d", "embedding", "one_hot", "interpolate",
    "scaled_dot_product_attention", "bilinear",
]


# ---- dropout ------------------------------------------------------------------------------------


def _keep_mask(input: Tensor, shape: tuple[int, ...], p: float) -> Tensor:
    be = input._be
    rng = default_generator.rng
    keep = rng.random(shape, dtype=np.float64) >= p
    scale = keep.astype(input.dtype.np) * np.asarray(1.0 / (1.0 - p), input.dtype.np)
    return _make(be.from_numpy(scale), be, False, None)


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _apply_mask(input: Tensor, shape: tuple[int, ...], p: float, inplace: bool) -> Tensor:
    mask: Any = 0.0 if p == 1.0 else _keep_mask(input, shape, p)
    if inplace:
        return _inplace(input, lambda t: _e.mul(t, mask))
    return _e.mul(input, mask)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
            ) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    Example::

        lucid.manual_seed(0)
        y = dropout(lucid.ones(4, 4), p=0.5)       # entries 0 or 2
    """
    _check_p(p)
    if not training or p == 0.0:
        return input
    return _apply_mask(input, tuple(input.shape), p, inplace)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool, name: str,
                     batched: int) -> Tensor:
    _check_p(p)
    if input.ndim not in (batched - 1, batched):
        raise RuntimeError(f"{name}: Expected {batched - 1}D or {batched}D input, but received "
                           f"a {input.ndim}D input.")
    if not training or p == 0.0:
        return input
    lead = 2 if input.ndim == batched else 1
    shape = tuple(input.shape[:lead]) + (1,) * (input.ndim - lead)
    return _apply_mask(input, shape, p, inplace)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) input with probability ``p``.

    Example::

        y = dropout1d(lucid.ones(2, 3, 5), 0.5)
    """
    return _feature_dropout(input, p, training, inplace, "dropout1d", 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of (N, C, H, W) input with probability ``p``; a 3-D input is taken
    as (N, C, L), as torch does (with its warning).

    Example::

        y = dropout2d(lucid.ones(2, 3, 4, 4), 0.5)
    """
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release.",
                      stacklevel=2)
    elif input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-"
                      "wise 1D dropout behavior is desired - input is interpreted as shape "
                      "(N, C, L), where C is the channel dim.", stacklevel=2)
    if not training or p == 0.0:
        return input
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if input.ndim >= 2 else \
        tuple(input.shape)
    return _apply_mask(input, shape, p, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability ``p``.

    Example::

        y = dropout3d(lucid.ones(2, 3, 2, 2, 2), 0.5)
    """
    return _feature_dropout(input, p, training, inplace, "dropout3d", 5)


# ---- embedding, one_hot -------------------------------------------------------------------------


class Embedding(Op):
    """Rows of ``weight`` at ``idx``; backward scatter-adds (repeated indices accumulate)."""

    def forward(self, idx, w, padding_idx, scale_grad):
        self.saved = (idx,)
        self.wshape = w.shape
        self.padding_idx, self.scale_grad = padding_idx, scale_grad
        return self.be.take(w, idx, 0)

    def backward(self, g):
        be = self.be
        d = self.wshape[-1]
        i1 = be.reshape(self.saved[0], (-1,))
        g2 = be.reshape(g, (-1, d))
        if self.scale_grad:
            counts = be.index_add((self.wshape[0],), i1, be.ones(i1.shape, be.dtype_of(g)))
            g2 = be.div(g2, be.expand_dims(be.take(counts, i1, 0), 1))
        gw = be.index_add(self.wshape, i1, g2)
        if self.padding_idx is not None:
            gw = be.setitem(gw, self.padding_idx, 0)
        return None, gw


def _renorm_(weight: Tensor, idx: Any, max_norm: float, norm_type: float) -> None:
    """Scale the rows of ``weight`` that ``idx`` looks up down to ``max_norm``, in place."""
    be = weight._be
    w = weight._data
    n = w.shape[0]
    used = be.gt(be.index_add((n,), (idx,), be.ones(idx.shape, be.dtype_of(w))), 0)
    a = be.abs(w)
    if norm_type == math.inf:
        norms = be.max(a, 1) if w.shape[1] else be.zeros((n,), be.dtype_of(w))
    elif norm_type == -math.inf:
        norms = be.min(a, 1) if w.shape[1] else be.zeros((n,), be.dtype_of(w))
    elif norm_type == 0:
        norms = be.sum(be.astype(be.ne(w, 0), be.dtype_of(w)), 1)
    else:
        norms = be.pow(be.sum(be.pow(a, norm_type), 1), 1.0 / norm_type)
    big = be.logical_and(used, be.gt(norms, max_norm))
    scale = be.where(big, be.div(max_norm, be.add(norms, 1e-7)), 1)
    weight._data = be.assign(w, be.mul(w, be.astype(be.expand_dims(scale, 1), be.dtype_of(w))))
    weight._vc[0] += 1


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Look up rows of ``weight`` (num_embeddings, dim) at integer ``input``.

    The gradient accumulates over repeated indices; the ``padding_idx`` row gets none.
    ``max_norm`` renormalises the looked-up rows of ``weight`` in place. ``sparse`` is accepted
    and ignored (gradients are dense).

    Example::

        w = lucid.randn(10, 3, requires_grad=True)
        embedding(lucid.tensor([[1, 2], [1, 9]]), w).shape    # lucid.Size([2, 2, 3])
    """
    if input.dtype.is_floating_point or input.dtype is _dtype.bool_:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{_dtype.torch_name(input.dtype)} instead (while checking arguments "
                           f"for embedding)")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    n = weight.shape[0]
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= n
    ibe, idx = input._be, input._data
    if input.numel():  # two numbers read back, not the indices
        lo, hi = int(ibe.item(ibe.min(idx))), int(ibe.item(ibe.max(idx)))
        if lo < 0 or hi >= n:
            bad = hi if hi >= n else lo
            raise IndexError(f"index out of range in self (index {bad}, num_embeddings {n})")
    if max_norm is not None:
        with grad_mode.no_grad():
            _renorm_(weight, ibe.reshape(idx, (-1,)), float(max_norm), float(norm_type))
    return Embedding.apply(input, weight, padding_idx, bool(scale_grad_by_freq))


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding with a new last dim of ``num_classes`` (-1: max + 1).

    Example::

        one_hot(lucid.tensor([0, 2]), 3)     # tensor([[1, 0, 0], [0, 0, 1]])
    """
    if tensor.dtype is not _dtype.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    be = tensor._be
    t = tensor._data
    size = tensor.numel()
    hi = int(be.item(be.max(t))) if size else -1  # the number of classes may depend on it
    if num_classes == -1:
        if size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = hi + 1
    if size and int(be.item(be.min(t))) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if size and hi >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = be.arange(0, num_classes, 1, _dtype.int64)
    out = be.astype(be.eq(be.expand_dims(t, -1), classes), _dtype.int64)
    return _make(out, be, False, None)


# ---- interpolate --------------------------------------------------------------------------------

_LINEAR = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _out_sizes(input: Tensor, size: Any, scale_factor: Any, k: int
               ) -> tuple[list[int], list[float | None]]:
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None
                         else "either size or scale_factor should be defined")
    spatial = list(input.shape[2:])
    if size is not None:
        sizes = [int(s) for s in size] if isinstance(size, (list, tuple)) else [int(size)] * k
        if len(sizes) != k:
            raise ValueError(f"Input and output must have the same number of spatial dimensions,"
                             f" but got input with spatial dimensions of {spatial} and output "
                             f"size of {sizes}. Please provide input tensor in (N, C, d1, d2, "
                             "...,dK) format and output size in (o1, o2, ...,oK) format.")
        return _check_out_sizes(spatial, sizes), [None] * k
    sf = ([float(s) for s in scale_factor] if isinstance(scale_factor, (list, tuple))
          else [float(scale_factor)] * k)
    if len(sf) != k:
        raise ValueError(f"Input and scale_factor must have the same number of spatial "
                         f"dimensions, but got input with spatial dimensions of {spatial} and "
                         f"scale_factor of shape {sf}.")
    if not all(math.isfinite(n * s) and abs(n * s) < 2**63 for n, s in zip(spatial, sf)):
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return _check_out_sizes(spatial, [int(math.floor(n * s)) for n, s in zip(spatial, sf)]), \
        list(sf)


def _check_out_sizes(spatial: list[int], sizes: list[int]) -> list[int]:
    """torch's check: every input and output spatial size is positive."""
    if min(spatial + sizes) <= 0:
        names = "DHW"[-len(sizes):] if len(sizes) <= 3 else "".join(map(str, range(len(sizes))))
        ins = ", ".join(f"{a}: {b}" for a, b in zip(names, spatial))
        outs = ", ".join(f"{a}: {b}" for a, b in zip(names, sizes))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({ins}) output ({outs})")
    return sizes


def _src(n_in: int, n_out: int, sf: float | None, align: bool, mode: str) -> np.ndarray:
    dst = np.arange(n_out, dtype=np.float64)
    if align:
        return dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    scale = 1.0 / sf if sf else n_in / n_out
    if mode == "nearest":
        return np.floor(dst * scale)
    if mode == "nearest-exact":
        return np.floor((dst + 0.5) * scale)
    return np.maximum(scale * (dst + 0.5) - 0.5, 0.0)


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize the spatial dims of (N, C, *spatial) ``input`` to ``size`` or by ``scale_factor``.

    Modes: "nearest", "nearest-exact", "linear" (3-D), "bilinear" (4-D), "trilinear" (5-D).
    Linear modes are separable 1-D interpolations, so gradients come from index_select.

    Example::

        x = lucid.arange(4.0).reshape(1, 1, 2, 2)
        interpolate(x, scale_factor=2, mode="bilinear", align_corners=False).shape   # 4x4
    """
    k = input.ndim - 2
    if k < 1:
        raise ValueError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                         f"{input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | "
                         f"trilinear | area | nearest-exact (got {mode})")
    linear = mode in _LINEAR
    if mode not in ("nearest", "nearest-exact") and not linear:
        raise NotImplementedError(f"interpolate mode {mode!r} is not supported")
    if linear and input.ndim != _LINEAR[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_LINEAR[mode]}D input")
    if not linear and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if antialias:
        raise NotImplementedError("antialias=True is not supported")
    sizes, sfs = _out_sizes(input, size, scale_factor, k)
    if recompute_scale_factor:
        sfs = [None] * k
    align = bool(align_corners)
    be = input._be
    out = input
    for j, (n_out, sf) in enumerate(zip(sizes, sfs)):
        d = 2 + j
        n_in = input.shape[d]
        src = _src(n_in, n_out, sf, align, mode)
        if not linear:
            idx = np.minimum(src.astype(np.int64), n_in - 1)
            out = _i.index_select(out, d, _make(be.from_numpy(idx), be, False, None))
            continue
        i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
        i1 = np.minimum(i0 + 1, n_in - 1)
        lam = (src - i0).astype(input.dtype.np).reshape((-1,) + (1,) * (input.ndim - d - 1))
        lam_t = _make(be.from_numpy(lam), be, False, None)
        a = _i.index_select(out, d, _make(be.from_numpy(i0), be, False, None))
        b = _i.index_select(out, d, _make(be.from_numpy(i1), be, False, None))
        out = _e.add(a, _e.mul(_e.sub(b, a), lam_t))
    return out


# ---- attention, bilinear ------------------------------------------------------------------------


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(q @ k^T * scale + mask) @ v`` over the last two dims (torch's reference math).

    A bool ``attn_mask`` marks the positions that take part (False -> -inf); a float mask is
    added to the scores. ``is_causal`` masks the upper triangle.

    Example::

        q = k = v = lucid.randn(2, 4, 5, 8)
        out = scaled_dot_product_attention(q, k, v, is_causal=True)    # (2, 4, 5, 8)
    """
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if attn_mask is not None and attn_mask.dtype is not _dtype.bool_ and \
            attn_mask.dtype is not query.dtype:
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_dtype.c10_name(attn_mask.dtype)} and  query.dtype: "
            f"{_dtype.c10_name(query.dtype)} instead.")
    lq, s = query.shape[-2], key.shape[-2]
    sc = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and key.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = _m.repeat_interleave(key, rep, -3)
        value = _m.repeat_interleave(value, rep, -3)
    scores = _e.mul(_mm.matmul(query, _s.transpose(key, -2, -1)), sc)
    be = query._be
    if is_causal:
        attn_mask = _make(be.from_numpy(np.tril(np.ones((lq, s), dtype=bool))), be, False, None)
    if attn_mask is not None:
        if attn_mask.dtype is _dtype.bool_:
            scores = _sel.masked_fill(scores, _sel.logical_not(attn_mask), -math.inf)
        else:
            scores = _e.add(scores, attn_mask)
    attn = softmax(scores, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return _mm.matmul(attn, value)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """``y[..., o] = x1[..., :] @ weight[o] @ x2[..., :] + bias[o]``.

    Example::

        y = bilinear(lucid.randn(4, 3), lucid.randn(4, 5), lucid.randn(2, 3, 5))   # (4, 2)
    """
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D, got {weight.ndim}-D")
    o, i1, i2 = weight.shape
    if input1.shape[-1] != i1 or input2.shape[-1] != i2 or \
            tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(
            f"bilinear(): input sizes do not match the weight: input1 {list(input1.shape)}, "
            f"input2 {list(input2.shape)}, weight {list(weight.shape)}")
    lead = tuple(input1.shape[:-1])
    x1 = _s.reshape(input1, -1, i1)
    x2 = _s.reshape(input2, -1, 1, i2)
    w = _s.reshape(_s.permute(weight, 1, 0, 2), i1, o * i2)
    t = _s.reshape(_mm.matmul(x1, w), -1, o, i2)
    y = _r.sum(_e.mul(t, x2), -1)
    if bias is not None:
        y = _e.add(y, bias)
    return _s.reshape(y, *lead, o)
