"""op_db entries for ``lucid.nn.functional``: activations, normalisation, attention, embedding,
interpolation and dropout in its identity forms, each with a numpy reference and the calls
that must fail (``error_inputs``). Convolution and pooling live in ``op_db_conv.py``, losses in
``op_db_loss.py``; all of them join ``OP_DB`` (see ``op_db.py``)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from op_db_conv import CONV_POOL
from op_db_loss import LOSSES
from op_db_loss_more import MORE_LOSSES
from op_db_nn_more import MORE_NN
from opinfo import ErrorInput, OpInfo, Sample, T, U
from scipy.special import erf

import lucid.nn.functional as F

# ---- activations --------------------------------------------------------------------------------


def _sig(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _sp(x: np.ndarray) -> np.ndarray:
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)


def _softmax(x: np.ndarray, dim: int) -> np.ndarray:
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


SELU_A, SELU_S = 1.6732632423543772, 1.0507009873554805

# values away from the kinks (0, +-3, thresholds) so finite differences stay smooth
X = np.array([[-4.1, -2.2, -0.9, -0.35, 0.15], [0.55, 1.2, 2.6, 3.7, -0.05]]) * 1.7
XS = np.array([-4.1, -2.2, -0.9, -0.35, 0.15, 0.55, 1.2, 2.6, 3.7, -0.05, 1.9, -1.4])


def _act_samples(has_dim: bool = False, **kw: Any) -> Any:
    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        yield Sample(T(X), **kw)
        yield Sample(T(XS.reshape(2, 3, 2) / 1.3, "s"), **kw)
        if not has_dim:
            yield Sample(T(np.zeros((0, 3))), **kw)
            yield Sample(T(np.array(0.85)), **kw)

    return samples


def _act(name: str, ref: Any, errors: list | None = None, **kw: Any) -> OpInfo:
    label = f"F.{name}" + (f"_{kw['approximate']}" if "approximate" in kw else "")
    return OpInfo(label, getattr(F, name), lambda x, **k: ref(x), _act_samples("dim" in kw, **kw),
                  torch_op=f"nn.functional.{name}", error_inputs=errors or [])


def _prelu_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(X.reshape(2, 5, 1)), T(np.array([0.25])))
    yield Sample(T(X.reshape(5, 2).T.copy()), T(np.linspace(0.1, 0.5, 5)))
    yield Sample(T(U(rng, (2, 3, 4)) + 0.05), T(np.array([0.1, -0.3, 0.6])))


def _prelu_ref(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    w = w.reshape((1, -1) + (1,) * (x.ndim - 2)) if w.size > 1 else w
    return np.where(x > 0, x, w * x)


def _glu_ref(x: np.ndarray, dim: int = -1) -> np.ndarray:
    a, b = np.split(x, 2, axis=dim)
    return a * _sig(b)


def _glu_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(X), 0)
    yield Sample(T(U(rng, (3, 4))))
    yield Sample(T(U(rng, (2, 6)), "t"), 0)


ACTIVATIONS = [
    _act("relu", lambda x: np.maximum(x, 0)),
    _act("relu6", lambda x: np.clip(x, 0, 6)),
    _act("leaky_relu", lambda x: np.where(x > 0, x, 0.2 * x), negative_slope=0.2),
    _act("elu", lambda x: np.where(x > 0, x, 0.7 * np.expm1(np.minimum(x, 0))), alpha=0.7),
    _act("selu", lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(np.minimum(x, 0)))),
    _act("celu", lambda x: np.maximum(x, 0) + np.minimum(0, 2 * np.expm1(x / 2)), alpha=2.0),
    _act("gelu", lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))), errors=[
        ErrorInput(lambda m: m.F.gelu(m.ones(2), approximate="fast"), RuntimeError,
                   "approximate argument must be either none or tanh")]),
    _act("gelu", lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
         approximate="tanh"),
    _act("silu", lambda x: x * _sig(x)),
    _act("mish", lambda x: x * np.tanh(_sp(x))),
    _act("softplus", lambda x: np.where(2 * x > 3, x, _sp(2 * x) / 2), beta=2.0, threshold=3.0),
    _act("hardtanh", lambda x: np.clip(x, -0.5, 1.5), min_val=-0.5, max_val=1.5),
    _act("hardsigmoid", lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    _act("hardswish", lambda x: x * np.clip(x + 3, 0, 6) / 6),
    _act("sigmoid", _sig),
    _act("tanh", np.tanh),
    _act("logsigmoid", lambda x: -_sp(-x)),
    _act("softsign", lambda x: x / (1 + np.abs(x))),
    _act("tanhshrink", lambda x: x - np.tanh(x)),
    _act("threshold", lambda x: np.where(x > 0.3, x, -2.0), threshold=0.3, value=-2.0),
    _act("hardshrink", lambda x: np.where(np.abs(x) > 0.4, x, 0), lambd=0.4),
    _act("softshrink", lambda x: np.where(x > 0.4, x - 0.4, np.where(x < -0.4, x + 0.4, 0)),
         lambd=0.4),
    _act("softmax", lambda x: _softmax(x, 1), dim=1, errors=[
        ErrorInput(lambda m: m.F.softmax(m.ones(2, 3), 2), IndexError, "Dimension out of range")]),
    _act("log_softmax", lambda x: np.log(_softmax(x, 0)), dim=0),
    _act("softmin", lambda x: _softmax(-x, -1), dim=-1),
    OpInfo("prelu", F.prelu, _prelu_ref, _prelu_samples, torch_op="nn.functional.prelu",
           error_inputs=[ErrorInput(lambda m: m.F.prelu(m.ones(2, 3), m.ones(2)), RuntimeError,
                                    "Mismatch of parameter numbers and input channel")]),
    OpInfo("glu", F.glu, _glu_ref, _glu_samples, torch_op="nn.functional.glu",
           error_inputs=[ErrorInput(lambda m: m.F.glu(m.ones(3)), RuntimeError,
                                    "Halving dimension must be even")]),
]

# ---- normalisation ------------------------------------------------------------------------------


def _bshape(x: np.ndarray) -> tuple:
    return (1, -1) + (1,) * (x.ndim - 2)


def np_batch_norm(x: np.ndarray, rm: Any, rv: Any, w: Any = None, b: Any = None,
                  training: bool = False, momentum: Any = 0.1, eps: float = 1e-5) -> np.ndarray:
    axes = (0, *range(2, x.ndim))
    mean, var = (x.mean(axes), x.var(axes)) if training else (rm, rv)
    y = (x - mean.reshape(_bshape(x))) / np.sqrt(var.reshape(_bshape(x)) + eps)
    if w is not None:
        y = y * w.reshape(_bshape(x))
    return y if b is None else y + b.reshape(_bshape(x))


def np_layer_norm(x: np.ndarray, shape: tuple, w: Any = None, b: Any = None,
                  eps: float = 1e-5) -> np.ndarray:
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    y = y if w is None else y * w
    return y if b is None else y + b


def _group_ref(x: np.ndarray, g: int, w: Any = None, b: Any = None) -> np.ndarray:
    y = np_layer_norm(x.reshape(x.shape[0], g, -1), (1,)).reshape(x.shape)
    return np_batch_norm(y, np.zeros(x.shape[1]), np.ones(x.shape[1]) - 1e-5, w, b)


def _instance_ref(x: np.ndarray, rm: Any = None, rv: Any = None, w: Any = None,
                  b: Any = None) -> np.ndarray:
    y = np_layer_norm(x.reshape(x.shape[0] * x.shape[1], -1), (1,)).reshape(x.shape)
    return np_batch_norm(y, np.zeros(x.shape[1]), np.ones(x.shape[1]) - 1e-5, w, b)


def _rms_ref(x: np.ndarray, shape: tuple, w: Any = None, eps: float = 1e-6) -> np.ndarray:
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    y = x / np.sqrt((x * x).mean(axes, keepdims=True) + eps)
    return y if w is None else y * w


def _n(rng: np.random.Generator, *shape: int) -> T:
    return T(rng.standard_normal(shape) + 0.5)


def _bn_train_samples(rng: np.random.Generator) -> Iterable[Sample]:
    for shape in [(4, 3), (3, 2, 4), (2, 2, 3, 2)]:
        c = shape[1]
        yield Sample(T(rng.standard_normal(shape) * 2 + 1), None, None, _n(rng, c), _n(rng, c),
                     True)
    yield Sample(T(rng.standard_normal((5, 2, 3))), None, None, training=True, name="no_affine")
    yield Sample(T(rng.standard_normal((4, 3, 5)), "t"), None, None, _n(rng, 3), None, True)


def _bn_eval_samples(rng: np.random.Generator) -> Iterable[Sample]:
    for shape in [(3, 2, 2), (4, 3)]:
        c = shape[1]
        yield Sample(T(rng.standard_normal(shape)), T(rng.standard_normal(c), grad=False),
                     T(rng.random(c) + 0.5, grad=False), _n(rng, c), _n(rng, c), False)
    yield Sample(T(rng.standard_normal((2, 3, 4))), T(rng.standard_normal(3), grad=False),
                 T(rng.random(3) + 0.5, grad=False), name="no_affine")


def _ln_samples(rng: np.random.Generator) -> Iterable[Sample]:
    for shape, k in [((3, 4), 1), ((2, 2, 3), 2), ((3, 1, 4), 3)]:
        ns = shape[-k:]
        yield Sample(T(rng.standard_normal(shape) * 3 + 2), ns, _n(rng, *ns), _n(rng, *ns))
        yield Sample(T(rng.standard_normal(shape)), ns)
    yield Sample(T(rng.standard_normal((4, 3)), "t"), (3,), _n(rng, 3), None)


def _gn_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(rng.standard_normal((2, 4, 3))), 2, _n(rng, 4), _n(rng, 4))
    yield Sample(T(rng.standard_normal((2, 6, 3, 2))), 3)
    yield Sample(T(rng.standard_normal((3, 4))), 2, _n(rng, 4), None)


def _in_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(rng.standard_normal((2, 4, 3))), None, None, _n(rng, 4), _n(rng, 4))
    yield Sample(T(rng.standard_normal((2, 3, 3, 2))))


def _rms_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(rng.standard_normal((2, 4, 3))), (3,), _n(rng, 3), eps=1e-6)
    yield Sample(T(rng.standard_normal((2, 3, 2))), (3, 2), eps=1e-6)
    yield Sample(T(rng.standard_normal((3, 4)), "t"), (4,), _n(rng, 4), eps=1e-6)


def _normalize_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(rng.standard_normal((2, 4, 3))), 2.0, 1)
    yield Sample(T(rng.standard_normal((3, 4))), 2.0, -1)
    yield Sample(T(rng.standard_normal((3, 4)), "t"), 1.0, 0)


def _normalize_ref(x: np.ndarray, p: float = 2.0, dim: int = 1) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, ord=p, axis=dim, keepdims=True), 1e-12)


NORMS = [
    OpInfo("batch_norm_train", F.batch_norm, np_batch_norm, _bn_train_samples,
           torch_op="nn.functional.batch_norm", rtol=1e-6, atol=1e-6, error_inputs=[
               ErrorInput(lambda m: m.F.batch_norm(m.randn(1, 4), None, None, training=True),
                          ValueError, r"Expected more than 1 value per channel when training, "
                                      r"got input size \w+\.Size\(\[1, 4\]\)"),
               ErrorInput(lambda m: m.F.batch_norm(m.randn(2, 3), m.zeros(4), m.ones(4)),
                          RuntimeError, "running_mean should contain 3 elements not 4"),
               ErrorInput(lambda m: m.F.batch_norm(m.randn(3, 5), None, None), RuntimeError,
                          "running_mean and running_var must be defined", torch=False)]),
    OpInfo("batch_norm_eval", F.batch_norm, np_batch_norm, _bn_eval_samples,
           torch_op="nn.functional.batch_norm"),
    OpInfo("layer_norm", F.layer_norm, np_layer_norm, _ln_samples,
           torch_op="nn.functional.layer_norm", rtol=1e-6, atol=1e-6, error_inputs=[
               ErrorInput(lambda m: m.F.layer_norm(m.randn(3, 5), (4,)), RuntimeError,
                          r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], "
                          r"but got input of size\[3, 5\]")]),
    OpInfo("group_norm", F.group_norm, _group_ref, _gn_samples,
           torch_op="nn.functional.group_norm", rtol=1e-6, atol=1e-6, error_inputs=[
               ErrorInput(lambda m: m.F.group_norm(m.randn(3, 5), 2), RuntimeError,
                          "divisible by num_groups")]),
    OpInfo("instance_norm", F.instance_norm, _instance_ref, _in_samples,
           torch_op="nn.functional.instance_norm", rtol=1e-6, atol=1e-6),
    OpInfo("rms_norm", F.rms_norm, _rms_ref, _rms_samples, torch_op="nn.functional.rms_norm"),
    OpInfo("normalize", F.normalize, _normalize_ref, _normalize_samples,
           torch_op="nn.functional.normalize"),
]

# ---- attention, embedding, interpolation, dropout -----------------------------------------------


def np_sdpa(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: Any = None, *,
            is_causal: bool = False, scale: Any = None) -> np.ndarray:
    s = q @ np.swapaxes(k, -1, -2) * (1 / np.sqrt(q.shape[-1]) if scale is None else scale)
    if is_causal:
        mask = np.tril(np.ones(s.shape[-2:], bool))
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    return _softmax(s, -1) @ v


def _sdpa_samples(rng: np.random.Generator) -> Iterable[Sample]:
    def qkv() -> list[T]:
        return [T(rng.standard_normal(s)) for s in ((2, 3, 4), (2, 5, 4), (2, 5, 3))]

    yield Sample(*qkv())
    yield Sample(*qkv(), is_causal=True, name="causal")
    mask = rng.random((3, 5)) > 0.3
    mask[:, 0] = True
    yield Sample(*qkv(), T(mask), name="bool_mask")
    yield Sample(*qkv(), T(rng.standard_normal((3, 5)), grad=False), name="float_mask")
    yield Sample(*qkv(), scale=0.4, name="scale")
    yield Sample(*[T(rng.standard_normal((2, 2, 3, 4))) for _ in range(3)], is_causal=True,
                 name="heads_causal")


def _emb_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(np.array([[1, 3, 1], [0, 1, 2]])), T(U(rng, (4, 3))))
    yield Sample(T(np.array([[2, 0], [2, 2]])), T(U(rng, (3, 2))), padding_idx=1)
    yield Sample(T(np.array([[1, 6, 1], [0, 2, 1]])), T(U(rng, (7, 3))), padding_idx=1, fd=False,
                 name="padding_row_used")  # its row gets no gradient: compared with torch
    yield Sample(T(np.array(2)), T(U(rng, (3, 4))))
    yield Sample(T(np.zeros((0,), np.int64)), T(U(rng, (3, 4))))


def _emb_ref(idx: np.ndarray, w: np.ndarray, padding_idx: Any = None) -> np.ndarray:
    return w[idx]


def _one_hot_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(np.array([[0, 2], [1, 1]])))
    yield Sample(T(np.array([1, 0, 3])), 5)


def _one_hot_ref(idx: np.ndarray, n: int = -1) -> np.ndarray:
    return np.eye(idx.max() + 1 if n < 0 else n, dtype=np.int64)[idx]


def _axis_resize(x: np.ndarray, axis: int, out: int, scale: Any, mode: str,
                 ac: Any) -> np.ndarray:
    n = x.shape[axis]
    d = np.arange(out, dtype=np.float64)
    step = n / out if scale is None else 1 / scale
    if mode == "nearest":
        return np.take(x, np.minimum(np.floor(d * step).astype(int), n - 1), axis)
    if ac:
        src = d * (n - 1) / (out - 1) if out > 1 else d * 0
    else:
        src = np.maximum((d + 0.5) * step - 0.5, 0)
    i0 = np.minimum(np.floor(src).astype(int), n - 1)
    i1 = np.minimum(i0 + 1, n - 1)
    lam = (src - i0).reshape((-1,) + (1,) * (x.ndim - axis - 1))
    return np.take(x, i0, axis) * (1 - lam) + np.take(x, i1, axis) * lam


def np_interpolate(x: np.ndarray, size: Any = None, scale_factor: Any = None,
                   mode: str = "nearest", align_corners: Any = None) -> np.ndarray:
    k = x.ndim - 2
    for i in range(k):
        sf = None if scale_factor is None else \
            (scale_factor if np.isscalar(scale_factor) else scale_factor[i])
        if size is not None:
            out = size if isinstance(size, int) else size[i]
        else:
            out = int(math.floor(x.shape[2 + i] * sf))
        x = _axis_resize(x, 2 + i, out, sf, mode, align_corners)
    return x


def _interp_samples(rng: np.random.Generator) -> Iterable[Sample]:
    for mode, ac in [("nearest", None), ("bilinear", False), ("bilinear", True)]:
        yield Sample(T(rng.standard_normal((1, 2, 3, 2))), size=(4, 3), mode=mode,
                     align_corners=ac)
    yield Sample(T(rng.standard_normal((1, 2, 3))), scale_factor=1.7, mode="linear")
    yield Sample(T(rng.standard_normal((2, 1, 2, 3))), scale_factor=2)
    yield Sample(T(rng.standard_normal((1, 2, 4, 3))), size=(3, 5), mode="bilinear",
                 align_corners=False)
    yield Sample(T(rng.standard_normal((1, 2, 5))), size=3, mode="linear", align_corners=True)


def _bilinear_samples(rng: np.random.Generator) -> Iterable[Sample]:
    yield Sample(T(U(rng, (3, 4))), T(U(rng, (3, 5))), T(U(rng, (2, 4, 5))), T(U(rng, (2,))))
    yield Sample(T(U(rng, (2, 3, 4))), T(U(rng, (2, 3, 5))), T(U(rng, (2, 4, 5))))


def _bilinear_ref(a: np.ndarray, b: np.ndarray, w: np.ndarray, bias: Any = None) -> np.ndarray:
    y = np.einsum("...i,oij,...j->...o", a, w, b)
    return y if bias is None else y + bias


def _identity_samples(*calls: tuple) -> Any:
    """Dropout in its identity forms; the input is a strided view, so the output is a graph
    node even though the op returns its input."""

    def samples(rng: np.random.Generator) -> Iterable[Sample]:
        for shape, args, kw in calls:
            yield Sample(T(U(rng, shape), "t"), *args, **kw)

    return samples


def _dropout(name: str, shape: tuple, errors: list | None = None) -> OpInfo:
    samples = _identity_samples((shape, (0.0,), {}), (shape, (0.5,), {"training": False}))
    return OpInfo(name, getattr(F, name), lambda x, *a, **k: x, samples,
                  torch_op=f"nn.functional.{name}", error_inputs=errors or [])


MISC = [
    OpInfo("scaled_dot_product_attention", F.scaled_dot_product_attention, np_sdpa,
           _sdpa_samples, torch_op="nn.functional.scaled_dot_product_attention",
           rtol=1e-6, atol=1e-7, error_inputs=[
               ErrorInput(lambda m: m.F.scaled_dot_product_attention(
                   *[m.randn(2, 4, 8)] * 3, attn_mask=m.ones(4, 4), is_causal=True),
                   RuntimeError, "Explicit attn_mask should not be set"),
               ErrorInput(lambda m: m.F.scaled_dot_product_attention(
                   *[m.randn(2, 4, 8)] * 3, attn_mask=m.ones(4, 4, dtype=m.float64)),
                   RuntimeError, "Expected attn_mask dtype to be bool or float or to match "
                                 "query dtype")]),
    OpInfo("embedding", F.embedding, _emb_ref, _emb_samples, torch_op="nn.functional.embedding",
           error_inputs=[
               ErrorInput(lambda m: m.F.embedding(m.tensor([0, 4]), m.randn(4, 3)), IndexError,
                          "index out of range in self"),
               ErrorInput(lambda m: m.F.embedding(m.tensor([0.0]), m.randn(4, 3)),
                          RuntimeError, "Expected tensor for argument #1 'indices'"),
               ErrorInput(lambda m: m.F.embedding(m.tensor([0]), m.randn(4, 3), padding_idx=4),
                          AssertionError, "Padding_idx must be within num_embeddings")]),
    OpInfo("one_hot", F.one_hot, _one_hot_ref, _one_hot_samples, grad=False,
           torch_op="nn.functional.one_hot", error_inputs=[
               ErrorInput(lambda m: m.F.one_hot(m.tensor([0, 5]), 3), RuntimeError,
                          "Class values must be smaller than num_classes."),
               ErrorInput(lambda m: m.F.one_hot(m.tensor([0, -1]), 3), RuntimeError,
                          "Class values must be non-negative.")]),
    OpInfo("interpolate", F.interpolate, np_interpolate, _interp_samples,
           torch_op="nn.functional.interpolate", error_inputs=[
               ErrorInput(lambda m: m.F.interpolate(m.randn(1, 1, 2, 2), size=2, scale_factor=2),
                          ValueError, "only one of size or scale_factor should be defined"),
               ErrorInput(lambda m: m.F.interpolate(m.randn(1, 1, 2, 2)), ValueError,
                          "either size or scale_factor should be defined"),
               ErrorInput(lambda m: m.F.interpolate(m.randn(1, 1, 2, 2), size=3,
                                                    align_corners=True),
                          ValueError, "align_corners option can only be set"),
               ErrorInput(lambda m: m.F.interpolate(m.randn(1, 2, 3), size=4, mode="bilinear"),
                          NotImplementedError, "Got 3D input, but bilinear mode needs 4D")]),
    OpInfo("bilinear", F.bilinear, _bilinear_ref, _bilinear_samples,
           torch_op="nn.functional.bilinear", error_inputs=[
               ErrorInput(lambda m: m.F.bilinear(m.randn(2, 3, 4), m.randn(2, 3, 4),
                                                 m.randn(2, 4, 5)), RuntimeError, "bilinear")]),
    _dropout("dropout", (3, 4), [
        ErrorInput(lambda m: m.F.dropout(m.randn(4, 5), 1.5), ValueError,
                   "dropout probability has to be between 0 and 1, but got 1.5")]),
    _dropout("dropout1d", (2, 3, 4), [
        ErrorInput(lambda m: m.F.dropout1d(m.ones(2, 3, 4, 5)), RuntimeError,
                   "Expected 2D or 3D input")]),
    _dropout("dropout2d", (2, 3, 2, 4)),
    _dropout("dropout3d", (2, 3, 2, 2, 3)),
]

NN_OPS: list[OpInfo] = ACTIVATIONS + NORMS + MISC + CONV_POOL + LOSSES + MORE_NN + MORE_LOSSES
