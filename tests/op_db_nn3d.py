"""op_db entries for the 3-D nn functions: conv3d, conv_transpose3d, max_pool3d, avg_pool3d,
adaptive_avg_pool3d and adaptive_max_pool3d, with loop-over-offsets / loop-over-windows numpy
references, tiny samples (the float64 gradchecks go element by element) and torch's error
messages; they join ``OP_DB`` through ``op_db_tail.py``."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from opinfo import ErrorInput, OpInfo, Sample, T, U, exact

import lucid.nn.functional as F


def _3(v: Any) -> tuple:
    return (v,) * 3 if isinstance(v, int) else tuple(v)


def _batched(fn: Any) -> Any:
    """``fn`` on (N, C, D, H, W); an unbatched (C, D, H, W) input gets a batch of one."""

    def ref(x: np.ndarray, *args: Any, **kw: Any) -> Any:
        if x.ndim == 5:
            return fn(x, *args, **kw)
        out = fn(x[None], *args, **kw)
        return tuple(o[0] for o in out) if isinstance(out, tuple) else out[0]

    return ref


def _distinct(rng: np.random.Generator, *shape: int) -> T:
    """Distinct values: the maximum of each window is unique."""
    n = int(np.prod(shape))
    return T((rng.permutation(n).reshape(shape) + U(rng, shape, 0.1, 0.4)) / 4)


# ---- convolution --------------------------------------------------------------------------


@_batched
def conv3d_ref(x: np.ndarray, w: np.ndarray, b: Any = None, stride: Any = 1, padding: Any = 0,
               dilation: Any = 1, groups: int = 1) -> np.ndarray:
    """For each kernel offset add ``w[:, :, i, j, k]`` times a strided slice of the padded
    input."""
    s, d, ks = _3(stride), _3(dilation), w.shape[2:]
    if padding == "valid":
        pads = [(0, 0)] * 3
    elif padding == "same":
        pads = [(t // 2, t - t // 2) for t in (d[i] * (ks[i] - 1) for i in range(3))]
    else:
        pads = [(p, p) for p in _3(padding)]
    xp = np.pad(x, ((0, 0), (0, 0), *pads))
    out = [(xp.shape[2 + i] - d[i] * (ks[i] - 1) - 1) // s[i] + 1 for i in range(3)]
    oc, cg = w.shape[:2]
    ocg = oc // groups
    y = np.zeros((x.shape[0], oc, *out))
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for off in itertools.product(*(range(k) for k in ks)):
            sl = tuple(slice(off[i] * d[i], off[i] * d[i] + (out[i] - 1) * s[i] + 1, s[i])
                       for i in range(3))
            y[:, g * ocg:(g + 1) * ocg] += np.einsum(
                "ncdhw,oc->nodhw", xs[(slice(None), slice(None), *sl)],
                w[(slice(g * ocg, (g + 1) * ocg), slice(None), *off)])
    return y if b is None else y + b.reshape(1, -1, 1, 1, 1)


@_batched
def conv_transpose3d_ref(x: np.ndarray, w: np.ndarray, b: Any = None, stride: Any = 1,
                         padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                         dilation: Any = 1) -> np.ndarray:
    """Scatter every input voxel times the kernel into the full output, then crop."""
    s, p, op, d = _3(stride), _3(padding), _3(output_padding), _3(dilation)
    cin, coutg, ks = w.shape[0], w.shape[1], w.shape[2:]
    sp = x.shape[2:]
    full = [(sp[i] - 1) * s[i] + d[i] * (ks[i] - 1) + 1 + op[i] for i in range(3)]
    y = np.zeros((x.shape[0], coutg * groups, *full))
    cing = cin // groups
    for g in range(groups):
        xs = x[:, g * cing:(g + 1) * cing]
        for off in itertools.product(*(range(k) for k in ks)):
            contrib = np.einsum("ncdhw,co->nodhw", xs,
                                w[(slice(g * cing, (g + 1) * cing), slice(None), *off)])
            sl = tuple(slice(off[i] * d[i], off[i] * d[i] + (sp[i] - 1) * s[i] + 1, s[i])
                       for i in range(3))
            y[(slice(None), slice(g * coutg, (g + 1) * coutg), *sl)] += contrib
    y = y[(slice(None), slice(None), *(slice(p[i], full[i] - p[i]) for i in range(3)))]
    return y if b is None else y + b.reshape(1, -1, 1, 1, 1)


def _conv_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (1, 2, 3, 3, 3))), T(U(rng, (2, 2, 2, 2, 2))), T(U(rng, (2,))))
    yield Sample(T(U(rng, (2, 2, 3, 4, 3))), T(U(rng, (2, 1, 2, 1, 2))), None, (2, 1, 1), 1,
                 1, 2, name="stride_pad_groups")
    yield Sample(T(U(rng, (1, 1, 4, 3, 4))), T(U(rng, (1, 1, 2, 2, 1))), padding=(0, 1, 1),
                 dilation=(2, 1, 1), name="dilation")
    yield Sample(T(U(rng, (1, 3, 3, 3)), "t"), T(U(rng, (2, 1, 2, 2, 2))), padding="same",
                 name="unbatched_same")
    yield Sample(T(U(rng, (1, 2, 3, 2, 3))), T(U(rng, (1, 2, 3, 1, 2))), padding="valid")
    yield Sample(T(U(rng, (0, 2, 2, 2, 2))), T(U(rng, (1, 2, 1, 1, 1))), T(U(rng, (1,))),
                 name="empty_batch")


def _ct_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (1, 2, 2, 2, 2))), T(U(rng, (2, 1, 2, 2, 2))), T(U(rng, (1,))))
    yield Sample(T(U(rng, (1, 2, 2, 2, 2))), T(U(rng, (2, 2, 2, 1, 2))), None, 2, (1, 0, 1),
                 1, name="stride_pad_outpad")
    yield Sample(T(U(rng, (2, 4, 2, 1, 2))), T(U(rng, (4, 1, 2, 2, 1))), groups=2,
                 dilation=(1, 2, 1), name="groups_dilation")
    yield Sample(T(U(rng, (2, 2, 2, 2)), "t"), T(U(rng, (2, 1, 1, 2, 2))), stride=(1, 2, 1),
                 name="unbatched")


def _conv_err(call: Any, msg: str) -> ErrorInput:
    return ErrorInput(call, RuntimeError, exact(msg))


CONV3D_ERRORS = [_conv_err(c, m) for c, m in [
    (lambda m: m.F.conv3d(m.zeros(1, 2, 3, 3, 3), m.zeros(1, 3, 1, 1, 1)),
     "Given groups=1, weight of size [1, 3, 1, 1, 1], expected input[1, 2, 3, 3, 3] to have 3 "
     "channels, but got 2 channels instead"),
    (lambda m: m.F.conv3d(m.zeros(1, 2, 3, 3, 3), m.zeros(1, 2, 4, 1, 1)),
     "Calculated padded input size per channel: (3 x 3 x 3). Kernel size: (4 x 1 x 1). Kernel "
     "size can't be greater than actual input size"),
    (lambda m: m.F.conv3d(m.zeros(1, 4, 3, 3, 3), m.zeros(3, 2, 1, 1, 1), groups=2),
     "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of "
     "size [[3, 2, 1, 1, 1]] instead"),
]]

CT3D_ERRORS = [_conv_err(c, m) for c, m in [
    (lambda m: m.F.conv_transpose3d(m.zeros(1, 2, 3, 3, 3), m.zeros(3, 2, 1, 1, 1)),
     "Given transposed=1, weight of size [3, 2, 1, 1, 1], expected input[1, 2, 3, 3, 3] to "
     "have 3 channels, but got 2 channels instead"),
    (lambda m: m.F.conv_transpose3d(m.zeros(1, 2, 3, 3, 3), m.zeros(2, 2, 1, 1, 1),
                                    output_padding=1),
     "output padding must be smaller than either stride or dilation, but got "
     "output_padding_depth: 1 output_padding_height: 1 output_padding_width: 1 stride_depth: 1 "
     "stride_height: 1 stride_width: 1 dilation_depth: 1 dilation_height: 1 dilation_width: 1"),
]]

# ---- pooling ------------------------------------------------------------------------------


def _out_size(n: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    span = n + 2 * p - d * (k - 1) - 1
    o = (-(-span // s) if ceil else span // s) + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


@_batched
def max_pool3d_ref(x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0,
                   dilation: Any = 1, ceil_mode: bool = False,
                   return_indices: bool = False) -> Any:
    k, p, d = _3(kernel_size), _3(padding), _3(dilation)
    s = k if stride is None or stride == [] else _3(stride)
    sp = x.shape[2:]
    out = [_out_size(sp[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(3)]
    y = np.zeros((*x.shape[:2], *out))
    idx = np.zeros(y.shape, np.int64)
    flat = x.reshape(*x.shape[:2], int(np.prod(sp)))
    for o in itertools.product(*(range(n) for n in out)):
        pos = [[o[i] * s[i] - p[i] + j * d[i] for j in range(k[i])] for i in range(3)]
        pos = [[q for q in ax if 0 <= q < sp[i]] for i, ax in enumerate(pos)]
        lin = np.array([np.ravel_multi_index(c, sp) for c in itertools.product(*pos)])
        vals = flat[:, :, lin]
        best = np.argmax(vals, axis=-1)
        y[(slice(None), slice(None), *o)] = np.take_along_axis(vals, best[..., None], -1)[..., 0]
        idx[(slice(None), slice(None), *o)] = lin[best]
    return (y, idx) if return_indices else y


@_batched
def avg_pool3d_ref(x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0,
                   ceil_mode: bool = False, count_include_pad: bool = True,
                   divisor_override: Any = None) -> np.ndarray:
    k, p = _3(kernel_size), _3(padding)
    s = k if stride is None or stride == [] else _3(stride)
    sp = x.shape[2:]
    out = [_out_size(sp[i], k[i], s[i], p[i], 1, ceil_mode) for i in range(3)]
    y = np.zeros((*x.shape[:2], *out))
    for o in itertools.product(*(range(n) for n in out)):
        lo = [o[i] * s[i] - p[i] for i in range(3)]
        hi = [min(lo[i] + k[i], sp[i] + p[i]) for i in range(3)]
        pool = math.prod(hi[i] - lo[i] for i in range(3))
        lo = [max(v, 0) for v in lo]
        hi = [min(hi[i], sp[i]) for i in range(3)]
        win = x[(slice(None), slice(None), *(slice(lo[i], hi[i]) for i in range(3)))]
        div = divisor_override or (pool if count_include_pad else
                                   math.prod(hi[i] - lo[i] for i in range(3)))
        y[(slice(None), slice(None), *o)] = win.sum(axis=(2, 3, 4)) / div
    return y


def _adaptive_ref(reduce: str) -> Any:
    @_batched
    def ref(x: np.ndarray, output_size: Any, return_indices: bool = False) -> Any:
        sp = x.shape[2:]
        out = [sp[i] if v is None else v for i, v in enumerate(_3(output_size))]
        y = np.zeros((*x.shape[:2], *out))
        idx = np.zeros(y.shape, np.int64)
        flat = x.reshape(*x.shape[:2], int(np.prod(sp)))
        for o in itertools.product(*(range(n) for n in out)):
            pos = [range(o[i] * sp[i] // out[i], -(-(o[i] + 1) * sp[i] // out[i]))
                   for i in range(3)]
            lin = np.array([np.ravel_multi_index(c, sp) for c in itertools.product(*pos)])
            vals = flat[:, :, lin]
            at = (slice(None), slice(None), *o)
            if reduce == "mean":
                y[at] = vals.mean(-1)
            else:
                best = np.argmax(vals, axis=-1)
                y[at] = np.take_along_axis(vals, best[..., None], -1)[..., 0]
                idx[at] = lin[best]
        return (y, idx) if return_indices else y

    return ref


def _max_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(_distinct(rng, 1, 2, 4, 4, 4), 2)
    yield Sample(_distinct(rng, 1, 1, 5, 4, 5), (3, 2, 2), (2, 1, 2), 1, name="stride_pad")
    yield Sample(_distinct(rng, 1, 1, 5, 5, 4), 2, 2, 0, (2, 1, 1), True, True,
                 name="dilation_ceil_indices")
    yield Sample(_distinct(rng, 2, 3, 3, 4), 2, 1, return_indices=True, name="unbatched")
    yield Sample(_distinct(rng, 0, 1, 2, 2, 2), 2, name="empty_batch")


def _avg_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (1, 2, 4, 4, 4))), 2)
    yield Sample(T(U(rng, (1, 1, 5, 4, 5))), 3, (2, 1, 2), 1, name="pad_include")
    yield Sample(T(U(rng, (1, 1, 5, 4, 5))), 3, 2, 1, True, False, name="ceil_exclude")
    yield Sample(T(U(rng, (1, 1, 4, 5, 3))), (2, 3, 2), 2, 1, True, True, name="ceil_include")
    yield Sample(T(U(rng, (2, 3, 3, 4))), 2, 1, divisor_override=3, name="unbatched_divisor")


def _adaptive_samples(indices: bool) -> Any:
    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        yield Sample(_distinct(rng, 1, 2, 4, 5, 3), (2, 3, 2))
        yield Sample(_distinct(rng, 1, 1, 3, 4, 5), 2)
        yield Sample(_distinct(rng, 2, 3, 2, 5), (None, 2, 3), name="unbatched_none")
        yield Sample(_distinct(rng, 1, 1, 2, 3, 2), (4, 3, 1), name="upsample")
        if indices:
            yield Sample(_distinct(rng, 1, 2, 3, 4, 3), (2, 3, 2), True, name="indices")

    return samples


def _pool_err(call: Any, msg: str) -> ErrorInput:
    return ErrorInput(call, RuntimeError, exact(msg))


_PAD = "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and " \
       "dilation=1"

MAX3D_ERRORS = [_pool_err(c, m) for c, m in [
    (lambda m: m.F.max_pool3d(m.zeros(3, 3), 2),
     "non-empty 4D or 5D (batch mode) tensor expected for input"),
    (lambda m: m.F.max_pool3d(m.zeros(1, 2, 2, 2), 3),
     "Given input size: (1x2x2x2). Calculated output size: (1x0x0x0). Output size is too small"),
    (lambda m: m.F.max_pool3d(m.zeros(1, 4, 4, 4), 2, padding=2), _PAD),
]]

AVG3D_ERRORS = [_pool_err(c, m) for c, m in [
    (lambda m: m.F.avg_pool3d(m.zeros(3, 3), 2),
     "non-empty 4D or 5D (batch mode) tensor expected for input"),
    (lambda m: m.F.avg_pool3d(m.zeros(1, 4, 4, 4), 2, padding=2), _PAD),
    (lambda m: m.F.avg_pool3d(m.zeros(1, 2, 2, 2), 3),
     "input image (T: 2 H: 2 W: 2) smaller than kernel size (kT: 3 kH: 3 kW: 3)"),
]]

ADAPTIVE_AVG_ERRORS = [_pool_err(c, m) for c, m in [
    (lambda m: m.F.adaptive_avg_pool3d(m.zeros(3, 3), 2),
     "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got [3, 3]"),
    (lambda m: m.F.adaptive_avg_pool3d(m.zeros(1, 2, 2, 2), (2, 2)),
     "adaptive_avg_pool3d: output_size must be 3"),
]]

ADAPTIVE_MAX_ERRORS = [_pool_err(c, m) for c, m in [
    (lambda m: m.F.adaptive_max_pool3d(m.zeros(3, 3), 2),
     "adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: [3, 3]"),
    (lambda m: m.F.adaptive_max_pool3d(m.zeros(1, 2, 2, 2), (2, 2)),
     "adaptive_max_pool3d(): internal error: output_size.size() must be 3"),
]]


def _nn(name: str, ref: Any, samples: Any, errors: list) -> OpInfo:
    return OpInfo(name, getattr(F, name), ref, samples, torch_op=f"nn.functional.{name}",
                  torch_atol=1e-4, error_inputs=errors)


NN3D: list[OpInfo] = [
    _nn("conv3d", conv3d_ref, _conv_samples, CONV3D_ERRORS),
    _nn("conv_transpose3d", conv_transpose3d_ref, _ct_samples, CT3D_ERRORS),
    _nn("max_pool3d", max_pool3d_ref, _max_samples, MAX3D_ERRORS),
    _nn("avg_pool3d", avg_pool3d_ref, _avg_samples, AVG3D_ERRORS),
    _nn("adaptive_avg_pool3d", _adaptive_ref("mean"), _adaptive_samples(False),
        ADAPTIVE_AVG_ERRORS),
    _nn("adaptive_max_pool3d", _adaptive_ref("max"), _adaptive_samples(True),
        ADAPTIVE_MAX_ERRORS),
]
