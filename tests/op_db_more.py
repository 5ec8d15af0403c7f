"""op_db entries for searching and counting (unique, searchsorted, histc, ...), scans (cummax,
logcumsumexp, diff, trapezoid), combining ops (tensordot, kron, block_diag, cdist, meshgrid,
...) and index writes (index_add, index_copy, index_fill, masked_scatter); see ``op_db.py``."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import numpy as np
from opinfo import SMALLINT, OpInfo, Sample, T, U


def _distinct(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    """Distinct values: order statistics have a well-defined gradient."""
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) + U(rng, shape, 0.1, 0.4)) / 4


def _samples(*items: Any) -> Any:
    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        for make in items:
            yield make(rng)

    return samples


# ---- order statistics and searching ---------------------------------------------------------


def _kth_ref(x: np.ndarray, k: int, dim: int = -1, keepdim: bool = False) -> tuple:
    idx = np.argsort(x, axis=dim, kind="stable")
    i = np.take(idx, [k - 1], axis=dim)
    v = np.take_along_axis(x, i, dim)
    return (v, i) if keepdim else (v.squeeze(dim), i.squeeze(dim))


def _mode_ref(x: np.ndarray, dim: int = -1, keepdim: bool = False) -> tuple:
    a = np.moveaxis(x, dim, -1)
    rows = a.reshape(-1, a.shape[-1])
    vals, idxs = [], []
    for r in rows:
        u, c = np.unique(r, return_counts=True)
        v = u[np.argmax(c)]
        vals.append(v)
        idxs.append(np.flatnonzero(r == v)[-1])
    v = np.array(vals, x.dtype).reshape(a.shape[:-1])
    i = np.array(idxs, np.int64).reshape(a.shape[:-1])
    if keepdim:
        v, i = np.expand_dims(v, dim), np.expand_dims(i, dim)
    return v, i


def _cum_ref(better: Any) -> Any:
    def ref(x: np.ndarray, dim: int) -> tuple:
        a = np.moveaxis(x, dim, 0)
        vals, idx = a.copy(), np.zeros(a.shape, np.int64)
        for i in range(1, a.shape[0]):
            take = better(a[i], vals[i - 1])
            vals[i] = np.where(take, a[i], vals[i - 1])
            idx[i] = np.where(take, i, idx[i - 1])
        return np.moveaxis(vals, 0, dim), np.moveaxis(idx, 0, dim)

    return ref


def _unique_ref(x: np.ndarray, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
                return_counts: bool = False, dim: Any = None) -> Any:
    if dim is None:
        u, inv, c = np.unique(x.reshape(-1), return_inverse=True, return_counts=True)
        inv = inv.reshape(x.shape)
    else:
        u, inv, c = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
        inv = inv.reshape(-1)
    out = [u] + ([inv] if return_inverse else []) + ([c] if return_counts else [])
    return tuple(out) if len(out) > 1 else u


def _unique_consecutive_ref(x: np.ndarray, return_inverse: bool = False,
                            return_counts: bool = False) -> Any:
    flat = x.reshape(-1)
    change = np.r_[True, flat[1:] != flat[:-1]] if flat.size else np.zeros(0, bool)
    starts = np.flatnonzero(change)
    out = [flat[starts]]
    if return_inverse:
        out.append((np.cumsum(change) - 1).reshape(x.shape))
    if return_counts:
        out.append(np.diff(np.r_[starts, flat.size]))
    return tuple(out) if len(out) > 1 else out[0]


def _searchsorted_ref(seq: np.ndarray, v: np.ndarray, right: bool = False,
                      out_int32: bool = False) -> np.ndarray:
    side = "right" if right else "left"
    if seq.ndim == 1:
        out = np.searchsorted(seq, v, side=side)
    else:
        out = np.stack([np.searchsorted(s, w, side=side) for s, w in
                        zip(seq.reshape(-1, seq.shape[-1]), v.reshape(seq.shape[0], -1))])
        out = out.reshape(v.shape)
    return np.asarray(out, np.int32 if out_int32 else np.int64)


def _histc_ref(x: np.ndarray, bins: int = 100, min: float = 0, max: float = 0  # noqa: A002
               ) -> np.ndarray:
    lo, hi = (x.min(), x.max()) if min == max else (min, max)
    h, _ = np.histogram(x, bins=bins, range=(lo, hi))
    return h.astype(x.dtype)


def _bincount_ref(x: np.ndarray, weights: Any = None, minlength: int = 0) -> np.ndarray:
    out = np.bincount(x, weights=weights, minlength=minlength)
    return out.astype(np.int64 if weights is None else weights.dtype)


SEARCH = [
    OpInfo("kthvalue", "kthvalue", _kth_ref, _samples(
        lambda r: Sample(T(_distinct(r, (3, 5))), 2),
        lambda r: Sample(T(_distinct(r, (3, 5))), 3, 0),
        lambda r: Sample(T(_distinct(r, (4, 3)), "t"), 1, -1, True),
        lambda r: Sample(T(_distinct(r, (6,)), "s"), 6)), method=True),
    OpInfo("mode", "mode", _mode_ref, _samples(
        lambda r: Sample(T(SMALLINT(r, (4, 7))), fd=False),
        lambda r: Sample(T(SMALLINT(r, (5, 3))), 0, True, fd=False),
        lambda r: Sample(T(np.array([1.0, 2.0, 2.0, 1.0, 3.0])), fd=False),
        lambda r: Sample(T(_distinct(r, (3, 4)))), ), method=True),
    OpInfo("cummax", "cummax", _cum_ref(np.greater_equal), _samples(
        lambda r: Sample(T(_distinct(r, (4, 5))), 1),
        lambda r: Sample(T(_distinct(r, (4, 5))), 0),
        lambda r: Sample(T(_distinct(r, (5, 3)), "t"), -1),
        lambda r: Sample(T(np.array([1.0, 3.0, 3.0, 2.0, 5.0])), 0, fd=False)), method=True),
    OpInfo("cummin", "cummin", _cum_ref(np.less_equal), _samples(
        lambda r: Sample(T(_distinct(r, (4, 5))), 1),
        lambda r: Sample(T(_distinct(r, (3, 4)), "s"), 0),
        lambda r: Sample(T(np.array([3.0, 1.0, 1.0, 2.0, 0.0])), 0, fd=False)), method=True),
    OpInfo("unique", "unique", _unique_ref, _samples(
        lambda r: Sample(T(r.integers(0, 5, (4, 6)))),
        lambda r: Sample(T(r.integers(0, 5, (9,))), return_inverse=True, return_counts=True),
        lambda r: Sample(T(SMALLINT(r, (3, 4)), grad=False), return_inverse=True),
        lambda r: Sample(T(r.integers(0, 2, (6, 2))), dim=0, return_inverse=True,
                         return_counts=True),
        lambda r: Sample(T(r.integers(0, 2, (2, 6))), dim=1, return_counts=True),
        lambda r: Sample(T(np.zeros((0,), np.int64)), return_counts=True)),
        grad=False, method=True),
    OpInfo("unique_consecutive", "unique_consecutive", _unique_consecutive_ref, _samples(
        lambda r: Sample(T(np.array([1, 1, 2, 2, 3, 1, 1, 2]))),
        lambda r: Sample(T(r.integers(0, 2, (3, 5))), return_inverse=True, return_counts=True),
        lambda r: Sample(T(SMALLINT(r, (7,)), grad=False), return_counts=True)),
        grad=False, method=True),
    OpInfo("searchsorted", "searchsorted", _searchsorted_ref, _samples(
        lambda r: Sample(T(np.sort(U(r, (7,)))), T(U(r, (3, 4)))),
        lambda r: Sample(T(np.array([1, 3, 5, 7, 9])), T(np.array([[3, 6, 9], [0, 10, 5]])),
                         right=True),
        lambda r: Sample(T(np.sort(U(r, (2, 5)), axis=1)), T(U(r, (2, 3))), out_int32=True),
        lambda r: Sample(T(np.array([1.0, 2.0, 2.0, 3.0])), T(np.array([2.0, 0.0, 4.0])))),
        grad=False),
    OpInfo("bucketize", "bucketize",
           lambda x, b, right=False: _searchsorted_ref(b, x, right), _samples(
               lambda r: Sample(T(U(r, (3, 4))), T(np.sort(U(r, (5,))))),
               lambda r: Sample(T(np.array([1, 5, 9, 2])), T(np.array([1, 3, 5, 7, 9])),
                                right=True)), grad=False),
    OpInfo("isin", "isin", lambda a, b, invert=False: np.isin(a, b, invert=invert), _samples(
        lambda r: Sample(T(r.integers(0, 6, (3, 4))), T(np.array([1, 4, 5]))),
        lambda r: Sample(T(SMALLINT(r, (5,))), T(SMALLINT(r, (3,))), invert=True)),
        grad=False),
    OpInfo("histc", "histc", _histc_ref, _samples(
        lambda r: Sample(T(U(r, (50,))), 8),
        lambda r: Sample(T(U(r, (4, 6))), 5, -1.0, 1.0),
        lambda r: Sample(T(np.array([0.0, 1.0, 1.0, 2.0, 3.0])), 4, 0, 3)),
        grad=False, method=True),
    OpInfo("bincount", "bincount", _bincount_ref, _samples(
        lambda r: Sample(T(r.integers(0, 6, (20,)))),
        lambda r: Sample(T(r.integers(0, 4, (9,))), T(U(r, (9,)), grad=False), 7),
        lambda r: Sample(T(np.zeros(0, np.int64)))), grad=False, method=True),
]

# ---- scans ----------------------------------------------------------------------------------


def _lcse_ref(x: np.ndarray, dim: int) -> np.ndarray:
    return np.logaddexp.accumulate(x, axis=dim) if x.size else x.copy()


def _diff_ref(x: np.ndarray, n: int = 1, dim: int = -1, prepend: Any = None,
              append: Any = None) -> np.ndarray:
    kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(x, n=n, axis=dim, **kw)


def _trap_ref(y: np.ndarray, x: Any = None, *, dx: Any = None, dim: int = -1) -> np.ndarray:
    if x is not None:
        return np.asarray(np.trapezoid(y, x, axis=dim))
    return np.asarray(np.trapezoid(y, dx=1.0 if dx is None else dx, axis=dim))


def _n2n_values(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    x = U(rng, shape)
    flat = x.reshape(-1)
    flat[::4] = np.nan
    flat[1::5] = np.inf
    flat[2::7] = -np.inf
    return x


def _n2n_ref(x: np.ndarray, nan: float = 0.0, posinf: Any = None, neginf: Any = None
             ) -> np.ndarray:
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


SCANS = [
    OpInfo("logcumsumexp", "logcumsumexp", _lcse_ref, _samples(
        lambda r: Sample(T(U(r, (3, 5))), 1),
        lambda r: Sample(T(U(r, (3, 5))), 0),
        lambda r: Sample(T(U(r, (4, 3), -20, 20), "t"), -1),
        lambda r: Sample(T(U(r, (0, 3))), 0)), method=True),
    OpInfo("diff", "diff", _diff_ref, _samples(
        lambda r: Sample(T(U(r, (3, 5)))),
        lambda r: Sample(T(U(r, (3, 5))), 2, 0),
        lambda r: Sample(T(U(r, (4, 3)), "t"), 1, -1, T(U(r, (4, 2))), T(U(r, (4, 1)))),
        lambda r: Sample(T(U(r, (5,)), "s"), 3),
        lambda r: Sample(T(U(r, (2,))), 4)), method=True),
    OpInfo("trapezoid", "trapezoid", _trap_ref, _samples(
        lambda r: Sample(T(U(r, (3, 5)))),
        lambda r: Sample(T(U(r, (3, 5))), dx=0.5, dim=0),
        lambda r: Sample(T(U(r, (4, 3)), "t"), T(np.sort(U(r, (3,))))),
        lambda r: Sample(T(U(r, (2, 4))), T(np.sort(U(r, (2, 4)), axis=1))))),
    OpInfo("nan_to_num", "nan_to_num", _n2n_ref, _samples(
        lambda r: Sample(T(_n2n_values(r, (4, 5)), "s")),
        lambda r: Sample(T(_n2n_values(r, (6,))), 1.5, 2.0, -3.0),
        lambda r: Sample(T(_n2n_values(r, (4, 3)), "t"), nan=-1.0),
        lambda r: Sample(T(U(r, (3,))))), method=True),
]

# ---- combining ------------------------------------------------------------------------------


def _tensordot_ref(a: np.ndarray, b: np.ndarray, dims: Any = 2) -> np.ndarray:
    return np.tensordot(a, b, axes=dims)


def _block_diag_ref(*ts: np.ndarray) -> np.ndarray:
    mats = [t.reshape(1, -1) if t.ndim < 2 else t for t in ts]
    out = np.zeros((sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)),
                   np.result_type(*mats))
    r = c = 0
    for m in mats:
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        r, c = r + m.shape[0], c + m.shape[1]
    return out


def _cdist_ref(a: np.ndarray, b: np.ndarray, p: float = 2.0, **_: Any) -> np.ndarray:
    d = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        return (d != 0).sum(-1).astype(a.dtype)
    if np.isinf(p):
        return d.max(-1)
    return (d ** p).sum(-1) ** (1 / p)


def _cprod_ref(*ts: np.ndarray) -> np.ndarray:
    if len(ts) == 1:
        return ts[0]
    return np.array(list(itertools.product(*ts))).reshape(-1, len(ts))


def _comb_ref(x: np.ndarray, r: int = 2, with_replacement: bool = False) -> np.ndarray:
    fn = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    return np.array(list(fn(x, r)), x.dtype).reshape(-1, r)


def _rot90_ref(x: np.ndarray, k: int = 1, dims: Any = (0, 1)) -> np.ndarray:
    return np.rot90(x, k, axes=tuple(dims)).copy()


COMBINE = [
    OpInfo("tensordot", "tensordot", _tensordot_ref, _samples(
        lambda r: Sample(T(U(r, (2, 3, 4))), T(U(r, (3, 4, 5)))),
        lambda r: Sample(T(U(r, (2, 3, 4))), T(U(r, (4, 3))), ([1, 2], [1, 0])),
        lambda r: Sample(T(U(r, (3, 4)), "t"), T(U(r, (4, 2))), 1),
        lambda r: Sample(T(U(r, (2,))), T(U(r, (3,))), 0))),
    OpInfo("kron", "kron", np.kron, _samples(
        lambda r: Sample(T(U(r, (2, 3))), T(U(r, (3, 2)))),
        lambda r: Sample(T(U(r, (2, 3))), T(U(r, (4,)), "s")),
        lambda r: Sample(T(U(r, (3,))), T(U(r, (2, 2, 2))))), method=True),
    OpInfo("block_diag", "block_diag", _block_diag_ref, _samples(
        lambda r: Sample(T(U(r, (2, 3))), T(U(r, (1, 2))), T(U(r, (3,)))),
        lambda r: Sample(T(U(r, (2, 2)), "t"), T(U(r, (0, 2))), T(U(r, (2, 1)))))),
    OpInfo("cdist", "cdist", _cdist_ref, _samples(
        lambda r: Sample(T(U(r, (4, 3))), T(U(r, (5, 3)))),
        lambda r: Sample(T(U(r, (2, 4, 3))), T(U(r, (5, 3))), 1.0),
        lambda r: Sample(T(U(r, (4, 3))), T(U(r, (2, 3)), "s"), 3.0),
        lambda r: Sample(T(U(r, (4, 3))), T(U(r, (2, 3))), float("inf")),
        lambda r: Sample(T(U(r, (3, 2))), T(U(r, (4, 2))), 0.0),
        lambda r: Sample(T(U(r, (30, 3))), T(U(r, (4, 3)), "t")),
        lambda r: Sample(T(U(r, (3, 2))), T(U(r, (2, 2))), 2.0,
                         compute_mode="use_mm_for_euclid_dist"),
        lambda r: Sample(T(U(r, (3, 2))), T(U(r, (2, 2))), 0.5))),
    OpInfo("meshgrid", "meshgrid",
           lambda *ts, indexing: tuple(np.meshgrid(*ts, indexing=indexing)), _samples(
               lambda r: Sample(T(U(r, (3,))), T(U(r, (4,))), indexing="ij"),
               lambda r: Sample(T(U(r, (2,))), T(U(r, (3,)), "s"), T(U(r, (2,))), indexing="ij"),
               lambda r: Sample(T(U(r, (3,))), T(U(r, (4,))), indexing="xy"),
               lambda r: Sample(T(U(r, (2,))), T(U(r, (3,))), T(U(r, (4,))), indexing="xy"))),
    OpInfo("cartesian_prod", "cartesian_prod", _cprod_ref, _samples(
        lambda r: Sample(T(U(r, (3,))), T(U(r, (2,)))),
        lambda r: Sample(T(U(r, (2,))), T(U(r, (2,)), "s"), T(U(r, (3,)))))),
    OpInfo("combinations", "combinations", _comb_ref, _samples(
        lambda r: Sample(T(U(r, (4,)))),
        lambda r: Sample(T(U(r, (4,))), 3),
        lambda r: Sample(T(U(r, (3,)), "s"), 2, True),
        lambda r: Sample(T(U(r, (2,))), 3))),
    OpInfo("rot90", "rot90", _rot90_ref, _samples(
        lambda r: Sample(T(U(r, (3, 4)))),
        lambda r: Sample(T(U(r, (3, 4)), "t"), 2),
        lambda r: Sample(T(U(r, (2, 3, 4))), -1, [2, 0]),
        lambda r: Sample(T(U(r, (2, 3))), 3, (1, 0)),
        lambda r: Sample(T(U(r, (2, 3))), 4)), method=True),
]

# ---- index writes ---------------------------------------------------------------------------


def _index_add_ref(x: np.ndarray, dim: int, idx: np.ndarray, src: np.ndarray, *,
                   alpha: float = 1) -> np.ndarray:
    out = x.copy()
    sl = [slice(None)] * x.ndim
    sl[dim] = idx
    np.add.at(out, tuple(sl), alpha * src)
    return out


def _index_copy_ref(x: np.ndarray, dim: int, idx: np.ndarray, src: np.ndarray) -> np.ndarray:
    out = x.copy()
    sl = [slice(None)] * x.ndim
    sl[dim] = idx
    out[tuple(sl)] = src
    return out


def _index_fill_ref(x: np.ndarray, dim: int, idx: np.ndarray, value: Any) -> np.ndarray:
    out = x.copy()
    sl = [slice(None)] * x.ndim
    sl[dim] = idx
    out[tuple(sl)] = value
    return out


def _masked_scatter_ref(x: np.ndarray, mask: np.ndarray, src: np.ndarray) -> np.ndarray:
    out = x.copy()
    m = np.broadcast_to(mask, x.shape)
    out[m] = src.reshape(-1)[:int(m.sum())]
    return out


INDEX_WRITES = [
    OpInfo("index_add", "index_add", _index_add_ref, _samples(
        lambda r: Sample(T(U(r, (4, 3))), 0, T(np.array([0, 2, 0])), T(U(r, (3, 3)))),
        lambda r: Sample(T(U(r, (4, 3)), "t"), 1, T(np.array([2, 1])), T(U(r, (4, 2))),
                         alpha=-0.5),
        lambda r: Sample(T(U(r, (2, 5)), "s"), -1, T(np.array([4, 4, 0], np.int32)),
                         T(U(r, (2, 3)))),
        lambda r: Sample(T(U(r, (3,))), 0, T(np.zeros(0, np.int64)), T(U(r, (0,))))),
        method=True),
    OpInfo("index_copy", "index_copy", _index_copy_ref, _samples(
        lambda r: Sample(T(U(r, (4, 3))), 0, T(np.array([3, 1])), T(U(r, (2, 3)))),
        lambda r: Sample(T(U(r, (3, 4)), "t"), 1, T(np.array([0, 2, 3])), T(U(r, (3, 3))))),
        method=True),
    OpInfo("index_fill", "index_fill", _index_fill_ref, _samples(
        lambda r: Sample(T(U(r, (4, 3))), 0, T(np.array([3, 1])), 1.5),
        lambda r: Sample(T(U(r, (3, 4)), "t"), 1, T(np.array([0, -1])), -2.0),
        lambda r: Sample(T(U(r, (3, 4))), 1, T(np.array([1, 2])), T(np.array(0.7)))),
        method=True),
    OpInfo("masked_scatter", "masked_scatter", _masked_scatter_ref, _samples(
        lambda r: Sample(T(U(r, (3, 4))), T(r.random((3, 4)) > 0.5), T(U(r, (12,)))),
        lambda r: Sample(T(U(r, (3, 4)), "t"), T(r.random((4,)) > 0.4), T(U(r, (4, 5)))),
        lambda r: Sample(T(U(r, (2, 3))), T(np.zeros((2, 3), bool)), T(U(r, (2,))))),
        method=True),
]

MORE_OPS = SEARCH + SCANS + COMBINE + INDEX_WRITES
