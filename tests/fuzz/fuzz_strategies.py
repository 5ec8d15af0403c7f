"""Hypothesis strategies that draw plain-data cases (see ``fuzz_build``) for each fuzzed op.

Shapes are small (sides 0..4, so zero-size dims are common), layouts include permuted and
step-sliced views, and index values mix in-range, negative, just-out-of-range and huge ones.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

FLOATS = ("float32", "float64")
ALL_DTYPES = ("float32", "float64", "int64", "int32", "uint8", "bool")
HUGE = (10**12, -(10**12), 2**63 - 1, -(2**63))


def rare(n: int) -> st.SearchStrategy[bool]:
    """True about once in ``n`` draws (``st.integers(0, n - 1) == 0`` is drawn far more often:
    hypothesis favours small integers)."""
    return st.sampled_from([False] * (n - 1) + [True])


def side(lo: int = 0, hi: int = 4) -> st.SearchStrategy[int]:
    """A dim size in [lo, hi]; zero (when allowed) about one time in eight."""
    if lo > 0 or hi < 1:
        return st.integers(lo, hi)
    return st.one_of(*[st.integers(1, hi)] * 7, st.just(0))


def shape(min_dims: int = 0, max_dims: int = 3, lo: int = 0, hi: int = 4) -> Any:
    return st.lists(side(lo, hi), min_size=min_dims, max_size=max_dims)


@st.composite
def data(draw: Any, shp: Any, dtypes: tuple[str, ...] = FLOATS, grad: bool = True,
         odd_dtype: bool = True) -> dict[str, Any]:
    """A data-tensor spec of shape ``shp`` (a list or a strategy for one)."""
    if not isinstance(shp, list):
        shp = draw(shp)
    if odd_dtype and draw(rare(10)):
        dtype = draw(st.sampled_from(ALL_DTYPES))
    else:
        dtype = draw(st.sampled_from(dtypes))
    return {"shape": shp, "dtype": dtype, "layout": draw(st.sampled_from("cccttsef")),
            "grad": grad and not draw(rare(5))}


def value(size: int) -> Any:
    """An index value for a dim of ``size``: mostly valid, sometimes not at all."""
    valid = st.integers(0, size - 1) if size > 0 else st.just(0)
    neg = st.integers(-size, -1) if size > 0 else st.just(-1)
    return st.one_of(valid, valid, valid, neg, st.sampled_from([size, size + 1, -size - 1]),
                     st.sampled_from(HUGE))


@st.composite
def index(draw: Any, shp: Any, size: int, dtypes: tuple[str, ...] = ("int64",)) -> dict:
    """An integer index-tensor spec of shape ``shp`` whose values address a dim of ``size``."""
    if not isinstance(shp, list):
        shp = draw(shp)
    n = math.prod(shp)
    mode = draw(st.sampled_from(["valid", "valid", "one_bad", "random"]))
    if mode == "random":
        vals = draw(st.lists(value(size), min_size=n, max_size=n))
    else:  # all in range (so forward runs and an edit can reach backward), or one bad value
        vals = draw(st.lists(st.integers(0, max(size - 1, 0)), min_size=n, max_size=n))
        if n and mode == "one_bad":
            vals[draw(st.integers(0, n - 1))] = draw(value(size))
    dtype = draw(st.sampled_from(dtypes + ("int32",) if draw(rare(6)) else dtypes))
    return {"shape": shp, "values": vals, "dtype": dtype,
            "make": draw(st.sampled_from(["tensor", "tensor", "tensor", "from_numpy",
                                          "from_numpy_s", "from_numpy_t"]))}


@st.composite
def mask(draw: Any, shp: list[int]) -> dict:
    n = math.prod(shp)
    vals = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    return {"shape": shp, "values": vals, "dtype": "bool", "make": "tensor"}


@st.composite
def edit(draw: Any, targets: tuple[str, ...] = ("index", "input")) -> Any:
    """Nothing, or an in-place change after forward: ``t[0] = v``, ``fill_``, ``add_`` or a
    refill of the numpy buffer of a ``from_numpy`` index."""
    if draw(rare(4)):
        return None
    return {"target": draw(st.sampled_from((targets[0],) + targets)),
            "kind": draw(st.sampled_from(["set", "fill", "add", "numpy"])),
            "value": draw(st.sampled_from([10**12, -(10**12), 1, -1, 3, 10**12]))}


def dim(ndim: int) -> Any:
    """A dim argument, sometimes out of range."""
    return st.integers(-ndim - 1, max(ndim, 1))


def near(shp: list[int], draw: Any) -> list[int]:
    """``shp`` or, sometimes, a copy with one side changed (a shape mismatch)."""
    shp = list(shp)
    if shp and draw(rare(6)):
        shp[draw(st.integers(0, len(shp) - 1))] = draw(side())
    return shp


def case(op: str, dev: str, **kw: Any) -> dict:
    return {"op": op, "dev": dev, "seed": 0, **kw}


# ----------------------------------------------------------------------------- indexing
@st.composite
def key_item(draw: Any, size: int) -> list:
    kind = draw(st.sampled_from(["int", "int", "slice", "slice", "none", "ellipsis", "list",
                                 "tensor", "bool"]))
    if kind == "int":
        return ["int", draw(value(size))]
    if kind == "slice":
        bound = st.one_of(st.none(), st.integers(-size - 2, size + 2), st.sampled_from(HUGE[:2]))
        step = st.one_of(st.none(), st.sampled_from([1, 2, 3, -1, 0, 10**12]))
        return ["slice", draw(bound), draw(bound), draw(step)]
    if kind in ("none", "ellipsis"):
        return [kind]
    if kind == "list":
        return ["list", draw(st.lists(value(size), max_size=4))]
    if kind == "tensor":
        return ["tensor", draw(index(shape(0, 2), size))]
    return ["bool", draw(mask([draw(st.sampled_from([size, size, size + 1, 0]))]))]


@st.composite
def getitem(draw: Any, dev: str, op: str = "getitem") -> dict:
    x = draw(data(shape(1, 3), dtypes=ALL_DTYPES))
    shp = x["shape"]
    nkeys = draw(st.integers(1, min(len(shp) + 1, 3)))
    key = [draw(key_item(shp[min(i, len(shp) - 1)])) for i in range(nkeys)]
    kw: dict[str, Any] = {"x": x, "key": key, "edit": draw(edit(("index", "mask", "input")))}
    if op == "setitem":
        kw["v"] = draw(st.one_of(st.none(), data(shape(0, 2))))
    return case(op, dev, **kw)


@st.composite
def index_select(draw: Any, dev: str) -> dict:
    x = draw(data(shape(1, 3)))
    d = draw(dim(len(x["shape"])))
    size = x["shape"][d] if -len(x["shape"]) <= d < len(x["shape"]) else 3
    ishape = st.one_of(shape(1, 1, 0, 5), shape(1, 1, 0, 5), shape(0, 2))
    return case("index_select", dev, x=x, dim=d, idx=draw(index(ishape, size)),
                edit=draw(edit()))


@st.composite
def gather(draw: Any, dev: str, op: str = "gather") -> dict:
    x = draw(data(shape(1, 3)))
    nd = len(x["shape"])
    d = draw(dim(nd))
    size = x["shape"][d] if -nd <= d < nd else 3
    ishape = [draw(side(0, s + 1)) for s in x["shape"]]
    if draw(rare(8)):
        ishape = draw(shape(0, 3))
    kw: dict[str, Any] = {"x": x, "dim": d, "idx": draw(index(ishape, size))}
    if op == "scatter":
        kw["src"] = draw(data([s + draw(side(0, 1)) for s in ishape]))
        kw["add"] = draw(st.booleans())
    return case(op, dev, edit=draw(edit(("index", "input", "src"))), **kw)


@st.composite
def take(draw: Any, dev: str) -> dict:
    x = draw(data(shape(0, 3)))
    return case("take", dev, x=x, idx=draw(index(shape(0, 2), math.prod(x["shape"]))),
                edit=draw(edit()))


@st.composite
def masked(draw: Any, dev: str) -> dict:
    x = draw(data(shape(0, 3), dtypes=ALL_DTYPES))
    mshape = near(x["shape"][draw(st.integers(0, len(x["shape"]))):], draw)
    return case("masked", dev, x=x, mask=draw(mask(mshape)), select=draw(st.booleans()),
                value=draw(st.sampled_from([0.5, -1, 10**12])),
                edit=draw(edit(("mask", "input"))))


# ----------------------------------------------------------------------------- nn lookups
@st.composite
def embedding(draw: Any, dev: str) -> dict:
    w = draw(data([draw(side(0, 5)), draw(side())]))
    n = w["shape"][0]
    return case("embedding", dev, w=w, idx=draw(index(shape(0, 2), n, ("int64", "int32"))),
                padding_idx=draw(st.one_of(st.none(), st.none(), st.integers(-n - 1, n + 1),
                                           st.just(10**12))),
                max_norm=draw(st.sampled_from([None, None, 1.0])),
                edit=draw(edit(("index", "weight"))))


@st.composite
def one_hot(draw: Any, dev: str) -> dict:
    nc = draw(st.sampled_from([-1, -1, 0, 1, 3, 5, -2]))
    return case("one_hot", dev, idx=draw(index(shape(0, 2), max(nc, 4))), num_classes=nc,
                backward=False)


@st.composite
def loss(draw: Any, dev: str) -> dict:
    nd = draw(st.sampled_from([1, 2, 2, 3]))
    xs = draw(shape(nd, nd))
    c = xs[1] if nd > 1 else xs[0]
    tshape = near([xs[0]] + xs[2:] if nd > 1 else [], draw)
    w = draw(st.one_of(st.none(), data(near([c], draw), grad=False)))
    return case("loss", dev, x=draw(data(xs)), idx=draw(index(tshape, c)), w=w,
                ignore_index=draw(st.sampled_from([None, -100, 0, 1, -1, 10**12])),
                smoothing=draw(st.sampled_from([0.0, 0.0, 0.1, 1.0])),
                reduction=draw(st.sampled_from(["mean", "sum", "none"])),
                nll=draw(st.booleans()), edit=draw(edit(("index", "weight", "input"))))
