"""Reductions: sum, mean, var/std, max/min, argmax/argmin, prod, logsumexp, norm, cumsum."""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

from .. import _dtype
from .._dims import norm_dim, norm_dims
from .._tensor import Tensor
from ..autograd.function import Op
from . import _autocast as _ac
from . import elementwise as _el
from . import select as _sel
from ._util import cast, wrap
from .creation import arange
from .elementwise import maximum, minimum
from .index import sort, sorted_range

__all__ = [
    "all", "amax", "amin", "any", "argmax", "argmin", "logsumexp", "max", "mean", "median",
    "min", "norm", "prod", "std", "std_mean", "sum", "var", "var_mean"
]

values_indices = namedtuple("values_indices", ["values", "indices"])


def _kept_shape(shape: tuple[int, ...], axes: tuple[int, ...] | None) -> tuple[int, ...]:
    if axes is None:
        return (1,) * len(shape)
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _count(shape: tuple[int, ...], axes: tuple[int, ...] | None) -> int:
    n = 1
    for i, s in enumerate(shape):
        if axes is None or i in axes:
            n *= s
    return n


def _expand(be: Any, g: Any, shape: tuple[int, ...], axes: Any, keepdim: bool) -> Any:
    """Broadcast a reduced gradient back over the reduced axes."""
    if not keepdim:
        g = be.reshape(g, _kept_shape(shape, axes))
    return be.broadcast_to(g, shape)


def _axes_arg(dim: Any, axis: Any) -> Any:
    return axis if dim is None else dim


# NOTE: reductions return ``be.contiguous(...)``: torch's results are row-major, numpy's keep
# a transposed input's axis order (a no-op when already row-major).


class Sum(Op):
    def forward(self, x, axes, keepdim, dtype):
        self.shape, self.axes, self.keepdim = x.shape, axes, keepdim
        return self.be.contiguous(self.be.sum(x, axes, keepdim, dtype))

    def backward(self, g):
        return _expand(self.be, g, self.shape, self.axes, self.keepdim)


def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,  # noqa: A001
        axis: Any = None) -> Tensor:
    """Sum over ``dim`` (int, tuple, or None for all); integers and bools sum to int64."""
    input = _ac.cast1("sum", input) if dtype is None and _ac.state.on else input
    axes = norm_dims(_axes_arg(dim, axis), input.ndim)
    if dtype is not None:
        d = _dtype.to_dtype(dtype)
        input = cast(input, d)
    elif not (input.dtype.is_floating_point or input.dtype.is_complex):
        d = _dtype.int64
    else:
        d = None
    return Sum.apply(input, axes, keepdim, d)


class Mean(Op):
    def forward(self, x, axes, keepdim):
        self.shape, self.axes, self.keepdim = x.shape, axes, keepdim
        return self.be.contiguous(self.be.mean(x, axes, keepdim))

    def backward(self, g):
        n = _count(self.shape, self.axes)
        return _expand(self.be, self.be.div(g, n) if n else g, self.shape, self.axes,
                       self.keepdim)


def _need_float(input: Tensor, name: str) -> None:
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {_dtype.torch_name(input.dtype)}"
        )


def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
         axis: Any = None) -> Tensor:
    """Arithmetic mean over ``dim``; requires a floating dtype, as in PyTorch."""
    if dtype is not None:
        input = cast(input, _dtype.to_dtype(dtype))
    _need_float(input, "mean")
    return Mean.apply(input, norm_dims(_axes_arg(dim, axis), input.ndim), keepdim)


class Var(Op):
    def forward(self, x, axes, correction, keepdim):
        self.saved = (x,)
        self.axes, self.correction, self.keepdim = axes, correction, keepdim
        return self.be.contiguous(self.be.var(x, axes, correction, keepdim))

    def backward(self, g):
        return _var_grad(self.be, self.saved[0], g, self.axes, self.correction, self.keepdim)


def _var_grad(be: Any, x: Any, g: Any, axes: Any, correction: float, keepdim: bool) -> Any:
    n = _count(x.shape, axes)
    m = be.mean(x, axes, True)
    dof = n - correction  # NOTE: builtins max/min/sum are shadowed in this module
    scale = 2.0 / dof if dof > 0 else math.inf
    ge = _expand(be, g, x.shape, axes, keepdim)
    return be.mul(be.mul(ge, be.sub(x, m)), scale)


class Std(Op):
    """``sqrt(var)``, whose gradient is 0 where the deviation is 0 (PyTorch's std_backward
    masks ``grad / (2 * std)`` there), not ``0 * inf``."""

    def forward(self, x, axes, correction, keepdim):
        be = self.be
        y = be.contiguous(be.sqrt(be.var(x, axes, correction, keepdim)))
        self.saved = (x, y)
        self.axes, self.correction, self.keepdim = axes, correction, keepdim
        return y

    def backward(self, g):
        be = self.be
        x, y = self.saved
        zero = be.eq(y, 0)  # std's own size: a reduced array, cheap to mask twice
        gv = be.where(zero, 0, be.div(g, be.mul(be.where(zero, 1, y), 2)))
        return _var_grad(be, x, gv, self.axes, self.correction, self.keepdim)


def _correction(unbiased: Any, correction: Any) -> float:
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def _var_args(dim: Any, unbiased: Any, keepdim: bool, correction: Any
              ) -> tuple[Any, Any, bool, Any]:
    # var(x, False) means unbiased=False, as in PyTorch's overload
    if isinstance(dim, bool):
        return None, dim, keepdim, correction
    return dim, unbiased, keepdim, correction


def var(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        correction: Any = None) -> Tensor:
    """Variance over ``dim`` with Bessel's correction by default (``correction=1``)."""
    dim, unbiased, keepdim, correction = _var_args(dim, unbiased, keepdim, correction)
    if not input.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return Var.apply(input, norm_dims(dim, input.ndim), _correction(unbiased, correction),
                     keepdim)


def std(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        correction: Any = None) -> Tensor:
    """Standard deviation over ``dim`` (``sqrt(var)``); its gradient is 0 where it is 0.

    Example::

        lucid.tensor([1.0, 2.0, 3.0]).std()  # tensor(1.)
    """
    dim, unbiased, keepdim, correction = _var_args(dim, unbiased, keepdim, correction)
    if not input.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return Std.apply(input, norm_dims(dim, input.ndim), _correction(unbiased, correction),
                     keepdim)


def var_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Tensor, Tensor]:
    return var(input, dim, unbiased, keepdim, correction=correction), \
        mean(input, _var_args(dim, unbiased, keepdim, correction)[0], keepdim)


def std_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Tensor, Tensor]:
    return std(input, dim, unbiased, keepdim, correction=correction), \
        mean(input, _var_args(dim, unbiased, keepdim, correction)[0], keepdim)


def _check_reducible(name: str, shape: tuple[int, ...], axes: tuple[int, ...] | None,
                     hint: bool = True) -> None:
    """PyTorch's errors for max-like reductions over nothing (an empty reduced dim)."""
    if axes is None:
        if _count(shape, None) == 0:
            raise (RuntimeError if hint else IndexError)(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                + (" Specify the reduction dim with the 'dim' argument." if hint else "")
            )
        return
    for a in axes:
        if shape[a] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")


class AMax(Op):
    """max/min over axes; the gradient is shared evenly between tied maxima (PyTorch)."""

    fn = "max"

    def forward(self, x, axes, keepdim, name=None):
        _check_reducible(name or self.fn, x.shape, axes)
        out = self.be.contiguous(getattr(self.be, self.fn)(x, axes, keepdim))
        self.saved = (x, out)
        self.axes, self.keepdim, self.full = axes, keepdim, name is None and axes is None
        return out

    def backward(self, g):
        be = self.be
        x, out = self.saved
        o = _expand(be, out, x.shape, self.axes, self.keepdim)
        if self.full:
            # x.max() / x.min(): torch fills the gradient into the maxima (the NaNs of a tensor
            # holding NaN) and leaves zeros elsewhere, even where the gradient is NaN or inf;
            # amax/amin scale a mask, so a NaN gradient reaches every element there
            hit = be.isnan(x) if be.item(be.isnan(out)) else be.eq(x, o)
            cnt = be.sum(be.astype(hit, be.dtype_of(g)), None, False)
            return be.where(hit, be.div(g, cnt), be.zeros_like(x))
        mask = be.astype(be.eq(x, o), be.dtype_of(g))
        cnt = be.sum(mask, self.axes, True)
        return be.mul(_expand(be, g, x.shape, self.axes, self.keepdim), be.div(mask, cnt))


class AMin(AMax):
    fn = "min"


class MaxDim(Op):
    """Values at given indices along one dim; the gradient goes to those indices."""

    def forward(self, x, idx, dim, keepdim):
        self.shape, self.idx, self.dim, self.keepdim = x.shape, idx, dim, keepdim
        if not x.ndim:
            return x
        out = self.be.take_along_axis(x, idx, dim)
        return out if keepdim else self.be.squeeze(out, dim)

    def backward(self, g):
        be = self.be
        if not len(self.shape):
            return g, None
        if not self.keepdim:
            g = be.expand_dims(g, self.dim)
        return be.scatter_add(self.shape, self.idx, g, self.dim), None


def _maxmin(cls_all: type[AMax], input: Tensor, dim: Any, keepdim: bool,
            other: Any = None) -> Any:
    if isinstance(dim, Tensor):
        other = dim
    if other is not None:
        return (maximum if cls_all.fn == "max" else minimum)(input, other)
    if dim is None:
        return cls_all.apply(input, None, False)
    d = norm_dim(dim, input.ndim)
    be = input._be
    if not input.ndim:
        idx = be.zeros((), _dtype.int64)
    else:
        if input.shape[d] == 0:
            raise IndexError(f"{cls_all.fn}(): Expected reduction dim {d} to have non-zero size.")
        idx = (be.argmax if cls_all.fn == "max" else be.argmin)(input._data, d, True)
    values = MaxDim.apply(input, idx, d, keepdim)
    if input.ndim and not keepdim:
        idx = be.squeeze(idx, d)
    return values_indices(values, wrap(be.astype(idx, _dtype.int64), be))


def max(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None  # noqa: A001
        ) -> Any:
    """The maximum; with ``dim``, a ``(values, indices)`` named tuple; with a tensor,
    the elementwise maximum."""
    return _maxmin(AMax, input, dim, keepdim, other)


def min(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None  # noqa: A001
        ) -> Any:
    """The minimum; with ``dim``, a ``(values, indices)`` named tuple."""
    return _maxmin(AMin, input, dim, keepdim, other)


def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    return AMax.apply(input, norm_dims(dim, input.ndim), keepdim, name="amax")


def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    return AMin.apply(input, norm_dims(dim, input.ndim), keepdim, name="amin")


def _arg(fn: str, input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    be = input._be
    if input.numel() == 0:
        _check_reducible(fn, tuple(input.shape),
                         None if dim is None else (norm_dim(dim, input.ndim),), hint=False)
    if dim is None:
        flat = be.reshape(input._data, (-1,))
        r = getattr(be, fn)(flat, 0, False)
        if keepdim:
            r = be.reshape(r, (1,) * input.ndim)
    else:
        d = norm_dim(dim, input.ndim)
        r = getattr(be, fn)(input._data, d, keepdim) if input.ndim else be.zeros((), _dtype.int64)
    return wrap(be.astype(r, _dtype.int64), be)


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the first maximum (over the flattened tensor when ``dim`` is None)."""
    return _arg("argmax", input, dim, keepdim)


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the first minimum (over the flattened tensor when ``dim`` is None)."""
    return _arg("argmin", input, dim, keepdim)


class Prod(Op):
    def forward(self, x, dim, keepdim):
        self.saved = (x,)
        self.dim, self.keepdim = dim, keepdim
        return self.be.contiguous(self.be.prod(x, dim, keepdim))

    def backward(self, g):
        be = self.be
        (x,) = self.saved
        d = self.dim
        shape = x.shape
        xf = be.reshape(x, (-1,)) if d is None else x
        ax = 0 if d is None else d
        # product of all other elements = exclusive cumprod from the left * from the right
        if not xf.shape[ax]:
            return be.zeros_like(x)
        ones = be.ones_like(be.take(xf, be.asarray([0], _dtype.int64), ax))
        n = xf.shape[ax]
        head = be.asarray(list(range(n - 1)), _dtype.int64)  # int even when empty
        left = be.concatenate([ones, be.take(be.cumprod(xf, ax), head, ax)], ax)
        rev = be.flip(xf, ax)
        right = be.flip(be.concatenate([ones, be.take(be.cumprod(rev, ax), head, ax)], ax), ax)
        others = be.mul(left, right)
        if d is None:
            return be.mul(be.reshape(others, shape), g)
        return be.mul(others, _expand(be, g, shape, (d,), self.keepdim))


def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None
         ) -> Tensor:
    input = _ac.cast1("prod", input) if dtype is None and _ac.state.on else input
    if dtype is not None:
        input = cast(input, _dtype.to_dtype(dtype))
    elif not input.dtype.is_floating_point:
        input = cast(input, _dtype.int64)
    d = None if dim is None else norm_dim(dim, input.ndim)
    if not input.ndim:  # a 0-d tensor's product over its one implicit dim: itself, 0-d
        d = None
    return Prod.apply(input, d, keepdim if d is not None else False)


class LogSumExp(Op):
    saves_output = True  # the saved ``out`` is the keepdim form of the returned view

    def forward(self, x, axes, keepdim):
        be = self.be
        if x.size == 0:  # an empty sum: log(0) = -inf (numpy has no max of nothing)
            out = be.add(be.sum(x, axes, True), -math.inf)
        else:
            m = be.max(x, axes, True)
            m = be.where(be.isfinite(m), m, be.zeros_like(m))
            out = be.add(be.log(be.sum(be.exp(be.sub(x, m)), axes, True)), m)
        self.saved = (x, out)
        self.axes, self.keepdim = axes, keepdim
        out = out if keepdim else be.squeeze(out, axes if axes is not None else None)
        return be.contiguous(out)

    def composite(self, ins):
        x = ins[0]
        m = amax(x, self.axes if self.axes is not None else (), True).detach()
        m = _sel.where(_sel.isfinite(m), m, 0.0)
        out = _el.add(_el.log(sum(_el.exp(_el.sub(x, m)), self.axes, True)), m)
        if self.keepdim:
            return out
        return out.reshape(tuple(n for i, n in enumerate(out.shape)
                                 if self.axes is not None and i not in self.axes))

    def backward(self, g):
        be = self.be
        x, out = self.saved
        ge = _expand(be, g, x.shape, self.axes, self.keepdim)
        return be.mul(ge, be.exp(be.sub(x, out)))


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` over ``dim``, computed stably (integers in the default float)."""
    input = _ac.cast1("logsumexp", input) if _ac.state.on else input
    if not input.dtype.is_floating_point:
        input = cast(input, _dtype.get_default_dtype())
    return LogSumExp.apply(input, norm_dims(dim, input.ndim), keepdim)


def pnorm(be: Any, x: Any, p: float, axes: Any = None, keepdim: bool = False) -> Any:
    """The vector p-norm of a backend array over ``axes`` (every axis when None)."""
    if p == 2:
        if axes is None and not keepdim:  # one BLAS dot product on "cpu"
            r = be.reshape(x, (-1,))
            return be.sqrt(be.matmul(r, r))
        return be.sqrt(be.sum(be.mul(x, x), axes, keepdim))
    ax = be.abs(x)
    if p == math.inf:
        return be.max(ax, axes, keepdim)
    if p == -math.inf:
        return be.min(ax, axes, keepdim)
    if p == 1:
        return be.sum(ax, axes, keepdim)
    if p == 0:
        return be.sum(be.astype(be.ne(x, 0), be.dtype_of(x)), axes, keepdim)
    return be.pow(be.sum(be.pow(ax, p), axes, keepdim), 1.0 / p)


def pnorm_grad(be: Any, x: Any, gn: Any, norm: Any, p: float, axes: tuple) -> Any:
    """``gn * d||x||_p / dx`` for norms kept over ``axes`` (torch's norm_backward, p > 0:
    0 where the norm is 0, a NaN element shares the inf-norm's gradient)."""
    if p == 1:
        return be.mul(be.sign(x), gn)
    zero = be.eq(norm, 0)
    if p == 2:
        return be.mul(gn, be.where(zero, 0, be.div(x, be.where(zero, 1, norm))))
    ax = be.abs(x)
    if math.isinf(p):
        mask = be.astype(be.logical_or(be.eq(ax, norm), be.isnan(ax)), be.dtype_of(x))
        return be.mul(be.sign(x), be.mul(be.div(gn, be.sum(mask, axes, True)), mask))
    if p < 1:
        xz = be.eq(x, 0)
        t = be.where(xz, 0, be.pow(be.where(xz, 1, ax), p - 1))
        return be.mul(be.mul(be.sign(x), t), be.mul(gn, be.pow(norm, 1 - p)))
    scale = be.where(zero, 0, be.div(gn, be.pow(be.where(zero, 1, norm), p - 1)))
    t = be.mul(be.sign(x), be.pow(ax, p - 1)) if p < 2 else be.mul(x, be.pow(ax, p - 2))
    return be.mul(t, scale)


class Norm(Op):
    def forward(self, x, p, axes, keepdim):
        out = self.be.contiguous(pnorm(self.be, x, p, axes, keepdim))
        self.saved = (x, out)
        self.p, self.axes, self.keepdim = p, axes, keepdim
        return out

    def backward(self, g):
        be = self.be
        x, out = self.saved
        p = self.p
        ge = _expand(be, g, x.shape, self.axes, self.keepdim)
        oe = _expand(be, out, x.shape, self.axes, self.keepdim)
        if p == 0:
            return be.zeros_like(ge)
        return pnorm_grad(be, x, ge, oe, p, self.axes)


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         dtype: Any = None) -> Tensor:
    """Vector p-norm over ``dim`` (``"fro"`` and 2 are the Euclidean norm)."""
    if dtype is not None:
        input = cast(input, _dtype.to_dtype(dtype))
    _need_float(input, "norm")
    if p == "fro" or p is None:
        p = 2
    if p == "nuc" or isinstance(p, str):
        raise NotImplementedError(f"norm with p={p!r} is not supported")
    return Norm.apply(input, float(p), norm_dims(dim, input.ndim), keepdim)


def norms(tensors: list[Tensor], p: float = 2.0) -> Tensor | None:
    """The p-norm of each tensor as one 1-D tensor, outside autograd (torch's
    ``_foreach_norm``, stacked); None unless all share one backend and one float dtype."""
    be, d = tensors[0]._be, tensors[0].dtype
    if not d.is_floating_point:
        return None
    for t in tensors:  # (this module's ``any`` is the tensor reduction)
        if t._be is not be or t.dtype is not d:
            return None
    return wrap(be.stack([pnorm(be, t._data, float(p)) for t in tensors], 0), be)


def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    be = input._be
    return wrap(be.contiguous(be.all(input._data, norm_dims(dim, input.ndim), keepdim)), be)


def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    be = input._be
    return wrap(be.contiguous(be.any(input._data, norm_dims(dim, input.ndim), keepdim)), be)


median_return = namedtuple("median_return", ["values", "indices"])


def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median (PyTorch's definition): of all elements, or ``(values, indices)``
    along ``dim``.

    Example::

        lucid.median(lucid.tensor([3.0, 1.0, 2.0, 4.0]))      # tensor(2.)
    """
    if dim is None:
        flat = input.reshape(-1)  # type: ignore[attr-defined]
        if flat.shape[0] == 0:
            raise IndexError("median() input tensor cannot be empty")
        v, _ = sort(flat, 0)
        return v[(flat.shape[0] - 1) // 2]
    d = norm_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if n == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    if not input.ndim:
        return median_return(input.clone(), arange(1).reshape(()))  # type: ignore[attr-defined]
    k = (n - 1) // 2
    v, i = sorted_range(input, d, False, k, k + 1)
    if keepdim:
        return median_return(v, i)
    sl = (slice(None),) * d + (0,)
    return median_return(v[sl], i[sl])
