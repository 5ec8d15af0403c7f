"""Autocast (output dtypes per op against torch, nesting, decorator, state, gradients) and
GradScaler (a training trajectory against ``torch.amp.GradScaler("cpu")``)."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
from devices import DEVICES

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.ops import _autocast

# inf/NaN losses (the scaler's skipped steps) and log of negatives in kl_div warn in numpy
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning",
                                        "ignore:overflow encountered:RuntimeWarning")


def _x(m: object, shape: tuple, dt: object, seed: int = 0, lo: float = -1.0) -> object:
    v = np.random.default_rng(seed).uniform(lo, 1.0, shape).astype(np.float32)
    return m.tensor(v).to(dt)  # type: ignore[attr-defined]


# name -> f(module, functional, x) with x of shape (4, 8)
CASES = {
    "matmul": lambda m, f, x: x @ x.T,
    "mm": lambda m, f, x: m.mm(x, x.T),
    "bmm": lambda m, f, x: m.bmm(x[None], x.T[None]),
    "addmm": lambda m, f, x: m.addmm(m.zeros(4, 4), x, x.T),
    "baddbmm": lambda m, f, x: m.baddbmm(m.zeros(1, 4, 4), x[None], x.T[None]),
    "addbmm": lambda m, f, x: m.addbmm(m.zeros(4, 4), x[None], x.T[None]),
    "linear": lambda m, f, x: f.linear(x, m.ones(3, 8), m.ones(3)),
    "conv1d": lambda m, f, x: f.conv1d(x[None], m.ones(2, 4, 3), m.ones(2)),
    "conv2d": lambda m, f, x: f.conv2d(x[None, None], m.ones(2, 1, 3, 3)),
    "conv_transpose2d": lambda m, f, x: f.conv_transpose2d(x[None, None], m.ones(1, 2, 3, 3)),
    "prelu": lambda m, f, x: f.prelu(x, m.tensor([0.25])),
    "sdpa": lambda m, f, x: f.scaled_dot_product_attention(x[None], x[None], x[None]),
    "softmax": lambda m, f, x: f.softmax(x, -1),
    "log_softmax": lambda m, f, x: f.log_softmax(x, -1),
    "layer_norm": lambda m, f, x: f.layer_norm(x, (8,), m.ones(8), m.zeros(8)),
    "group_norm": lambda m, f, x: f.group_norm(x, 2),
    "exp": lambda m, f, x: x.exp(),
    "log": lambda m, f, x: (x.abs() + 1).log(),
    "pow": lambda m, f, x: x.pow(2),
    "sum": lambda m, f, x: x.sum(),
    "prod": lambda m, f, x: x.prod(),
    "cumsum": lambda m, f, x: x.cumsum(1),
    "relu": lambda m, f, x: x.relu(),
    "trace": lambda m, f, x: m.trace(x[:, :4]),
    "dot": lambda m, f, x: m.dot(x[0], x[1]),
    "mv": lambda m, f, x: m.mv(x, x[0]),
    "mse_loss": lambda m, f, x: f.mse_loss(x, m.zeros(4, 8)),
    "l1_loss": lambda m, f, x: f.l1_loss(x, m.zeros(4, 8)),
    "smooth_l1_loss": lambda m, f, x: f.smooth_l1_loss(x, m.zeros(4, 8)),
    "huber_loss": lambda m, f, x: f.huber_loss(x, m.zeros(4, 8)),
    "cross_entropy": lambda m, f, x: f.cross_entropy(x, m.tensor([0, 1, 2, 3])),
    "nll_loss": lambda m, f, x: f.nll_loss(x, m.tensor([0, 1, 2, 3])),
    "kl_div": lambda m, f, x: f.kl_div(x, x, reduction="batchmean"),
    "bce": lambda m, f, x: f.binary_cross_entropy(x.sigmoid(), m.ones(4, 8)),
    "bce_logits": lambda m, f, x: f.binary_cross_entropy_with_logits(x, m.ones(4, 8)),
    "add_mixed": lambda m, f, x: x + m.ones(4, 8),
    "cat": lambda m, f, x: m.cat([x, m.ones(1, 8)]),
}
# the dtypes torch 2.13 gives under autocast("cpu") (bfloat16) for float32 / bfloat16 inputs
EXPECTED_CPU = {
    "matmul": "LL", "mm": "LL", "bmm": "LL", "addmm": "LL", "baddbmm": "LL", "addbmm": "LL",
    "linear": "LL", "conv1d": "LL",
    "conv2d": "LL", "conv_transpose2d": "LL", "prelu": "LL", "sdpa": "LL",
    "softmax": "FL", "log_softmax": "FL", "layer_norm": "FL", "group_norm": "FL", "exp": "FL",
    "log": "FL", "pow": "FL", "sum": "FL", "prod": "FF", "cumsum": "FL", "relu": "FL",
    "trace": "FF", "dot": "FL", "mv": "FL", "mse_loss": "FF", "l1_loss": "FF",
    "smooth_l1_loss": "FF", "huber_loss": "FF", "cross_entropy": "FF", "nll_loss": "FF",
    "kl_div": "FF", "bce": "FF", "bce_logits": "FF", "add_mixed": "FF", "cat": "FF",
}


def _dt_name(d: object) -> str:
    return str(d).rsplit(".", 1)[-1]


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
def test_cpu_output_dtypes_match_torch(torch, low: str) -> None:
    for name, fn in CASES.items():
        got, want = [], []
        for inp in ("float32", low):
            with lucid.autocast("cpu", dtype=getattr(lucid, low)):
                got.append(_dt_name(fn(lucid, F, _x(lucid, (4, 8), getattr(lucid, inp))).dtype))
            with torch.autocast("cpu", dtype=getattr(torch, low)):
                tx = _x(torch, (4, 8), getattr(torch, inp))
                want.append(_dt_name(fn(torch, torch.nn.functional, tx).dtype))
        assert got == want, name


def test_cpu_output_dtypes_table() -> None:
    """The same table without torch (L: the autocast dtype, F: float32)."""
    for name, fn in CASES.items():
        for inp, code in zip(("float32", "bfloat16"), EXPECTED_CPU[name]):
            with lucid.autocast("cpu"):
                out = fn(lucid, F, _x(lucid, (4, 8), getattr(lucid, inp)))
            assert out.dtype is (lucid.bfloat16 if code == "L" else lucid.float32), name


def test_values_match_torch(torch) -> None:
    x, w, b = (np.random.default_rng(i).standard_normal(s).astype(np.float32)
               for i, s in enumerate([(5, 16), (7, 16), (7,)]))
    with lucid.autocast("cpu"):
        y = F.linear(lucid.tensor(x), lucid.tensor(w), lucid.tensor(b))
        s = F.softmax(y, -1)
    with torch.autocast("cpu"):
        ty = torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b))
        ts = torch.nn.functional.softmax(ty, -1)
    np.testing.assert_allclose(y.float().numpy(), ty.float().numpy(), rtol=2 ** -7, atol=0.05)
    np.testing.assert_allclose(s.float().numpy(), ts.float().numpy(), atol=1e-2)


def test_off_by_default_and_float64_untouched() -> None:
    x = lucid.ones(2, 3)
    assert (x @ x.T).dtype is lucid.float32
    assert not lucid.is_autocast_enabled("cpu") and not _autocast.state.on
    with lucid.autocast("cpu"):
        xd = lucid.ones(2, 3, dtype=lucid.float64)
        assert (xd @ xd.T).dtype is lucid.float64
        assert F.mse_loss(xd, xd).dtype is lucid.float64
        assert (lucid.arange(4).reshape(2, 2) @ lucid.arange(4).reshape(2, 2)).dtype \
            is lucid.int64


def test_gradients_flow_in_each_inputs_dtype() -> None:
    net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    x = lucid.randn(4, 8)
    with lucid.autocast("cpu"):
        out = net(x)
        assert out.dtype is lucid.bfloat16
        loss = F.cross_entropy(out, lucid.tensor([0, 1, 1, 0]))
        assert loss.dtype is lucid.float32
    loss.backward()
    for p in net.parameters():
        assert p.grad is not None and p.grad.dtype is lucid.float32


def test_gradients_match_torch(torch) -> None:
    x, w = (np.random.default_rng(i).standard_normal(s).astype(np.float32)
            for i, s in enumerate([(6, 8), (4, 8)]))
    lw, tw = lucid.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    with lucid.autocast("cpu"):
        F.mse_loss(F.linear(lucid.tensor(x), lw), lucid.zeros(6, 4)).backward()
    with torch.autocast("cpu"):
        torch.nn.functional.mse_loss(torch.nn.functional.linear(torch.tensor(x), tw),
                                     torch.zeros(6, 4)).backward()
    np.testing.assert_allclose(lw.grad.numpy(), tw.grad.numpy(), rtol=0.02, atol=0.02)


def test_nesting_state_and_decorator() -> None:
    assert lucid.get_autocast_dtype("cpu") is lucid.bfloat16
    assert lucid.get_autocast_dtype("cuda") is lucid.float16
    x = lucid.ones(2, 2)
    with lucid.autocast("cpu"):
        assert lucid.is_autocast_enabled("cpu") and not lucid.is_autocast_enabled()
        with lucid.autocast("cpu", enabled=False):
            assert not lucid.is_autocast_enabled("cpu") and (x @ x).dtype is lucid.float32
        with lucid.amp.autocast("cpu", dtype=lucid.float16):
            assert lucid.get_autocast_dtype("cpu") is lucid.float16
            assert (x @ x).dtype is lucid.float16
        assert lucid.get_autocast_dtype("cpu") is lucid.bfloat16 and (x @ x).dtype \
            is lucid.bfloat16
    assert not lucid.is_autocast_enabled("cpu") and not _autocast.state.cache

    @lucid.autocast("cpu")
    def f(a: lucid.Tensor) -> lucid.Tensor:
        return a @ a

    assert f(x).dtype is lucid.bfloat16 and (x @ x).dtype is lucid.float32
    assert f.__name__ == "f"
    with pytest.raises(ValueError, match="boom"), lucid.autocast("cpu"):
        raise ValueError("boom")
    assert not lucid.is_autocast_enabled("cpu")


def test_state_is_per_thread() -> None:
    seen = []
    with lucid.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append(lucid.is_autocast_enabled("cpu")))
        t.start()
        t.join()
    assert seen == [False]


def test_weight_cast_is_cached_within_a_region() -> None:
    w = lucid.randn(3, 4, requires_grad=True)
    with lucid.autocast("cpu"):
        F.linear(lucid.randn(2, 4), w)
        F.linear(lucid.randn(2, 4), w)
        assert len(_autocast.state.cache) == 1
    assert not _autocast.state.cache
    with lucid.autocast("cpu", cache_enabled=False):
        F.linear(lucid.randn(2, 4), w)
        assert not _autocast.state.cache


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        lucid.autocast(3)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'xyz'"):
        lucid.autocast("xyz")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ac = lucid.autocast("cpu", dtype=lucid.float32)
    assert "Disabling autocast" in str(rec[0].message)
    with ac:
        assert not lucid.is_autocast_enabled("cpu")


@pytest.mark.skipif("gpu" not in DEVICES, reason="mlx is not installed")
def test_gpu_policy() -> None:
    xg, xc = lucid.randn(4, 8, device="gpu"), lucid.randn(4, 8)
    with lucid.autocast("cuda"):
        assert lucid.is_autocast_enabled() and lucid.is_autocast_enabled("gpu")
        assert (xg @ xg.T).dtype is lucid.float16
        assert F.softmax(xg.half(), -1).dtype is lucid.float32  # CUDA's float32 list
        assert xg.half().exp().dtype is lucid.float32 and xg.half().sum().dtype is lucid.float32
        assert F.layer_norm(xg.half(), (8,)).dtype is lucid.float32
        assert (xc @ xc.T).dtype is lucid.float32  # cpu tensors: not this region's device
    with lucid.autocast("cpu"):
        assert (xg @ xg.T).dtype is lucid.float32


# ---- GradScaler ---------------------------------------------------------------------------------

def _train(m: object, f: object, amp: object, steps: list[float], w0: np.ndarray,
           growth_interval: int) -> tuple[list, np.ndarray]:
    w = m.tensor(w0.copy(), requires_grad=True)  # type: ignore[attr-defined]
    opt = m.optim.SGD([w], lr=0.1)  # type: ignore[attr-defined]
    scaler = amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=growth_interval)
    x = m.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))  # type: ignore
    scales = []
    for k in steps:
        opt.zero_grad()
        with m.autocast("cpu"):  # type: ignore[attr-defined]
            loss = f.mse_loss(f.linear(x, w), m.zeros(3, 2)) * k  # type: ignore
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        scales.append((scaler.get_scale(), scaler._get_growth_tracker()))
    return scales, w.detach().numpy()


def test_grad_scaler_trajectory_matches_torch(torch) -> None:
    w0 = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    steps = [1.0, 1.0, float("inf"), 1.0, 1.0, 1.0, float("nan"), 1.0, 1.0]
    got = _train(lucid, F, lucid.amp, steps, w0, 2)
    want = _train(torch, torch.nn.functional, torch.amp, steps, w0, 2)
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)


def test_grad_scaler_numpy_reference() -> None:
    w0 = np.ones((2, 4), np.float32)
    scales, w = _train(lucid, F, lucid.amp, [1.0, float("inf"), 1.0, 1.0, 1.0], w0, 2)
    # inf -> backoff 0.5 and reset; two clean steps -> growth 2.0
    assert scales == [(1024.0, 1), (512.0, 0), (512.0, 1), (1024.0, 0), (1024.0, 1)]
    assert np.all(np.isfinite(w)) and not np.array_equal(w, w0)


def test_grad_scaler_state_and_errors() -> None:
    w = lucid.ones(2, requires_grad=True)
    opt = lucid.optim.SGD([w], lr=1.0)
    s = lucid.amp.GradScaler("cpu")
    assert s.state_dict() == {"scale": 65536.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                              "growth_interval": 2000, "_growth_tracker": 0}
    with pytest.raises(AssertionError, match="Attempted unscale_ but _scale is None"):
        s.unscale_(opt)
    loss = s.scale((w * 2).sum())
    assert loss.item() == 4 * 65536.0 and s.scale([loss])[0].item() == 4 * 65536.0 ** 2
    loss.backward()
    s.unscale_(opt)
    assert w.grad.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        s.step(opt)
    s.update()
    s2 = lucid.amp.GradScaler("cpu")
    s2.load_state_dict({**s.state_dict(), "scale": 8.0})
    assert s2.get_scale() == 8.0 and s2._get_growth_tracker() == 1
    with pytest.raises(ValueError, match="outputs must be a Tensor"):
        s.scale(3)
    off = lucid.amp.GradScaler("cpu", enabled=False)
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    assert not off.is_enabled()
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        s2.load_state_dict({})



def test_custom_fwd_bwd() -> None:
    seen = {}

    class Scale(lucid.autograd.Function):
        @staticmethod
        @lucid.amp.custom_fwd(device_type="cpu", cast_inputs=lucid.float32)
        def forward(ctx, a: lucid.Tensor) -> lucid.Tensor:
            seen["fwd"] = (a.dtype, lucid.is_autocast_enabled("cpu"))
            return a * 2

        @staticmethod
        @lucid.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g: lucid.Tensor) -> lucid.Tensor:
            seen["bwd"] = lucid.is_autocast_enabled("cpu")
            return g * 2

    x = lucid.ones(3, dtype=lucid.bfloat16, requires_grad=True)
    with lucid.autocast("cpu"):
        y = Scale.apply(x)
    assert seen["fwd"] == (lucid.float32, False) and y.dtype is lucid.float32
    y.sum().backward()
    assert seen["bwd"] is False and x.grad.tolist() == [2.0, 2.0, 2.0]

    class Plain(lucid.autograd.Function):
        @staticmethod
        @lucid.amp.custom_fwd(device_type="cpu")
        def forward(ctx, a: lucid.Tensor) -> lucid.Tensor:
            return a @ a.T

        @staticmethod
        @lucid.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g: lucid.Tensor) -> lucid.Tensor:
            seen["bwd2"] = lucid.is_autocast_enabled("cpu")
            return g.sum(0, keepdim=True).T.expand(2, 2).float()

    a = lucid.ones(2, 2, requires_grad=True)
    with lucid.autocast("cpu"):
        out = Plain.apply(a)
    assert out.dtype is lucid.bfloat16
    out.float().sum().backward()
    assert seen["bwd2"] is True
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        lucid.amp.custom_fwd(device_type=1)


def test_grad_scaler_odd_factors_match_torch(torch) -> None:
    """Non-power-of-two factors round as torch's float32 scale does; ``step`` unscales."""
    def run(m: object, f: object, amp: object) -> tuple[list, np.ndarray]:
        w = m.tensor(np.ones((2, 4), np.float32), requires_grad=True)  # type: ignore
        opt = m.optim.SGD([w], lr=0.1)  # type: ignore[attr-defined]
        sc = amp.GradScaler("cpu", init_scale=1000.0, growth_factor=1.7, backoff_factor=0.3,
                            growth_interval=1)
        x = m.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))  # type: ignore
        out = []
        for k in (1.0, 1.0, float("inf"), 1.0, float("nan"), 1.0, 1.0):
            opt.zero_grad()
            loss = f.mse_loss(f.linear(x, w), m.zeros(3, 2)) * k  # type: ignore
            sc.scale(loss).backward()
            sc.step(opt)
            sc.update()
            out.append(sc.get_scale())
        return out, w.detach().numpy()

    got, want = run(lucid, F, lucid.amp), run(torch, torch.nn.functional, torch.amp)
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
