"""The recurrence op and its fused step kernels: each numba step against the numpy reference
(and the custom sigmoid / tanh against numpy's), registered warm-up signatures, and float64
gradchecks of the whole time loop, plain and packed, in both directions."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.backend import _rnn_ref
from lucid.kernels import _jit
from lucid.kernels import rnn as rnn_k
from lucid.ops.rnn import recurrence


def _step_args(name: str, n: int, h: int, dtype: type, rng: np.random.Generator) -> list:
    def r(*s: int) -> np.ndarray:
        return rng.standard_normal(s).astype(dtype)

    def z(*s: int) -> np.ndarray:
        return np.zeros(s, dtype)

    return {
        "lstm_fwd": lambda: [r(n, 4 * h), r(n, 4 * h), r(4 * h), r(n, h), z(n, 4 * h), z(n, h),
                             z(n, h)],
        "lstm_bwd": lambda: [r(n, h), r(n, h), rng.random((n, 4 * h)).astype(dtype), r(n, h),
                             r(n, h), z(n, 4 * h)],
        "gru_fwd": lambda: [r(n, 3 * h), r(n, 3 * h), r(3 * h), r(n, h), z(n, 4 * h), z(n, h)],
        "gru_bwd": lambda: [r(n, h), rng.random((n, 4 * h)).astype(dtype), r(n, h),
                            z(n, 3 * h), z(n, 3 * h)],
        "rnn_fwd": lambda: [r(n, h), r(n, h), r(h), z(n, h), True],
        "rnn_bwd": lambda: [r(n, h), r(n, h), z(n, h), False],
    }[name]()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["lstm_fwd", "lstm_bwd", "gru_fwd", "gru_bwd", "rnn_fwd",
                                  "rnn_bwd"])
def test_step_kernels_match_numpy_reference(name, dtype) -> None:
    kern = getattr(rnn_k, name)
    runs = []
    for fn in (kern, getattr(_rnn_ref, name)):
        args = _step_args(name, 3, 5, dtype, np.random.default_rng(5))
        fn(*args)
        runs.append([a for a in args if isinstance(a, np.ndarray)])
    tol = 1e-5 if dtype is np.float32 else 1e-12
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    entry = _jit.REGISTRY["rnn." + name]
    for sig in getattr(entry.dispatcher, "signatures", []):
        assert tuple(sig) in [tuple(s) for s in entry.signatures_for(str(sig[0].dtype))]


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("sizes", [None, [3, 3, 2, 1]])
def test_recurrence_gradcheck(mode, reverse, sizes) -> None:
    g = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    h = 3
    p = 2 if mode == "LSTM" else h

    def t(*s: int) -> lucid.Tensor:
        return lucid.randn(*s, dtype=lucid.float64, requires_grad=True)

    lstm = mode == "LSTM"
    ins = [t(4, 3, g * h), t(3, p), t(g * h, p), t(g * h)] + ([t(3, h), t(p, h)] if lstm else [])

    def f(gx, h0, w_hh, b_hh, *rest):
        c0, w_hr = rest if lstm else (None, None)
        y = recurrence(gx, h0, c0, w_hh, b_hh, w_hr, mode, reverse, sizes)
        return lucid.cat([y[0].flatten(), y[1].flatten()]) if lstm else y

    assert lucid.autograd.gradcheck(f, ins)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernel_sigmoid_and_tanh_accuracy(dtype) -> None:
    k = rnn_k
    x = np.concatenate([np.linspace(-30, 30, 6001), np.logspace(-30, 0, 301),
                        [-1e4, -800.0, 0.0, -0.0, 800.0, 1e4, np.inf, -np.inf, np.nan]])
    x = x.astype(dtype)[None, :]
    n = x.shape[1]
    z = np.zeros_like(x)
    h = np.empty_like(x)
    acts = np.empty((1, 4 * n), dtype)
    c, hh = np.empty_like(x), np.empty_like(x)
    gx = np.concatenate([x, x, x, x], 1)
    with np.errstate(all="ignore"):  # scalar overflow warnings when run without the JIT
        k.rnn_fwd(x, z, np.zeros(n, dtype), h, False)
        k.lstm_fwd(gx, np.zeros_like(gx), np.zeros(4 * n, dtype), z, acts, c, hh)
    with np.errstate(over="ignore"):
        sig = (1 / (1 + np.exp(-x.astype(np.float64))))[0]
    tanh = np.tanh(x.astype(np.float64))[0]
    tol = 4e-7 if dtype is np.float32 else 4e-16
    np.testing.assert_allclose(h[0], tanh, rtol=tol * 8, atol=tol)
    np.testing.assert_allclose(acts[0, :n], sig, rtol=tol * 8, atol=tol)
    assert np.isnan(h[0, -1]) and np.isnan(acts[0, n - 1])
