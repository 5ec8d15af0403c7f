"""op_db entries for the rearrangement, distance, sampling and normalisation functions of
``lucid.nn.functional`` (pixel / channel shuffle, cosine similarity, pairwise distance,
local response norm, affine_grid, grid_sample, embedding_bag, bicubic, area and antialiased
interpolation),
each with a numpy reference written independently of lucid's composition and the calls that
must fail. The losses are in ``op_db_loss_more.py``; both join ``NN_OPS``."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import numpy as np
from opinfo import ErrorInput, OpInfo, Sample, T, U

import lucid.nn.functional as F

# ---- pixel / channel shuffle --------------------------------------------------------------------


def _pixel_shuffle_ref(x: np.ndarray, r: int) -> np.ndarray:
    *lead, c, h, w = x.shape
    out = np.zeros((*lead, c // (r * r), h * r, w * r))
    for k in range(c):
        o, rem = divmod(k, r * r)
        i, j = divmod(rem, r)
        out[..., o, i::r, j::r] = x[..., k, :, :]
    return out


def _pixel_unshuffle_ref(x: np.ndarray, r: int) -> np.ndarray:
    *lead, c, h, w = x.shape
    out = np.zeros((*lead, c * r * r, h // r, w // r))
    for k in range(c * r * r):
        o, rem = divmod(k, r * r)
        i, j = divmod(rem, r)
        out[..., k, :, :] = x[..., o, i::r, j::r]
    return out


def _channel_shuffle_ref(x: np.ndarray, g: int) -> np.ndarray:
    c = x.shape[1]
    order = [(k % g) * (c // g) + k // g for k in range(c)]
    return x[:, order]


def _ps_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (1, 8, 2, 3))), 2)
    yield Sample(T(U(rng, (9, 2, 2), )), 3)
    yield Sample(T(U(rng, (2, 1, 4, 2, 2)), "t"), 2)


def _pu_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (1, 2, 4, 6))), 2)
    yield Sample(T(U(rng, (1, 6, 3)), "s"), 3)


def _cs_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (2, 6, 3))), 2)
    yield Sample(T(U(rng, (1, 6, 2, 2))), 3)


# ---- distances ----------------------------------------------------------------------------------


def _cos_ref(a: np.ndarray, b: np.ndarray, dim: int = 1, eps: float = 1e-8) -> np.ndarray:
    a, b = np.broadcast_arrays(a, b)
    na = np.maximum(np.sqrt((a * a).sum(dim, keepdims=True)), eps)
    nb = np.maximum(np.sqrt((b * b).sum(dim, keepdims=True)), eps)
    return ((a / na) * (b / nb)).sum(dim)


def _cos_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3, 4))), T(U(rng, (3, 4))))
    yield Sample(T(U(rng, (2, 3, 4))), T(U(rng, (3, 4))), dim=-1)
    yield Sample(T(U(rng, (4,))), T(U(rng, (4,)), "s"), 0, 1e-6)


def _pdist_ref(a: np.ndarray, b: np.ndarray, p: float = 2.0, eps: float = 1e-6,
               keepdim: bool = False) -> np.ndarray:
    d = np.abs(a - b + eps)
    if p == np.inf:
        r = d.max(-1, keepdims=keepdim)
    else:
        r = (d ** p).sum(-1, keepdims=keepdim) ** (1 / p)
    return np.asarray(r)


def _pdist_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3, 4))), T(U(rng, (3, 4))))
    yield Sample(T(U(rng, (3, 4))), T(U(rng, (4,))), 1.0, keepdim=True)
    yield Sample(T(U(rng, (2, 5))), T(U(rng, (2, 5))), 3.0)
    yield Sample(T(U(rng, (2, 5))), T(U(rng, (2, 5))), np.inf)


# ---- local response norm ------------------------------------------------------------------------


def _lrn_ref(x: np.ndarray, size: int, alpha: float = 1e-4, beta: float = 0.75,
             k: float = 1.0) -> np.ndarray:
    c = x.shape[1]
    div = np.zeros_like(x)
    for ch in range(c):
        lo, hi = max(ch - size // 2, 0), min(ch + (size - 1) // 2, c - 1)
        div[:, ch] = (x[:, lo:hi + 1] ** 2).sum(1)
    return x / (k + alpha * div / size) ** beta


def _lrn_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (2, 5, 3))), 3, 0.5, 0.8, 1.5)
    yield Sample(T(U(rng, (1, 6, 2, 3))), 2, alpha=0.3)
    yield Sample(T(U(rng, (1, 4, 2, 2, 2))), 4, 0.2, 0.5, 2.0)


# ---- affine_grid / grid_sample ------------------------------------------------------------------


def _lin(n: int, align: bool) -> np.ndarray:
    if n <= 1:
        return np.zeros(1)
    r = np.linspace(-1, 1, n)
    return r if align else r * (n - 1) / n


def _affine_grid_ref(theta: np.ndarray, size: tuple, align_corners: bool) -> np.ndarray:
    n, k = theta.shape[0], len(size) - 2
    spatial = size[2:]
    out = np.zeros((n, *spatial, k))
    for pos in itertools.product(*[range(s) for s in spatial]):
        coords = [_lin(s, align_corners)[p] for s, p in zip(spatial, pos)][::-1]  # x, y, (z)
        vec = np.array(coords + [1.0])
        out[(slice(None), *pos)] = theta @ vec
    return out


def _affine_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (2, 2, 3))), (2, 3, 4, 5), align_corners=False)
    yield Sample(T(U(rng, (1, 2, 3))), (1, 1, 3, 2), align_corners=True)
    yield Sample(T(U(rng, (1, 3, 4))), (1, 2, 2, 3, 2), align_corners=False)


def _fold_coord(c: float, n: int, align: bool, padding: str) -> float:
    if padding == "reflection":
        lo, hi = (0.0, n - 1.0) if align else (-0.5, n - 0.5)
        span = hi - lo
        if span <= 0:
            c = 0.0
        else:
            a = abs(c - lo)
            flips, extra = divmod(a, span)
            c = lo + extra if int(flips) % 2 == 0 else hi - extra
    if padding in ("border", "reflection"):
        c = min(max(c, 0.0), n - 1.0)
    return c


def _grid_sample_ref(x: np.ndarray, grid: np.ndarray, mode: str = "bilinear",
                     padding_mode: str = "zeros", align_corners: bool = False) -> np.ndarray:
    n, c, *spatial = x.shape
    k = len(spatial)
    out_sp = grid.shape[1:-1]
    out = np.zeros((n, c, *out_sp))
    for b in range(n):
        for pos in itertools.product(*[range(s) for s in out_sp]):
            g = grid[(b, *pos)][::-1]  # (z,) y, x -> dims in input order
            src, raw = [], []
            for d in range(k):
                sz = spatial[d]
                u = (g[d] + 1) / 2 * (sz - 1) if align_corners else ((g[d] + 1) * sz - 1) / 2
                raw.append(u)
                src.append(_fold_coord(u, sz, align_corners, padding_mode))
            if mode == "bicubic":  # padding applies to each of the 4 taps
                corners = []
                for d, u in enumerate(raw):
                    f = np.floor(u)
                    taps = [int(_fold_coord(f - 1 + j, spatial[d], align_corners, padding_mode))
                            for j in range(4)]
                    corners.append((taps, list(_cubic(u - f))))
            elif mode == "nearest":
                corners = [([int(np.round(s))], [1.0]) for s in src]
            else:
                corners = []
                for s in src:
                    f = np.floor(s)
                    corners.append(([int(f), int(f) + 1], [1 - (s - f), s - f]))
            val = np.zeros(c)
            for combo in itertools.product(*[range(len(ci[0])) for ci in corners]):
                idx = [corners[d][0][j] for d, j in enumerate(combo)]
                w = np.prod([corners[d][1][j] for d, j in enumerate(combo)])
                if all(0 <= i < s for i, s in zip(idx, spatial)):
                    val += w * x[(b, slice(None), *idx)]
            out[(b, slice(None), *pos)] = val
    return out


def _gs_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (2, 1, 3, 3))), T(U(rng, (2, 2, 1, 2), -1.4, 1.4)), "bilinear",
                 "zeros", False)
    for pm, ac in (("zeros", True), ("border", False), ("reflection", False),
                   ("reflection", True)):
        yield Sample(T(U(rng, (1, 2, 3, 3))), T(U(rng, (1, 2, 2, 2), -1.4, 1.4)), "bilinear",
                     pm, ac)
    yield Sample(T(U(rng, (1, 2, 3, 4))), T(U(rng, (1, 2, 3, 2), -1.3, 1.3), grad=False),
                 "nearest", "zeros", False)
    yield Sample(T(U(rng, (1, 1, 3, 3))), T(U(rng, (1, 2, 2, 2), -1.3, 1.3), grad=False),
                 mode="nearest", padding_mode="reflection", align_corners=True)
    yield Sample(T(U(rng, (1, 1, 2, 3, 2))), T(U(rng, (1, 1, 1, 2, 3), -1.2, 1.2)),
                 "bilinear", "border", False)
    for pm, ac in (("zeros", False), ("border", True), ("reflection", False)):
        yield Sample(T(U(rng, (1, 1, 4, 3))), T(U(rng, (1, 2, 1, 2), -1.3, 1.3)),
                     "bicubic", pm, ac)


# ---- embedding_bag ------------------------------------------------------------------------------


def _bag_ref(idx: np.ndarray, w: np.ndarray, offsets: np.ndarray | None = None,
             mode: str = "mean", per_sample_weights: np.ndarray | None = None,
             include_last_offset: bool = False, padding_idx: int | None = None) -> np.ndarray:
    if idx.ndim == 2:
        bags = [list(range(r * idx.shape[1], (r + 1) * idx.shape[1])) for r in range(len(idx))]
    else:
        # torch's last bag runs to the end of the input, whatever the last offset says
        starts = offsets[:-1] if include_last_offset else offsets
        ends = list(starts[1:]) + [len(idx)]
        bags = [list(range(s, e)) for s, e in zip(starts, ends)]
    flat = idx.reshape(-1)
    psw = None if per_sample_weights is None else per_sample_weights.reshape(-1)
    out = np.zeros((len(bags), w.shape[1]))
    for b, members in enumerate(bags):
        rows = [w[flat[m]] * (1.0 if psw is None else psw[m]) for m in members
                if flat[m] != padding_idx]
        if rows:
            r = np.stack(rows)
            out[b] = r.sum(0) if mode == "sum" else r.mean(0) if mode == "mean" else r.max(0)
    return out


def _bag_samples(rng: np.random.Generator) -> Iterable[Sample]:
    w = lambda: T(U(rng, (6, 3)))  # noqa: E731
    yield Sample(T(np.array([[1, 2, 4], [4, 3, 2]])), w())
    yield Sample(T(np.array([1, 2, 4, 5, 4, 3, 2])), w(), T(np.array([0, 3, 3])), mode="sum")
    yield Sample(T(np.array([1, 2, 4, 5, 4, 3, 2])), w(), T(np.array([0, 2, 5])), mode="max")
    yield Sample(T(np.array([1, 2, 4, 5, 4, 3])), w(), T(np.array([0, 2, 6])), mode="mean",
                 include_last_offset=True, padding_idx=4)
    yield Sample(T(np.array([[1, 2], [5, 0]])), w(), mode="sum",
                 per_sample_weights=T(U(rng, (2, 2))))


# ---- bicubic and area interpolation -------------------------------------------------------------


def _cubic(t: float) -> np.ndarray:
    a = -0.75
    near = lambda x: ((a + 2) * x - (a + 3)) * x * x + 1  # noqa: E731
    far = lambda x: ((a * x - 5 * a) * x + 8 * a) * x - 4 * a  # noqa: E731
    return np.array([far(t + 1), near(t), near(1 - t), far(2 - t)])


def _resize_1d(x: np.ndarray, axis: int, n_out: int, mode: str, align: bool,
               sf: float | None) -> np.ndarray:
    n_in = x.shape[axis]
    xm = np.moveaxis(x, axis, -1)
    out = np.zeros(xm.shape[:-1] + (n_out,))
    for i in range(n_out):
        if mode == "area":
            s, e = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
            out[..., i] = xm[..., s:e].mean(-1)
            continue
        if align:
            real = i * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        else:
            real = (1 / sf if sf else n_in / n_out) * (i + 0.5) - 0.5
        f = int(np.floor(real))
        for j, wj in enumerate(_cubic(real - f)):
            out[..., i] += wj * xm[..., min(max(f - 1 + j, 0), n_in - 1)]
    return np.moveaxis(out, -1, axis)


def _aa_1d(x: np.ndarray, axis: int, n_out: int, mode: str, align: bool) -> np.ndarray:
    """PIL-style antialiased resampling: the filter widens by the scale when shrinking."""
    n_in = x.shape[axis]
    scale = ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0) if align else n_in / n_out
    stretch = max(scale, 1.0)
    support = (1.0 if mode == "bilinear" else 2.0) * stretch

    def filt(t: float) -> float:
        t = abs(t)
        if mode == "bilinear":
            return max(0.0, 1 - t)
        a = -0.5
        return ((a + 2) * t - (a + 3)) * t * t + 1 if t < 1 else \
            ((((t - 5) * t + 8) * t - 4) * a if t < 2 else 0.0)

    xm = np.moveaxis(x, axis, -1)
    out = np.zeros(xm.shape[:-1] + (n_out,))
    for i in range(n_out):
        c = scale * (i + 0.5)
        js = range(max(int(c - support + 0.5), 0), min(int(c + support + 0.5), n_in))
        w = np.array([filt((j - c + 0.5) / stretch) for j in js])
        out[..., i] = (xm[..., list(js)] * (w / w.sum())).sum(-1)
    return np.moveaxis(out, -1, axis)


def _interp_ref(x: np.ndarray, size=None, scale_factor=None, mode="nearest",
                align_corners=None, antialias=False) -> np.ndarray:
    k = x.ndim - 2
    sizes = ([size] * k if isinstance(size, int) else list(size)) if size is not None else \
        [int(np.floor(n * scale_factor)) for n in x.shape[2:]]
    out = x
    for d in range(k):
        out = _aa_1d(out, 2 + d, sizes[d], mode, bool(align_corners)) if antialias else \
            _resize_1d(out, 2 + d, sizes[d], mode, bool(align_corners), scale_factor)
    return out


def _interp_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (1, 2, 4, 3))), size=(6, 5), mode="bicubic")
    yield Sample(T(U(rng, (1, 1, 4, 3))), size=(3, 7), mode="bicubic", align_corners=True)
    yield Sample(T(U(rng, (2, 1, 3, 3))), scale_factor=1.7, mode="bicubic")
    yield Sample(T(U(rng, (1, 2, 5, 4))), size=(3, 3), mode="area")
    yield Sample(T(U(rng, (1, 2, 7))), size=3, mode="area")
    yield Sample(T(U(rng, (1, 1, 3, 4, 2))), size=(2, 3, 3), mode="area")
    yield Sample(T(U(rng, (1, 2, 7, 5))), size=(3, 6), mode="bilinear", antialias=True)
    yield Sample(T(U(rng, (1, 1, 8, 4))), size=(3, 3), mode="bicubic", align_corners=True,
                 antialias=True)


# ---- the table ----------------------------------------------------------------------------------

MORE_NN = [
    OpInfo("pixel_shuffle", F.pixel_shuffle, _pixel_shuffle_ref, _ps_samples,
           torch_op="nn.functional.pixel_shuffle", error_inputs=[
               ErrorInput(lambda m: m.F.pixel_shuffle(m.randn(1, 7, 2, 2), 2), RuntimeError,
                          "input.size\\(-3\\)=7 is not divisible by 4"),
               ErrorInput(lambda m: m.F.pixel_shuffle(m.randn(7, 2), 2), RuntimeError,
                          "expects input to have at least 3 dimensions"),
               ErrorInput(lambda m: m.F.pixel_shuffle(m.randn(1, 4, 2, 2), 0), RuntimeError,
                          "expects a positive upscale_factor, but got 0")]),
    OpInfo("pixel_unshuffle", F.pixel_unshuffle, _pixel_unshuffle_ref, _pu_samples,
           torch_op="nn.functional.pixel_unshuffle", error_inputs=[
               ErrorInput(lambda m: m.F.pixel_unshuffle(m.randn(1, 1, 3, 2), 2), RuntimeError,
                          "expects height to be divisible by downscale_factor"),
               ErrorInput(lambda m: m.F.pixel_unshuffle(m.randn(1, 1, 4, 3), 2), RuntimeError,
                          "expects width to be divisible by downscale_factor")]),
    OpInfo("channel_shuffle", F.channel_shuffle, _channel_shuffle_ref, _cs_samples,
           torch_op="nn.functional.channel_shuffle", error_inputs=[
               ErrorInput(lambda m: m.F.channel_shuffle(m.randn(1, 7, 2), 2), RuntimeError,
                          "Number of channels must be divisible by groups. Got 7 channels and "
                          "2 groups."),
               ErrorInput(lambda m: m.F.channel_shuffle(m.randn(1, 4), 2), RuntimeError,
                          "channel_shuffle expects input with > 2 dims"),
               ErrorInput(lambda m: m.F.channel_shuffle(m.randn(1, 4, 2), 0), RuntimeError,
                          "Number of groups to divide channels in must be positive")]),
    OpInfo("cosine_similarity", F.cosine_similarity, _cos_ref, _cos_samples,
           torch_op="nn.functional.cosine_similarity", error_inputs=[
               ErrorInput(lambda m: m.F.cosine_similarity(m.randn(3, 4), m.randn(3, 5)),
                          RuntimeError, "The size of tensor a \\(4\\) must match the size of "
                                        "tensor b \\(5\\)"),
               ErrorInput(lambda m: m.F.cosine_similarity(m.ones(3, 4, dtype=None).long(),
                                                          m.ones(3, 4).long()),
                          RuntimeError, "expected common dtype to be floating point, yet "
                                        "common dtype is Long")]),
    OpInfo("pairwise_distance", F.pairwise_distance, _pdist_ref, _pdist_samples,
           torch_op="nn.functional.pairwise_distance", error_inputs=[
               ErrorInput(lambda m: m.F.pairwise_distance(m.randn(3, 4), m.randn(3, 5)),
                          RuntimeError, "The size of tensor a \\(4\\) must match")]),
    OpInfo("local_response_norm", F.local_response_norm, _lrn_ref, _lrn_samples,
           torch_op="nn.functional.local_response_norm", error_inputs=[
               ErrorInput(lambda m: m.F.local_response_norm(m.randn(3, 4), 2), ValueError,
                          "Expected 3D or higher dimensionality\\s+input \\(got 2 dimensions\\)")]),
    OpInfo("affine_grid", F.affine_grid, _affine_grid_ref, _affine_samples,
           torch_op="nn.functional.affine_grid", error_inputs=[
               ErrorInput(lambda m: m.F.affine_grid(m.randn(1, 2, 3), (1, 1, 4, 5, 4),
                                                    align_corners=False), ValueError,
                          "Expected a batch of 3D affine matrices of shape Nx3x4"),
               ErrorInput(lambda m: m.F.affine_grid(m.randn(1, 2, 3), (1, 1, 4),
                                                    align_corners=False), NotImplementedError,
                          "affine_grid only supports 4D and 5D sizes"),
               ErrorInput(lambda m: m.F.affine_grid(m.randn(1, 2, 3), (1, 1, 0, 4),
                                                    align_corners=False), ValueError,
                          "Expected non-zero, positive output size")]),
    OpInfo("grid_sample", F.grid_sample, _grid_sample_ref, _gs_samples,
           torch_op="nn.functional.grid_sample", error_inputs=[
               ErrorInput(lambda m: m.F.grid_sample(m.randn(1, 2, 3, 3), m.randn(2, 2, 2, 2),
                                                    align_corners=False), RuntimeError,
                          "expected grid and input to have same batch size"),
               ErrorInput(lambda m: m.F.grid_sample(m.randn(1, 2, 3, 3), m.randn(1, 2, 2, 3),
                                                    align_corners=False), RuntimeError,
                          "expected grid to have size 2 in last dimension"),
               ErrorInput(lambda m: m.F.grid_sample(m.randn(1, 2, 0, 3), m.randn(1, 2, 2, 2),
                                                    align_corners=False), RuntimeError,
                          "expected input to have non-empty spatial dimensions"),
               ErrorInput(lambda m: m.F.grid_sample(m.randn(1, 2, 2, 3, 3),
                                                    m.randn(1, 2, 2, 2, 3), mode="bicubic",
                                                    align_corners=False), RuntimeError,
                          "grid_sampler\\(\\): bicubic interpolation only supports 4D input"),
               ErrorInput(lambda m: m.F.grid_sample(m.randn(1, 2, 3, 3), m.randn(1, 2, 2, 2),
                                                    mode="cubic"), ValueError,
                          "expected mode to be 'bilinear', 'nearest' or 'bicubic'"),
               ErrorInput(lambda m: m.F.grid_sample(m.randn(1, 2, 3, 3), m.randn(1, 2, 2, 2),
                                                    padding_mode="wrap"), ValueError,
                          "expected padding_mode to be 'zeros', 'border', or 'reflection'")]),
    OpInfo("embedding_bag", F.embedding_bag, _bag_ref, _bag_samples,
           torch_op="nn.functional.embedding_bag", error_inputs=[
               ErrorInput(lambda m: m.F.embedding_bag(m.tensor([[1, 2]]), m.randn(4, 3),
                                                      m.tensor([0])), ValueError,
                          "if input is 2D, then offsets has to be None"),
               ErrorInput(lambda m: m.F.embedding_bag(m.tensor([1, 2]), m.randn(4, 3)),
                          ValueError, "offsets has to be a 1D Tensor but got None"),
               ErrorInput(lambda m: m.F.embedding_bag(m.tensor([[1, 2]]), m.randn(4, 3),
                                                      mode="min"), ValueError,
                          "mode has to be one of sum, mean or max"),
               ErrorInput(lambda m: m.F.embedding_bag(m.tensor([[1, 9]]), m.randn(4, 3)),
                          RuntimeError, "Index 1 of input takes value 9 which is not in the "
                                        "valid range \\[0, 4\\)"),
               ErrorInput(lambda m: m.F.embedding_bag(m.tensor([1, 2, 3]), m.randn(4, 3),
                                                      m.tensor([1, 2])), RuntimeError,
                          "offsets\\[0\\] has to be 0"),
               ErrorInput(lambda m: m.F.embedding_bag(
                   m.tensor([[1, 2]]), m.randn(4, 3), per_sample_weights=m.ones(1, 2)),
                   NotImplementedError, "per_sample_weights is only supported for "
                                        "mode='sum' \\(got mode='mean'\\)")]),
    OpInfo("interpolate_bicubic_area", F.interpolate, _interp_ref, _interp_samples,
           torch_op="nn.functional.interpolate", error_inputs=[
               ErrorInput(lambda m: m.F.interpolate(m.randn(1, 2, 3), size=4, mode="linear",
                                                    antialias=True), ValueError,
                          "Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                          "modes and requires a 4-D tensor as input"),
               ErrorInput(lambda m: m.F.interpolate(m.randn(1, 2, 3), size=4, mode="bicubic"),
                          NotImplementedError, "Input Error: Only 3D, 4D and 5D input Tensors "
                                               "supported \\(got 3D\\)"),
               ErrorInput(lambda m: m.F.interpolate(m.randn(1, 1, 3, 3), size=4, mode="area",
                                                    align_corners=True), ValueError,
                          "align_corners option can only be set with the interpolating "
                          "modes"),
               ErrorInput(lambda m: m.F.interpolate(m.ones(1, 1, 3, 3).long(), size=4,
                                                    mode="bicubic"), NotImplementedError,
                          "\"compute_indices_weights_cubic\" not implemented for 'Long'"),
               ErrorInput(lambda m: m.F.interpolate(m.ones(1, 1, 3, 3).long(), size=2,
                                                    mode="area"), NotImplementedError,
                          "\"adaptive_avg_pool2d\" not implemented for 'Long'")]),
]
