"""bfloat16 and float16: storage, casts, promotion, finfo/iinfo, printing, numpy and file
I/O, and half compute (float32 inside, rounded once), against torch and numpy/ml_dtypes."""

from __future__ import annotations

import io
import os
import tempfile

import ml_dtypes
import numpy as np
import pytest
from devices import DEVICES

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.backend import cpu as _cpu
from lucid.backend import numpy_ref as _ref

BF16 = np.dtype(ml_dtypes.bfloat16)
# numpy warns on casts that overflow to inf (torch is silent); the values are what is tested
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning",
                                        "ignore:invalid value encountered in cast:RuntimeWarning")
HALVES = [("bfloat16", BF16), ("float16", np.dtype(np.float16))]
NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
         "float64"]


def _ld(name: str) -> lucid.dtype:
    return lucid.bool if name == "bool" else getattr(lucid, name)


def _edge_values() -> np.ndarray:
    rng = np.random.default_rng(0)
    v = np.concatenate([
        rng.standard_normal(2000).astype(np.float32) * 10.0 ** rng.integers(-8, 8, 2000),
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-45, 3.4e38, 65504.0, 65520.0,
                  1.00390625, 1.01171875, 2.0 ** -24, 2.0 ** -25, 1.0 + 2.0 ** -11], np.float32),
    ])
    return v.astype(np.float32)


def _bits(a: np.ndarray) -> np.ndarray:
    """The 16-bit patterns, every NaN as 0x7fc0 (NaN payloads are not compared)."""
    b = np.ascontiguousarray(a).view(np.uint16).copy()
    b[np.isnan(np.asarray(a, np.float32))] = 0x7FC0
    return b


def _tbits(t: object) -> np.ndarray:
    """``_bits`` of a torch half tensor (through float32: exact both ways)."""
    npd = BF16 if "bfloat" in str(t.dtype) else np.dtype(np.float16)  # type: ignore[attr-defined]
    return _bits(t.float().numpy().astype(npd))  # type: ignore[attr-defined]


# ---- the dtypes themselves ---------------------------------------------------------------------

def test_dtype_basics() -> None:
    assert lucid.bfloat16 is lucid._dtype.to_dtype("bfloat16")
    assert lucid.half is lucid.float16
    x = lucid.tensor([1.0, 2.5], dtype=lucid.bfloat16)
    assert x.dtype is lucid.bfloat16 and x.element_size() == 2 and x.itemsize == 2
    assert x.is_floating_point() and lucid.is_floating_point(x) and x.nbytes == 4
    assert repr(x) == "tensor([1.0000, 2.5000], dtype=lucid.bfloat16)"
    assert repr(lucid.tensor(1e-5, dtype=lucid.half)) == "tensor(1.0014e-05, dtype=lucid.float16)"
    assert x.bfloat16() is x
    assert x.half().dtype is lucid.float16 and x.float().dtype is lucid.float32
    assert x.to(lucid.float16).dtype is lucid.float16 and x.type(lucid.bfloat16) is x
    assert x.type() == "lucid.BFloat16Tensor"
    assert lucid._dtype.to_dtype(BF16) is lucid.bfloat16


def test_dtype_from_torch(torch) -> None:
    t = torch.tensor([1.5, -2.25, 3.3333], dtype=torch.bfloat16)
    x = lucid.tensor(t)
    assert x.dtype is lucid.bfloat16
    assert np.array_equal(_bits(x.numpy()), _tbits(t))
    assert lucid._dtype.to_dtype(torch.bfloat16) is lucid.bfloat16


@pytest.mark.parametrize("a", NAMES)
def test_promote_types_match_torch(torch, a: str) -> None:
    for b in NAMES:
        want = torch.promote_types(getattr(torch, a), getattr(torch, b))
        assert lucid.promote_types(_ld(a), _ld(b)).name == str(want).split(".")[1], (a, b)


def test_promotion_numpy_reference() -> None:
    bf, f16 = lucid.bfloat16, lucid.float16
    assert lucid.promote_types(bf, f16) is lucid.float32
    assert lucid.promote_types(bf, lucid.int64) is bf
    assert lucid.promote_types(f16, lucid.uint8) is f16
    assert lucid.promote_types(bf, lucid.float64) is lucid.float64
    x = lucid.ones(3, dtype=bf)
    assert (x + 1).dtype is bf and (x * 2.5).dtype is bf
    assert (x + lucid.ones(3, dtype=f16)).dtype is lucid.float32
    assert (x + lucid.tensor(1.0)).dtype is bf  # a 0-dim float32 only raises the category
    assert (x + lucid.ones(3)).dtype is lucid.float32
    assert (lucid.arange(3) + x).dtype is bf


def test_result_type_matches_torch(torch) -> None:
    for name, _ in HALVES:
        td, ld = getattr(torch, name), getattr(lucid, name)
        cases = [((3,), 1.5), ((3,), 2), ((), 1.5)]
        for shape, s in cases:
            want = torch.result_type(torch.ones(shape, dtype=td), s)
            assert lucid.result_type(lucid.ones(shape, dtype=ld), s).name == \
                str(want).split(".")[1]
        want = torch.result_type(torch.ones(3, dtype=torch.int32), torch.tensor(1.0, dtype=td))
        got = lucid.result_type(lucid.ones(3, dtype=lucid.int32), lucid.tensor(1.0, dtype=ld))
        assert got.name == str(want).split(".")[1]


# ---- finfo / iinfo -----------------------------------------------------------------------------

FIELDS = ["bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"]


@pytest.mark.parametrize("name", ["bfloat16", "float16", "float32", "float64"])
def test_finfo_matches_torch(torch, name: str) -> None:
    a, b = lucid.finfo(getattr(lucid, name)), torch.finfo(getattr(torch, name))
    for f in FIELDS:
        assert getattr(a, f) == getattr(b, f), f
    assert repr(a) == repr(b)


def test_finfo_iinfo_numpy_reference() -> None:
    f = lucid.finfo(lucid.bfloat16)
    assert (f.bits, f.eps, f.dtype, f.resolution) == (16, 2.0 ** -7, "bfloat16", 0.01)
    assert f.max == float(ml_dtypes.finfo(BF16).max) and f.min == -f.max
    assert f.tiny == f.smallest_normal == 2.0 ** -126
    assert lucid.finfo().dtype == "float32"
    assert lucid.finfo(lucid.float16).max == 65504.0
    i = lucid.iinfo(lucid.uint8)
    assert (i.bits, i.min, i.max, i.dtype) == (8, 0, 255, "uint8")
    assert lucid.iinfo(lucid.int64).max == 2 ** 63 - 1
    with pytest.raises(TypeError, match="requires a floating point input type"):
        lucid.finfo(lucid.int32)
    with pytest.raises(TypeError, match="requires an integer input type"):
        lucid.iinfo(lucid.bfloat16)
    with pytest.raises(TypeError, match="bool is not supported"):
        lucid.iinfo(lucid.bool)
    with pytest.raises(TypeError, match="must be lucid.dtype, not int"):
        lucid.finfo(3)


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_torch(torch, name: str) -> None:
    a, b = lucid.iinfo(getattr(lucid, name)), torch.iinfo(getattr(torch, name))
    for f in ("bits", "max", "min", "dtype"):
        assert getattr(a, f) == getattr(b, f)
    assert repr(a) == repr(b)


# ---- casts: bit for bit ------------------------------------------------------------------------

@pytest.mark.parametrize("name,npd", HALVES)
def test_cast_rounding_matches_torch(torch, name: str, npd: np.dtype) -> None:
    v = _edge_values()
    got = lucid.tensor(v).to(getattr(lucid, name)).numpy()
    want = _tbits(torch.tensor(v).to(getattr(torch, name)))
    assert np.array_equal(_bits(got), want)
    # and back to float32 exactly; to float64; to integers (truncation toward zero)
    back = lucid.tensor(got).float().numpy()
    assert np.array_equal(back, torch.tensor(v).to(getattr(torch, name)).float().numpy(),
                          equal_nan=True)
    small = np.array([-3.7, -0.5, 0.5, 2.9, 100.25], np.float32)
    for idt in ("int64", "int32", "uint8"):
        a = lucid.tensor(small).to(getattr(lucid, name)).to(getattr(lucid, idt)).numpy()
        b = torch.tensor(small).to(getattr(torch, name)).to(getattr(torch, idt)).numpy()
        assert np.array_equal(a, b)


def test_cast_between_halves_matches_torch(torch) -> None:
    v = _edge_values()
    a = lucid.tensor(v).to(lucid.float16).to(lucid.bfloat16).numpy()
    assert np.array_equal(_bits(a), _tbits(torch.tensor(v).half().bfloat16()))


@pytest.mark.parametrize("backend", DEVICES)
@pytest.mark.parametrize("name,npd", HALVES)
def test_cast_numpy_reference(backend: str, name: str, npd: np.dtype) -> None:
    v = _edge_values()
    x = lucid.tensor(v, device=backend).to(getattr(lucid, name))
    assert x.dtype is getattr(lucid, name)
    assert np.array_equal(_bits(x.cpu().numpy()), _bits(v.astype(npd)))


# ---- compute: float32 inside, one rounding ------------------------------------------------------

OPS = {
    "add": lambda m, a, b: a + b, "sub": lambda m, a, b: a - b, "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b, "neg": lambda m, a, b: -a, "abs": lambda m, a, b: a.abs(),
    "relu": lambda m, a, b: a.relu(), "max": lambda m, a, b: m.maximum(a, b),
    "sqrt": lambda m, a, b: a.abs().sqrt(), "exp": lambda m, a, b: a.exp(),
    "sum": lambda m, a, b: a.sum(1), "mean": lambda m, a, b: a.mean(0),
    "cumsum": lambda m, a, b: a.cumsum(1), "sigmoid": lambda m, a, b: a.sigmoid(),
    "where": lambda m, a, b: m.where(a > 0, a, b), "sort": lambda m, a, b: a.sort(1)[0],
}


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("name,npd", HALVES)
def test_simple_ops_bitwise_match_torch(torch, backend: str, op: str, name: str,
                                        npd: np.dtype) -> None:
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((64, 300)).astype(np.float32) for _ in range(2))
    fn = OPS[op]
    la, lb = (lucid.tensor(v, device=backend).to(getattr(lucid, name)) for v in (a, b))
    ta, tb = (torch.tensor(v).to(getattr(torch, name)) for v in (a, b))
    got, want = fn(lucid, la, lb), fn(torch, ta, tb)
    assert got.dtype is getattr(lucid, name)
    g = got.float().numpy()
    w = want.float().numpy()
    if op in ("sum", "mean", "cumsum"):  # float32 accumulation, summation order may differ
        np.testing.assert_allclose(g, w, rtol=2 ** -7 if name == "bfloat16" else 2 ** -10,
                                   atol=1e-3)
    elif op in ("exp", "sigmoid"):  # float32 libm results may differ in the last bit
        np.testing.assert_allclose(g, w, rtol=2 ** -7 if name == "bfloat16" else 2 ** -10)
        assert np.mean(g == w) > 0.98
    else:
        assert np.array_equal(g, w)


@pytest.mark.parametrize("backend", DEVICES)
@pytest.mark.parametrize("name,npd", HALVES)
def test_sign_of_nan_is_zero(backend: str, name: str, npd: np.dtype) -> None:
    """torch: sign(NaN) is 0 in every float dtype (ml_dtypes' bfloat16 is no numpy "f" kind,
    so the reference backend tests for it by name)."""
    x = lucid.tensor([np.nan, -2.0, 0.0, 3.0], device=backend).to(getattr(lucid, name))
    y = lucid.sign(x)
    assert y.dtype is getattr(lucid, name)
    np.testing.assert_array_equal(y.float().numpy(), [0.0, -1.0, 0.0, 1.0])
    # the 1-norm's gradient is sign(x): 0 at a NaN, times a zero upstream gradient
    t = lucid.tensor([[np.nan, 1.0], [2.0, -1.0]], device=backend).to(
        getattr(lucid, name)).requires_grad_()
    lucid.clamp(lucid.norm(t, 1, dim=1) - 100, 0, None).sum().backward()
    np.testing.assert_array_equal(t.grad.float().numpy(), np.zeros((2, 2)))


def test_sum_accumulates_in_float32(backend: str) -> None:
    x = lucid.ones(1000, dtype=lucid.bfloat16, device=backend)
    assert x.sum().item() == 1000.0  # bfloat16 accumulation would stop at 256
    assert x.sum(dtype=lucid.float32).dtype is lucid.float32
    assert x.mean().item() == 1.0
    assert lucid.ones(5000, dtype=lucid.float16, device=backend).cumsum(0)[-1].item() == 5000.0


@pytest.mark.parametrize("name,npd", HALVES)
def test_matmul_conv_norm_match_torch(torch, backend: str, name: str, npd: np.dtype) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    a = rng.standard_normal((3, 16, 64)).astype(np.float32)
    b = rng.standard_normal((64, 8)).astype(np.float32)
    ld, td = getattr(lucid, name), getattr(torch, name)
    L = lambda v: lucid.tensor(v, device=backend).to(ld).requires_grad_()  # noqa: E731
    T = lambda v: torch.tensor(v).to(td).requires_grad_()  # noqa: E731
    cases = [
        (lambda m, f, p, q: p @ q, (a, b)),
        (lambda m, f, p, q: f.conv2d(p, q, padding=1), (x, w)),
        (lambda m, f, p: f.layer_norm(p, (8,)), (x,)),
        (lambda m, f, p: f.softmax(p, -1), (x,)),
        (lambda m, f, p: f.cross_entropy(p.reshape(12, 64)[:, :10],
                                         m.tensor([1, 2, 3] * 4, device=p.device)), (x,)),
    ]
    tol = 2 ** -6 if name == "bfloat16" else 2 ** -9
    for fn, args in cases:
        la, ta = [L(v) for v in args], [T(v) for v in args]
        got, want = fn(lucid, F, *la), fn(torch, torch.nn.functional, *ta)
        assert got.dtype is ld
        scale = float(want.detach().float().abs().max()) + 1e-3
        np.testing.assert_allclose(got.detach().float().numpy(), want.detach().float().numpy(),
                                   atol=4 * tol * scale, rtol=0)
        seed = rng.standard_normal(tuple(want.shape)).astype(np.float32)
        (got.float() * lucid.tensor(seed, device=backend)).sum().backward()
        (want.float() * torch.tensor(seed)).sum().backward()
        for p, q in zip(la, ta):
            assert p.grad.dtype is ld  # gradients of half tensors are half
            gs = float(q.grad.float().abs().max()) + 1e-3
            np.testing.assert_allclose(p.grad.float().numpy(), q.grad.float().numpy(),
                                       atol=8 * tol * gs, rtol=0)


def test_float32_paths_are_not_wrapped() -> None:
    """The cpu backend's float32 fast paths never pass through the half wrapper."""
    for m in ("sum", "mean", "var", "matmul", "softmax", "layer_norm", "conv2d"):
        # the one wrapper is the reference fallback (backend/_fallback.py), whose inner
        # function is the kernel path itself, not the half wrapper
        fast = _cpu.CpuBackend.__dict__[m].__func__.__wrapped__
        assert not hasattr(fast, "__wrapped__"), m
    assert hasattr(_ref.NumpyBackend.__dict__["sum"].__func__, "__wrapped__")
    x = np.ones((4, 4), np.float32)
    assert _cpu.CpuBackend.sum(x).dtype == np.float32


def test_batch_norm_running_stats_half(backend: str) -> None:
    bn = nn.BatchNorm1d(3).to(device=backend).bfloat16()
    x = lucid.randn(16, 3, device=backend).bfloat16()
    bn(x)
    assert bn.running_mean.dtype is lucid.bfloat16
    ref = x.float().mean(0) * 0.1
    np.testing.assert_allclose(bn.running_mean.float().numpy(), ref.numpy(), atol=1e-2)


def test_module_and_optimizer_in_bfloat16(torch) -> None:
    lucid.manual_seed(0)
    net = nn.Linear(5, 3).bfloat16()
    assert net.weight.dtype is lucid.bfloat16 and net.bias.dtype is lucid.bfloat16
    tnet = torch.nn.Linear(5, 3).bfloat16()
    with torch.no_grad():
        tnet.weight.copy_(torch.tensor(net.weight.detach().float().numpy()))
        tnet.bias.copy_(torch.tensor(net.bias.detach().float().numpy()))
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    lo = lucid.optim.Adam(net.parameters(), lr=0.01)
    to = torch.optim.Adam(tnet.parameters(), lr=0.01)
    for _ in range(3):
        lo.zero_grad()
        to.zero_grad()
        net(lucid.tensor(x).bfloat16()).float().pow(2).sum().backward()
        tnet(torch.tensor(x).bfloat16()).float().pow(2).sum().backward()
        lo.step()
        to.step()
    assert net.weight.grad.dtype is lucid.bfloat16
    np.testing.assert_allclose(net.weight.detach().float().numpy(),
                               tnet.weight.detach().float().numpy(), atol=2e-2)


# ---- numpy and files ---------------------------------------------------------------------------

def test_numpy_roundtrip(backend: str) -> None:
    v = np.array([1.0, -2.5, 3.140625], dtype=BF16)
    x = lucid.tensor(v, device=backend)
    assert x.dtype is lucid.bfloat16
    out = x.cpu().numpy()
    assert out.dtype == BF16 and np.array_equal(_bits(out), _bits(v))
    y = lucid.from_numpy(v)
    assert y.dtype is lucid.bfloat16 and y.tolist() == [1.0, -2.5, 3.140625]
    assert x[1].item() == -2.5 and isinstance(x[1].item(), float)


def test_save_load_roundtrip(backend: str) -> None:
    sd = {"w": lucid.randn(3, 4, device=backend).bfloat16(),
          "h": lucid.randn(2, device=backend).half()}
    buf = io.BytesIO()
    lucid.save(sd, buf)
    buf.seek(0)
    back = lucid.load(buf)
    for k in sd:
        assert back[k].dtype is sd[k].dtype and back[k].device == sd[k].device
        assert np.array_equal(_bits(back[k].cpu().numpy()), _bits(sd[k].cpu().numpy()))


def test_safetensors_interop(torch) -> None:
    st = pytest.importorskip("safetensors.torch")
    t = torch.randn(3, 5).bfloat16()
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "a.safetensors")
        st.save_file({"t": t}, p)
        x = lucid.load_file(p)["t"]
        assert x.dtype is lucid.bfloat16
        assert np.array_equal(_bits(x.numpy()), _tbits(t))
        q = os.path.join(d, "b.safetensors")
        lucid.save_file({"x": x * 2}, q)
        back = st.load_file(q)["x"]
        assert back.dtype == torch.bfloat16 and torch.equal(back, t * 2)


@pytest.mark.skipif("gpu" not in DEVICES, reason="mlx is not installed")
def test_gpu_native_half() -> None:
    for d in (lucid.bfloat16, lucid.float16):
        x = lucid.tensor([1.0, 2.0, 3.0], device="gpu", dtype=d)
        y = (x * 1.5 + 1).sum()
        assert y.dtype is d and y.item() == 12.0
        assert x.to("cpu").dtype is d and lucid.tensor([1.5]).to(d).to("gpu").dtype is d
        assert x[1:].cpu().numpy().dtype == d.np


def test_float64_to_half_rounds_through_float32(torch, backend: str) -> None:
    v = np.array([1 + 2 ** -8 + 2 ** -30, 1 + 2 ** -11 + 2 ** -40, -3.0000001, 1e-300])
    for name in ("bfloat16", "float16"):
        want = torch.tensor(v).to(getattr(torch, name)).float().numpy()
        a = lucid.tensor(v, device=backend).to(getattr(lucid, name)).float().numpy()
        b = lucid.tensor(v.tolist(), dtype=getattr(lucid, name), device=backend).float().numpy()
        assert np.array_equal(a, want) and np.array_equal(b, want)
    assert lucid.tensor([1 + 2 ** -8 + 2 ** -30], dtype=lucid.bfloat16).item() == 1.0


NORMS = {
    "layer_norm": lambda m, f, x, w: f.layer_norm(x, (3,), w[:3], w[:3] * 0.5),
    "group_norm": lambda m, f, x, w: f.group_norm(x, 2, w, w * 0.5),
    "instance_norm": lambda m, f, x, w: f.instance_norm(x, weight=w, bias=w * 0.5),
    "rms_norm": lambda m, f, x, w: f.rms_norm(x, (3,), w[:3]),
    "rms_norm_no_weight": lambda m, f, x, w: f.rms_norm(x, (3,)),
}


@pytest.mark.parametrize("norm", sorted(NORMS))
@pytest.mark.parametrize("name,npd", HALVES)
def test_norms_with_float32_parameters_match_torch(torch, norm: str, name: str,
                                                   npd: np.dtype) -> None:
    """A half input with float32 weights: computed in float32, returned in the input dtype."""
    x = np.random.default_rng(3).standard_normal((2, 4, 3, 3)).astype(np.float32)
    w = np.linspace(0.5, 2.0, 4).astype(np.float32)
    got = NORMS[norm](lucid, F, lucid.tensor(x).to(getattr(lucid, name)), lucid.tensor(w))
    want = NORMS[norm](torch, torch.nn.functional, torch.tensor(x).to(getattr(torch, name)),
                       torch.tensor(w))
    assert got.dtype is getattr(lucid, name)
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(),
                               atol=2 ** -6 if name == "bfloat16" else 2 ** -9)
