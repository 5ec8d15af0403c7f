"""Histograms and counts: ``histc``, ``histogram``, ``histogramdd`` and ``bincount``, computed on
the host with numpy (one read-back, one upload) on every device, as torch's CPU kernels."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .sorting import _host, _upload

__all__ = ["bincount", "histc", "histogram", "histogramdd"]

histogram_return = namedtuple("histogram", ["hist", "bin_edges"])
histogramdd_return = namedtuple("histogramdd", ["hist", "bin_edges"])


def _need_float(input: Tensor, kernel: str) -> None:
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_dtype.torch_name(input.dtype)}'")


def _finite_range(a: np.ndarray, lo: float, hi: float, name: str) -> tuple[float, float]:
    if lo == hi and a.size:
        lo, hi = float(np.min(a)), float(np.max(a))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"{name}: range of [{lo:g}, {hi:g}] is not finite")
    if lo > hi:
        raise RuntimeError(f"{name}: max must be larger than min")
    return lo, hi


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0  # noqa: A002
          ) -> Tensor:
    """A histogram of ``input``'s values over ``bins`` equal bins between ``min`` and ``max``
    (both 0: the data's range); values outside are ignored. Same dtype as ``input``.

    Example::

        lucid.histc(lucid.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)  # [0., 2., 1., 0.]
    """
    _need_float(input, "histogram_cpu")
    if bins <= 0:
        raise RuntimeError(f"torch.histc(): bins must be > 0, but got {bins} for dimension 0")
    a = _host(input).reshape(-1)
    finite = a[~np.isnan(a)]
    lo, hi = _finite_range(finite, float(min), float(max), "torch.histc")
    dt = a.dtype.type
    sel = finite[(finite >= dt(lo)) & (finite <= dt(hi))]
    pos = ((sel - dt(lo)) * dt(bins) / (dt(hi) - dt(lo))).astype(np.int64)
    pos = np.minimum(pos, bins - 1)
    out = np.bincount(pos, minlength=bins).astype(a.dtype)
    return _upload(out, input._be)


def histogram(input: Tensor, bins: Any = 100, *, range: tuple | None = None,  # noqa: A002
              weight: Tensor | None = None, density: bool = False) -> histogram_return:
    """``(hist, bin_edges)``: a histogram over ``bins`` equal bins (an int) or the given
    ascending edges (a 1-D tensor), with optional ``weight`` per element and ``density``
    normalisation, as ``numpy.histogram``. Computed bin edges may differ from PyTorch's in
    the last bit (its vectorised ``linspace`` rounds differently); counts use the edges
    returned.

    Example::

        lucid.histogram(lucid.tensor([1.0, 2.0, 1.0]), bins=2)
        # hist=tensor([2., 1.]), bin_edges=tensor([1.0, 1.5, 2.0])
    """
    _need_float(input, "histogram_cpu")
    a = _host(input).reshape(-1)
    w = None if weight is None else _host(weight).reshape(-1)
    if w is not None and w.shape != a.shape:
        raise RuntimeError("torch.histogram(): if weight tensor is provided it should have "
                           "the same shape as the input tensor excluding its innermost "
                           "dimension")
    if isinstance(bins, Tensor):
        edges = _host(bins).astype(a.dtype)
        if edges.ndim != 1 or edges.size < 1:
            raise RuntimeError("torch.histogram(): bins tensor should have one dimension and at "
                               "least 1 element")
    else:
        nb = int(bins)
        if nb <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {nb} for "
                               "dimension 0")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        else:
            lo, hi = (float(a.min()), float(a.max())) if a.size else (0.0, 0.0)
        lo, hi = _finite_range(a, lo, hi, "torch.histogram()") if lo == hi else (lo, hi)
        if lo > hi:
            raise RuntimeError("torch.histogram(): min should not exceed max, but got min "
                               f"{lo:g} max {hi:g}")
        edges = np.linspace(lo, hi, nb + 1).astype(a.dtype)
    hist, _ = np.histogram(a, bins=edges.astype(np.float64), weights=w, density=density)
    be = input._be
    return histogram_return(_upload(hist.astype(a.dtype), be), _upload(edges, be))


def histogramdd(input: Tensor, bins: Any = 10, *, range: Any = None,  # noqa: A002
                weight: Tensor | None = None, density: bool = False) -> histogramdd_return:
    """``(hist, bin_edges)``: the histogram of the points in ``input``'s rows (its last dim
    holds the ``D`` coordinates) over ``D`` dims; ``bins`` is one count, a count per dim, or
    a 1-D edge tensor per dim; ``range`` is ``[min_0, max_0, min_1, max_1, ...]``.

    Example::

        lucid.histogramdd(lucid.tensor([[0.0, 1.0], [1.0, 0.0]]), bins=[2, 2])
    """
    _need_float(input, "histogramdd")
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions, "
                           f"but got {input.ndim}")
    a = _host(input)
    k = a.shape[-1]
    pts = a.reshape(-1, k)
    w = None if weight is None else _host(weight).reshape(-1)
    if isinstance(bins, int):
        bins = [bins] * k
    if len(bins) != k:
        raise RuntimeError(f"torch.histogramdd: expected {k} sequences of bin edges for each "
                           f"dimension of the input, but got {len(bins)}")
    edges = []
    for i, b in enumerate(bins):
        if isinstance(b, Tensor):
            edges.append(_host(b).astype(a.dtype))
            continue
        if range is not None:
            lo, hi = float(range[2 * i]), float(range[2 * i + 1])
        else:
            col = pts[:, i]
            lo, hi = (float(col.min()), float(col.max())) if col.size else (0.0, 0.0)
            lo, hi = _finite_range(col, lo, hi, "torch.histogramdd") if lo == hi else (lo, hi)
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} "
                               f"max {hi:g} for dimension {i}")
        edges.append(np.linspace(lo, hi, int(b) + 1).astype(a.dtype))
    hist, _ = np.histogramdd(pts, bins=[e.astype(np.float64) for e in edges], weights=w,
                             density=density)
    be = input._be
    return histogramdd_return(_upload(hist.astype(a.dtype), be), [_upload(e, be) for e in edges])


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each non-negative integer occurs in the 1-D ``input`` (with ``weights``:
    the sum of the weights of its occurrences), at least ``minlength`` long.

    Example::

        lucid.bincount(lucid.tensor([1, 1, 3]))   # tensor([0, 2, 0, 1])
    """
    if input.dtype.is_floating_point:
        raise NotImplementedError("\"bincount_cpu\" not implemented for "
                                  f"'{_dtype.torch_name(input.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    a = _host(input)
    if a.ndim != 1 or (a.size and a.min() < 0) or input.dtype is _dtype.bool_:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    be = input._be
    if weights is None or a.size == 0:  # torch: an empty input counts in int64, weights or not
        return _upload(np.bincount(a, minlength=minlength).astype(np.int64), be)
    w = _host(weights)
    if w.ndim != 1 or w.shape[0] != a.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    # torch sums float32 weights in float32 and every other weight dtype in float64
    out_dt = np.dtype(np.float32) if weights.dtype is _dtype.float32 else np.dtype(np.float64)
    return _upload(np.bincount(a, weights=w.astype(np.float64),
                               minlength=minlength).astype(out_dt), be)
