"""Hypothesis strategies for windowed, shape-changing and reducing ops (see ``fuzz_strategies``).

Geometry arguments (kernel, stride, padding, dilation, groups, sizes) include their edge
values: 0, negative, larger than the input.
"""

from __future__ import annotations

from typing import Any

from fuzz_strategies import ALL_DTYPES, HUGE, case, data, dim, edit, near, rare, shape, side
from hypothesis import strategies as st


def _geo(lo: int, hi: int, nd: int) -> Any:
    """An int, or a tuple of ``nd`` ints (sometimes of the wrong length)."""
    one = st.integers(lo, hi)
    ok = st.integers(max(lo, 1), hi) if hi >= 1 else one
    return st.one_of(ok, ok, ok, ok, one, st.lists(ok, min_size=nd, max_size=nd),
                     st.lists(one, min_size=1, max_size=3))


@st.composite
def _sane_pool(draw: Any, kind: str, nd: int) -> dict:
    """Arguments torch accepts: forward runs, so edits and backward are reached."""
    lead = [draw(side(0, 2)), draw(side(1, 3))][draw(st.sampled_from([0, 0, 1])):]
    spatial = [draw(side(1, 6)) for _ in range(nd)]
    kw: dict[str, Any] = {"x": draw(data(lead + spatial))}
    if kind.startswith("adaptive"):
        kw["out"] = [draw(side(1, 5)) for _ in range(nd)]
        return kw
    k = [draw(side(1, min(4, n))) for n in spatial]
    dil = [1] * nd
    if kind.startswith("max"):
        dil = [draw(side(1, 2)) if (kk - 1) * 2 + 1 <= n else 1 for kk, n in zip(k, spatial)]
        kw["dil"] = dil
    kw.update(k=k, s=draw(st.one_of(st.none(), st.lists(side(1, 3), min_size=nd, max_size=nd))),
              pad=[draw(st.integers(0, ((kk - 1) * d + 1) // 2)) for kk, d in zip(k, dil)],
              ceil=draw(st.booleans()))
    if kind.startswith("avg"):
        kw["cip"] = draw(st.booleans())
    return kw


@st.composite
def _wild_pool(draw: Any, kind: str, nd: int) -> dict:
    """Any arguments, edge values included: mostly refused with a clear error."""
    kw: dict[str, Any] = {"x": draw(data(shape(nd + 1, nd + 2, 0, 5)))}
    if kind.startswith("adaptive"):
        kw["out"] = draw(st.one_of(st.integers(-1, 5), st.lists(
            st.one_of(st.none(), st.integers(0, 5)), min_size=nd, max_size=nd)))
        return kw
    kw.update(k=draw(_geo(0, 4, nd)), s=draw(st.one_of(st.none(), _geo(0, 3, nd))),
              pad=draw(_geo(-1, 3, nd)), ceil=draw(st.booleans()))
    if kind.startswith("max"):
        kw["dil"] = draw(_geo(0, 2, nd))
    else:
        kw["cip"] = draw(st.booleans())
    return kw


@st.composite
def pool(draw: Any, dev: str) -> dict:
    kind = draw(st.sampled_from(["max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d",
                                 "adaptive_max_pool1d", "adaptive_max_pool2d",
                                 "adaptive_avg_pool1d", "adaptive_avg_pool2d", "max_pool2d",
                                 "adaptive_max_pool2d"]))
    nd = 1 if kind.endswith("1d") else 2
    kw = draw(_wild_pool(kind, nd) if draw(rare(3)) else _sane_pool(kind, nd))
    if "max" in kind:
        kw["ri"] = draw(st.sampled_from([True, True, False]))
    return case("pool", dev, kind=kind, edit=draw(edit(("out1", "input"))), **kw)


@st.composite
def conv(draw: Any, dev: str) -> dict:
    kind = draw(st.sampled_from(["conv1d", "conv2d", "conv2d", "conv_transpose1d",
                                 "conv_transpose2d", "conv_transpose2d"]))
    nd = 1 if kind.endswith("1d") else 2
    wild = draw(rare(3))
    g = draw(st.sampled_from([1, 1, 1, 2, 3, 0, -1] if wild else [1, 1, 2, 3]))
    gg = max(g, 1)
    cin = draw(st.sampled_from([0, gg, 2 * gg, 3] if wild else [gg, 2 * gg, gg, 0]))
    cout = draw(st.sampled_from([0, gg, 2 * gg, 3] if wild else [gg, 2 * gg, gg, 0]))
    ks = [draw(side(0, 3) if wild else side(1, 3)) for _ in range(nd)]
    dil = draw(_geo(0, 2, nd)) if wild else [draw(side(1, 2)) for _ in range(nd)]
    spatial = [draw(side(0, 6)) if wild else draw(side((k - 1) * d + 1, (k - 1) * d + 4))
               for k, d in zip(ks, dil if isinstance(dil, list) and len(dil) == nd
                               else [1] * nd)]
    x = [draw(side(0, 2)), cin] + spatial
    x = draw(data(near(x, draw) if wild else x))
    w = [cin, cout // gg] + ks if kind.startswith("conv_transpose") else [cout, cin // gg] + ks
    if draw(rare(4)) and len(x["shape"]) > 1:  # unbatched input
        x["shape"] = x["shape"][1:]
    nb = w[1] * gg if "transpose" in kind else w[0]
    s = draw(_geo(0, 3, nd)) if wild else [draw(side(1, 2)) for _ in range(nd)]
    kw: dict[str, Any] = {
        "kind": kind, "x": x, "w": draw(data(near(w, draw) if wild else w)), "g": g,
        "b": draw(st.one_of(st.none(), data(near([nb], draw) if wild else [nb]))),
        "s": s, "dil": dil,
        "pad": draw(st.one_of(_geo(-1, 3, nd), st.sampled_from(["same", "valid"])) if wild
                    else st.lists(st.integers(0, 2), min_size=nd, max_size=nd)),
    }
    if not wild:  # one dtype for input, weight and bias
        for spec in (kw["w"], kw["b"]):
            if spec is not None:
                spec["dtype"] = x["dtype"]
    if kind.startswith("conv_transpose"):
        kw["opad"] = draw(_geo(0, 2, nd)) if wild else [
            draw(st.integers(0, max(a, b) - 1)) for a, b in zip(s, dil)]
    return case("conv", dev, edit=draw(edit(("input", "weight"))), **kw)


@st.composite
def unfold(draw: Any, dev: str) -> dict:
    fold = draw(st.booleans())
    x = draw(data(shape(2, 3, 0, 6) if fold else shape(3, 4, 0, 5)))
    kw: dict[str, Any] = {"x": x, "fold": fold, "k": draw(_geo(0, 3, 2)),
                          "dil": draw(_geo(0, 2, 2)), "pad": draw(_geo(-1, 2, 2)),
                          "s": draw(_geo(0, 2, 2))}
    if fold:
        kw["out"] = draw(_geo(0, 5, 2))
    return case("unfold", dev, **kw)


@st.composite
def interpolate(draw: Any, dev: str) -> dict:
    nd = draw(st.sampled_from([3, 4]))
    mode = draw(st.sampled_from(["nearest", "nearest-exact", "linear", "bilinear", "bicubic",
                                 "area", "linear" if nd == 3 else "bilinear"]))
    kw: dict[str, Any] = {"x": draw(data(shape(nd, nd))), "mode": mode,
                          "ac": draw(st.sampled_from([None, True, False]))}
    which = draw(st.sampled_from(["size", "size", "scale", "scale", "both", "none"]))
    if which in ("size", "both"):
        kw["size"] = draw(st.one_of(st.integers(-1, 5), st.lists(st.integers(0, 5), min_size=1,
                                                                 max_size=3)))
    if which in ("scale", "both"):
        kw["scale"] = draw(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, -1.0]))
    return case("interpolate", dev, **kw)


@st.composite
def sort(draw: Any, dev: str) -> dict:
    x = draw(data(shape(0, 3), dtypes=ALL_DTYPES))
    nd = len(x["shape"])
    return case("sort", dev, x=x, kind=draw(st.sampled_from(["sort", "argsort", "topk"])),
                dim=draw(dim(nd)), k=draw(st.integers(-1, 5)), desc=draw(st.booleans()),
                largest=draw(st.booleans()), edit=draw(edit(("out1", "input"))))


REDUCTIONS = ["sum", "mean", "amax", "amin", "prod", "var", "std", "logsumexp", "max", "min",
              "argmax", "argmin", "softmax", "log_softmax", "cumsum", "any", "all"]


@st.composite
def reduce(draw: Any, dev: str) -> dict:
    x = draw(data(shape(0, 3), dtypes=("float32", "float64", "float32", "int64")))
    nd = len(x["shape"])
    d = draw(st.one_of(st.none(), dim(nd), st.lists(dim(nd), min_size=1, max_size=2)))
    return case("reduce", dev, x=x, kind=draw(st.sampled_from(REDUCTIONS)), dim=d,
                keepdim=draw(st.booleans()), edit=draw(edit(("input", "out1"))))


@st.composite
def movement(draw: Any, dev: str) -> dict:
    x = draw(data(shape(0, 3), dtypes=ALL_DTYPES))
    nd = len(x["shape"])
    kind = draw(st.sampled_from(["reshape", "view", "expand", "permute", "repeat", "tile",
                                 "repeat_interleave", "tril", "triu", "transpose", "squeeze",
                                 "unsqueeze", "flatten", "flip", "narrow", "roll"]))
    some = st.integers(-2, 5)
    if kind in ("reshape", "view", "expand", "repeat", "tile"):
        args = draw(st.lists(st.one_of(some, some, st.sampled_from(HUGE[:2])), max_size=4))
    elif kind == "permute":
        args = draw(st.one_of(st.permutations(list(range(nd))), st.lists(dim(nd), max_size=4)))
    elif kind == "repeat_interleave":
        args = [draw(st.sampled_from([0, 1, 2, -1, 10**12])),
                draw(st.one_of(st.none(), dim(nd)))]
    elif kind in ("tril", "triu"):
        args = [draw(st.sampled_from([0, 1, -1, 3, -5, 10**12, -(10**12)]))]
    elif kind == "narrow":
        args = [draw(dim(nd)), draw(st.integers(-5, 5)), draw(st.integers(-1, 5))]
    elif kind == "roll":
        args = [draw(st.integers(-5, 5)), draw(st.one_of(st.none(), dim(nd)))]
    elif kind in ("squeeze", "flip", "unsqueeze"):
        args = [draw(dim(nd + (kind == "unsqueeze")))]
    else:
        args = [draw(dim(nd)), draw(dim(nd))]
    return case("movement", dev, x=x, kind=kind, args=args)


@st.composite
def matmul(draw: Any, dev: str) -> dict:
    a = draw(shape(1, 3))
    b = draw(shape(1, 3))
    if len(a) >= 1 and len(b) >= 2 and not draw(rare(3)):
        b[-2] = a[-1]
    return case("matmul", dev, a=draw(data(a)), b=draw(data(b)), edit=draw(edit(("input",))))


@st.composite
def cat(draw: Any, dev: str) -> dict:
    base = draw(shape(0, 3))
    xs = [draw(data(near(base, draw))) for _ in range(draw(st.sampled_from([1, 2, 2, 3, 0])))]
    if xs and draw(rare(4)):
        xs[0]["shape"] = [0]  # a legacy empty tensor among others
    return case("cat", dev, xs=xs, dim=draw(dim(len(base) + 1)), stack=draw(st.booleans()),
                edit=draw(edit(("t0", "t1"))))


@st.composite
def norm(draw: Any, dev: str) -> dict:
    kind = draw(st.sampled_from(["batch_norm", "layer_norm", "group_norm"]))
    x = draw(data(shape(1, 4)))
    shp = x["shape"]
    c = shp[1] if len(shp) > 1 else shp[0]
    kw: dict[str, Any] = {"kind": kind, "x": x}
    if kind == "layer_norm":
        ns = shp[draw(st.integers(0, len(shp))):]
        kw["ns"] = near(ns, draw)
        feat = kw["ns"]
    elif kind == "group_norm":
        kw["groups"] = draw(st.sampled_from([1, 2, 3, 0, -1]))
        feat = [c]
    else:
        feat = [c]
        kw["training"] = draw(st.booleans())
        kw["rm"] = draw(st.one_of(st.none(), data(near(feat, draw), grad=False, odd_dtype=False)))
        kw["rv"] = draw(st.one_of(st.none(), data(near(feat, draw), grad=False, odd_dtype=False)))
    if draw(st.booleans()):
        kw["w"] = draw(data(near(feat, draw)))
        kw["b"] = draw(st.one_of(st.none(), data(near(feat, draw))))
    return case("norm", dev, edit=draw(edit(("input", "weight", "rm"))), **kw)


@st.composite
def pointwise(draw: Any, dev: str) -> dict:
    """Unary and broadcasting binary ops (the fused elementwise kernels among them)."""
    kind = draw(st.sampled_from(["relu", "sigmoid", "tanh", "gelu", "silu", "softplus", "elu",
                                 "leaky_relu", "hardtanh", "exp", "log", "sqrt", "abs", "neg",
                                 "clamp", "cumsum", "relu_", "sigmoid_", "add", "sub", "mul",
                                 "div", "pow", "maximum", "minimum", "floor_divide",
                                 "remainder", "eq", "lerp", "where", "iadd", "imul"]))
    a = draw(data(shape(0, 4)))
    sb = list(a["shape"])
    if sb and draw(st.booleans()):  # broadcast: drop leading dims, set some to 1
        sb = sb[draw(st.integers(0, len(sb))):]
        sb = [1 if draw(rare(3)) else n for n in sb]
    return case("pointwise", dev, kind=kind, a=a, b=draw(data(near(sb, draw))),
                edit=draw(edit(("input", "other"))))
