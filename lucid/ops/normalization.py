"""Normalisation ops, as ``torch.nn.functional``: batch_norm, layer_norm, group_norm,
instance_norm, rms_norm, normalize.

Training batch norm and layer norm are single ops over the backend's fused kernels (batch
statistics, normalisation, affine and the running-statistics update in one pass; a fused
backward). group_norm reuses the layer-norm op on ``(N * groups, rest)`` rows; instance_norm
reuses training batch norm on ``(1, N * C, ...)``; eval-mode batch norm is a per-channel affine
composed from elementwise ops.
"""

from __future__ import annotations

import math
from typing import Any

from .. import _dtype
from .._dims import norm_dim
from .._tensor import Size, Tensor
from ..autograd.function import Op
from . import _autocast as _ac
from . import elementwise as _e
from . import reduce as _r
from . import select as _sel
from ._util import cast
from .shape import contiguous

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "normalize"]


class BatchNormTrain(Op):
    """Training batch norm of x (N, C, *) with optional running statistics updated in place."""

    def forward(self, x, w, b, rm, rv, momentum, eps):
        be = self.be
        if x.shape[1]:
            y, mean, invstd = be.batch_norm_train(x, w, b, rm, rv, momentum, eps)
        else:  # no channels: nothing to normalise (the kernels divide by the channel count)
            y = be.zeros(x.shape, be.dtype_of(x))
            mean = invstd = be.zeros((0,), be.dtype_of(x))
        self.saved = (x, w, mean, invstd)
        return y

    def backward(self, g):
        x, w, mean, invstd = self.saved
        p = self.parents
        if x.shape[1]:
            gx, gw, gb = self.be.batch_norm_backward(x, g, mean, invstd, w, p[0] is not None)
        else:
            gx, gw, gb = self.be.zeros_like(g), mean, mean
        return gx, (gw if p[1] is not None else None), (gb if p[2] is not None else None)

    def composite(self, ins):
        x, w, b, eps = ins[0], ins[1], ins[2], ins[6]
        shape = (1, -1) + (1,) * (x.ndim - 2)
        return _normalized(x, (0, *range(2, x.ndim)), eps, w, b, shape)


class LayerNorm(Op):
    """Layer norm over the last ``k`` dims of x with an optional elementwise affine."""

    def forward(self, x, w, b, k, eps):
        be = self.be
        self.k = k
        d = math.prod(x.shape[x.ndim - k:])
        self.md = (math.prod(x.shape[:x.ndim - k]), d)
        w2 = None if w is None else be.reshape(w, (d,))
        b2 = None if b is None else be.reshape(b, (d,))
        y, mean, rstd = be.layer_norm(be.reshape(x, self.md), w2, b2, eps)
        self.saved = (x, w, mean, rstd)
        return be.reshape(y, x.shape)

    def backward(self, g):
        be = self.be
        x, w, mean, rstd = self.saved
        p = self.parents
        need_wb = p[1] is not None or p[2] is not None
        w2 = None if w is None else be.reshape(w, (self.md[1],))
        gx, gw, gb = be.layer_norm_backward(be.reshape(x, self.md), be.reshape(g, self.md),
                                            mean, rstd, w2, p[0] is not None, need_wb)
        wshape = x.shape[x.ndim - self.k:]
        return ((be.reshape(gx, x.shape) if gx is not None else None),
                (be.reshape(gw, wshape) if p[1] is not None else None),
                (be.reshape(gb, wshape) if p[2] is not None else None))

    def composite(self, ins):
        x, w, b, k, eps = ins
        return _normalized(x, tuple(range(x.ndim - k, x.ndim)), eps, w, b, None)


class Normalize(Op):
    """``x / max(||x||_2, eps)`` along ``dim`` in one node: forward three passes (squares,
    their sum, the quotient), backward ``(g - y sum(g y)) / max(||x||, eps)`` with the
    norm's own term dropped where the eps floor holds (torch's clamp_min passes no gradient
    there). 16x64x512 float32, dim -1, forward + backward 6.9 -> 1.9 ms composed of norm,
    clamp and div (torch 3.4)."""

    def forward(self, x, dim, eps):
        be = self.be
        self.dim, self.eps = dim, eps
        n = be.sqrt(be.sum(be.mul(x, x), dim, True))
        d = be.maximum(n, be.asarray(eps, be.dtype_of(x)))
        y = be.div(x, d)
        self.saved = (y, d, n)
        return y

    def backward(self, g):
        be = self.be
        y, d, n = self.saved
        s = be.sum(be.mul(g, y), self.dim, True)
        s = be.where(be.ge(n, self.eps), s, be.zeros_like(s))
        return be.div(be.sub(g, be.mul(y, s)), d), None, None

    def composite(self, ins):
        x, dim, eps = ins
        return _e.div(x, _sel.clamp(_r.norm(x, 2.0, dim, keepdim=True), eps, None))


def _normalized(x: Tensor, axes: tuple[int, ...], eps: float, w: Any, b: Any,
                shape: Any) -> Tensor:
    """``(x - mean) / sqrt(var + eps) * w + b`` over ``axes`` with differentiable ops (the
    composite form of the fused kernels, for second derivatives)."""
    c = _e.sub(x, _r.mean(x, axes, True))
    y = _e.mul(c, _e.rsqrt(_e.add(_r.mean(_e.mul(c, c), axes, True), eps)))
    if w is not None:
        y = _e.mul(y, w if shape is None else w.reshape(shape))
    if b is not None:
        y = _e.add(y, b if shape is None else b.reshape(shape))
    return y


def _check_channels(name: str, t: Tensor | None, c: int) -> None:
    if t is not None and t.numel() != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


def _channel_view(t: Tensor, ndim: int) -> Tensor:
    return t.reshape(1, -1, *([1] * (ndim - 2)))  # type: ignore[attr-defined]


def _affine(y: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    if weight is not None:
        y = _e.mul(y, _channel_view(weight, y.ndim))
    if bias is not None:
        y = _e.add(y, _channel_view(bias, y.ndim))
    return y


def _float_only(kernel: str, input: Tensor) -> None:
    """Norms of integer or bool input raise as torch's kernels do (not silently zeros)."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{_dtype.torch_name(input.dtype)}\'')


def _mixed_half(input: Tensor, *params: Tensor | None) -> bool:
    """A float16/bfloat16 input with float32 parameters: PyTorch computes such a norm in
    float32 and returns the input's dtype."""
    d = input.dtype
    return d in _dtype.HALF and any(p is not None and p.dtype is not d for p in params)


def _in_float32(fn: Any, input: Tensor, *args: Any) -> Tensor:
    return cast(fn(cast(input, _dtype.float32), *args), input.dtype)


def _bump(*ts: Tensor | None) -> None:
    for t in ts:
        if t is not None:
            t._vc[0] += 1


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float | None = 0.1,
               eps: float = 1e-5) -> Tensor:
    """Batch normalisation over dim 1 of ``input`` (N, C), (N, C, L) or (N, C, H, W).

    Training: normalise with the batch mean and biased variance; when running statistics are
    given they are updated in place, in the same kernel pass, with the unbiased variance:
    ``new = (1 - momentum) * old + momentum * batch``. ``momentum`` is the averaging factor;
    for a cumulative average the caller passes ``1 / num_batches_tracked`` (as torch's module
    does). ``momentum=None`` (torch's functional rejects it) leaves the running statistics
    unchanged. Eval: normalise with the running statistics.

    Example::

        x = lucid.randn(8, 3, 4, 4)
        rm, rv = lucid.zeros(3), lucid.ones(3)
        y = batch_norm(x, rm, rv, training=True)      # rm, rv updated in place
    """
    if input.ndim < 2:
        raise ValueError(f"Expected 2D or higher input to batch_norm (got {input.ndim}D input)")
    xs = input._data.shape
    if training and xs[0] * math.prod(xs[2:]) == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input "
                         f"size {Size(xs)!r}")
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    c = xs[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_channels(name, t, c)
    _float_only("batch_norm", input)
    if training:
        upd = running_mean is not None and running_var is not None and momentum is not None
        y = BatchNormTrain.apply(input, weight, bias, running_mean if upd else None,
                                 running_var if upd else None, float(momentum or 0.0), eps)
        if upd:
            _bump(running_mean, running_var)
        return y
    return _batch_norm_eval(input, running_mean, running_var, weight, bias, eps)


def _batch_norm_eval(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
                     weight: Tensor | None, bias: Tensor | None, eps: float) -> Tensor:
    """Batch norm with the running statistics: a per-channel affine."""
    if running_mean is None or running_var is None:
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    rm, rv = running_mean.detach(), running_var.detach()
    scale = _e.rsqrt(_e.add(rv, eps))
    if weight is not None:
        scale = _e.mul(scale, weight)
    shift = _e.neg(_e.mul(rm, scale))
    if bias is not None:
        shift = _e.add(shift, bias)
    # row-major whatever the input's layout, as torch's
    return contiguous(_e.add(_e.mul(input, _channel_view(scale, input.ndim)),
                             _channel_view(shift, input.ndim)))


def _norm_shape(normalized_shape: Any) -> tuple[int, ...]:
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(int(s) for s in normalized_shape)


def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dims, then ``* weight + bias``.

    Example::

        y = layer_norm(lucid.randn(4, 10), (10,))      # each row: mean 0, variance 1
    """
    if _ac.state.on:
        input, weight, bias = _ac.cast("layer_norm", input, weight, bias)
    if _mixed_half(input, weight, bias):
        return _in_float32(layer_norm, input, normalized_shape, weight, bias, eps)
    ns = _norm_shape(normalized_shape)
    k = len(ns)
    if k == 0 or tuple(input.shape[input.ndim - k:]) != ns or k > input.ndim:
        raise RuntimeError(
            f"Given normalized_shape={list(ns)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in ns)}], but got input of size{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(ns)}")
    _float_only("LayerNormKernelImpl", input)
    return LayerNorm.apply(input, weight, bias, k, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each group of ``C / num_groups`` channels (and all spatial positions) of each
    sample, then the per-channel affine.

    Example::

        y = group_norm(lucid.randn(2, 6, 5), 3)
    """
    if _ac.state.on:
        input, weight, bias = _ac.cast("group_norm", input, weight, bias)
    if _mixed_half(input, weight, bias):
        return _in_float32(group_norm, input, num_groups, weight, bias, eps)
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got "
            f"input of shape {list(input.shape)} and num_groups={num_groups}")
    _check_channels("weight", weight, c)
    _check_channels("bias", bias, c)
    _float_only("GroupNormKernelImpl", input)
    hw = math.prod(input.shape[2:])
    rows = input.reshape(n * num_groups, c // num_groups * hw)  # type: ignore[attr-defined]
    y = _affine(LayerNorm.apply(rows, None, None, 1, eps).reshape(input.shape), weight, bias)
    if not hw and n and weight is not None and weight._rg:
        # torch's weight gradient is sum_n rstd * (sum g x - mean * sum g) with the 0 / 0
        # statistics of empty groups: NaN, which this zero-element term passes on
        y = _e.add(y, _e.mul(_r.sum(_e.mul(weight, math.nan)), 0.0))
    return y


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial positions.

    With ``use_input_stats`` the running statistics (if given) are updated in place with the
    batch average of the per-instance statistics; otherwise they normalise the input.

    Example::

        y = instance_norm(lucid.randn(2, 3, 8, 8))
    """
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher input to instance_norm (got {input.ndim}D "
                         "input)")
    if not use_input_stats:  # torch's eval path: no check of eps
        c = input.shape[1]
        for name, t in (("running_mean", running_mean), ("running_var", running_var),
                        ("weight", weight), ("bias", bias)):
            _check_channels(name, t, c)
        _float_only("batch_norm", input)
        return _batch_norm_eval(input, running_mean, running_var, weight, bias, eps)
    if _mixed_half(input, weight, bias):
        return _in_float32(instance_norm, input, running_mean, running_var, weight, bias,
                           use_input_stats, momentum, eps)
    n, c = input.shape[0], input.shape[1]
    if math.prod(input.shape[2:]) == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         f"{Size(input.shape)!r}")
    _check_channels("running_mean", running_mean, c)
    _check_channels("running_var", running_var, c)
    _float_only("batch_norm", input)
    be = input._be
    upd = running_mean is not None and running_var is not None
    rm = be.tile(running_mean._data, (n,)) if upd else None
    rv = be.tile(running_var._data, (n,)) if upd else None
    x = input.reshape(1, n * c, *input.shape[2:])  # type: ignore[attr-defined]
    y = BatchNormTrain.apply(x, None, None, rm, rv, float(momentum), eps)
    if upd:
        for t, rep in ((running_mean, rm), (running_var, rv)):
            t._data = be.assign(t._data, be.mean(be.reshape(rep, (n, c)), 0))
        _bump(running_mean, running_var)
    return _affine(y.reshape(input.shape), weight, bias)  # type: ignore[attr-defined]


def rms_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing ``normalized_shape`` dims
    (``eps=None``: the dtype's machine epsilon).

    Example::

        y = rms_norm(lucid.randn(4, 10), (10,))
    """
    ns = _norm_shape(normalized_shape)
    k = len(ns)
    if tuple(input.shape[input.ndim - k:]) != ns:
        raise RuntimeError(  # NOTE: torch's rms_norm message has no ", " after the "*"
            f"Given normalized_shape={list(ns)}, expected input with shape "
            f"[*{', '.join(str(s) for s in ns)}], but got input of size{list(input.shape)}")
    _float_only("rms_norm", input)
    if input.dtype in _dtype.HALF:  # computed in float32, rounded once, as torch's CPU
        return _in_float32(rms_norm, input, normalized_shape, weight, eps)
    if eps is None:  # the epsilon of the compute dtype: float32 for float16/bfloat16, as torch
        eps = _dtype.finfo(_dtype.float32 if input.dtype in _dtype.HALF else input.dtype).eps
    dims = tuple(range(input.ndim - k, input.ndim))
    ms = _r.mean(_e.mul(input, input), dims, keepdim=True)
    y = _e.mul(input, _e.rsqrt(_e.add(ms, eps)))
    return contiguous(y if weight is None else _e.mul(y, weight))  # row-major, as torch's


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``.

    Example::

        normalize(lucid.tensor([[3.0, 4.0]]))          # tensor([[0.6000, 0.8000]])
    """
    if not input.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_dtype.torch_name(input.dtype)}")
    if p == 2 and input.ndim:
        r = Normalize.apply(input, norm_dim(dim, input.ndim), float(eps))
    else:
        n = _sel.clamp(_r.norm(input, p, dim, keepdim=True), eps, None)
        r = _e.div(input, n)
    if out is not None:
        out.copy_(r)  # type: ignore[attr-defined]
        return out
    return r
