"""Reductions beyond ``lucid.ops.reduce``: NaN-ignoring forms (``nansum``, ``nanmean``,
``nanmedian``, ``nanquantile``), ``quantile``, ``count_nonzero``, ``aminmax``, ``cov``,
``corrcoef``, ``dist``, ``renorm``, ``msort``. Compositions of differentiable ops, but for
``renorm`` and the NaN-zeroing of ``nansum``, whose backwards are torch's."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from .. import _dtype
from .._dims import norm_dim
from .._tensor import Tensor
from ..autograd.function import Op
from . import elementwise as _e
from . import reduce as _r
from . import select as _s
from .creation import tensor, zeros_like
from .index import gather, sort
from .matmul import matmul
from .reduce import pnorm, pnorm_grad
from .reduce import sum as _sum

__all__ = ["aminmax", "corrcoef", "count_nonzero", "cov", "dist", "msort", "nanmean",
           "nanmedian", "nanquantile", "nansum", "quantile", "renorm", "sum_to_size"]

_aminmax = namedtuple("aminmax", ["min", "max"])
_median = namedtuple("nanmedian", ["values", "indices"])


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """The number of non-zero elements, over ``dim`` (an int or tuple) or all of them."""
    return _sum(_s.ne(input, 0), dim=dim)


class NanZeroed(Op):
    """``input`` with NaN replaced by 0; the gradient is ``grad * (input is not NaN)``, as
    torch's nansum backward, so a non-finite ``grad`` at a NaN gives NaN, not 0."""

    def forward(self, x):
        be = self.be
        self.saved = (x,)
        return be.where(be.isnan(x), 0, x)

    def backward(self, g):
        be = self.be
        (x,) = self.saved
        return be.where(be.isnan(x), be.mul(g, 0), g)


def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *,
           dtype: Any = None) -> Tensor:
    """``sum`` treating NaN as zero."""
    x = NanZeroed.apply(input) if input.dtype.is_floating_point else input
    return _sum(x, dim=dim, keepdim=keepdim, dtype=dtype)


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *,
            dtype: Any = None) -> Tensor:
    """``mean`` over the non-NaN elements (NaN where all are NaN)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           "but got "
                           f"{_dtype.torch_name(input.dtype)}")
    keep = _s.logical_not(_s.isnan(input))
    n = _sum(keep, dim=dim, keepdim=keepdim)
    return _e.div(nansum(input, dim, keepdim, dtype=dtype), n)


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> Any:
    """``(min, max)`` as a named tuple, over ``dim`` or all elements."""
    if input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    if dim is None:
        lo, hi = _r.amin(input), _r.amax(input)
        if keepdim:
            shape = (1,) * input.ndim
            lo, hi = lo.reshape(shape), hi.reshape(shape)
        return _aminmax(lo, hi)
    return _aminmax(_r.amin(input, dim, keepdim), _r.amax(input, dim, keepdim))


def _quantile_check(input: Tensor, q: Any, interpolation: str, name: str) -> None:
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if any(not 0 <= v <= 1 for v in q.reshape(-1).tolist()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    elif not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")


def _quantile(input: Tensor, q: Any, dim: int | None, keepdim: bool, interpolation: str,
              ignore_nan: bool, name: str) -> Tensor:
    _quantile_check(input, q, interpolation, name)
    scalar_q = not isinstance(q, Tensor) or q.ndim == 0
    qt = q if isinstance(q, Tensor) else tensor(q, dtype=input.dtype, device=input.device)
    qt = qt.reshape(-1).to(input.dtype)
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else norm_dim(dim, input.ndim)
    if x.ndim == 0:
        x, d = x.reshape(1), 0
    srt = sort(x, dim=d).values  # NaN sorts last
    n = srt.shape[d]
    if n == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    valid = _sum(_s.logical_not(_s.isnan(x)), dim=d, keepdim=True)  # per slice
    count = valid if ignore_nan else _e.add(zeros_like(valid), n)
    # positions (q * (count - 1)) per quantile, broadcast over the slices
    shape = [1] * srt.ndim
    shape[d] = -1
    pos = _e.mul(qt.reshape(shape), _e.sub(count.to(input.dtype), 1))
    # as torch: a slice holding NaN reads its last element (quantile), a slice of NaN only its
    # first (nanquantile): a NaN either way (NaN sorts last), which gets the gradient
    if ignore_nan:
        pos = _s.clamp(pos, min=0)
    else:
        pos = _s.where(_r.any(_s.isnan(x), dim=d, keepdim=True), float(n - 1), pos)
    lo = _e.floor(pos)
    hi = _e.ceil(pos)
    if interpolation == "lower":
        hi = lo
    elif interpolation == "higher":
        lo = hi
    elif interpolation == "nearest":
        lo = hi = _e.round(pos)
    lo_i, hi_i = lo.long(), hi.long()
    big = list(srt.shape)
    big[d] = qt.shape[0]
    lo_i, hi_i = lo_i.expand(*big), hi_i.expand(*big)
    vlo, vhi = gather(srt, d, lo_i), gather(srt, d, hi_i)
    if interpolation == "midpoint":
        out = _e.mul(_e.add(vlo, vhi), 0.5)
    elif interpolation == "linear":
        out = _e.add(vlo, _e.mul(_e.sub(vhi, vlo), _e.sub(pos, lo).expand(*big)))
    else:
        out = vlo
    out = out.movedim(d, 0)  # quantiles first, as torch; the reduced dim is gone
    if keepdim:
        out = out.reshape((qt.shape[0],) + (1,) * input.ndim) if dim is None else \
            out.unsqueeze(d + 1)
    return out[0] if scalar_q else out


def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The ``q``-th quantiles (``q`` a float or 1-D tensor in [0, 1]) over ``dim`` or all
    elements; NaN where a slice holds NaN. Several quantiles stack along a new first dim."""
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


def nanquantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """``quantile`` ignoring NaN (NaN only where a slice is all NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile")


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median ignoring NaN; with ``dim``, ``(values, indices)``."""
    if dim is None:
        x = input.reshape(-1)
        if x.numel() == 0:
            return _e.mul(_sum(x), float("nan"))
        srt = sort(x).values
        k = int(_sum(_s.logical_not(_s.isnan(x))).item())
        return srt[max(k - 1, 0) // 2]  # all NaN: srt[0] is NaN
    d = norm_dim(dim, input.ndim)
    srt, idx = sort(input, dim=d)
    k = _sum(_s.logical_not(_s.isnan(input)), dim=d, keepdim=True)
    pos = _e.floor_divide(_s.clamp(_e.sub(k, 1), min=0), 2)
    vals, inds = gather(srt, d, pos), gather(idx, d, pos)
    if not keepdim:
        vals, inds = vals.squeeze(d), inds.squeeze(d)
    return _median(vals, inds)


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """Covariance of the variables in the rows of ``input`` (observations in columns)."""
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    if not x.dtype.is_floating_point:
        x = x.to(_dtype.get_default_dtype())
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else _e.mul(w, aweights.to(x.dtype))
    if w is None:
        avg = _r.mean(x, dim=1, keepdim=True)
        wsum: Any = n
        norm: Any = n - correction
    else:
        wsum = _sum(w)
        avg = _e.div(_sum(_e.mul(x, w), dim=1, keepdim=True), wsum)
        if correction == 0:
            norm = wsum
        elif aweights is None:
            norm = _e.sub(wsum, correction)
        elif fweights is None and n == 1 and correction == 1:
            norm = 0
        else:
            norm = _e.sub(wsum, _e.div(_e.mul(_sum(_e.mul(w, aweights.to(x.dtype))),
                                              correction), wsum))
    if n == 1 and (fweights is None) != (aweights is None):
        # torch's one weighted observation: the deviation is exactly 0, with no gradient
        xm = _s.where(zeros_like(x, dtype=_dtype.bool_), x, 0.0)
    else:
        xm = _e.sub(x, avg)
    xw = xm if w is None else _e.mul(xm, w)
    c = _e.div(matmul(xw, xm.transpose(0, 1)),
               _s.clamp(norm, min=0) if isinstance(norm, Tensor) else max(norm, 0))
    return c.squeeze() if input.ndim < 2 or input.shape[0] == 1 else c


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the rows of ``input`` (clipped to [-1, 1])."""
    if input.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return _e.div(c, c)
    d = _e.sqrt(c.diagonal())
    c = _e.div(_e.div(c, d.reshape(-1, 1)), d.reshape(1, -1))
    return _s.clamp(c, -1, 1)


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm of ``input - other``."""
    return _r.norm(_e.sub(input, other), p=p)


class Renorm(Op):
    """``x * where(n > maxnorm, maxnorm / (n + 1e-7), 1)`` with ``n`` the p-norm of each
    slice along one dim. The backward is torch's: a slice left unscaled (a NaN norm
    included) passes ``grad`` through exactly, whatever its norm's gradient holds."""

    def forward(self, x, p, axes, maxnorm):
        be = self.be
        self.p, self.axes, self.maxnorm = p, axes, maxnorm
        norm = pnorm(be, x, p, axes, True)
        inv = be.reciprocal(be.add(norm, 1e-7))
        y = be.mul(x, be.where(be.gt(norm, maxnorm), be.mul(inv, maxnorm), 1))
        self.saved = (x, norm)
        return be.contiguous(y)  # row-major, as torch's

    def backward(self, g):
        be = self.be
        x, norm = self.saved
        axes, maxnorm = self.axes, self.maxnorm
        nb = pnorm_grad(be, x, be.sum(be.mul(x, g), axes, True), norm, self.p, axes)
        inv = be.reciprocal(be.add(norm, 1e-7))
        gs = be.mul(be.mul(inv, maxnorm), be.sub(g, be.mul(inv, nb)))
        return be.where(be.gt(norm, maxnorm), gs, g), None, None, None

    def composite(self, ins):
        x, p, axes, maxnorm = ins
        n = _r.norm(x, p=p, dim=axes, keepdim=True)
        scale = _s.where(_s.gt(n, maxnorm), _e.div(maxnorm, _e.add(n, 1e-7)),
                         _e.add(zeros_like(n), 1.0))
        return _e.mul(x, scale)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice along ``dim`` scaled down so that its ``p``-norm is at most ``maxnorm``."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if not input.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {_dtype.torch_name(input.dtype)}")
    d = norm_dim(dim, input.ndim)
    others = tuple(i for i in range(input.ndim) if i != d)
    return Renorm.apply(input, float(p), others, float(maxnorm))


def msort(input: Tensor) -> Tensor:
    """``input`` sorted along its first dimension."""
    return sort(input, dim=0).values


def sum_to_size(input: Tensor, *size: Any) -> Tensor:
    """Sum ``input`` down to ``size``, which must broadcast to ``input``'s shape (the
    reduction of a broadcast gradient).

    Example::

        lucid.ones(2, 3).sum_to_size(1, 3)      # tensor([[2., 2., 2.]])
    """
    shape = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
    have = tuple(input.shape)
    lead = len(have) - len(shape)
    bad = lead < 0
    for s, h in zip(shape, have[lead if lead > 0 else 0:]):
        bad = bad or (s != 1 and s != h)
    if bad:
        raise RuntimeError(f"size {list(shape)} is not expandable to size {list(have)}")
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                      if s == 1 and have[i + lead] != 1)
    out = _sum(input, axes, True) if axes else input
    return out.reshape(shape) if tuple(out.shape) != shape else out
