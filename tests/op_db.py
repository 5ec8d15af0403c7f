"""The op table: one entry per differentiable op (and the no-grad comparisons/logic).

Each entry gives a forward test against numpy, a float64 gradcheck on every backend and a
torch parity check (``test_ops.py``, ``test_parity_torch.py``), on "cpu", "numpy" and "gpu".
Adding an op means adding one entry here. Shape, movement and indexing entries live in
``op_db_shape.py``; ``lucid.nn.functional`` in ``op_db_nn.py`` (with ``op_db_conv.py``,
``op_db_pool.py`` and ``op_db_loss.py``); the math tail, special functions and 3-D nn
functions in ``op_db_tail.py`` (with ``op_db_tail_layout.py`` and ``op_db_nn3d.py``); pooling
with indices, unpooling, LP and fractional pooling in ``op_db_pool_indices.py``; upsample,
native_channel_shuffle, pdist and linear_cross_entropy in ``op_db_nn_variants.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from opinfo import (
    NZ,
    OFFINT,
    SMALLINT,
    OpInfo,
    P,
    Sample,
    T,
    U,
    binary_samples,
    np_axis,
    reduce_samples,
    scalar_samples,
    unary_samples,
)

import lucid

# ---- elementwise --------------------------------------------------------------------------------


def _unary(name: str, ref: Any, gen: Any = U, **kw: Any) -> OpInfo:
    return OpInfo(name, name, ref, unary_samples(gen), method=True, **kw)


def _binary(name: str, ref: Any, gen_a: Any = U, gen_b: Any = U, op: str | None = None,
            **kw: Any) -> OpInfo:
    return OpInfo(name, op or name, ref, binary_samples(gen_a, gen_b), method=True, **kw)


def _oper(name: str, fn: Any, gen_a: Any = U, gen_b: Any = U, **kw: Any) -> OpInfo:
    """An operator (``a + b``): one callable serves lucid, torch and numpy."""
    return OpInfo(name, fn, fn, binary_samples(gen_a, gen_b), torch_op=fn, **kw)


def _scalar(name: str, fn: Any, gen: Any = U, **kw: Any) -> OpInfo:
    return OpInfo(name, fn, fn, scalar_samples(gen), torch_op=fn, **kw)


def _clamp_ref(x: np.ndarray, lo: Any = None, hi: Any = None) -> np.ndarray:
    if lo is not None:
        x = np.maximum(x, lo)
    if hi is not None:
        x = np.minimum(x, hi)
    return x


def _clamp_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3, 4))), -0.5, 0.7)
    yield Sample(T(U(rng, (3, 4)), "t"), None, 0.3)
    yield Sample(T(U(rng, (5,), ), "s"), -0.2, None)
    yield Sample(T(U(rng, ())), -0.5, 0.5)
    lo = U(rng, (3, 4), -1.5, 0.0)
    hi = U(rng, (4,), 0.0, 1.5)
    yield Sample(T(U(rng, (3, 4))), T(lo), T(hi), name="tensor_bounds")
    yield Sample(T(U(rng, (3, 4))), T(lo), None, name="tensor_min")
    yield Sample(T(U(rng, (2, 3))), None, T(U(rng, (2, 1))), name="tensor_max_bcast")
    yield Sample(T(U(rng, (2, 4))), T(U(rng, (2, 4))), T(U(rng, (2, 4))), name="min_gt_max")
    yield Sample(T(np.array([-0.5, 0.0, 0.7, 1.0])), -0.5, 0.7, fd=False, name="on_bounds")
    x = np.array([-0.5, 0.2, 0.7])
    yield Sample(T(x), T(np.array([-0.5, 0.3, 0.0])), T(np.array([1.0, 0.3, 0.7])), fd=False,
                 name="on_tensor_bounds")


def _where_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(rng.random((3, 4)) > 0.5), T(U(rng, (3, 4))), T(U(rng, (3, 4))))
    yield Sample(T(rng.random((3, 1)) > 0.5), T(U(rng, (4,))), T(U(rng, (2, 1, 1))))
    yield Sample(T(rng.random((4, 3)) > 0.5, "t"), T(U(rng, (4, 3)), "s"), T(U(rng, ())))
    yield Sample(T(rng.random((3,)) > 0.5), T(U(rng, (3,))), 0.0, name="scalar_other")


def _cmp(name: str, ref: Any) -> OpInfo:
    return OpInfo(name, name, ref, binary_samples(SMALLINT, SMALLINT), grad=False, method=True)


def _bools(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    return rng.random(shape) > 0.5


def _logical(name: str, ref: Any) -> OpInfo:
    return OpInfo(name, name, ref, binary_samples(_bools, _bools), grad=False, method=True)


ELEMENTWISE = [
    _oper("add", lambda a, b: a + b),
    _oper("sub", lambda a, b: a - b),
    _oper("mul", lambda a, b: a * b),
    _oper("truediv", lambda a, b: a / b, gen_b=NZ),
    _oper("floordiv", lambda a, b: a // b, gen_b=NZ, torch_grad=False),
    _oper("mod", lambda a, b: a % b, gen_b=NZ),
    _oper("pow", lambda a, b: a ** b, gen_a=P),
    _binary("add_fn", np.add, op="add"),
    _binary("maximum", np.maximum),
    _binary("minimum", np.minimum),
    _scalar("add_scalar", lambda x: x + 2),
    _scalar("radd_scalar", lambda x: 2.5 + x),
    _scalar("sub_scalar", lambda x: x - 1.5),
    _scalar("rsub_scalar", lambda x: 2.5 - x),
    _scalar("mul_scalar", lambda x: x * 3),
    _scalar("rmul_scalar", lambda x: -0.5 * x),
    _scalar("div_scalar", lambda x: x / 4),
    _scalar("rdiv_scalar", lambda x: 2.0 / x, NZ),
    _scalar("floordiv_scalar", lambda x: x // 0.7, torch_grad=False),
    _scalar("rfloordiv_scalar", lambda x: 5.0 // x, NZ, torch_grad=False),
    _scalar("mod_scalar", lambda x: x % 1.5),
    _scalar("rmod_scalar", lambda x: 5.0 % x, NZ, torch_grad=False),
    _scalar("pow_scalar2", lambda x: x ** 2),
    _scalar("pow_scalar3", lambda x: x ** 3),
    _scalar("pow_scalar_half", lambda x: x ** 0.5, P),
    _scalar("pow_scalar_neg", lambda x: x ** -2, NZ),
    _scalar("rpow_scalar", lambda x: 2.0 ** x),
    _scalar("neg_op", lambda x: -x),
    _unary("neg", np.negative),
    _unary("abs", np.abs, NZ),
    _unary("sign", np.sign, NZ),
    _unary("exp", np.exp),
    _unary("log", np.log, P),
    _unary("log2", np.log2, P),
    _unary("log1p", np.log1p, lambda r, s: U(r, s, -0.5, 2.0)),
    _unary("expm1", np.expm1),
    _unary("sqrt", np.sqrt, P),
    _unary("rsqrt", lambda x: 1 / np.sqrt(x), P),
    _unary("square", np.square),
    _unary("reciprocal", np.reciprocal, NZ),
    _unary("sin", np.sin),
    _unary("cos", np.cos),
    _unary("tan", np.tan, lambda r, s: U(r, s, -1.2, 1.2)),
    _unary("tanh", np.tanh),
    _unary("sigmoid", lambda x: 1 / (1 + np.exp(-x))),
    _unary("relu", lambda x: np.maximum(x, 0), NZ),
    _unary("floor", np.floor, OFFINT),
    _unary("ceil", np.ceil, OFFINT),
    _unary("round", np.round, OFFINT),
    OpInfo("clamp", "clamp", _clamp_ref, _clamp_samples, method=True),
    OpInfo("clip", "clip", _clamp_ref, _clamp_samples, method=True),
    OpInfo("where", "where", np.where, _where_samples),
    _cmp("eq", np.equal),
    _cmp("ne", np.not_equal),
    _cmp("lt", np.less),
    _cmp("le", np.less_equal),
    _cmp("gt", np.greater),
    _cmp("ge", np.greater_equal),
    OpInfo("lt_op", lambda a, b: a < b, lambda a, b: a < b, binary_samples(SMALLINT, SMALLINT),
           torch_op=lambda a, b: a < b, grad=False),
    OpInfo("eq_op", lambda a, b: a == b, lambda a, b: a == b,
           binary_samples(SMALLINT, SMALLINT), torch_op=lambda a, b: a == b, grad=False),
    OpInfo("ge_scalar", lambda a: a >= 0.5, lambda a: a >= 0.5, scalar_samples(SMALLINT),
           torch_op=lambda a: a >= 0.5, grad=False),
    _logical("logical_and", np.logical_and),
    _logical("logical_or", np.logical_or),
    _logical("logical_xor", np.logical_xor),
    OpInfo("logical_not", "logical_not", np.logical_not, unary_samples(_bools), grad=False,
           method=True),
    OpInfo("and_op", lambda a, b: a & b, lambda a, b: a & b, binary_samples(_bools, _bools),
           torch_op=lambda a, b: a & b, grad=False),
    OpInfo("invert_op", lambda a: ~a, lambda a: ~a, unary_samples(_bools),
           torch_op=lambda a: ~a, grad=False),
]

# ---- reductions ---------------------------------------------------------------------------------


def _red(fn: Any) -> Any:
    """A numpy reduction with torch's (dim, keepdim) keywords."""
    def ref(x: np.ndarray, dim: Any = None, keepdim: bool = False) -> np.ndarray:
        return fn(x, axis=np_axis(dim) if x.ndim else None, keepdims=keepdim)

    return ref


def _var_ref(x: np.ndarray, dim: Any = None, keepdim: bool = False, unbiased: bool = True,
             correction: Any = None) -> np.ndarray:
    ddof = correction if correction is not None else (1 if unbiased else 0)
    return np.var(x, axis=np_axis(dim), ddof=ddof, keepdims=keepdim)


def _std_ref(x: np.ndarray, **kw: Any) -> np.ndarray:
    return np.sqrt(_var_ref(x, **kw))


def _var_samples(rng: np.random.Generator) -> Iterable[Sample]:
    # (one element with correction=1 is nan by definition: left out)
    yield from (s for s in reduce_samples(scalar=False)(rng) if s.tensors[0].value.shape != (1, 5))
    yield Sample(T(U(rng, (3, 4))), dim=1, keepdim=False, unbiased=False)
    yield Sample(T(U(rng, (3, 4))), dim=None, keepdim=True, correction=0)
    yield Sample(T(U(rng, (3, 5))), dim=(0, 1), keepdim=False, correction=2)


def _full_samples(gen: Any = U, ties: bool = False) -> Any:
    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        for shape, layout in [((3, 4), "c"), ((), "c"), ((4, 3), "t"), ((5,), "s"),
                              ((2, 3, 2), "c")]:
            yield Sample(T(gen(rng, shape), layout))
        if ties:
            yield Sample(T(np.array([[1.0, 3.0, 3.0], [-3.0, 0.5, 3.0]])), fd=False,
                         name="ties")

    return samples


def _tie_samples(rng: np.random.Generator) -> Iterable[Sample]:
    """Equal values: PyTorch shares max/min gradients evenly, maximum() splits them."""
    a = np.array([[1.0, 3.0, 3.0], [-3.0, 0.5, 3.0]])
    yield Sample(T(a), dim=1, keepdim=False, fd=False, name="ties_dim1")
    yield Sample(T(a), dim=None, keepdim=True, fd=False, name="ties_all")


def _tie_pairs(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(np.array([1.0, 2.0, -1.0, 0.5])), T(np.array([1.0, 3.0, -1.0, 0.5])),
                 fd=False, name="ties")
    yield Sample(T(np.array([[1.0, 2.0]])), T(np.array([2.0])), fd=False, name="ties_bcast")


def _maxdim_ref(fn: Any, arg: Any) -> Any:
    def ref(x: np.ndarray, dim: int, keepdim: bool = False) -> tuple:
        return fn(x, axis=dim, keepdims=keepdim), arg(x, axis=dim, keepdims=keepdim)

    return ref


def _dim_samples(rng: np.random.Generator) -> Iterable[Sample]:
    for d in (0, 1, -1):
        for keep in (False, True):
            yield Sample(T(U(rng, (3, 4, 2))), dim=d, keepdim=keep)
    yield Sample(T(U(rng, (3, 4)), "t"), dim=0, keepdim=False)
    yield Sample(T(U(rng, ())), dim=0, keepdim=False)
    yield Sample(T(U(rng, (0, 3))), dim=1, keepdim=False)
    yield Sample(T(np.array([[1.0, 3.0, 3.0], [3.0, 0.5, 3.0]])), dim=1, keepdim=False,
                 fd=False, name="ties")


def _arg_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3, 4))))
    yield Sample(T(U(rng, (3, 4))), dim=1, keepdim=False)
    yield Sample(T(U(rng, (3, 4)), "t"), dim=0, keepdim=True)
    yield Sample(T(U(rng, (2, 3, 4))), dim=-1, keepdim=False)
    yield Sample(T(SMALLINT(rng, (2, 5))), dim=1, keepdim=False, name="ties")


def _arg_ref(fn: Any) -> Any:
    def ref(x: np.ndarray, dim: Any = None, keepdim: bool = False) -> np.ndarray:
        if dim is None:
            r = fn(x.reshape(-1))
            return np.reshape(r, (1,) * x.ndim) if keepdim else np.asarray(r)
        return fn(x, axis=dim, keepdims=keepdim)

    return ref


def _prod_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3, 4))))
    yield Sample(T(U(rng, (3, 4))), dim=1)
    yield Sample(T(U(rng, (3, 4))), dim=0, keepdim=True)
    yield Sample(T(U(rng, (4, 3)), "t"), dim=-1)
    yield Sample(T(U(rng, ())))
    yield Sample(T(np.array([[1.5, 0.0, -2.0], [0.0, 0.0, 3.0]])), dim=1, name="zeros_dim")
    yield Sample(T(np.array([1.5, 0.0, -2.0, 0.5])), name="one_zero")
    yield Sample(T(U(rng, (0, 3))), dim=1)


def _prod_ref(x: np.ndarray, dim: Any = None, keepdim: bool = False) -> np.ndarray:
    return np.prod(x, axis=dim, keepdims=keepdim)


def _lse_ref(x: np.ndarray, dim: Any, keepdim: bool = False) -> np.ndarray:
    return np.log(np.sum(np.exp(x), axis=np_axis(dim), keepdims=keepdim))


def _norm_ref(x: np.ndarray, p: Any = "fro", dim: Any = None, keepdim: bool = False
              ) -> np.ndarray:
    ax = np.abs(x)
    kw = {"axis": np_axis(dim), "keepdims": keepdim}
    if p in ("fro", 2, 2.0):
        return np.sqrt(np.sum(x * x, **kw))
    if p == np.inf:
        return np.max(ax, **kw)
    if p == -np.inf:
        return np.min(ax, **kw)
    return np.sum(ax ** p, **kw) ** (1.0 / p)


def _norm_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3, 4))))
    yield Sample(T(U(rng, (3, 4))), p=1, dim=1)
    yield Sample(T(U(rng, (3, 4))), p=2, dim=0, keepdim=True)
    yield Sample(T(U(rng, (2, 3, 4))), p=2, dim=(0, 2))
    yield Sample(T(U(rng, (3, 4)), "t"), p=float("inf"), dim=1)
    yield Sample(T(U(rng, (3, 4))), p=3, dim=-1)
    yield Sample(T(U(rng, (5,)), "s"), p=3)


def _cumsum_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3, 4))), 0)
    yield Sample(T(U(rng, (3, 4))), -1)
    yield Sample(T(U(rng, (4, 3)), "t"), 1)
    yield Sample(T(U(rng, (2, 3, 4))), 1)
    yield Sample(T(U(rng, (0, 3))), 1)


def _bool_red_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(_bools(rng, (3, 4))))
    yield Sample(T(_bools(rng, (3, 4))), dim=1)
    yield Sample(T(_bools(rng, (3, 4))), dim=0, keepdim=True)
    yield Sample(T(np.ones((2, 3), bool)), dim=-1)
    yield Sample(T(np.zeros((0, 3), bool)))


def _int_sum_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield from reduce_samples()(rng)
    yield Sample(T(rng.integers(-5, 5, (3, 4))), dim=1, keepdim=False, name="int64")
    yield Sample(T(_bools(rng, (3, 4))), dim=None, keepdim=False, name="bool")


REDUCTIONS = [
    OpInfo("sum", "sum", _red(np.sum), _int_sum_samples, method=True),
    OpInfo("mean", "mean", _red(np.mean), reduce_samples(), method=True),
    OpInfo("var", "var", _var_ref, _var_samples, method=True),
    OpInfo("std", "std", _std_ref, _var_samples, method=True),
    OpInfo("max_full", "max", np.max, _full_samples(ties=True), method=True),
    OpInfo("min_full", "min", np.min, _full_samples(ties=True), method=True),
    OpInfo("amax_ties", "amax", _red(np.max), _tie_samples, method=True),
    OpInfo("amin_ties", "amin", _red(np.min), _tie_samples, method=True),
    OpInfo("maximum_ties", "maximum", np.maximum, _tie_pairs, method=True),
    OpInfo("minimum_ties", "minimum", np.minimum, _tie_pairs, method=True),
    OpInfo("norm_inf_ties", "norm", _norm_ref, lambda r: [Sample(
        T(np.array([[1.0, -3.0, 3.0], [0.5, 2.0, -1.0]])), p=float("inf"), dim=1, fd=False)],
        method=True),
    OpInfo("max_dim", "max", _maxdim_ref(np.max, np.argmax), _dim_samples, method=True),
    OpInfo("min_dim", "min", _maxdim_ref(np.min, np.argmin), _dim_samples, method=True),
    OpInfo("amax", "amax", _red(np.max), reduce_samples(empty=False), method=True),
    OpInfo("amin", "amin", _red(np.min), reduce_samples(empty=False), method=True),
    OpInfo("amax_empty", "amax", _red(np.max),
           lambda r: [Sample(T(U(r, (0, 3))), dim=1)], method=True),
    OpInfo("argmax", "argmax", _arg_ref(np.argmax), _arg_samples, grad=False, method=True),
    OpInfo("argmin", "argmin", _arg_ref(np.argmin), _arg_samples, grad=False, method=True),
    OpInfo("prod", "prod", _prod_ref, _prod_samples, method=True),
    OpInfo("logsumexp", "logsumexp", _lse_ref,
           reduce_samples(dims=(0, -1, (0, 2)), empty=False, scalar=False), method=True),
    OpInfo("norm", "norm", _norm_ref, _norm_samples, method=True),
    OpInfo("cumsum", "cumsum", lambda x, d: np.cumsum(x, axis=d), _cumsum_samples, method=True),
    OpInfo("all", "all", _red(np.all), _bool_red_samples, grad=False, method=True),
    OpInfo("any", "any", _red(np.any), _bool_red_samples, grad=False, method=True),
]

# ---- matrix products ----------------------------------------------------------------------------


def _pairs(*shapes: Any) -> Any:
    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        for sa, sb in shapes:
            la, sa = (sa[1], sa[0]) if isinstance(sa[-1], str) else ("c", sa)
            lb, sb = (sb[1], sb[0]) if isinstance(sb[-1], str) else ("c", sb)
            yield Sample(T(U(rng, sa), la), T(U(rng, sb), lb))

    return samples


def _linear_ref(x: np.ndarray, w: np.ndarray, b: Any = None) -> np.ndarray:
    y = x @ w.T
    return y if b is None else y + b


def _linear_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (4, 3))), T(U(rng, (2, 3))), T(U(rng, (2,))))
    yield Sample(T(U(rng, (4, 3))), T(U(rng, (2, 3))), None)
    yield Sample(T(U(rng, (3,))), T(U(rng, (2, 3))), T(U(rng, (2,))))
    yield Sample(T(U(rng, (2, 4, 3))), T(U(rng, (2, 3)), "t"), T(U(rng, (2,))))
    yield Sample(T(U(rng, (0, 3))), T(U(rng, (2, 3))), T(U(rng, (2,))))


MATMUL = [
    OpInfo("matmul", lambda a, b: a @ b, lambda a, b: a @ b, _pairs(
        ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)), ((3, 4), (4, 2)),
        ((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 2)), ((2, 3, 4), (4,)),
        ((4,), (2, 4, 3)), (((3, 4), "t"), ((4, 2), "t")), (((3, 4), "s"), (4, 2)),
        ((0, 4), (4, 2)), ((3, 0), (0, 2))), torch_op=lambda a, b: a @ b),
    OpInfo("matmul_fn", "matmul", np.matmul, _pairs(((2, 3, 4), (4, 5)), ((3,), (3,))),
           method=True),
    OpInfo("mm", "mm", np.matmul, _pairs(((3, 4), (4, 2)), (((3, 4), "t"), ((4, 2), "t"))),
           method=True),
    OpInfo("bmm", "bmm", np.matmul, _pairs(((2, 3, 4), (2, 4, 5)), ((2, 3, 4), ((2, 4, 5), "t"))),
           method=True),
    OpInfo("dot", "dot", np.dot, _pairs(((4,), (4,)), (((4,), "s"), (4,))), method=True),
    OpInfo("outer", "outer", np.outer, _pairs(((3,), (4,)), (((3,), "s"), (1,))), method=True),
    OpInfo("T", lambda x: x.T, lambda x: x.T, _full_samples(), torch_op=lambda x: x.T),
    OpInfo("mT", lambda x: x.mT, lambda x: np.swapaxes(x, -1, -2),
           lambda r: [Sample(T(U(r, (2, 3, 4)))), Sample(T(U(r, (3, 4)), "t"))],
           torch_op=lambda x: x.mT),
    OpInfo("linear", lucid.ops.matmul.linear, _linear_ref, _linear_samples,
           torch_op="nn.functional.linear"),
]

from op_db_extra import EXTRA  # noqa: E402
from op_db_more import MORE_OPS  # noqa: E402
from op_db_nn import NN_OPS  # noqa: E402
from op_db_nn_variants import NN_VARIANTS  # noqa: E402
from op_db_pool_indices import POOL_INDICES  # noqa: E402
from op_db_shape import SHAPE_OPS  # noqa: E402
from op_db_tail import TAIL_OPS  # noqa: E402

OP_DB: list[OpInfo] = (ELEMENTWISE + REDUCTIONS + MATMUL + SHAPE_OPS + EXTRA + NN_OPS
                       + MORE_OPS + TAIL_OPS + POOL_INDICES + NN_VARIANTS)

_names = [i.name for i in OP_DB]
assert len(set(_names)) == len(_names), "duplicate op_db names"
