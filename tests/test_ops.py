"""op_db-driven tests: forward against numpy, float64 gradcheck, backward shapes, the calls
that must fail, and the function/method forms, each on the "cpu" and the reference "numpy"
backend and, where MLX is installed, on "gpu" (which is also compared with "cpu" in float32)."""

from __future__ import annotations

import re
import types
from typing import Any

import numpy as np
import pytest
from devices import DEVICES, HAS_MLX
from op_db import OP_DB
from opinfo import ErrorInput, OpInfo, Sample, as_list, bind, cases, lucid_leaves, numpy_leaves

import lucid
import lucid.nn.functional as F
from lucid.autograd import gradcheck


@pytest.fixture(params=DEVICES)
def backend(request: pytest.FixtureRequest) -> str:
    """The op table runs on every device."""
    return request.param


def _has_grad_input(s: Sample) -> bool:
    return any(t.grad and t.is_float for t in s.tensors)


def _cases(pred: Any = lambda i: True, sample_pred: Any = lambda s: True) -> list:
    return [p for p in cases(OP_DB, pred) if sample_pred(p.values[1])]


def check_close(out: Any, ref: Any, info: OpInfo, device: str | None = None,
                wide: Any = np.float64) -> None:
    """``out`` matches the float64 reference ``ref``; with ``wide`` float32 (a device without
    float64) float64 reference outputs are expected as float32, to float32 tolerance."""
    outs, refs = as_list(out), as_list(ref)
    narrow = np.dtype(wide) != np.float64
    rtol, atol = (max(info.rtol, 1e-4), max(info.atol, 1e-5)) if narrow else (info.rtol, info.atol)
    assert len(outs) == len(refs), f"{len(outs)} outputs, expected {len(refs)}"
    for k, (o, r) in enumerate(zip(outs, refs)):
        assert isinstance(o, lucid.Tensor), f"output {k} is {type(o).__name__}"
        if device is not None:
            assert o.device.type == device
        r = np.asarray(r)
        if narrow and r.dtype == np.float64:
            r = r.astype(wide)
        assert tuple(o.shape) == r.shape, f"output {k}: shape {tuple(o.shape)} != {r.shape}"
        if info.exact_dtype:
            assert o.dtype == r.dtype, f"output {k}: dtype {o.dtype} != {r.dtype}"
        np.testing.assert_allclose(o.detach().numpy(), r, rtol=rtol, atol=atol,
                                   err_msg=f"output {k}")


@pytest.mark.parametrize("info,sample", _cases())
def test_forward(info: OpInfo, sample: Sample, backend: str, wide_float: Any) -> None:
    leaves = lucid_leaves(sample, backend, dtype=wide_float, requires_grad=False)
    before = [leaf.numpy().copy() for leaf in leaves]
    out = bind(info.lucid_fn(), sample)(*leaves)
    ref = bind(info.ref, sample)(*numpy_leaves(sample))
    check_close(out, ref, info, backend, wide_float)
    for leaf, b in zip(leaves, before):  # out-of-place ops leave their inputs alone
        np.testing.assert_array_equal(leaf.numpy(), b)


@pytest.mark.parametrize("info,sample", _cases(lambda i: i.grad,
                                               lambda s: _has_grad_input(s) and s.fd))
@pytest.mark.float64("a float64 gradcheck")
def test_gradcheck(info: OpInfo, sample: Sample, backend: str) -> None:
    leaves = lucid_leaves(sample, backend)
    assert gradcheck(bind(info.lucid_fn(), sample), leaves, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("info,sample", _cases(lambda i: i.grad, _has_grad_input))
def test_backward_shapes(info: OpInfo, sample: Sample, backend: str, wide_float: Any) -> None:
    """The graph is recorded, and every leaf gets a gradient of its own shape and dtype
    (also for empty tensors, where gradcheck has nothing to compare)."""
    leaves = lucid_leaves(sample, backend, dtype=wide_float)
    outs = [o for o in as_list(bind(info.lucid_fn(), sample)(*leaves))
            if o.dtype.is_floating_point]
    assert outs and all(o.requires_grad for o in outs)
    assert all(o.grad_fn is not None for o in outs)
    total = outs[0].sum()
    for o in outs[1:]:
        total = total + o.sum()
    total.backward()
    for leaf in leaves:
        if leaf.requires_grad:
            assert leaf.grad is not None
            assert leaf.grad.shape == leaf.shape
            assert leaf.grad.dtype == leaf.dtype
            assert leaf.grad.device == leaf.device
            assert np.all(np.isfinite(leaf.grad.numpy()))


@pytest.mark.parametrize("info,sample", _cases(lambda i: not i.grad))
def test_no_grad_ops_record_nothing(info: OpInfo, sample: Sample) -> None:
    leaves = lucid_leaves(sample, "cpu")
    for o in as_list(bind(info.lucid_fn(), sample)(*leaves)):
        assert not o.requires_grad and o.grad_fn is None


@pytest.mark.parametrize("info,sample", _cases(lambda i: i.method))
def test_method_form(info: OpInfo, sample: Sample) -> None:
    """``lucid.name(x, ...)`` and ``x.name(...)`` agree."""
    leaves = lucid_leaves(sample, "cpu", requires_grad=False)
    a = bind(info.lucid_fn(), sample)(*leaves)
    b = bind(info.method_fn(), sample)(*leaves)
    for x, y in zip(as_list(a), as_list(b), strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x.numpy(), y.numpy())


@pytest.mark.parametrize("info,sample", _cases(
    lambda i: i.grad, lambda s: _has_grad_input(s) and all(t.layout == "c" for t in s.tensors)))
def test_float32_matches_float64(info: OpInfo, sample: Sample) -> None:
    """float32 inputs give float32 outputs close to the float64 result."""
    l32 = lucid_leaves(sample, "cpu", dtype=np.float32, requires_grad=False)
    l64 = lucid_leaves(sample, "cpu", dtype=np.float64, requires_grad=False)
    o32 = as_list(bind(info.lucid_fn(), sample)(*l32))
    o64 = as_list(bind(info.lucid_fn(), sample)(*l64))
    for a, b in zip(o32, o64):
        if b.dtype == lucid.float64:
            assert a.dtype == lucid.float32
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)
        else:
            assert a.dtype == b.dtype


def _factories(device: str) -> types.SimpleNamespace:
    """What an ``ErrorInput`` builds its call from, on ``device``."""
    def on(fn: Any) -> Any:
        return lambda *shape, dtype=None: fn(*shape, dtype=dtype, device=device)

    return types.SimpleNamespace(
        F=F, zeros=on(lucid.zeros), ones=on(lucid.ones), randn=on(lucid.randn),
        rand=on(lucid.rand), tensor=lambda data: lucid.tensor(data, device=device),
        float64=lucid.float64)


def _error_cases(pred: Any = lambda e: True) -> list:
    return [pytest.param(info, e, id=f"{info.name}-{k}-{e!r}") for info in OP_DB
            for k, e in enumerate(info.error_inputs) if pred(e)]


@pytest.mark.parametrize("info,err", _error_cases())
def test_error_inputs(info: OpInfo, err: ErrorInput, backend: str) -> None:
    with pytest.raises(err.exc) as raised:
        err.call(_factories(backend))
    assert raised.type is err.exc
    assert re.search(err.match, str(raised.value)), str(raised.value)


@pytest.mark.parametrize("info,err", _error_cases(lambda e: e.torch))
def test_error_inputs_match_torch(info: OpInfo, err: ErrorInput, torch: Any) -> None:
    """torch raises the same type for the same call, with a message the pattern matches."""
    m = types.SimpleNamespace(F=torch.nn.functional, zeros=torch.zeros, ones=torch.ones,
                              randn=torch.randn, rand=torch.rand, tensor=torch.tensor,
                              float64=torch.float64)
    with pytest.raises(err.exc) as raised:
        err.call(m)
    assert raised.type is err.exc
    assert re.search(err.match, str(raised.value).split("\n")[0]), str(raised.value)


def _run_f32(info: OpInfo, sample: Sample, device: str) -> tuple[list, list]:
    """float32 values of the op and gradients of a fixed weighted sum of its outputs."""
    leaves = lucid_leaves(sample, device, dtype=np.float32)
    outs = as_list(bind(info.lucid_fn(), sample)(*leaves))
    vals = [o.detach().numpy() for o in outs]
    diff = [o for o in outs if o.requires_grad]
    if not diff:
        return vals, []
    rng = np.random.default_rng(0)
    total = None
    for o in diff:
        w = rng.uniform(0.5, 1.5, tuple(o.shape)).astype(np.float32)
        term = (o * lucid.tensor(w, device=device)).sum()
        total = term if total is None else total + term
    total.backward()
    return vals, [None if x.grad is None else x.grad.numpy() for x in leaves]


def _close_f32(a: np.ndarray, b: np.ndarray, what: str) -> None:
    assert a.shape == b.shape and a.dtype == b.dtype, what
    if a.dtype.kind == "f":
        scale = float(np.max(np.abs(b[np.isfinite(b)]), initial=1.0))
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-5 * scale, err_msg=what)
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


@pytest.mark.skipif(not HAS_MLX, reason="the gpu device needs mlx")
@pytest.mark.parametrize("info,sample", _cases())
def test_gpu_matches_cpu(info: OpInfo, sample: Sample) -> None:
    """float32 values and gradients on "gpu" equal those on "cpu" to float32 tolerance."""
    cv, cg = _run_f32(info, sample, "cpu")
    gv, gg = _run_f32(info, sample, "gpu")
    assert len(cv) == len(gv)
    for k, (a, b) in enumerate(zip(gv, cv)):
        _close_f32(a, b, f"output {k}")
    assert len(cg) == len(gg)
    for k, (a, b) in enumerate(zip(gg, cg)):
        assert (a is None) == (b is None), f"grad {k}"
        if a is not None:
            _close_f32(a, b, f"grad of input {k}")


_INPLACE = "in place (the table's inputs are leaves): " \
           "tests/nn/test_activation_rrelu_inplace.py::test_inplace_forms_match_torch"

# functions of lucid.nn.functional tested outside the table, and where
NOT_IN_TABLE = {"relu_": "in place: tests/nn_ops/test_activation.py::test_inplace",
                "gumbel_softmax": "random: tests/nn/test_nn_layers_more.py",
                "alpha_dropout": "random: tests/nn/test_dropout_alpha.py",
                "feature_alpha_dropout": "random: tests/nn/test_dropout_alpha.py",
                "rrelu": "random in training (eval mode is leaky_relu): "
                         "tests/nn/test_activation_rrelu_inplace.py",
                "rrelu_": "random and in place: tests/nn/test_activation_rrelu_inplace.py",
                **dict.fromkeys(("celu_", "elu_", "hardtanh_", "leaky_relu_", "selu_",
                                 "threshold_"), _INPLACE),
                "multi_head_attention_forward": "two dozen arguments (projections, masks, "
                "bias_k/v, static k/v) against torch in float64: "
                "tests/nn/test_attention_mha_functional.py"}


def test_op_db_covers_nn_functional() -> None:
    """Every public function of ``lucid.nn.functional`` has an op table entry."""
    ops = {id(i.op) for i in OP_DB}
    missing = {n for n in F.__all__ if id(getattr(F, n)) not in ops} - set(NOT_IN_TABLE)
    assert not missing, sorted(missing)


def test_op_db_covers_core_ops() -> None:
    names = {i.name for i in OP_DB}
    for required in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "rpow_scalar",
                     "neg", "abs", "sign", "exp", "log", "log2", "log1p", "expm1", "sqrt",
                     "rsqrt", "square", "reciprocal", "sin", "cos", "tan", "tanh", "sigmoid",
                     "relu", "clamp", "clip", "maximum", "minimum", "where", "floor", "ceil",
                     "round", "sum", "mean", "var", "std", "max_full", "max_dim", "amax",
                     "argmax", "prod", "logsumexp", "norm", "cumsum", "all", "any", "matmul",
                     "mm", "bmm", "dot", "outer", "T", "mT", "linear", "reshape", "view",
                     "transpose", "permute", "squeeze", "unsqueeze", "flatten", "expand",
                     "broadcast_to", "repeat", "cat", "stack", "split", "chunk", "unbind",
                     "gather", "index_select", "masked_fill", "pad"):
        assert required in names, required
    assert len(cases(OP_DB)) > 300
