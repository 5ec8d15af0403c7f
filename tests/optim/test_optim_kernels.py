"""The fused update kernels against their numpy reference: every rule and option, both
kernel builds, float32/float64, awkward layouts, fallbacks and NaN handling."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lucid.backend import _optim_ref as R
from lucid.backend.cpu import CpuBackend
from lucid.kernels import _optim_kernels as K
from lucid.kernels import _threads
from lucid.kernels import optim as O

REPO = Path(__file__).resolve().parents[2]

# rule -> (number of state arrays, list of (state mask, scalar kwargs))
RULES: dict[str, tuple[int, list[tuple[tuple[bool, ...], dict]]]] = {
    "sgd": (1, [
        ((False,), {"lr": 0.1}),
        ((True,), {"lr": 0.1, "momentum": 0.9}),
        ((True,), {"lr": 0.1, "momentum": 0.9, "first": True}),
        ((True,), {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
        ((True,), {"lr": 0.1, "momentum": 0.5, "dampening": 0.3, "maximize": True}),
    ]),
    "adam": (3, [
        ((True, True, False), {"beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "step_size": 0.1,
                               "bc2_sqrt": 0.05}),
        ((True, True, True), {"beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "step_size": 0.1,
                              "bc2_sqrt": 0.05, "weight_decay": 0.1}),
        ((True, True, False), {"beta1": 0.3, "beta2": 0.9, "eps": 1e-6, "step_size": 0.1,
                               "bc2_sqrt": 0.5, "decay": 0.99, "maximize": True}),
    ]),
    "adamax": (2, [
        ((True, True), {"beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "clr": 0.02}),
        ((True, True), {"beta1": 0.6, "beta2": 0.99, "eps": 1e-8, "clr": 0.02,
                        "weight_decay": 0.1, "maximize": True}),
    ]),
    "adagrad": (1, [
        ((True,), {"eps": 1e-10, "clr": 0.01}),
        ((True,), {"eps": 1e-8, "clr": 0.01, "weight_decay": 0.1, "maximize": True}),
    ]),
    "rmsprop": (3, [
        ((True, False, False), {"lr": 0.01, "alpha": 0.99, "eps": 1e-8}),
        ((True, True, True), {"lr": 0.01, "alpha": 0.9, "eps": 1e-8, "momentum": 0.9,
                              "weight_decay": 0.1}),
        ((True, False, True), {"lr": 0.01, "alpha": 0.3, "eps": 1e-8, "momentum": 0.5,
                               "maximize": True}),
    ]),
    "nadam": (2, [
        ((True, True), {"beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "bc2": 0.01,
                        "c_grad": -0.01, "c_avg": -0.1}),
        ((True, True), {"beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "bc2": 0.01,
                        "c_grad": -0.01, "c_avg": -0.1, "weight_decay": 0.1, "decay": 0.999,
                        "maximize": True}),
    ]),
    "radam": (2, [
        ((True, True), {"beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "lr": 0.01, "bc1": 0.2,
                        "bc2_sqrt": 0.1, "rect": None}),
        ((True, True), {"beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "lr": 0.01, "bc1": 0.2,
                        "bc2_sqrt": 0.1, "rect": 0.7, "weight_decay": 0.1, "decay": 0.999,
                        "maximize": True}),
    ]),
}

CASES = [(rule, i) for rule, (_, opts) in RULES.items() for i in range(len(opts))]


@pytest.fixture(params=["serial", "parallel"])
def build(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run once with every kernel's serial build and once with its parallel build."""
    par = request.param == "parallel"
    monkeypatch.setattr(O, "_parallel", lambda n: par)
    return request.param


def _inputs(rule: str, i: int, dtype: str, shape: tuple = (1037,), seed: int = 0):
    rng = np.random.default_rng(seed)
    n_state, opts = RULES[rule]
    mask, kw = opts[i]
    p = rng.standard_normal(shape).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    states = []
    for k, used in enumerate(mask):
        if not used:
            states.append(None)
            continue
        s = rng.standard_normal(shape).astype(dtype)
        # second moments, accumulators and max buffers are non-negative
        nonneg = (rule in ("adam", "nadam", "radam") and k >= 1) or rule in ("adagrad",) \
            or (rule == "adamax" and k == 1) or (rule == "rmsprop" and k == 0)
        states.append(np.abs(s) + 0.5 if nonneg else s * 0.1)
    if rule == "rmsprop" and mask[1]:  # centered: keep square_avg above grad_avg**2
        states[0] = states[0] + states[1] ** 2
    return p, g, states, kw


def _call(fn, rule: str, p, g, states, kw):
    if rule == "sgd":
        return fn(p, g, states[0], **kw)
    return fn(p, g, *states, **kw)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("rule,i", CASES)
def test_kernel_matches_numpy_reference(rule: str, i: int, dtype: str, build: str) -> None:
    p, g, states, kw = _inputs(rule, i, dtype)
    ref_p, ref_states = p.copy(), [None if s is None else s.copy() for s in states]
    out = _call(getattr(O, rule), rule, p, g, states, kw)
    ref = _call(getattr(R, rule), rule, ref_p, g, ref_states, kw)
    tol = {"float32": (3e-6, 1e-6), "float64": (1e-13, 1e-14)}[dtype]
    assert out[0] is p  # updated in place, returned as (param, *state)
    for a, s, b in zip(out[1:], states, ref[1:]):
        assert a is s
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=tol[0], atol=tol[1])
    np.testing.assert_allclose(p, ref_p, rtol=tol[0], atol=tol[1])
    assert not np.array_equal(p, _inputs(rule, i, dtype)[0])  # it did step


@pytest.mark.parametrize("rule,i", [(r, len(RULES[r][1]) - 1) for r in RULES])
def test_awkward_layouts_are_updated_in_place(rule: str, i: int) -> None:
    p, g, states, kw = _inputs(rule, i, "float32", shape=(23, 17))
    expect_p = p.copy()
    expect_states = [None if s is None else s.copy() for s in states]
    _call(getattr(O, rule), rule, expect_p, g.copy(), expect_states, kw)
    # the same values as a Fortran-ordered parameter and states, and a strided gradient
    pt = np.asfortranarray(p)
    assert not pt.flags.c_contiguous
    st = [None if s is None else np.asfortranarray(s) for s in states]
    gs = np.zeros((23, 34), np.float32)
    gs[:, ::2] = g
    out = _call(getattr(O, rule), rule, pt, gs[:, ::2], st, kw)
    assert out[0] is pt
    np.testing.assert_array_equal(pt, expect_p)
    for a, b in zip(st, expect_states):
        if a is not None:
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("rule,i", [(r, len(RULES[r][1]) - 1) for r in RULES])
def test_float16_and_mixed_dtypes_fall_back_to_numpy(rule: str, i: int) -> None:
    update = getattr(CpuBackend, rule + "_update")
    p, g, states, kw = _inputs(rule, i, "float16")
    assert not O.fits(p, g, tuple(states))
    rp, rs = p.copy(), [None if s is None else s.copy() for s in states]
    out = _call(update, rule, p, g, states, kw)
    _call(getattr(R, rule), rule, rp, g, rs, kw)
    assert out[0] is p and p.dtype == np.float16
    np.testing.assert_array_equal(p, rp)
    # a float64 gradient for a float32 parameter
    p, g, states, kw = _inputs(rule, i, "float32")
    rp, rs = p.copy(), [None if s is None else s.copy() for s in states]
    assert O.fits(p, g, tuple(states)) and not O.fits(p, g.astype(np.float64), tuple(states))
    _call(update, rule, p, g.astype(np.float64), states, kw)
    _call(getattr(R, rule), rule, rp, g, rs, kw)
    assert p.dtype == np.float32
    np.testing.assert_allclose(p, rp, rtol=3e-6, atol=1e-6)


def test_nan_propagates_through_maxima(build: str) -> None:
    n = 40
    p = np.ones(n, np.float32)
    g = np.ones(n, np.float32)
    m, v, vmax = np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32)
    vmax[3] = np.nan
    O.adam(p, g, m, v, vmax, beta1=0.9, beta2=0.999, eps=1e-8, step_size=0.1, bc2_sqrt=0.1)
    assert np.isnan(vmax[3]) and np.isnan(p[3]) and np.isfinite(np.delete(p, 3)).all()
    p = np.ones(n, np.float32)
    g[5] = np.nan
    u = np.zeros(n, np.float32)
    O.adamax(p, g, np.zeros(n, np.float32), u, beta1=0.9, beta2=0.999, eps=1e-8, clr=0.1)
    assert np.isnan(u[5]) and np.isnan(p[5]) and np.isfinite(np.delete(p, 5)).all()


def test_weight_decay_zero_never_reads_an_infinite_parameter() -> None:
    # PyTorch skips the weight-decay term when weight_decay == 0: inf * 0 must not appear
    p = np.array([np.inf, 1.0], np.float32)
    g = np.ones(2, np.float32)
    O.sgd(p, g, None, lr=0.1)
    assert p[0] == np.inf and p[1] == np.float32(0.9)


def test_sgd_first_step_copies_the_gradient_into_the_buffer() -> None:
    p = np.zeros(5)
    g = np.arange(5.0)
    buf = np.full(5, 123.0)
    O.sgd(p, g, buf, lr=1.0, momentum=0.9, dampening=0.5, first=True)
    np.testing.assert_array_equal(buf, g)
    np.testing.assert_array_equal(p, -g)


def test_fma_rounds_once_in_compiled_code() -> None:
    import numba

    f = numba.njit(lambda a, b, c: K.fma(a, b, c))
    a, b = 1.0 + 2.0**-30, 1.0 - 2.0**-30
    assert a * b - 1.0 == 0.0  # two roundings lose the low bits
    assert f(a, b, -1.0) == -(2.0**-60)
    assert K.fma(2.0, 3.0, 1.0) == 7.0  # plain Python fallback


def test_kernels_are_registered_for_warmup() -> None:
    from lucid.kernels import _jit

    for rule in RULES:
        for name in (f"optim.{rule}", f"optim.{rule}[par]"):
            entry = _jit.REGISTRY[name]
            assert entry.signatures and entry.options["fastmath"] is False
    assert set(O.kernels()) == set(RULES)


def test_parallel_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LUCID_PARALLEL_THRESHOLD", raising=False)
    monkeypatch.setattr(_threads, "_THRESHOLD_CACHE", {})
    least = _threads.parallel_threshold("optimizer")
    assert least == (_threads.THRESHOLDS if _threads.blas_choice() == "numpy"
                     else _threads.THRESHOLDS_ONE_POOL)["optimizer"]
    assert not O._parallel(least - 1) and O._parallel(least)
    monkeypatch.setenv("LUCID_PARALLEL_THRESHOLD", "10")
    monkeypatch.setattr(_threads, "_THRESHOLD_CACHE", {})
    assert O._parallel(10) and not O._parallel(9)


_NOJIT = """
import numpy as np, numba
assert numba.config.DISABLE_JIT
from lucid.kernels import optim as O
from lucid.backend import _optim_ref as R
rng = np.random.default_rng(0)
for dt in ("float32", "float64"):
    p = rng.standard_normal(50).astype(dt); g = rng.standard_normal(50).astype(dt)
    def st(k): return [np.abs(rng.standard_normal(50)).astype(dt) + 0.5 for _ in range(k)]
    calls = [
        ("sgd", lambda f, p, s: f(p, g, s[0], lr=0.1, momentum=0.9, nesterov=True), 1),
        ("adam", lambda f, p, s: f(p, g, *s, beta1=0.9, beta2=0.99, eps=1e-8, step_size=0.1,
                                   bc2_sqrt=0.3, weight_decay=0.1), 3),
        ("adamax", lambda f, p, s: f(p, g, *s, beta1=0.9, beta2=0.99, eps=1e-8, clr=0.1), 2),
        ("adagrad", lambda f, p, s: f(p, g, *s, eps=1e-8, clr=0.1, maximize=True), 1),
        ("rmsprop", lambda f, p, s: f(p, g, s[0] + s[1] ** 2, s[1], s[2], lr=0.1, alpha=0.9,
                                      eps=1e-8, momentum=0.9), 3),
        ("nadam", lambda f, p, s: f(p, g, *s, beta1=0.9, beta2=0.99, eps=1e-8, bc2=0.1,
                                    c_grad=-0.1, c_avg=-0.2, decay=0.9), 2),
        ("radam", lambda f, p, s: f(p, g, *s, beta1=0.9, beta2=0.99, eps=1e-8, lr=0.1,
                                    bc1=0.2, bc2_sqrt=0.3, rect=0.5), 2),
    ]
    for name, call, k in calls:
        s = st(k)
        a, b = p.copy(), p.copy()
        sa, sb = [x.copy() for x in s], [x.copy() for x in s]
        call(getattr(O, name), a, sa)
        call(getattr(R, name), b, sb)
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
print("ok")
"""


def test_kernels_without_jit() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_THREAD_TIMEOUT",
                                                          "GOMP_SPINCOUNT")}
    env["NUMBA_DISABLE_JIT"] = "1"
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", _NOJIT], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
