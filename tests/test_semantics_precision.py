"""Normalisation of data far from zero (x ~ 1e4, 1e5): mean and variance come from centred
data, so float32 results stay within ~1e-6 of the float64 answer on every device (a one-pass
mean cancelled to ~1e-3), and the devices agree with one another; small-integer matmul keeps
its dtype and wraps as torch does."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

DEVICES = ("cpu", "numpy", "gpu")


def _t(a: np.ndarray, device: str) -> lucid.Tensor:
    if device == "gpu":
        pytest.importorskip("mlx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lucid.tensor(a, device=device)


def _ref(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    a = a.astype(np.float64)
    m, v = a.mean(axes, keepdims=True), a.var(axes, keepdims=True)
    return (a - m) / np.sqrt(v + 1e-5)


CASES = [((16, 8, 10, 10), 1e4), ((16, 8, 10, 10), 1e5), ((64, 8), 1e4), ((4, 6, 600), 1e4)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,offset", CASES)
def test_norms_of_offset_data_are_float64_accurate(device: str, shape: tuple, offset: float
                                                   ) -> None:
    a = (np.random.default_rng(0).standard_normal(shape) * 2 + offset).astype(np.float32)
    x = _t(a, device)
    rest = tuple(range(2, a.ndim))
    rm, rv = _t(np.zeros(shape[1], np.float32), device), _t(np.ones(shape[1], np.float32), device)
    outs = {
        "batch_norm": (F.batch_norm(x, rm, rv, training=True), _ref(a, (0, *rest))),
        "layer_norm": (F.layer_norm(x, shape[1:]), _ref(a, tuple(range(1, a.ndim)))),
    }
    if a.ndim > 2:
        g = a.reshape(shape[0], 2, -1)
        outs["group_norm"] = (F.group_norm(x, 2), _ref(g, (2,)).reshape(shape))
        outs["instance_norm"] = (F.instance_norm(x), _ref(a, rest))
    for name, (y, want) in outs.items():
        err = float(np.max(np.abs(y.numpy() - want)))
        assert y.dtype is lucid.float32 and err < 1e-5, f"{name}: {err:.2e} off float64"
    a64 = a.astype(np.float64)
    np.testing.assert_allclose(rm.numpy(), 0.1 * a64.mean((0, *rest)), rtol=1e-6)
    var = a64.var((0, *rest), ddof=1)
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * var, rtol=1e-5)


@pytest.mark.parametrize("shape,offset", CASES[:3])
def test_gpu_norms_match_cpu_far_from_zero(shape: tuple, offset: float) -> None:
    rng = np.random.default_rng(1)
    a = (rng.standard_normal(shape) * 2 + offset).astype(np.float32)
    wv = rng.uniform(0.5, 1.5, shape).astype(np.float32)
    res = {}
    for device in ("cpu", "gpu"):
        x = _t(a, device).requires_grad_()
        y = F.batch_norm(x, None, None, training=True) + F.layer_norm(x, shape[1:])
        (y * _t(wv, device)).sum().backward()
        res[device] = (y.detach().numpy(), x.grad.numpy())
    (y_gpu, gx_gpu), (y_cpu, gx_cpu) = res["gpu"], res["cpu"]
    np.testing.assert_allclose(y_gpu, y_cpu, rtol=1e-5, atol=1e-5 * np.abs(y_cpu).max())
    # the backward centres with the mean saved in float32 (as torch does): a last-bit
    # difference in that mean moves the gradient by ~1e-5 of its scale at 1e5
    np.testing.assert_allclose(gx_gpu, gx_cpu, rtol=1e-4, atol=1e-4 * np.abs(gx_cpu).max())


@pytest.mark.parametrize("device", DEVICES)
def test_small_integer_matmul_keeps_dtype_and_wraps(device: str) -> None:
    m = np.array([[200, 100], [3, 4]])
    want = {"uint8": [[108, 176], [100, 60]], "int8": [[108, -80], [100, 60]],
            "int16": [[-25236, 20400], [612, 316]], "int64": [[40300, 20400], [612, 316]]}
    for dt, w in want.items():
        a = _t(m.astype(dt), device)
        y = a @ a
        assert y.dtype is getattr(lucid, dt), (dt, y.dtype)
        np.testing.assert_array_equal(y.numpy(), np.array(w, dtype=dt))
        v = a[0] @ a[0]  # 1-D . 1-D
        assert v.dtype is getattr(lucid, dt)
        assert v.item() == np.array(200 * 200 + 100 * 100).astype(dt).item()
        mv = a @ a[:, 0]
        assert mv.dtype is getattr(lucid, dt)
        np.testing.assert_array_equal(mv.numpy(), np.array(w, dtype=dt)[:, 0])


@pytest.mark.parity
def test_small_integer_matmul_matches_torch(torch: object) -> None:
    m = np.array([[200, 100], [3, 4]])
    for dt in ("uint8", "int8", "int16", "int32", "int64"):
        t = torch.tensor(m.astype(dt))  # type: ignore[attr-defined]
        a = lucid.tensor(m.astype(dt))
        assert str(a.dtype).split(".")[-1] == str((t @ t).dtype).split(".")[-1]
        np.testing.assert_array_equal((a @ a).numpy(), (t @ t).numpy())


def _bool_products(L: Any) -> dict[str, Any]:
    a3, a2 = L.ones(2, 2, 2, dtype=L.bool), L.ones(2, 2, dtype=L.bool)
    v = L.ones(2, dtype=L.bool)
    return {"mm": lambda: a2 @ a2, "mv": lambda: a2 @ v, "dot": lambda: v @ v,
            "vm": lambda: v @ a2, "bmm": lambda: a3 @ a3, "batched_mv": lambda: a3 @ v,
            "vector_batched": lambda: v @ a3, "batched_mat": lambda: a3 @ a2}


BOOL_ERRORS = {"mm": "addmm_impl_cpu_", "mv": "addmv_impl_cpu", "dot": "dot",
               "vm": "addmm_impl_cpu_", "bmm": "bmm", "batched_mv": "addmv_impl_cpu",
               "vector_batched": "bmm", "batched_mat": "addmm_impl_cpu_"}


def test_bool_matmul_raises() -> None:
    for name, fn in _bool_products(lucid).items():
        with pytest.raises(NotImplementedError) as err:
            fn()
        assert str(err.value) == f"\"{BOOL_ERRORS[name]}\" not implemented for 'Bool'", name
    empty = lucid.ones(0, 2, dtype=lucid.bool) @ lucid.ones(2, 2, dtype=lucid.bool)
    assert empty.shape == (0, 2) and empty.dtype is lucid.bool


@pytest.mark.parity
def test_bool_matmul_errors_match_torch(torch: Any) -> None:
    for name, fn in _bool_products(torch).items():
        with pytest.raises(NotImplementedError) as err:
            fn()
        assert str(err.value) == f"\"{BOOL_ERRORS[name]}\" not implemented for 'Bool'", name
