"""op_db entries for the math tail: elementwise functions (atan2, hypot, logaddexp, xlogy, ...),
the special functions (lgamma, digamma, polygamma, erf, erfc, erfinv, igamma, with
``scipy.special`` as the reference), NaN-aware and statistical reductions (nansum, nanmean,
quantile, count_nonzero, cov, corrcoef, dist, renorm) and the layout / BLAS-style ops
(take_along_dim, tensor_split, diagflat, vdot, addmv, addr, baddbmm, addbmm, scatter_reduce,
index_put); see ``op_db.py``. The 3-D convolution and pooling entries live in
``op_db_nn3d.py`` and join ``OP_DB`` through this file."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.special as sp
from op_db_nn3d import NN3D
from opinfo import (
    NZ,
    OFFINT,
    SMALLINT,
    ErrorInput,
    OpInfo,
    P,
    Sample,
    T,
    U,
    binary_samples,
    exact,
    lib,
    np_axis,
    reduce_samples,
    unary_samples,
)


def _err(make: Any, msg: str, exc: type[BaseException] = RuntimeError) -> ErrorInput:
    """``make(m, mod)``: the failing call, with ``mod`` the library (lucid or torch) under test."""
    return ErrorInput(lambda m: make(m, lib(m.zeros(1))), exc, exact(msg))


def _gen(lo: float, hi: float) -> Any:
    return lambda rng, shape: U(rng, shape, lo, hi)


def _unary(name: str, ref: Any, gen: Any = U, **kw: Any) -> OpInfo:
    return OpInfo(name, name, ref, unary_samples(gen), method=True, **kw)


def _binary(name: str, ref: Any, gen_a: Any = U, gen_b: Any = U, **kw: Any) -> OpInfo:
    return OpInfo(name, name, ref, binary_samples(gen_a, gen_b), method=True, **kw)


def _with(base: Any, *extra: Any) -> Any:
    """``base`` samples followed by the hand-written ``extra`` ones."""

    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        yield from base(rng)
        yield from extra

    return samples


# ---- elementwise ----------------------------------------------------------------------------


def _xlogy_ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.broadcast_arrays(a, b)
    return np.where(a == 0, 0.0, a * np.log(np.where(a == 0, 1.0, b))).astype(a.dtype)


def _logit_ref(x: np.ndarray, eps: Any = None) -> np.ndarray:
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    return np.log(x / (1 - x))


_BCAST = "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0"
_NAN = np.array([[np.nan, 0.5, -1.0], [1.5, np.nan, 2.0]])

ELEMENTWISE = [
    _binary("atan2", np.arctan2, NZ, NZ, error_inputs=[
        _err(lambda m, mod: mod.atan2(m.rand(3), m.rand(4)), _BCAST)]),
    _binary("hypot", np.hypot, NZ, NZ, error_inputs=[
        _err(lambda m, mod: mod.hypot(m.rand(3), m.rand(4)), _BCAST)]),
    _binary("logaddexp", np.logaddexp),
    _binary("logaddexp2", np.logaddexp2),
    OpInfo("xlogy", "xlogy", _xlogy_ref, _with(
        binary_samples(U, P),
        Sample(T(np.array([0.0, 0.0, 1.5])), T(np.array([2.0, 0.5, 0.7])), name="zero_x"),
        Sample(T(np.array([0.0, 0.0, 2.0])), T(np.array([-1.0, -2.0, 0.5])), fd=False,
               name="zero_x_negative_y")),
        method=True),
    _binary("copysign", np.copysign, NZ, NZ),
    OpInfo("fmax", "fmax", np.fmax, _with(
        binary_samples(), Sample(T(_NAN), T(np.array([0.3, 1.0, np.nan])), name="nan")),
        method=True),
    OpInfo("fmin", "fmin", np.fmin, _with(
        binary_samples(), Sample(T(_NAN), T(np.array([0.3, 1.0, np.nan])), name="nan")),
        method=True),
    _unary("frac", lambda x: x - np.trunc(x), OFFINT),
    OpInfo("logit", "logit", _logit_ref, _with(
        unary_samples(_gen(0.1, 0.9)),
        Sample(T(np.array([0.05, 0.3, 0.6, 0.95])), 0.2, name="eps")), method=True,
        error_inputs=[_err(lambda m, mod: mod.logit(m.rand(3), "a"),
                           "logit(): argument 'eps' (position 2) must be float, not str",
                           TypeError)]),
    _unary("sinc", np.sinc),
    _unary("exp2", np.exp2),
    _unary("deg2rad", np.deg2rad),
    _unary("acosh", np.arccosh, _gen(1.2, 3.0)),
    _unary("asinh", np.arcsinh),
    _unary("atanh", np.arctanh, _gen(-0.9, 0.9)),
]

# ---- special functions ----------------------------------------------------------------------


def _igamma_samples(rng: np.random.Generator) -> Iterable[Sample]:
    """``igamma(a, x)``: torch has no derivative for ``a``, so only ``x`` is differentiated."""
    yield Sample(T(P(rng, (3, 4), 0.5, 3.0), grad=False), T(P(rng, (3, 4), 0.2, 3.0)))
    yield Sample(T(P(rng, (4,), 0.5, 3.0), grad=False), T(P(rng, (2, 4), 0.2, 3.0), "t"))
    yield Sample(T(P(rng, (), 0.5, 3.0), grad=False), T(P(rng, (3,), 0.2, 3.0)))
    yield Sample(T(P(rng, (0, 2), 0.5, 3.0), grad=False), T(P(rng, (2,), 0.2, 3.0)))


SPECIAL = [
    _unary("lgamma", sp.gammaln, _gen(0.3, 4.0), error_inputs=[
        _err(lambda m, mod: mod.lgamma([1.0]),
             "lgamma(): argument 'input' (position 1) must be Tensor, not list", TypeError)]),
    _unary("digamma", sp.psi, _gen(0.3, 4.0)),
    OpInfo("polygamma", lambda x: lib(x).polygamma(2, x), lambda x: sp.polygamma(2, x),
           unary_samples(_gen(0.5, 3.0)), torch_op=lambda x: lib(x).polygamma(2, x),
           rtol=1e-5, error_inputs=[
               _err(lambda m, mod: mod.polygamma(-1, m.rand(3)),
                    "polygamma(n, x) does not support negative n.")]),
    OpInfo("polygamma_n0", lambda x: x.polygamma(0), sp.psi, unary_samples(_gen(0.5, 3.0)),
           torch_op=lambda x: x.polygamma(0)),
    _unary("erf", sp.erf),
    _unary("erfc", sp.erfc),
    _unary("erfinv", sp.erfinv, _gen(-0.9, 0.9)),
    OpInfo("igamma", "igamma", sp.gammainc, _igamma_samples, method=True,
           error_inputs=[_err(lambda m, mod: mod.igamma(m.rand(3), m.rand(4)), _BCAST)]),
]

# ---- reductions ----------------------------------------------------------------------------


def _with_nans(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    x = U(rng, shape)
    if x.size > 1:
        x.reshape(-1)[:: 3] = np.nan  # every slice keeps a number: a mean is never all-NaN
    return x


def _nanmean_gen(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    x = U(rng, shape)
    if x.ndim == 3:
        x[0, 0, 0] = x[1, 2, 3] = np.nan
    return x


def _nansum_ref(x: np.ndarray, dim: Any = None, keepdim: bool = False) -> np.ndarray:
    return np.asarray(np.nansum(x, axis=np_axis(dim), keepdims=keepdim), x.dtype)


def _nanmean_ref(x: np.ndarray, dim: Any = None, keepdim: bool = False) -> np.ndarray:
    if x.size == 0:
        return np.asarray(np.full(np.sum(x, axis=np_axis(dim), keepdims=keepdim).shape,
                                  np.nan), x.dtype)
    return np.asarray(np.nanmean(x, axis=np_axis(dim), keepdims=keepdim), x.dtype)


def _distinct(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) + U(rng, shape, 0.1, 0.4)) / 4


def _quantile_ref(x: np.ndarray, q: Any, dim: Any = None, keepdim: bool = False, *,
                  interpolation: str = "linear") -> np.ndarray:
    if dim is None:
        out = np.quantile(x.reshape(-1), q, method=interpolation)
        if keepdim:
            out = np.reshape(out, np.shape(q) + (1,) * x.ndim)
        return np.asarray(out, x.dtype)
    return np.asarray(np.quantile(x, q, axis=dim, keepdims=keepdim, method=interpolation),
                      x.dtype)


def _quantile_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(_distinct(rng, (3, 5))), 0.3)
    yield Sample(T(_distinct(rng, (3, 5))), 0.3, 1, True)
    yield Sample(T(_distinct(rng, (3, 5))), 0.7, 0)
    yield Sample(T(_distinct(rng, (2, 3, 5))), T(np.array([0.1, 0.5, 0.9]), grad=False), -1)
    yield Sample(T(_distinct(rng, (4, 3)), "t"), 0.3, 1, interpolation="lower")
    yield Sample(T(_distinct(rng, (3, 5))), 0.3, 1, interpolation="higher")
    yield Sample(T(_distinct(rng, (3, 5))), 0.3, 1, interpolation="midpoint")
    yield Sample(T(_distinct(rng, (3, 5))), 0.3, 1, interpolation="nearest")
    yield Sample(T(_distinct(rng, (2, 3))), T(np.array(0.4), grad=False), None, True)
    yield Sample(T(_distinct(rng, ())), 0.5)


def _count_nonzero_ref(x: np.ndarray, dim: Any = None) -> np.ndarray:
    return np.asarray(np.count_nonzero(x, axis=np_axis(dim)), np.int64)


def _count_samples(rng: np.random.Generator) -> Iterable[Sample]:
    for d in (None, 0, -1, (0, 2)):
        yield Sample(T(SMALLINT(rng, (2, 3, 4))), d)
    yield Sample(T(SMALLINT(rng, (3, 4)), "t"), 1)
    yield Sample(T(SMALLINT(rng, ())))
    yield Sample(T(SMALLINT(rng, (0, 3))), 0)
    yield Sample(T(rng.integers(-1, 2, (3, 4))), 1, name="int64")


def _cov_ref(x: np.ndarray, *, correction: int = 1, fweights: Any = None,
             aweights: Any = None) -> np.ndarray:
    return np.asarray(np.cov(x, ddof=correction, fweights=fweights, aweights=aweights), x.dtype)


def _cov_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3, 5))))
    yield Sample(T(U(rng, (5, 3)), "t"), correction=0)
    yield Sample(T(U(rng, (6,))))
    yield Sample(T(U(rng, (2, 4))), fweights=T(np.array([1, 3, 2, 1])))
    yield Sample(T(U(rng, (2, 4))), aweights=T(P(rng, (4,))))
    yield Sample(T(U(rng, (2, 4))), correction=2, fweights=T(np.array([2, 1, 1, 3])),
                 aweights=T(P(rng, (4,))))


def _dist_ref(a: np.ndarray, b: np.ndarray, p: float = 2) -> np.ndarray:
    d = np.abs(a - b).reshape(-1)
    if p == 0:
        out = np.count_nonzero(d)
    elif np.isinf(p):
        out = d.max(initial=0.0) if p > 0 else d.min(initial=np.inf)
    else:
        out = np.sum(d ** p) ** (1 / p)
    return np.asarray(out, np.result_type(a, b))


def _dist_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3, 4))), T(U(rng, (3, 4))))
    yield Sample(T(U(rng, (3, 4))), T(U(rng, (4,))), 1)
    yield Sample(T(U(rng, (2, 3)), "t"), T(U(rng, (2, 3)), "s"), 3)
    yield Sample(T(_distinct(rng, (3, 4))), T(np.zeros((3, 4)), grad=False), float("inf"))
    # p = 0 counts non-zeros: torch's backward fails there, so no gradient is asked for
    yield Sample(T(U(rng, (3,)), grad=False), T(U(rng, ()), grad=False), 0)
    yield Sample(T(U(rng, (0, 3))), T(U(rng, (3,))))


def _renorm_ref(x: np.ndarray, p: float, dim: int, maxnorm: float) -> np.ndarray:
    axes = tuple(i for i in range(x.ndim) if i != dim % x.ndim)
    norm = np.sum(np.abs(x) ** p, axis=axes, keepdims=True) ** (1 / p)
    return x * np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)


def _renorm_samples(rng: np.random.Generator) -> Iterable[Sample]:
    x = U(rng, (3, 4))
    x[1] *= 0.1  # this row stays below maxnorm
    yield Sample(T(x), 2, 0, 1.0)
    yield Sample(T(U(rng, (2, 3, 4))), 1, 1, 2.0)
    yield Sample(T(U(rng, (4, 3)), "t"), 3, -1, 0.5)


def _reduce_err(name: str) -> list[ErrorInput]:
    return [_err(lambda m, mod: getattr(mod, name)(m.rand(2, 3, 4)),
                 f"{name}(): expected input to have two or fewer dimensions but got an input "
                 "with 3 dimensions")]


_QERR = "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, " \
        "but got foo"

REDUCTIONS = [
    OpInfo("nansum", "nansum", _nansum_ref, reduce_samples(_with_nans), method=True),
    OpInfo("nanmean", "nanmean", _nanmean_ref, reduce_samples(_nanmean_gen, empty=False),
           method=True, error_inputs=[
               _err(lambda m, mod: mod.nanmean(m.ones(3, dtype=mod.int64)),
                    "nanmean(): expected input to have floating point or complex dtype but got "
                    "Long")]),
    OpInfo("quantile", "quantile", _quantile_ref, _quantile_samples, method=True, error_inputs=[
        _err(lambda m, mod: mod.quantile(m.rand(3), 1.5),
             "quantile() q must be in the range [0, 1] but got 1.5"),
        _err(lambda m, mod: mod.quantile(m.rand(3), 0.5, interpolation="foo"), _QERR),
        _err(lambda m, mod: mod.quantile(m.ones(3, dtype=mod.int64), 0.5),
             "quantile() input tensor must be either float or double dtype"),
        _err(lambda m, mod: mod.quantile(m.rand(0), 0.5),
             "quantile() input tensor must be non-empty")]),
    OpInfo("count_nonzero", "count_nonzero", _count_nonzero_ref, _count_samples, grad=False,
           method=True, error_inputs=[
               _err(lambda m, mod: mod.count_nonzero(m.rand(2, 3), dim=(0, 0)),
                    "dim 0 appears multiple times in the list of dims")]),
    OpInfo("cov", "cov", _cov_ref, _cov_samples, method=True, error_inputs=_reduce_err("cov")),
    OpInfo("corrcoef", "corrcoef", lambda x: np.asarray(np.corrcoef(x), x.dtype),
           lambda r: [Sample(T(U(r, (3, 5)))), Sample(T(U(r, (4, 2)), "t")),
                      Sample(T(U(r, (5,))))],
           method=True, error_inputs=_reduce_err("corrcoef")),
    OpInfo("dist", "dist", _dist_ref, _dist_samples, method=True, error_inputs=[
        _err(lambda m, mod: mod.dist(m.rand(3), m.rand(4)), _BCAST)]),
    OpInfo("renorm", "renorm", _renorm_ref, _renorm_samples, method=True, error_inputs=[
        _err(lambda m, mod: mod.renorm(m.rand(3, 4), 2, 0, -1.0),
             "renorm: expected maxnorm to be >= 0 but got -1"),
        _err(lambda m, mod: mod.renorm(m.rand(3, 4), -1, 0, 1.0),
             "renorm: non-positive-norm not supported")]),
]

from op_db_tail_layout import LAYOUT  # noqa: E402

TAIL_OPS: list[OpInfo] = ELEMENTWISE + SPECIAL + REDUCTIONS + LAYOUT + NN3D
