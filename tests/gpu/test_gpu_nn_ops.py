"""nn.functional on the "gpu" device: the backend-parametrized tests of ``tests/nn_ops`` (numpy
references, float64 gradchecks, running statistics, errors) re-run on "gpu", and every
function of ``lucid.nn.functional`` against "cpu" in float32, values and gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from gpu_util import same
from reuse import backend_tests

import lucid.nn.functional as F

# the nn_ops tests build float64 data against float64 numpy references: on a stream without
# float64 they skip, and the float32 comparisons with "cpu" below cover every function there
for _m in ("activation", "conv", "loss", "nn_misc", "norm", "pool"):
    globals().update(backend_tests("nn_ops", f"test_{_m}", float64=True))

_rng = np.random.default_rng(0)


def R(*shape: int, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return _rng.uniform(lo, hi, shape).astype(np.float32)


def IDX(hi: int, *shape: int) -> np.ndarray:
    return _rng.integers(0, hi, shape).astype(np.int64)


x4 = R(2, 4, 7, 6)
x3 = R(2, 4, 9)
CASES: dict[str, list[tuple[Callable, tuple]]] = {
    "conv1d": [(lambda x, w, b: F.conv1d(x, w, b, 2, 1, 1, 2), (x3, R(6, 2, 3), R(6)))],
    "conv2d": [(lambda x, w, b: F.conv2d(x, w, b), (x4, R(5, 4, 3, 3), R(5))),
               (lambda x, w: F.conv2d(x, w, None, (2, 1), 2, (1, 2), 2), (x4, R(6, 2, 3, 2))),
               (lambda x, w: F.conv2d(x, w, padding="same"), (x4, R(3, 4, 2, 3)))],
    "conv_transpose1d": [(lambda x, w, b: F.conv_transpose1d(x, w, b, 2, 1, 1),
                          (x3, R(4, 3, 3), R(3)))],
    "conv_transpose2d": [(lambda x, w, b: F.conv_transpose2d(x, w, b, 2, 1, 1, 2),
                          (x4, R(4, 3, 3, 3), R(6)))],
    "unfold": [(lambda x: F.unfold(x, (2, 3), 1, 1, (2, 1)), (x4,))],
    "fold": [(lambda c: F.fold(c, (7, 6), (2, 3), 1, 1, (2, 1)), (R(2, 24, 24),))],
    "max_pool1d": [(lambda x: F.max_pool1d(x, 3, 2, 1), (x3,))],
    "max_pool2d": [(lambda x: F.max_pool2d(x, 2), (x4,)),
                   (lambda x: F.max_pool2d(x, 3, 2, 1, 2, ceil_mode=True, return_indices=True),
                    (x4,))],
    "avg_pool1d": [(lambda x: F.avg_pool1d(x, 3, 2, 1), (x3,))],
    "avg_pool2d": [(lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), (x4,)),
                   (lambda x: F.avg_pool2d(x, 2, ceil_mode=True, divisor_override=3), (x4,))],
    "adaptive_avg_pool1d": [(lambda x: F.adaptive_avg_pool1d(x, 4), (x3,))],
    "adaptive_avg_pool2d": [(lambda x: F.adaptive_avg_pool2d(x, (3, 4)), (x4,))],
    "adaptive_max_pool1d": [(lambda x: F.adaptive_max_pool1d(x, 4), (x3,))],
    "adaptive_max_pool2d": [(lambda x: F.adaptive_max_pool2d(x, (3, 4), True), (x4,))],
    "batch_norm": [(lambda x, w, b: F.batch_norm(x, None, None, w, b, True), (x4, R(4), R(4))),
                   (lambda x, m, v: F.batch_norm(x, m, v, training=False),
                    (x3, R(4), R(4, lo=0.5)))],
    "layer_norm": [(lambda x, w, b: F.layer_norm(x, (7, 6), w, b), (x4, R(7, 6), R(7, 6)))],
    "group_norm": [(lambda x, w, b: F.group_norm(x, 2, w, b), (x4, R(4), R(4)))],
    "instance_norm": [(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), (x4, R(4), R(4)))],
    "rms_norm": [(lambda x, w: F.rms_norm(x, (6,), w), (x4, R(6)))],
    "normalize": [(lambda x: F.normalize(x, 2.0, 1), (x4,))],
    "linear": [(lambda x, w, b: F.linear(x, w, b), (R(3, 5), R(4, 5), R(4)))],
    "bilinear": [(lambda a, b, w, c: F.bilinear(a, b, w, c), (R(3, 4), R(3, 5), R(2, 4, 5),
                                                                 R(2)))],
    "embedding": [(lambda i, w: F.embedding(i, w, padding_idx=1), (IDX(6, 3, 4), R(6, 5))),
                  (lambda i, w: F.embedding(i, w * 1, max_norm=1.0), (IDX(6, 7), R(6, 5)))],
    "one_hot": [(lambda i: F.one_hot(i, 6), (IDX(6, 3, 4),))],
    "interpolate": [(lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), (x4,)),
                    (lambda x: F.interpolate(x, size=(5, 9), mode="bilinear",
                                             align_corners=True), (x4,)),
                    (lambda x: F.interpolate(x, size=13, mode="linear"), (x3,))],
    "pad": [(lambda x: F.pad(x, (1, 2, 0, 1), value=0.5), (x4,)),
            (lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"), (x4,)),
            (lambda x: F.pad(x, (2, 1), mode="replicate"), (x3,)),
            (lambda x: F.pad(x, (2, 3), mode="circular"), (x3,))],
    "scaled_dot_product_attention": [
        (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
         (R(2, 3, 5, 4), R(2, 3, 5, 4), R(2, 3, 5, 4))),
        (lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m > 0),
         (R(2, 5, 4), R(2, 6, 4), R(2, 6, 3), R(5, 6)))],
    "dropout": [(lambda x: F.dropout(x, 0.3), (x4,))],
    "dropout1d": [(lambda x: F.dropout1d(x, 0.5), (x3,))],
    "dropout2d": [(lambda x: F.dropout2d(x, 0.5), (x4,))],
    "dropout3d": [(lambda x: F.dropout3d(x, 0.5), (R(2, 3, 2, 3, 2),))],
    "cross_entropy": [
        (lambda x, t: F.cross_entropy(x, t), (R(6, 5), IDX(5, 6))),
        (lambda x, t, w: F.cross_entropy(x, t, w, ignore_index=2, label_smoothing=0.1),
         (R(4, 5, 3), IDX(5, 4, 3), R(5, lo=0.1))),
        (lambda x, p: F.cross_entropy(x, p.softmax(1)), (R(4, 5), R(4, 5)))],
    "nll_loss": [(lambda x, t: F.nll_loss(x.log_softmax(1), t, reduction="sum"),
                  (R(6, 5), IDX(5, 6)))],
    "mse_loss": [(lambda a, b: F.mse_loss(a, b), (R(3, 4), R(3, 4)))],
    "l1_loss": [(lambda a, b: F.l1_loss(a, b, reduction="none"), (R(3, 4), R(3, 4)))],
    "smooth_l1_loss": [(lambda a, b: F.smooth_l1_loss(a, b, beta=0.5), (R(3, 4), R(3, 4)))],
    "huber_loss": [(lambda a, b: F.huber_loss(a, b, delta=0.7), (R(3, 4), R(3, 4)))],
    "binary_cross_entropy": [(lambda p, t, w: F.binary_cross_entropy(p.sigmoid(), t, w),
                              (R(3, 4), R(3, 4, lo=0, hi=1), R(3, 4, lo=0.1)))],
    "binary_cross_entropy_with_logits": [
        (lambda x, t, pw: F.binary_cross_entropy_with_logits(x, t, pos_weight=pw),
         (R(3, 4), R(3, 4, lo=0, hi=1), R(4, lo=0.5)))],
    "kl_div": [(lambda a, b: F.kl_div(a.log_softmax(1), b.softmax(1), reduction="batchmean"),
                (R(3, 4), R(3, 4))),
               (lambda a, b: F.kl_div(a, b, reduction="sum", log_target=True), (R(3, 4), R(3, 4)))],
    "softmax": [(lambda x: F.softmax(x, 1), (x4,))],
    "softmin": [(lambda x: F.softmin(x, -1), (x4,))],
    "log_softmax": [(lambda x: F.log_softmax(x, -1), (x4,))],
    "glu": [(lambda x: F.glu(x, 1), (x4,))],
    "prelu": [(lambda x, w: F.prelu(x, w), (x4, R(4)))],
    "threshold": [(lambda x: F.threshold(x, 0.3, -1.0), (x4,))],
    "leaky_relu": [(lambda x: F.leaky_relu(x, 0.2), (x4,))],
    "elu": [(lambda x: F.elu(x, 0.7), (x4,))],
    "celu": [(lambda x: F.celu(x, 1.3), (x4,))],
    "hardtanh": [(lambda x: F.hardtanh(x, -0.5, 1.5), (x4,))],
    "softplus": [(lambda x: F.softplus(x, 2.0, 3.0), (x4,))],
    "gelu": [(lambda x: F.gelu(x), (x4,)), (lambda x: F.gelu(x, approximate="tanh"), (x4,))],
    "relu_": [(lambda x: F.relu_(x * 1), (x4,))],
}
_SIMPLE = ["relu", "relu6", "selu", "silu", "mish", "sigmoid", "tanh", "logsigmoid",
           "hardsigmoid", "hardswish", "hardshrink", "softshrink", "softsign", "tanhshrink"]
for _n in _SIMPLE:
    CASES[_n] = [(getattr(F, _n), (x4,))]

_PARAMS = [pytest.param(fn, args, id=f"{name}-{k}")
           for name, fs in CASES.items() for k, (fn, args) in enumerate(fs)]


@pytest.mark.parametrize("fn,args", _PARAMS)
def test_functional_gpu_matches_cpu(fn: Callable, args: tuple) -> None:
    same(fn, *args)


def test_every_functional_is_compared() -> Any:
    public = {n for n in dir(F) if not n.startswith("_") and callable(getattr(F, n))
              and getattr(getattr(F, n), "__module__", "").startswith("lucid")}
    assert public - set(CASES) == set()
