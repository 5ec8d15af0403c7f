"""op_db entries for the pooling forms around max pooling, in 1-D, 2-D and 3-D: the
``*_with_indices`` functions (values and argmax indices), max unpooling (its indices come from
a max pool of the sample), LP pooling and fractional max pooling with a fixed
``_random_samples`` (deterministic then). One loop-over-output-positions reference serves
every max: a window is a list of input positions per spatial dim, the first maximum in
row-major order wins (torch's rule). Samples hold distinct values, so the argmax does not move
under a gradcheck probe. They join ``OP_DB`` through ``op_db.py``."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from opinfo import ErrorInput, OpInfo, Sample, T, U, exact

import lucid.nn.functional as F


def _tup(v: Any, nd: int) -> tuple:
    return (v,) * nd if isinstance(v, int) else tuple(v)


def _batched(nd: int, fn: Any) -> Any:
    """``fn`` on (N, C, *spatial); an unbatched (C, *spatial) input gets a batch of one."""

    def ref(x: np.ndarray, *args: Any, **kw: Any) -> Any:
        if x.ndim == nd + 2:
            return fn(x, *args, **kw)
        out = fn(x[None], *args, **kw)
        return tuple(o[0] for o in out) if isinstance(out, tuple) else out[0]

    return ref


def window_max(x: np.ndarray, wins: list[list[list[int]]]) -> tuple[np.ndarray, np.ndarray]:
    """Max and flat argmax (within the plane) of ``x`` (N, C, *spatial) over windows:
    ``wins[i][o]`` lists the input positions along spatial dim ``i`` of output position
    ``o``."""
    sp = x.shape[2:]
    out = [len(w) for w in wins]
    flat = x.reshape(*x.shape[:2], math.prod(sp))
    y = np.zeros((*x.shape[:2], *out), x.dtype)
    idx = np.zeros(y.shape, np.int64)
    for o in itertools.product(*(range(n) for n in out)):
        lin = np.array([np.ravel_multi_index(c, sp)
                        for c in itertools.product(*(wins[i][o[i]] for i in range(len(sp))))])
        vals = flat[:, :, lin]
        best = np.argmax(vals, axis=-1)
        at = (slice(None), slice(None), *o)
        y[at] = np.take_along_axis(vals, best[..., None], -1)[..., 0]
        idx[at] = lin[best]
    return y, idx


def _out_size(n: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    span = n + 2 * p - d * (k - 1) - 1
    o = (-(-span // s) if ceil else span // s) + 1
    if ceil and (o - 1) * s >= n + p:  # the last window must start inside the input
        o -= 1
    return o


def _pool_wins(sp: tuple, k: tuple, s: tuple, p: tuple, d: tuple, ceil: bool) -> list:
    """Sliding windows (padding positions dropped) per spatial dim."""
    return [[[o * s[i] - p[i] + j * d[i] for j in range(k[i]) if 0 <= o * s[i] - p[i] + j * d[i]
              < sp[i]] for o in range(_out_size(sp[i], k[i], s[i], p[i], d[i], ceil))]
            for i in range(len(sp))]


def max_pool_ref(nd: int) -> Any:
    """``max_pool{nd}d_with_indices``: (values, indices) whatever ``return_indices`` says."""

    def ref(x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0,
            dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
        k, p, d = _tup(kernel_size, nd), _tup(padding, nd), _tup(dilation, nd)
        s = k if stride is None or stride == [] else _tup(stride, nd)
        return window_max(x, _pool_wins(x.shape[2:], k, s, p, d, ceil_mode))

    return _batched(nd, ref)


def adaptive_max_ref(nd: int) -> Any:
    """Adaptive windows ``[floor(o*n/out), ceil((o+1)*n/out))``; values and indices."""

    def ref(x: np.ndarray, output_size: Any, return_indices: bool = False) -> Any:
        sp = x.shape[2:]
        out = [sp[i] if v is None else v for i, v in enumerate(_tup(output_size, nd))]
        return window_max(x, [[list(range(o * sp[i] // out[i], -(-(o + 1) * sp[i] // out[i])))
                               for o in range(out[i])] for i in range(nd)])

    return _batched(nd, ref)


def lp_pool_ref(nd: int) -> Any:
    """torch's definition: ``avg_pool(x ** p)`` (no padding; a ceil_mode window cut by the
    input's end is averaged over its own size) times ``prod(kernel)``, to the power ``1/p``;
    the infinite norms are the max / min of ``|x|`` over the window."""

    def ref(x: np.ndarray, norm_type: float, kernel_size: Any, stride: Any = None,
            ceil_mode: bool = False) -> np.ndarray:
        k = _tup(kernel_size, nd)
        s = k if stride is None else _tup(stride, nd)
        wins = _pool_wins(x.shape[2:], k, s, (0,) * nd, (1,) * nd, ceil_mode)
        if math.isinf(norm_type):
            sign = 1 if norm_type > 0 else -1
            return sign * window_max(sign * np.abs(x), wins)[0]
        out = [len(w) for w in wins]
        y = np.zeros((*x.shape[:2], *out))
        xp = x ** norm_type
        for o in itertools.product(*(range(n) for n in out)):
            sel = xp[(slice(None), slice(None), *(slice(wins[i][o[i]][0], wins[i][o[i]][-1] + 1)
                                                  for i in range(nd)))]
            count = math.prod(len(wins[i][o[i]]) for i in range(nd))
            y[(slice(None), slice(None), *o)] = sel.sum(tuple(range(2, 2 + nd))) / count
        y = y * math.prod(k)
        return y ** (1.0 / norm_type)

    return _batched(nd, ref)


def max_unpool_ref(nd: int) -> Any:
    """Zeros of the output size with ``x`` written at ``indices`` (flat within each plane);
    the default size is ``(n - 1) * stride - 2 * padding + kernel`` per spatial dim."""

    def ref(x: np.ndarray, indices: np.ndarray, kernel_size: Any, stride: Any = None,
            padding: Any = 0, output_size: Any = None) -> np.ndarray:
        k, p = _tup(kernel_size, nd), _tup(padding, nd)
        s = k if stride is None else _tup(stride, nd)
        if output_size is None:
            out = [(x.shape[2 + i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(nd)]
        else:
            out = list(output_size)[-nd:]
        n, c = x.shape[:2]
        y = np.zeros((n, c, math.prod(out)))
        rows, cols = np.arange(n)[:, None, None], np.arange(c)[None, :, None]
        y[rows, cols, indices.reshape(n, c, -1)] = x.reshape(n, c, -1)
        return y.reshape(n, c, *out)

    return _batched(nd, ref)


def _intervals(u: float, n: int, out: int, k: int) -> list[int]:
    """torch's pseudo-random window starts: ``int((o + u) * alpha) - int(u * alpha)`` with
    ``alpha = (n - k) / (out - 1)``, the last window ending at the input's end."""
    starts = [n - k] * out
    if out > 1:
        alpha = (n - k) / (out - 1)
        starts[:-1] = [int((o + u) * alpha) - int(u * alpha) for o in range(out - 1)]
    return starts


def fractional_ref(nd: int) -> Any:
    """Fractional max pooling with fixed samples ``u`` (N, C, nd): in 2-D ``u[..., 0]`` places
    the windows along W and ``u[..., 1]`` along H; in 3-D ``u[..., i]`` along dim ``i``."""
    order = [1, 0] if nd == 2 else [0, 1, 2]

    def ref(x: np.ndarray, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
            return_indices: bool = False, _random_samples: Any = None) -> Any:
        k, sp = _tup(kernel_size, nd), x.shape[2:]
        if output_size is None:
            out = [int(sp[i] * output_ratio[i]) for i in range(nd)]
        else:
            out = list(_tup(output_size, nd))
        n, c = x.shape[:2]
        y = np.zeros((n, c, *out))
        idx = np.zeros(y.shape, np.int64)
        for b, ch in itertools.product(range(n), range(c)):
            u = _random_samples.reshape(n, c, nd)[b, ch]
            wins = [[list(range(st, st + k[i])) for st in _intervals(u[order[i]], sp[i], out[i],
                                                                       k[i])] for i in range(nd)]
            vy, vi = window_max(x[b:b + 1, ch:ch + 1], wins)
            y[b, ch], idx[b, ch] = vy[0, 0], vi[0, 0]
        return (y, idx) if return_indices else y

    return _batched(nd, ref)


def fractional_indices_ref(nd: int) -> Any:
    """``fractional_max_pool{nd}d_with_indices``: (values, indices) always."""
    ref = fractional_ref(nd)
    return lambda x, *a, **kw: ref(x, *a, **{**kw, "return_indices": True})


# ---- samples ------------------------------------------------------------------------------


def _distinct(rng: np.random.Generator, *shape: int, away: bool = False) -> T:
    """Distinct values (unique window maxima); ``away``: distinct ``|x|`` away from 0 with
    random signs (the infinite LP norms)."""
    n = math.prod(shape)
    v = (rng.permutation(n).reshape(shape) + U(rng, shape, 0.1, 0.4)) / 4
    return T((v + 0.2) * rng.choice([-1.0, 1.0], shape) if away else v - n / 8)


def _max_samples(nd: int) -> Any:
    sp = {1: (9,), 2: (5, 6), 3: (4, 5, 3)}[nd]
    small = {1: (7,), 2: (4, 5), 3: (3, 4, 3)}[nd]

    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        yield Sample(_distinct(rng, 2, 2, *sp), 2)
        yield Sample(_distinct(rng, 1, 2, *sp), 3, 2, 1, 1, True, name="pad_ceil")
        yield Sample(_distinct(rng, 1, 1, *sp), 2, 1, 0, 2, False, True, name="dilation")
        yield Sample(_distinct(rng, 2, *small), 2, 1, return_indices=False, name="unbatched")
        if nd == 3:  # NOTE: 1-D/2-D: lucid's double backward fails on an empty batch
            yield Sample(_distinct(rng, 0, 1, *small), 2, name="empty_batch")

    return samples


def _adaptive_samples(nd: int) -> Any:
    sp = {1: (9,), 2: (5, 7), 3: (4, 5, 3)}[nd]
    outs = {1: [4, 1, 11], 2: [(3, 2), (None, 4), 1], 3: [(2, 3, 2), (None, 2, 4), 1]}[nd]

    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        for o in outs:
            yield Sample(_distinct(rng, 1, 2, *sp), o)
        yield Sample(_distinct(rng, 2, *sp), outs[0], True, name="unbatched")

    return samples


def _unpool_sample(rng: np.random.Generator, nd: int, shape: tuple, k: Any, s: Any, p: Any,
                   **kw: Any) -> Sample:
    """Values to unpool and the indices of a max pool of distinct values with these
    arguments (non-overlapping windows, so no index repeats)."""
    pooled = _distinct(rng, *shape).value
    xb = pooled if pooled.ndim == nd + 2 else pooled[None]
    _, idx = max_pool_ref(nd)(xb, k, s, p)
    idx = idx if pooled.ndim == nd + 2 else idx[0]
    return Sample(T(U(rng, idx.shape)), T(idx), k, s, p, **kw)


def _unpool_samples(nd: int) -> Any:
    sp = {1: (8,), 2: (4, 6), 3: (4, 4, 2)}[nd]
    pad = {1: (7,), 2: (4, 7), 3: (4, 4, 7)}[nd]  # 3 * out - 2: the default size
    odd = {1: (7,), 2: (5, 5), 3: (3, 5, 5)}[nd]  # one past the default size

    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        yield _unpool_sample(rng, nd, (2, 2, *sp), 2, None, 0)
        yield _unpool_sample(rng, nd, (1, 2, *pad), 3, 3, 1, name="pad")
        yield _unpool_sample(rng, nd, (1, 1, *odd), 2, 2, 0, output_size=(1, 1, *odd),
                             name="output_size")
        yield _unpool_sample(rng, nd, (2, *odd), 2, 2, 0, output_size=odd,
                             name="unbatched_output_size")

    return samples


def _lp_samples(nd: int) -> Any:
    sp = {1: (9,), 2: (5, 7), 3: (3, 5, 4)}[nd]

    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        yield Sample(T(U(rng, (2, 2, *sp))), 2.0, 2)
        yield Sample(T(U(rng, (1, 2, *sp), 0.3, 1.5)), 3, 2, 2, True, name="p3_ceil")
        yield Sample(T(U(rng, (1, 2, *sp), 0.3, 1.5)), 1.5, 3, 1, name="p1.5_stride1")
        yield Sample(T(U(rng, (1, 1, *sp))), 1, 2, name="p1")
        yield Sample(_distinct(rng, 1, 2, *sp, away=True), math.inf, 2, 2, True, name="inf")
        yield Sample(_distinct(rng, 1, 2, *sp, away=True), -math.inf, 3, 2, name="-inf")
        yield Sample(T(U(rng, (2, *sp), 0.3, 1.5), "t"), 2.5, 2, name="unbatched")

    return samples


def _u(rng: np.random.Generator, n: int, c: int, sizes: list[tuple[int, int, int]],
       order: list[int]) -> T:
    """Samples ``u`` whose window starts lie away from float rounding: ``(o + u) * alpha``
    is never within 1e-3 of an integer, so float32 and float64 place the same windows."""
    u = rng.uniform(0.02, 0.98, (n, c, len(sizes)))
    for b, ch, i in itertools.product(range(n), range(c), range(len(sizes))):
        size, out, k = sizes[i]
        alpha = (size - k) / max(out - 1, 1)
        while True:
            t = np.array([(o + u[b, ch, order[i]]) * alpha for o in range(out)] +
                         [u[b, ch, order[i]] * alpha])
            if np.all(np.abs(t - np.round(t)) > 1e-3):
                break
            u[b, ch, order[i]] = rng.uniform(0.02, 0.98)
    return T(u, grad=False)


def _fractional_samples(nd: int, indices: bool) -> Any:
    order = [1, 0] if nd == 2 else [0, 1, 2]
    cases = {2: [((2, 2, 7, 9), (2, 3), (3, 4), None), ((1, 2, 6, 6), 2, 1, None),
                 ((1, 1, 6, 5), 2, (5, 4), None), ((2, 10, 10), 3, None, (0.5, 0.5))],
             3: [((1, 2, 5, 6, 7), (2, 3, 2), (3, 3, 4), None), ((1, 1, 4, 4, 4), 2, 1, None),
                 ((2, 6, 5, 6), 2, None, (0.5, 0.6, 0.5))]}[nd]

    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        for j, (shape, k, out, ratio) in enumerate(cases):
            sp = shape[-nd:]
            ks = _tup(k, nd)
            if out is None:
                outs = [int(sp[i] * ratio[i]) for i in range(nd)]
            else:
                outs = list(_tup(out, nd))
            n = shape[0] if len(shape) == nd + 2 else 1
            u = _u(rng, n, shape[-nd - 1], [(sp[i], outs[i], ks[i]) for i in range(nd)], order)
            kw = {"output_size": out} if ratio is None else {"output_ratio": ratio}
            if not indices:
                kw["return_indices"] = j == 0
            yield Sample(_distinct(rng, *shape), k, **kw, _random_samples=u)

    return samples


# ---- errors --------------------------------------------------------------------------------


UNPOOL2D_ERRORS = [ErrorInput(lambda m: m.F.max_unpool2d(m.zeros(1, 1, 2, 2),
                                                         m.zeros(1, 1, 2, 2).long(), 2,
                                                         output_size=(9, 9)),
                              ValueError, exact('invalid output_size "(9, 9)" (dim 0 must be '
                                                'between 2 and 6)'))]


def _pool(name: str, ref: Any, samples: Any, errors: list | None = None) -> OpInfo:
    return OpInfo(name, getattr(F, name), ref, samples, torch_op=f"nn.functional.{name}",
                  rtol=1e-9, atol=1e-12, error_inputs=errors or [])


POOL_INDICES: list[OpInfo] = [
    *(_pool(f"max_pool{n}d_with_indices", max_pool_ref(n), _max_samples(n)) for n in (1, 2, 3)),
    *(_pool(f"adaptive_max_pool{n}d_with_indices", adaptive_max_ref(n), _adaptive_samples(n))
      for n in (1, 2, 3)),
    *(_pool(f"max_unpool{n}d", max_unpool_ref(n), _unpool_samples(n),
            UNPOOL2D_ERRORS if n == 2 else None) for n in (1, 2, 3)),
    *(OpInfo(f"lp_pool{n}d", getattr(F, f"lp_pool{n}d"), lp_pool_ref(n), _lp_samples(n),
             torch_op=f"nn.functional.lp_pool{n}d", rtol=1e-9, atol=1e-12)
      for n in (1, 2, 3)),
    *(_pool(f"fractional_max_pool{n}d{suffix}", ref(n), _fractional_samples(n, bool(suffix)))
      for n in (2, 3) for suffix, ref in (("", fractional_ref),
                                          ("_with_indices", fractional_indices_ref))),
]
