"""PyTorch parity: every op_db entry against torch (values, dtypes, gradients), and type
promotion against ``torch.result_type`` and torch's actual results."""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np
import pytest
from op_db import OP_DB
from opinfo import OpInfo, Sample, as_list, bind, cases, lucid_leaves, torch_leaves

import lucid

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")


def tname(d: Any) -> str:
    return str(d).rsplit(".", 1)[-1]


def _run_torch(info: OpInfo, sample: Sample, leaves: list) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. x.T on 3-D, var with no degrees of freedom
        return as_list(bind(info.torch_fn(torch), sample)(*leaves))


@pytest.mark.parametrize("info,sample", cases(OP_DB, lambda i: i.parity))
def test_values_and_grads(info: OpInfo, sample: Sample) -> None:
    lx = lucid_leaves(sample, "cpu", dtype=np.float32)
    tx = torch_leaves(torch, sample, dtype=np.float32)
    lo = as_list(bind(info.lucid_fn(), sample)(*lx))
    to = _run_torch(info, sample, tx)
    assert len(lo) == len(to)
    for k, (a, b) in enumerate(zip(lo, to)):
        assert tuple(a.shape) == tuple(b.shape), f"output {k}"
        assert a.dtype.name == tname(b.dtype), f"output {k}"
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=info.torch_rtol,
                                   atol=info.torch_atol, err_msg=f"output {k}")
    if not (info.grad and info.torch_grad):
        return
    pairs = [(a, b) for a, b in zip(lo, to) if b.requires_grad]
    assert all(a.requires_grad for a, _ in pairs)
    if not pairs:
        return
    rng = np.random.default_rng(1)
    gs = [rng.uniform(-1, 1, tuple(b.shape)).astype(np.float32) for _, b in pairs]
    lucid.autograd.backward([a for a, _ in pairs], [lucid.tensor(g) for g in gs])
    torch.autograd.backward([b for _, b in pairs], [torch.tensor(g) for g in gs])
    for k, (a, b) in enumerate(zip(lx, tx)):
        if not b.requires_grad:
            continue
        if b.grad is None:
            assert a.grad is None or not np.any(a.grad.numpy()), f"grad of input {k}"
            continue
        assert a.grad is not None, f"no grad for input {k}"
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=info.torch_rtol,
                                   atol=info.torch_atol, err_msg=f"grad of input {k}")


# ---- type promotion -----------------------------------------------------------------------------

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def _make(spec: Any) -> tuple[Any, Any]:
    """(lucid value, torch value) for a spec: a Python scalar or (dtype name, shape)."""
    if not isinstance(spec, tuple):
        return spec, spec
    name, shape = spec
    vals = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float64).reshape(shape) % 3 + 1
    arr = vals.astype(np.bool_ if name == "bool" else name)
    return lucid.tensor(arr), torch.tensor(arr)


PROMOTION_CASES = [
    (("int64", (3,)), 2.5), (("int32", (3,)), 2.5), (("uint8", (3,)), 1.5),
    (("int32", (3,)), ("int64", (3,))), (("uint8", (3,)), ("int8", (3,))),
    (("uint8", (3,)), ("int16", (3,))), (("int8", (3,)), ("int16", (3,))),
    (("bool", (3,)), 2), (("bool", (3,)), ("int32", (3,))), (("bool", (3,)), 1.5),
    (("bool", (3,)), True), (("float16", (3,)), ("float32", (3,))),
    (("float16", (3,)), 2.5), (("float32", (3,)), ("float64", (3,))),
    (("int32", (3,)), ("float16", (3,))), (("int64", (3,)), ("float32", ())),
    (("float32", (3,)), ("float64", ())), (("int32", (3,)), ("int64", ())),
    (("uint8", (3,)), ("int64", ())), (("float16", (3,)), ("float64", ())),
    (("int32", ()), ("int64", ())), (("int64", ()), 2.5), (("float16", ()), ("int64", (3,))),
    (("bool", ()), ("uint8", (3,))), (("int64", (3,)), 2), (("int8", (3,)), 2),
    (("float32", ()), ("float64", ())), (("int16", (2, 3)), ("int32", (3,))),
    (3, ("int32", (3,))), (2.5, ("uint8", (3,))),
]


def _cid(case: Any) -> str:
    return "-".join(f"{s[0]}{list(s[1])}" if isinstance(s, tuple) else repr(s) for s in case)


@pytest.mark.parametrize("a,b", PROMOTION_CASES, ids=[_cid(c) for c in PROMOTION_CASES])
def test_result_type(a: Any, b: Any) -> None:
    (la, ta), (lb, tb) = _make(a), _make(b)
    assert lucid.result_type(la, lb).name == tname(torch.result_type(ta, tb))


BIN_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
           "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
           "lt": operator.lt, "eq": operator.eq, "maximum": None}


@pytest.mark.parametrize("op", list(BIN_OPS))
@pytest.mark.parametrize("a,b", PROMOTION_CASES, ids=[_cid(c) for c in PROMOTION_CASES])
def test_binary_promotion(a: Any, b: Any, op: str) -> None:
    (la, ta), (lb, tb) = _make(a), _make(b)
    if op == "maximum":
        if not (isinstance(la, lucid.Tensor) and isinstance(lb, lucid.Tensor)):
            pytest.skip("maximum takes two tensors")
        lfn, tfn = lucid.maximum, torch.maximum
    else:
        lfn = tfn = BIN_OPS[op]
    try:
        expected = tfn(ta, tb)
    except NotImplementedError:
        pytest.skip("torch has no kernel for this dtype; lucid computes it")
    except (RuntimeError, TypeError) as e:
        with pytest.raises(type(e)):
            lfn(la, lb)
        return
    got = lfn(la, lb)
    assert got.dtype.name == tname(expected.dtype)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.numpy().astype(np.float64),
                               expected.numpy().astype(np.float64), rtol=1e-3)


@pytest.mark.parametrize("dtype", DTYPES)
def test_true_division_of_ints_gives_default_float(dtype: str) -> None:
    la, ta = _make((dtype, (4,)))
    for other in (2, la):
        to = ta if other is la else other
        got, exp = la / other, ta / to
        assert got.dtype.name == tname(exp.dtype)
        np.testing.assert_allclose(got.numpy(), exp.numpy(), rtol=1e-3)


@pytest.mark.parametrize("fn", ["exp", "sqrt", "sin", "sigmoid", "log1p"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "uint8"])
def test_float_unary_on_ints(fn: str, dtype: str) -> None:
    la, ta = _make((dtype, (4,)))
    got, exp = getattr(lucid, fn)(la), getattr(torch, fn)(ta)
    assert got.dtype.name == tname(exp.dtype)
    np.testing.assert_allclose(got.numpy(), exp.numpy(), rtol=1e-5)


@pytest.mark.parametrize("fn", ["sum", "prod", "cumsum", "mean", "abs", "neg"])
@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool", "int8", "float16"])
def test_reduction_and_unary_dtypes(fn: str, dtype: str) -> None:
    la, ta = _make((dtype, (2, 3)))
    args = (1,) if fn == "cumsum" else ()

    def call(mod: Any, x: Any) -> Any:
        return getattr(mod, fn)(x, *args)

    try:
        exp = call(torch, ta)
    except NotImplementedError:
        pytest.skip("torch has no kernel for this dtype; lucid computes it")
    except RuntimeError:
        with pytest.raises(RuntimeError):
            call(lucid, la)
        return
    got = call(lucid, la)
    assert got.dtype.name == tname(exp.dtype)
    np.testing.assert_allclose(got.numpy().astype(np.float64), exp.numpy().astype(np.float64),
                               rtol=1e-3)


@pytest.mark.parametrize("value", [1.5, 2, True])
@pytest.mark.parametrize("dtype", ["int64", "float32", "bool", "float16"])
def test_python_scalar_ops_keep_tensor_dtype_category(dtype: str, value: Any) -> None:
    la, ta = _make((dtype, (3,)))
    for op in (operator.add, operator.mul):
        try:
            exp = op(ta, value)
        except RuntimeError:
            continue
        got = op(la, value)
        assert got.dtype.name == tname(exp.dtype)
        got_r, exp_r = op(value, la), op(value, ta)
        assert got_r.dtype.name == tname(exp_r.dtype)
        np.testing.assert_allclose(got_r.numpy().astype(float), exp_r.numpy().astype(float))
