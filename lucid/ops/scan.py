"""Scans along one dim: ``cummax``, ``cummin``, ``logcumsumexp``, ``diff`` and ``trapezoid``."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from .. import _dtype
from .._dims import norm_dim
from .._tensor import Tensor
from ..autograd.function import Op
from . import _autocast as _ac
from ._util import cast, wrap
from .elementwise import mul, sub
from .index import Gather
from .movement import cat
from .reduce import sum as _sum
from .select import logical_xor

cummax_return = namedtuple("cummax", ["values", "indices"])
cummin_return = namedtuple("cummin", ["values", "indices"])


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t._be.to_numpy(t._data))


def _running_index(a: np.ndarray, d: int, acc: Any) -> np.ndarray:
    """Index of the running extreme along ``d`` (``acc``: np.maximum or np.minimum): the
    latest position holding the running value, so the latest of equal values; a NaN, once
    seen, is the running value and the latest NaN its index (PyTorch's rule)."""
    if a.shape[d] == 0:
        return np.zeros(a.shape, np.int64)
    run = acc.accumulate(a, axis=d)
    hit = a == run
    if a.dtype.kind not in "biu":  # floats, bfloat16 (kind "V") included
        hit |= np.isnan(a) & np.isnan(run)
    shape = [1] * a.ndim
    shape[d] = a.shape[d]
    pos = np.arange(a.shape[d], dtype=np.int64).reshape(shape)
    return np.maximum.accumulate(np.where(hit, pos, 0), axis=d)


def _cum_extreme(input: Tensor, dim: int, acc: Any, ret: Any) -> Any:
    if not input.ndim:
        if isinstance(dim, (int, np.integer)) and dim not in (0, -1):
            raise IndexError(f"{ret.__name__}(): Expected reduction dim -1 or 0 for scalar but "
                             f"got {dim}")
        norm_dim(dim, 0)
        return ret(input.clone(), wrap(input._be.zeros((), _dtype.int64), input._be))
    d = norm_dim(dim, input.ndim)
    idx = _running_index(_host(input), d, acc)
    be = input._be
    it = wrap(be.from_numpy(np.asarray(idx, order="C")), be)
    return ret(Gather.apply(input, it, d), it)


def cummax(input: Tensor, dim: int) -> cummax_return:
    """``(values, indices)``: the running maximum along ``dim`` and where it was found (the
    latest index among equal values, as PyTorch).

    Example::

        lucid.cummax(lucid.tensor([1.0, 3.0, 2.0, 5.0]), 0)
        # values=tensor([1., 3., 3., 5.]), indices=tensor([0, 1, 1, 3])
    """
    return _cum_extreme(input, dim, np.maximum, cummax_return)


def cummin(input: Tensor, dim: int) -> cummin_return:
    """``(values, indices)``: the running minimum along ``dim`` and where it was found.

    Example::

        lucid.cummin(lucid.tensor([3.0, 1.0, 2.0, 0.0]), 0)
        # values=tensor([3., 1., 1., 0.]), indices=tensor([0, 1, 1, 3])
    """
    return _cum_extreme(input, dim, np.minimum, cummin_return)


class CumSum(Op):
    def forward(self, x, dim):
        self.dim = dim
        return self.be.cumsum(x, dim)

    def backward(self, g):
        be = self.be
        return be.contiguous(be.flip(be.cumsum(be.flip(g, self.dim), self.dim), self.dim))


def _scan_input(name: str, input: Tensor, dtype: Any) -> Tensor:
    """The input of a cumulative sum/product in its compute dtype: ``dtype`` when given,
    else autocast's choice, with integers and bools widened to int64 (as torch)."""
    input = _ac.cast1(name, input) if dtype is None and _ac.state.on else input
    if dtype is not None:
        return cast(input, _dtype.to_dtype(dtype))
    if not input.dtype.is_floating_point:
        return cast(input, _dtype.int64)
    return input


def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    input = _scan_input("cumsum", input, dtype)
    if not input.ndim:
        norm_dim(dim, 0)
        return input.clone()  # type: ignore[attr-defined]
    return CumSum.apply(input, norm_dim(dim, input.ndim))


class CumProd(Op):
    def forward(self, x, dim):
        out = self.be.cumprod(x, dim)
        self.saved = (x, out)
        self.dim = dim
        return out

    def backward(self, g):
        be = self.be
        x, out = self.saved
        d = self.dim
        if not be.item(be.any(be.eq(x, 0))):
            rc = be.flip(be.cumsum(be.flip(be.mul(g, out), d), d), d)
            return be.div(rc, x)
        # zeros: sum_k>=i g_k prod_{j<=k, j!=i} x_j = (prod_{j<i} x_j) * s_i, with the
        # reversed scan s_i = g_i + x_{i+1} s_{i+1} (no division)
        n = x.shape[d]

        def at(a: Any, i: int) -> Any:
            return be.getitem(a, (slice(None),) * d + (slice(i, i + 1),))

        parts = [None] * n
        acc = at(g, n - 1)
        for i in range(n - 1, -1, -1):
            if i < n - 1:
                acc = be.add(at(g, i), be.mul(at(x, i + 1), acc))
            parts[i] = acc if i == 0 else be.mul(at(out, i - 1), acc)
        return be.concatenate(parts, d)


def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    input = _scan_input("cumprod", input, dtype)
    d = norm_dim(dim, input.ndim)
    if not input.ndim:  # a 0-d tensor is its own running product, and stays 0-d
        return input.clone()  # type: ignore[attr-defined]
    return CumProd.apply(input, d)


class LogCumSumExp(Op):
    """``log(cumsum(exp(x)))`` along an axis, computed as a running ``logaddexp`` (no
    overflow, no underflow of small prefixes). The backward sums ``g_i * exp(x_j - out_i)``
    over ``i >= j`` as a reversed log-space scan, split by the sign of ``g``."""

    def forward(self, x, axis):
        be = self.be
        a = np.asarray(be.to_numpy(x))
        out = np.logaddexp.accumulate(a, axis=axis) if a.size else a.copy()
        self.axis = axis
        r = be.from_numpy(np.asarray(out, order="C"))
        self.saved = (x, r)
        return r

    def backward(self, g):
        be, axis = self.be, self.axis
        x = np.asarray(be.to_numpy(self.saved[0]))
        out = np.asarray(be.to_numpy(self.saved[1]))
        gn = np.asarray(be.to_numpy(g))
        res = np.zeros_like(x)
        if x.size:
            with np.errstate(divide="ignore", invalid="ignore"):
                # (a NaN gradient is neither part, as in torch's split: it contributes 0)
                for part, sign in ((np.where(gn > 0, gn, 0), 1.0), (np.where(gn < 0, -gn, 0),
                                                                    -1.0)):
                    lg = np.log(part) - out
                    rev = np.flip(np.logaddexp.accumulate(np.flip(lg, axis), axis=axis), axis)
                    res = res + sign * np.exp(rev + x)
        return be.from_numpy(np.asarray(res.astype(x.dtype), order="C")), None

    def composite(self, ins):
        x, axis = ins[0], self.axis
        if x.numel() == 0:
            return x * 1
        m = x.detach().amax(axis, True)
        m = m.where(m.isfinite(), 0.0)
        return (x - m).exp().cumsum(axis).log() + m


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input)))`` along ``dim``, computed stably.

    Example::

        lucid.logcumsumexp(lucid.tensor([-1000.0, 0.0, 1.0]), 0)   # [-1000., 0., 1.3133]
    """
    if not input.dtype.is_floating_point:
        raise NotImplementedError("\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{_dtype.torch_name(input.dtype)}'")
    if not input.ndim:
        norm_dim(dim, 1)
        return input.clone()
    return LogCumSumExp.apply(input, norm_dim(dim, input.ndim))


def _narrow(t: Tensor, d: int, start: int | None, stop: int | None) -> Tensor:
    return t[(slice(None),) * d + (slice(start, stop),)]


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``out[i] = x[i+1] - x[i]``), after
    concatenating ``prepend`` / ``append``; bool tensors give ``x[i+1] != x[i]``.

    Example::

        lucid.diff(lucid.tensor([1, 3, 6, 10]))        # tensor([2, 3, 4])
        lucid.diff(lucid.tensor([1, 3, 6, 10]), n=2)   # tensor([1, 1])
    """
    if input.ndim < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = norm_dim(dim, input.ndim)
    parts = []
    for extra in (prepend, append):
        if extra is not None and (not isinstance(extra, Tensor) or extra.ndim != input.ndim):
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    if prepend is not None:
        parts.append(prepend)
    parts.append(input)
    if append is not None:
        parts.append(append)
    out = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        if out.shape[d] == 0:
            break
        hi, lo = _narrow(out, d, 1, None), _narrow(out, d, None, -1)
        out = logical_xor(hi, lo) if out.dtype is _dtype.bool_ else sub(hi, lo)
    return out


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
              dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``: with sample points ``x`` (a tensor) or a constant
    spacing ``dx`` (default 1).

    Example::

        lucid.trapezoid(lucid.tensor([1.0, 2.0, 4.0]))                          # tensor(4.5000)
        lucid.trapezoid(lucid.tensor([1.0, 2.0, 4.0]), lucid.tensor([0.0, 1.0, 3.0]))  # 7.5
    """
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: x and dx "
                        "cannot both be given")
    d = norm_dim(dim, max(y.ndim, 1))
    if y.ndim == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"{dim})")
    if y.shape[d] == 0:  # torch: zeros outside the graph (nothing was integrated)
        shape = tuple(n for k, n in enumerate(y.shape) if k != d)
        return wrap(y._be.zeros(shape, y.dtype), y._be)
    if x is None:
        return mul(_sum(_areas(y, None, None, d), d), 1.0 if dx is None else dx)
    return _sum(_areas(y, x, None, d), d)


def _areas(y: Tensor, x: Tensor | None, dx: float | None, d: int) -> Tensor:
    """The trapezoids' areas between consecutive samples along ``d``."""
    avg = (_narrow(y, d, 1, None) + _narrow(y, d, None, -1)) / 2  # type: ignore[operator]
    if x is None:
        return mul(avg, 1.0 if dx is None else dx)
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(
                "trapezoid: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[d] = max(x.shape[0] - 1, 0)
        spacing = diff(x).reshape(shape)  # type: ignore[attr-defined]
    else:
        spacing = diff(x, dim=d)
    return mul(spacing, avg)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
                         dim: int = -1) -> Tensor:
    """The running trapezoidal rule along ``dim``: one fewer element than ``y`` there.

    Example::

        lucid.cumulative_trapezoid(lucid.tensor([1.0, 2.0, 4.0]))     # tensor([1.5, 4.5])
    """
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments: "
                        "x and dx cannot both be given")
    if y.ndim == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"{dim})")
    d = norm_dim(dim, y.ndim)
    if y.shape[d] == 0:
        return _narrow(y, d, 1, None)
    return cumsum(_areas(y, x, dx, d), d)


trapz = trapezoid  # torch's older name


def _edge_coefficients(x: Any, n: int, at_start: bool) -> tuple[Any, Any, Any]:
    """Second-order one-sided difference weights at the first (or last) sample."""
    if at_start:
        d1, d2 = x[1] - x[0], x[2] - x[1]
        return (-(2 * d1 + d2) / (d1 * (d1 + d2)), (d1 + d2) / (d1 * d2),
                -d1 / (d2 * (d1 + d2)))
    d1, d2 = x[n - 2] - x[n - 3], x[n - 1] - x[n - 2]
    return d2 / (d1 * (d1 + d2)), -(d2 + d1) / (d1 * d2), (2 * d2 + d1) / (d2 * (d1 + d2))


def _gradient_along(f: Tensor, d: int, x: Any, edge_order: int) -> Tensor:
    """One partial derivative by central differences along ``d``; ``x`` is a float (the
    spacing) or a 1-D coordinate tensor."""
    n = f.shape[d]

    def at(a: int, b: int) -> Tensor:
        return f.narrow(d, a, b - a)  # type: ignore[attr-defined]

    def along(v: Tensor) -> Tensor:
        shape = [1] * f.ndim
        shape[d] = -1
        return v.reshape(shape)  # type: ignore[attr-defined]

    if isinstance(x, Tensor):
        x = x.to(f.dtype)
        dx1, dx2 = along(x[1:-1] - x[:-2]), along(x[2:] - x[1:-1])
        a = -dx2 / (dx1 * (dx1 + dx2))
        b = (dx2 - dx1) / (dx1 * dx2)
        c = dx1 / (dx2 * (dx1 + dx2))
        mid = at(0, n - 2) * a + at(1, n - 1) * b + at(2, n) * c
        first_h, last_h = x[1] - x[0], x[n - 1] - x[n - 2]
    else:
        h = float(x)
        mid = (at(2, n) - at(0, n - 2)) / (2 * h)
        first_h = last_h = h
    if edge_order == 1:
        first = (at(1, 2) - at(0, 1)) / first_h
        last = (at(n - 1, n) - at(n - 2, n - 1)) / last_h
    else:
        if isinstance(x, Tensor):
            a0, b0, c0 = _edge_coefficients(x, n, True)
            a1, b1, c1 = _edge_coefficients(x, n, False)
        else:
            a0, b0, c0 = -1.5 / h, 2.0 / h, -0.5 / h
            a1, b1, c1 = 0.5 / h, -2.0 / h, 1.5 / h
        first = at(0, 1) * a0 + at(1, 2) * b0 + at(2, 3) * c0
        last = at(n - 3, n - 2) * a1 + at(n - 2, n - 1) * b1 + at(n - 1, n) * c1
    return cat([first, mid, last], d)


def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None,
             edge_order: int = 1) -> tuple[Tensor, ...]:
    """The partial derivatives of the function sampled by ``input``, by second-order
    central differences inside and first- or second-order (``edge_order``) one-sided
    differences at the ends, along ``dim`` (every dim when None). ``spacing`` is one scalar,
    one scalar per dim, or one 1-D coordinate tensor per dim. Differentiable.

    Example::

        lucid.gradient(lucid.tensor([1.0, 4.0, 9.0, 16.0]))   # (tensor([3., 4., 6., 7.]),)
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(range(input.ndim)) if dim is None else \
        [dim] if isinstance(dim, int) else list(dim)
    dims = [norm_dim(d, input.ndim) for d in dims]
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                               f"it's spacing and dim arguments to have the same length, but "
                               f"got a spacing argument of length {len(spacing)} and a dim "
                               f"argument of length {len(dims)}.")
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    f = input if input.dtype.is_floating_point or input.dtype.is_complex else \
        cast(input, _dtype.get_default_dtype())
    out = []
    for d, x in zip(dims, steps):
        if f.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
        if isinstance(x, Tensor) and x.ndim == 0:
            x = x.item()
        if isinstance(x, Tensor) and x.shape[0] != f.shape[d]:
            raise RuntimeError(f"torch.gradient expected each tensor to be on the same device "
                               f"and of length {f.shape[d]} along dim {d}, got {x.shape[0]}")
        out.append(_gradient_along(f, d, x, edge_order))
    return tuple(out)


__all__ = ["cummax", "cummin", "cumprod", "cumsum", "cumulative_trapezoid", "diff", "gradient",
           "logcumsumexp", "trapezoid", "trapz"]
