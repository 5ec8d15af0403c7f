"""``GraphBackend``: the backend interface over Tensors, so that an op's one backward, written
against ``self.be``, is itself recorded when a graph of the backward pass is wanted
(``create_graph=True``).

Each method takes what the array backend takes, with Tensors (and raw arrays or Python
numbers, taken as constants) in place of arrays, and returns a Tensor made by differentiable
ops. A backend method without a differentiable form here runs on the arrays when none of its
inputs requires grad (comparisons, masks, shapes, constants); if one does and the result is
floating point, it raises rather than silently treating the input as a constant.

The fused backward kernels (convolution, pooling) become ops of their own whose backward is
the adjoint map, so second and higher derivatives go through the same kernels.
"""

from __future__ import annotations

import math
from typing import Any

from .. import _dtype
from .._tensor import Tensor, _make
from ..autograd.function import Op
from ..backend._activation_ref import ActivationReference
from . import activation as _act
from . import conv as _conv
from . import elementwise as _e
from . import index as _ix
from . import matmul as _mm
from . import movement as _mv
from . import reduce as _r
from . import scan as _scan
from . import select as _sel
from . import shape as _sh
from . import special as _sp
from ._util import cast

__all__ = ["GraphBackend"]

_SQRT_2_PI = 0.7978845608028654  # sqrt(2 / pi)


def _axes(axis: Any, ndim: int) -> Any:
    if axis is None:
        return None
    if isinstance(axis, int):
        return axis % ndim if ndim else 0
    return tuple(a % ndim for a in axis)


def _unary(f: Any) -> Any:
    def method(self: GraphBackend, x: Any) -> Tensor:
        return f(self.t(x))

    method.__name__ = f.__name__
    return method


class GraphBackend(ActivationReference):
    """The array backend ``be``'s interface, recorded on Tensors (see the module docstring)."""

    def __init__(self, be: Any) -> None:
        self.be = be
        self.name = be.name

    # ---- conversion -----------------------------------------------------------------------
    def t(self, x: Any) -> Any:
        """A raw backend array becomes a constant Tensor; Tensors and numbers pass."""
        if isinstance(x, Tensor) or x is None or isinstance(x, (int, float, bool, complex)):
            return x
        if hasattr(x, "shape") and hasattr(x, "dtype"):
            return _make(x, self.be, False, None)
        return x

    def raw(self, x: Any) -> Any:
        return x._data if isinstance(x, Tensor) else x

    def _index(self, idx: Any) -> Any:
        items = idx if isinstance(idx, tuple) else (idx,)
        out = tuple(self.t(i) if hasattr(i, "shape") and not isinstance(i, Tensor) else i
                    for i in items)
        return out if isinstance(idx, tuple) else out[0]

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self.be, name)
        if not callable(fn):
            return fn

        def call(*args: Any, **kw: Any) -> Any:
            grad = any(isinstance(a, Tensor) and a._rg for a in (*args, *kw.values()))
            res = fn(*[self.raw(a) for a in args], **{k: self.raw(v) for k, v in kw.items()})
            if grad and name not in _CONSTANT and _floating(self.be, res):
                raise NotImplementedError(
                    f"the backend function '{name}' has no differentiable form, so this "
                    "backward cannot be differentiated again (create_graph=True)"
                )
            if isinstance(res, tuple):
                return tuple(self.t(r) for r in res)
            return self.t(res)

        return call

    def dtype_of(self, x: Any) -> _dtype.dtype:
        return x.dtype if isinstance(x, Tensor) else self.be.dtype_of(x)

    # ---- elementwise ----------------------------------------------------------------------
    neg = _unary(_e.neg)
    abs = _unary(_e.abs)
    sign = _unary(_e.sign)
    floor = _unary(_e.floor)
    ceil = _unary(_e.ceil)
    trunc = _unary(_e.trunc)
    round = _unary(_e.round)
    exp = _unary(_e.exp)
    expm1 = _unary(_e.expm1)
    log = _unary(_e.log)
    log2 = _unary(_e.log2)
    log10 = _unary(_e.log10)
    log1p = _unary(_e.log1p)
    sqrt = _unary(_e.sqrt)
    rsqrt = _unary(_e.rsqrt)
    square = _unary(_e.square)
    reciprocal = _unary(_e.reciprocal)
    sin = _unary(_e.sin)
    cos = _unary(_e.cos)
    tan = _unary(_e.tan)
    tanh = _unary(_e.tanh)
    sigmoid = _unary(_e.sigmoid)
    relu = _unary(_e.relu)
    arcsin = _unary(_e.asin)
    arccos = _unary(_e.acos)
    arctan = _unary(_e.atan)
    sinh = _unary(_e.sinh)
    cosh = _unary(_e.cosh)

    def add(self, a: Any, b: Any) -> Tensor:
        return _e.add(self.t(a), self.t(b))

    def sub(self, a: Any, b: Any) -> Tensor:
        return _e.sub(self.t(a), self.t(b))

    def mul(self, a: Any, b: Any) -> Tensor:
        return _e.mul(self.t(a), self.t(b))

    def div(self, a: Any, b: Any) -> Tensor:
        return _e.div(self.t(a), self.t(b))

    def pow(self, a: Any, b: Any) -> Tensor:
        return _e.pow(self.t(a), self.t(b))

    def maximum(self, a: Any, b: Any) -> Tensor:
        return _e.maximum(self.t(a), self.t(b))

    def minimum(self, a: Any, b: Any) -> Tensor:
        return _e.minimum(self.t(a), self.t(b))

    def where(self, c: Any, a: Any, b: Any) -> Tensor:
        return _sel.where(self.t(c), self.t(a), self.t(b))

    def clip(self, x: Any, lo: Any, hi: Any) -> Tensor:
        return _sel.clamp(self.t(x), lo, hi)

    def sigmoid_backward(self, y: Any, g: Any) -> Tensor:
        y = self.t(y)
        return self.mul(g, _e.mul(y, _e.sub(1, y)))

    def tanh_backward(self, y: Any, g: Any) -> Tensor:
        y = self.t(y)
        return self.mul(g, _e.sub(1, _e.mul(y, y)))

    def relu_backward(self, x: Any, g: Any) -> Tensor:
        x = self.t(x)
        return _sel.where(_sel.gt(x.detach(), 0), self.t(g), 0.0)

    def leaky_relu(self, x: Any, slope: float) -> Tensor:
        return _act.leaky_relu(self.t(x), slope)

    def leaky_relu_backward(self, x: Any, g: Any, slope: float) -> Tensor:
        g = self.t(g)
        return _sel.where(_sel.gt(self.t(x).detach(), 0), g, _e.mul(g, slope))

    def gelu(self, x: Any, approximate: bool = False) -> Tensor:
        return _act.gelu(self.t(x), approximate="tanh" if approximate else "none")

    def gelu_backward(self, x: Any, g: Any, approximate: bool = False) -> Tensor:
        x, g = self.t(x), self.t(g)
        if approximate:
            x2 = _e.mul(x, x)
            t = _e.tanh(_e.mul(_e.add(x, _e.mul(_e.mul(x2, x), 0.044715)), _SQRT_2_PI))
            d = _e.add(_e.mul(_e.add(t, 1), 0.5), _e.mul(
                _e.mul(_e.mul(x, 0.5), _e.sub(1, _e.mul(t, t))),
                _e.mul(_e.add(_e.mul(x2, 3 * 0.044715), 1), _SQRT_2_PI)))
        else:
            cdf = _e.mul(_e.add(_sp.erf(_e.mul(x, 0.7071067811865476)), 1), 0.5)
            pdf = _e.mul(_e.exp(_e.mul(_e.mul(x, x), -0.5)), 0.3989422804014327)
            d = _e.add(cdf, _e.mul(x, pdf))
        return _e.mul(g, d)

    def softmax(self, x: Any, axis: int, log: bool = False) -> Tensor:
        return (_act.log_softmax if log else _act.softmax)(self.t(x), axis)

    def softmax_backward(self, y: Any, g: Any, axis: int, log: bool = False) -> Tensor:
        y, g = self.t(y), self.t(g)
        if log:
            return _e.sub(g, _e.mul(_e.exp(y), _r.sum(g, axis, True)))
        return _e.mul(y, _e.sub(g, _r.sum(_e.mul(g, y), axis, True)))

    def astype(self, x: Any, d: _dtype.dtype) -> Tensor:
        return cast(self.t(x), d)

    def copy(self, x: Any) -> Tensor:
        return _sh.clone(self.t(x))

    def contiguous(self, x: Any) -> Tensor:
        return _sh.contiguous(self.t(x))

    # ---- reductions ---------------------------------------------------------------------
    def sum(self, x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None
            ) -> Tensor:
        x = self.t(x)
        return _r.sum(x, _axes(axis, x.ndim), keepdims, dtype=dtype)

    def mean(self, x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
        x = self.t(x)
        return _r.mean(x, _axes(axis, x.ndim), keepdims)

    def max(self, x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
        x = self.t(x)
        a = _axes(axis, x.ndim)
        return _r.amax(x, () if a is None else a, keepdims)

    def min(self, x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
        x = self.t(x)
        a = _axes(axis, x.ndim)
        return _r.amin(x, () if a is None else a, keepdims)

    def var(self, x: Any, axis: Any = None, correction: float = 1, keepdims: bool = False
            ) -> Tensor:
        x = self.t(x)
        return _r.var(x, _axes(axis, x.ndim), correction=correction, keepdim=keepdims)

    def cumsum(self, x: Any, axis: int) -> Tensor:
        return _scan.cumsum(self.t(x), axis)

    def cumprod(self, x: Any, axis: int) -> Tensor:
        return _scan.cumprod(self.t(x), axis)

    # ---- layout ---------------------------------------------------------------------------
    def reshape(self, x: Any, shape: tuple[int, ...]) -> Tensor:
        return _sh.reshape(self.t(x), tuple(shape))

    view = reshape

    def transpose(self, x: Any, axes: tuple[int, ...]) -> Tensor:
        return _sh.permute(self.t(x), tuple(axes))

    def swapaxes(self, x: Any, a: int, b: int) -> Tensor:
        return _sh.transpose(self.t(x), a, b)

    def broadcast_to(self, x: Any, shape: tuple[int, ...]) -> Tensor:
        x = self.t(x)
        if not isinstance(x, Tensor):
            x = _make(self.be.asarray(x, _dtype.get_default_dtype()), self.be, False, None)
        return _sh.expand(x, tuple(shape))

    def expand_dims(self, x: Any, axis: int) -> Tensor:
        return _sh.unsqueeze(self.t(x), axis)

    def squeeze(self, x: Any, axis: Any = None) -> Tensor:
        return _sh.squeeze(self.t(x), axis)

    def concatenate(self, xs: list, axis: int) -> Tensor:
        return _mv.cat([self.t(x) for x in xs], axis)

    def stack(self, xs: list, axis: int) -> Tensor:
        return _mv.stack([self.t(x) for x in xs], axis)

    def flip(self, x: Any, axis: Any) -> Tensor:
        x = self.t(x)
        a = _axes(axis, x.ndim)
        return _mv.flip(x, tuple(range(x.ndim)) if a is None else (a,) if isinstance(a, int)
                        else a)

    def tile(self, x: Any, reps: tuple[int, ...]) -> Tensor:
        return _mv.tile(self.t(x), tuple(reps))

    def matmul(self, a: Any, b: Any) -> Tensor:
        return _mm.matmul(self.t(a), self.t(b))

    def matmul_pair(self, a1: Any, b1: Any, a2: Any, b2: Any) -> tuple[Tensor, Tensor]:
        return self.matmul(a1, b1), self.matmul(a2, b2)

    # ---- indexing -------------------------------------------------------------------------
    def getitem(self, x: Any, idx: Any) -> Tensor:
        return _ix.getitem(self.t(x), self._index(idx))

    def setitem(self, x: Any, idx: Any, v: Any) -> Tensor:
        """In place, as the array backend's ``setitem``: ``x`` is always a fresh Tensor."""
        x = self.t(x)
        _ix.setitem(x, self._index(idx), self.t(v))
        return x

    def take(self, x: Any, idx: Any, axis: int) -> Tensor:
        x = self.t(x)
        return _ix.getitem(x, (slice(None),) * (axis % x.ndim) + (self.t(idx),))

    def take_along_axis(self, x: Any, idx: Any, axis: int) -> Tensor:
        return _ix.gather(self.t(x), axis, self.t(idx))

    def index_add(self, shape: tuple[int, ...], idx: Any, g: Any) -> Tensor:
        g = self.t(g)
        z = _make(self.be.zeros(tuple(shape), g.dtype), self.be, False, None)
        return _IndexAdd.apply(z, g, idx)

    def scatter_add(self, shape: tuple[int, ...], idx: Any, src: Any, axis: int) -> Tensor:
        src = self.t(src)
        z = _make(self.be.zeros(tuple(shape), src.dtype), self.be, False, None)
        return _ix.scatter_add(z, axis, self.t(idx), src)

    def scatter(self, x: Any, idx: Any, src: Any, axis: int) -> Tensor:
        src = self.t(src)
        if isinstance(src, Tensor):
            return _ix.scatter(self.t(x), axis, self.t(idx), src)
        return _ix.scatter(self.t(x), axis, self.t(idx), value=src)

    # ---- nn kernels -----------------------------------------------------------------------
    def erf(self, x: Any) -> Tensor:
        return _sp.erf(self.t(x))

    def unfold(self, x: Any, k: Any, d: Any, p: Any, s: Any) -> Tensor:
        return _conv.Im2Col.apply(self.t(x), k, d, p, s)

    def fold(self, cols: Any, hw: Any, k: Any, d: Any, p: Any, s: Any) -> Tensor:
        return _conv.Col2Im.apply(self.t(cols), hw, k, d, p, s)

    def conv2d(self, x: Any, w: Any, b: Any, stride: Any, pads: Any, dilation: Any,
               groups: int) -> Tensor:
        return _Conv2d.apply(self.t(x), self.t(w), self.t(b), stride, pads, dilation, groups)

    def conv2d_grad_input(self, g: Any, w: Any, shape: Any, stride: Any, pads: Any,
                          dilation: Any, groups: int) -> Tensor:
        return _ConvGradInput.apply(self.t(g), self.t(w), tuple(shape), stride, pads,
                                    dilation, groups)

    def conv2d_grad_weight(self, x: Any, g: Any, shape: Any, stride: Any, pads: Any,
                           dilation: Any, groups: int) -> Tensor:
        return _ConvGradWeight.apply(self.t(x), self.t(g), tuple(shape), stride, pads,
                                     dilation, groups)

    def max_pool2d_backward(self, g: Any, idx: Any, shape: Any) -> Tensor:
        return _MaxPoolBackward.apply(self.t(g), self.t(idx), tuple(shape))

    def avg_pool2d_backward(self, g: Any, shape: Any, k: Any, s: Any, p: Any,
                            cip: bool = True, div: Any = None) -> Tensor:
        return _AvgPoolBackward.apply(self.t(g), tuple(shape), k, s, p, cip, div)

    def adaptive_avg_pool2d_backward(self, g: Any, shape: Any) -> Tensor:
        return _AdaptiveAvgBackward.apply(self.t(g), tuple(shape))


# backend functions whose result does not depend on the values of their array arguments
_CONSTANT = frozenset({"zeros_like", "ones_like", "full_like", "empty_like"})


def _floating(be: Any, res: Any) -> bool:
    if isinstance(res, tuple):
        return any(_floating(be, r) for r in res)
    if hasattr(res, "shape") and hasattr(res, "dtype"):
        d = be.dtype_of(res)
        return d.is_floating_point or d.is_complex
    return isinstance(res, float)


# ---- the backward kernels as ops of their own (their backward is the adjoint map) --------------


class _IndexAdd(Op):
    """``z`` (zeros) with ``g`` added at ``idx``; the adjoint reads ``g``'s slots back."""

    def forward(self, z, g, idx):
        self.idx = idx
        return self.be.add(z, self.be.index_add(z.shape, self.idx, g))

    def backward(self, gg):
        return gg, self.be.getitem(gg, self.idx), None


class _Conv2d(Op):
    def forward(self, x, w, b, stride, pads, dilation, groups):
        self.geom = (stride, pads, dilation, groups)
        self.saved = (x, w)
        return self.be.conv2d(x, w, b, stride, pads, dilation, groups)

    def backward(self, g):
        be, (x, w), p = self.be, self.saved, self.parents
        gx = be.conv2d_grad_input(g, w, x.shape, *self.geom) if p[0] is not None else None
        gw = be.conv2d_grad_weight(x, g, w.shape, *self.geom) if p[1] is not None else None
        gb = be.sum(g, (0, 2, 3), False) if p[2] is not None else None
        return gx, gw, gb


class _ConvGradInput(Op):
    """``dx = L(g, w)``; bilinear, with ``<gg, L(g, w)> = <conv2d(gg, w), g>``."""

    def forward(self, g, w, shape, stride, pads, dilation, groups):
        self.geom = (stride, pads, dilation, groups)
        self.saved = (g, w)
        return self.be.conv2d_grad_input(g, w, shape, stride, pads, dilation, groups)

    def backward(self, gg):
        be, (g, w), p = self.be, self.saved, self.parents
        dg = be.conv2d(gg, w, None, *self.geom) if p[0] is not None else None
        dw = be.conv2d_grad_weight(gg, g, w.shape, *self.geom) if p[1] is not None else None
        return dg, dw


class _ConvGradWeight(Op):
    """``dw = M(x, g)``; bilinear, with ``<gw, M(x, g)> = <conv2d(x, gw), g>``."""

    def forward(self, x, g, shape, stride, pads, dilation, groups):
        self.geom = (stride, pads, dilation, groups)
        self.saved = (x, g)
        return self.be.conv2d_grad_weight(x, g, shape, stride, pads, dilation, groups)

    def backward(self, gw):
        be, (x, g), p = self.be, self.saved, self.parents
        dx = be.conv2d_grad_input(g, gw, x.shape, *self.geom) if p[0] is not None else None
        dg = None
        if p[1] is not None:
            dg = be.conv2d(x, gw, None, *self.geom)
            if tuple(dg.shape) != tuple(g.shape):  # x has rows no output reads (transposed
                dg = be.getitem(dg, tuple(slice(0, n) for n in g.shape))  # conv's padding)
        return dx, dg


class _MaxPoolBackward(Op):
    def forward(self, g, idx, shape):
        self.saved = (idx,)
        self.gshape = g.shape
        return self.be.max_pool2d_backward(g, idx, shape)

    def backward(self, gg):
        be, (idx,) = self.be, self.saved
        n, c, h, w = gg.shape
        k = math.prod(idx.shape[2:])  # (an empty batch infers no -1)
        flat = be.take_along_axis(be.reshape(gg, (n * c, h * w)), be.reshape(idx, (n * c, k)), 1)
        return be.reshape(flat, self.gshape), None


class _AvgPoolBackward(Op):
    def forward(self, g, shape, k, s, p, cip, div):
        self.args_ = (k, s, p, tuple(g.shape[2:]), cip, div)
        return self.be.avg_pool2d_backward(g, shape, k, s, p, cip, div)

    def backward(self, gg):
        return self.be.avg_pool2d(gg, *self.args_), None


class _AdaptiveAvgBackward(Op):
    def forward(self, g, shape):
        self.out_hw = tuple(g.shape[2:])
        return self.be.adaptive_avg_pool2d_backward(g, shape)

    def backward(self, gg):
        return self.be.adaptive_avg_pool2d(gg, self.out_hw), None
