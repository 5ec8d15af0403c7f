"""Worker side: one runner per fuzzed op. A runner builds its inputs from the case, runs the
forward and returns the output; ``run_case`` then applies the case's edit and runs backward."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fuzz_build import Ctx, finish, materialize

import lucid
import lucid.nn.functional as F

RUNNERS: dict[str, Callable[[Ctx], Any]] = {}


def runner(name: str) -> Callable[[Callable[[Ctx], Any]], Callable[[Ctx], Any]]:
    def deco(fn: Callable[[Ctx], Any]) -> Callable[[Ctx], Any]:
        RUNNERS[name] = fn
        return fn

    return deco


def _key(c: Ctx, item: Any) -> Any:
    """A getitem/setitem key from plain data: ints, slices, None, Ellipsis, lists, tensors."""
    kind = item[0]
    if kind == "int":
        return item[1]
    if kind == "slice":
        return slice(*item[1:])
    if kind == "none":
        return None
    if kind == "ellipsis":
        return Ellipsis
    if kind == "list":
        return list(item[1])
    if kind == "tensor":
        return c.index(item[1])
    if kind == "bool":
        return c.index(item[1], "mask")
    raise ValueError(kind)


def _keys(c: Ctx) -> Any:
    keys = tuple(_key(c, k) for k in c.case["key"])
    return keys[0] if len(keys) == 1 else keys


@runner("getitem")
def _getitem(c: Ctx) -> Any:
    x = c.data(c.case["x"])
    return x[_keys(c)]


@runner("setitem")
def _setitem(c: Ctx) -> Any:
    x = c.data(c.case["x"]) * 1
    v = c.data(c.case["v"], "value") if c.case["v"] is not None else 1.5
    x[_keys(c)] = v
    return x


@runner("index_select")
def _index_select(c: Ctx) -> Any:
    return lucid.index_select(c.data(c.case["x"]), c.case["dim"], c.index(c.case["idx"]))


@runner("gather")
def _gather(c: Ctx) -> Any:
    return lucid.gather(c.data(c.case["x"]), c.case["dim"], c.index(c.case["idx"]))


@runner("scatter")
def _scatter(c: Ctx) -> Any:
    x, src, idx = c.data(c.case["x"]), c.data(c.case["src"], "src"), c.index(c.case["idx"])
    if c.case.get("add"):
        return lucid.scatter_add(x, c.case["dim"], idx, src)
    return lucid.scatter(x, c.case["dim"], idx, src)


@runner("take")
def _take(c: Ctx) -> Any:
    return lucid.take(c.data(c.case["x"]), c.index(c.case["idx"]))


@runner("masked")
def _masked(c: Ctx) -> Any:
    x, m = c.data(c.case["x"]), c.index(c.case["mask"], "mask")
    if c.case.get("select"):
        return lucid.masked_select(x, m)
    return lucid.masked_fill(x, m, c.case.get("value", 0.5))


@runner("embedding")
def _embedding(c: Ctx) -> Any:
    w = c.data(c.case["w"], "weight")
    return F.embedding(c.index(c.case["idx"]), w, padding_idx=c.case.get("padding_idx"),
                       max_norm=c.case.get("max_norm"))


@runner("one_hot")
def _one_hot(c: Ctx) -> Any:
    return F.one_hot(c.index(c.case["idx"]), c.case.get("num_classes", -1))


@runner("loss")
def _loss(c: Ctx) -> Any:
    x, t = c.data(c.case["x"]), c.index(c.case["idx"])
    w = c.data(c.case.get("w"), "weight")
    kw = {"weight": w, "reduction": c.case.get("reduction", "mean")}
    if c.case.get("ignore_index") is not None:
        kw["ignore_index"] = c.case["ignore_index"]
    if c.case.get("nll"):
        return F.nll_loss(F.log_softmax(x, 1) if x.ndim > 1 else x, t, **kw)
    return F.cross_entropy(x, t, label_smoothing=c.case.get("smoothing", 0.0), **kw)


@runner("pool")
def _pool(c: Ctx) -> Any:
    x, kind, p = c.data(c.case["x"]), c.case["kind"], c.case
    if kind in ("max_pool1d", "max_pool2d"):
        fn = F.max_pool1d if kind == "max_pool1d" else F.max_pool2d
        return fn(x, p["k"], p.get("s"), p.get("pad", 0), p.get("dil", 1),
                  ceil_mode=p.get("ceil", False), return_indices=p.get("ri", False))
    if kind in ("avg_pool1d", "avg_pool2d"):
        fn = F.avg_pool1d if kind == "avg_pool1d" else F.avg_pool2d
        return fn(x, p["k"], p.get("s"), p.get("pad", 0), ceil_mode=p.get("ceil", False),
                  count_include_pad=p.get("cip", True))
    if kind in ("adaptive_max_pool1d", "adaptive_max_pool2d"):
        fn = F.adaptive_max_pool1d if kind == "adaptive_max_pool1d" else F.adaptive_max_pool2d
        return fn(x, p["out"], return_indices=p.get("ri", False))
    fn = F.adaptive_avg_pool1d if kind == "adaptive_avg_pool1d" else F.adaptive_avg_pool2d
    return fn(x, p["out"])


@runner("conv")
def _conv(c: Ctx) -> Any:
    p = c.case
    x, w, b = c.data(p["x"]), c.data(p["w"], "weight"), c.data(p.get("b"), "bias")
    kw = {"stride": p.get("s", 1), "padding": p.get("pad", 0), "dilation": p.get("dil", 1),
          "groups": p.get("g", 1)}
    kind = p["kind"]
    if kind.startswith("conv_transpose"):
        kw["output_padding"] = p.get("opad", 0)
    fn = {"conv1d": F.conv1d, "conv2d": F.conv2d, "conv_transpose1d": F.conv_transpose1d,
          "conv_transpose2d": F.conv_transpose2d}[kind]
    return fn(x, w, b, **kw)


@runner("unfold")
def _unfold(c: Ctx) -> Any:
    p = c.case
    x = c.data(p["x"])
    if p.get("fold"):
        return F.fold(x, p["out"], p["k"], p.get("dil", 1), p.get("pad", 0), p.get("s", 1))
    return F.unfold(x, p["k"], p.get("dil", 1), p.get("pad", 0), p.get("s", 1))


@runner("interpolate")
def _interpolate(c: Ctx) -> Any:
    p = c.case
    return F.interpolate(c.data(p["x"]), size=p.get("size"), scale_factor=p.get("scale"),
                         mode=p["mode"], align_corners=p.get("ac"))


@runner("sort")
def _sort(c: Ctx) -> Any:
    p = c.case
    x = c.data(p["x"])
    if p["kind"] == "topk":
        return lucid.topk(x, p["k"], p["dim"], largest=p.get("largest", True))
    if p["kind"] == "argsort":
        return lucid.argsort(x, p["dim"], descending=p.get("desc", False))
    return lucid.sort(x, p["dim"], descending=p.get("desc", False))


@runner("reduce")
def _reduce(c: Ctx) -> Any:
    p = c.case
    x, name = c.data(p["x"]), p["kind"]
    kw = {} if p.get("dim") is None else {"dim": p["dim"]}
    if name in ("sum", "mean", "amax", "amin", "prod", "var", "std", "logsumexp", "max", "min",
                "argmax", "argmin", "softmax", "log_softmax", "cumsum", "any", "all"):
        if name in ("softmax", "log_softmax", "cumsum", "logsumexp") and "dim" not in kw:
            kw["dim"] = -1
        if p.get("keepdim") and name not in ("softmax", "log_softmax", "cumsum") and kw:
            kw["keepdim"] = True
        return getattr(lucid, name)(x, **kw)
    raise ValueError(name)


@runner("movement")
def _movement(c: Ctx) -> Any:
    p = c.case
    x, kind, a = c.data(p["x"]), p["kind"], p["args"]
    if kind in ("reshape", "view", "expand", "permute", "repeat", "tile"):
        return getattr(x, kind)(*a)
    if kind == "repeat_interleave":
        return lucid.repeat_interleave(x, a[0], a[1])
    if kind in ("tril", "triu"):
        return getattr(lucid, kind)(x, a[0])
    if kind == "transpose":
        return x.transpose(a[0], a[1])
    if kind in ("squeeze", "unsqueeze", "flatten", "flip", "narrow", "roll"):
        return getattr(x, kind)(*a)
    raise ValueError(kind)


@runner("matmul")
def _matmul(c: Ctx) -> Any:
    return lucid.matmul(c.data(c.case["a"]), c.data(c.case["b"], "other"))


@runner("cat")
def _cat(c: Ctx) -> Any:
    xs = [c.data(s, f"t{i}") for i, s in enumerate(c.case["xs"])]
    fn = lucid.stack if c.case.get("stack") else lucid.cat
    return fn(xs, c.case["dim"])


@runner("norm")
def _norm(c: Ctx) -> Any:
    p = c.case
    x, kind = c.data(p["x"]), p["kind"]
    w, b = c.data(p.get("w"), "weight"), c.data(p.get("b"), "bias")
    if kind == "batch_norm":
        rm, rv = c.data(p.get("rm"), "rm"), c.data(p.get("rv"), "rv")
        if rv is not None:
            rv = rv.abs()
        return F.batch_norm(x, rm, rv, w, b, training=p.get("training", True))
    if kind == "layer_norm":
        return F.layer_norm(x, p["ns"], w, b)
    return F.group_norm(x, p["groups"], w, b)


UNARY = {
    "relu": F.relu, "sigmoid": F.sigmoid, "tanh": F.tanh, "gelu": F.gelu, "silu": F.silu,
    "softplus": F.softplus, "elu": F.elu, "leaky_relu": F.leaky_relu, "hardtanh": F.hardtanh,
    "exp": lucid.exp, "log": lucid.log, "sqrt": lucid.sqrt, "abs": lucid.abs, "neg": lucid.neg,
    "clamp": lambda x: lucid.clamp(x, -0.5, 0.5), "cumsum": lambda x: lucid.cumsum(x, -1),
    "relu_": lambda x: F.relu_(x * 1), "sigmoid_": lambda x: (x * 1).sigmoid_(),
}
BINARY = {
    "add": lucid.add, "sub": lucid.sub, "mul": lucid.mul, "div": lucid.div, "pow": lucid.pow,
    "maximum": lucid.maximum, "minimum": lucid.minimum, "floor_divide": lucid.floor_divide,
    "remainder": lucid.remainder, "eq": lucid.eq, "lerp": lambda a, b: lucid.lerp(a, b, 0.3),
    "where": lambda a, b: lucid.where(a > 0, a, b), "iadd": lambda a, b: (a * 1).add_(b),
    "imul": lambda a, b: (a * 1).mul_(b),
}


@runner("pointwise")
def _pointwise(c: Ctx) -> Any:
    name, a = c.case["kind"], c.data(c.case["a"])
    if name in UNARY:
        return UNARY[name](a)
    return BINARY[name](a, c.data(c.case["b"], "other"))


def run_case(case: dict[str, Any]) -> None:
    """Run one case; a Python exception is the caller's to report."""
    if case["op"] == "code":
        # Explicit regression cases are written as source, so the repro reads like user code.
        env = {"lucid": lucid, "F": F, "dev": case["dev"]}
        exec(compile(case["src"], "<case>", "exec"), env)  # noqa: S102
        materialize([v for v in env.values() if isinstance(v, lucid.Tensor)])
        return
    ctx = Ctx(case)
    finish(ctx, RUNNERS[case["op"]](ctx))
