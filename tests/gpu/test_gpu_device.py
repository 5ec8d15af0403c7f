"""The "gpu" device itself: naming and moves, lucid.gpu / lucid.cuda / lucid.backends, the
import boundary (no mlx on ``import lucid``, one install hint without it), the dtype policy,
backend coverage, mixed-device errors, in-place writes and views, and hidden laziness."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.backend import get_backend
from lucid.backend.gpu import GpuBackend
from lucid.backend.numpy_ref import NumpyBackend
from lucid.ops.views import _copies as copied_views

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NO_MLX = "import sys; sys.modules['mlx'] = None; sys.modules['mlx.core'] = None\n"


def _py(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=300)


# ---- naming, moves, public API ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["gpu", "cuda", "mps", "cuda:0", "gpu:0"])
def test_device_names(name: str) -> None:
    x = lucid.tensor([1.0, 2.0], device=name)
    assert x.device.type == "gpu" and x.device == "gpu" and x.is_cuda
    assert lucid.device(name) == "gpu"


def test_moves_and_device_property() -> None:
    x = lucid.tensor([[1.0, 2.0]], requires_grad=True)
    g = x.to("gpu")
    assert g.device.type == "gpu" and x.gpu().device.type == "gpu"
    assert x.cuda().device.type == "gpu" and g.cpu().device.type == "cpu"
    assert g.to("gpu") is g and g.to(device="cuda") is g
    (g.cpu() * g.cpu()).sum().backward()  # gradients flow back through both moves
    np.testing.assert_allclose(x.grad.numpy(), [[2.0, 4.0]])
    assert g.to(lucid.float16).dtype is lucid.float16 and g.to(lucid.float16).device == "gpu"
    assert repr(lucid.ones(2, device="gpu")) == "tensor([1., 1.], device='gpu')"


def test_public_api() -> None:
    kind = lucid.gpu.backend()
    assert kind in ("metal", "cuda", "cpu")
    assert lucid.gpu.is_available() == (kind != "cpu") == lucid.cuda.is_available()
    assert lucid.cuda.device_count() == lucid.gpu.device_count() == int(kind != "cpu")
    assert lucid.backends.mps.is_available() == (kind == "metal")
    assert lucid.gpu.is_installed() and lucid.backends.mps.is_built()
    assert lucid.cuda.manual_seed(0) is None and lucid.cuda.manual_seed_all(0) is None
    assert lucid.cuda.current_device() == 0 and "MLX" in lucid.cuda.get_device_name()
    lucid.cuda.synchronize()
    lucid.cuda.empty_cache()
    assert lucid.cuda.memory_allocated() >= 0 and lucid.cuda.max_memory_allocated() >= 0
    device = "cuda" if lucid.cuda.is_available() else "cpu"
    assert lucid.zeros(1, device=device).device.type == ("gpu" if kind != "cpu" else "cpu")


def test_cpu_stream_warns_once() -> None:
    if get_backend("gpu").kind != "cpu":
        pytest.skip("runs on an accelerator here")
    r = _py("import warnings, lucid\nwarnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    lucid.ones(2, device='gpu'); lucid.ones(2, device='cuda')\n"
            "    from lucid.backend.gpu import GpuBackend; GpuBackend()\n"
            "print(sum(\"MLX's CPU stream\" in str(x.message) for x in w))")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1"


def test_import_lucid_never_imports_mlx() -> None:
    r = _py("import sys, lucid, lucid.nn, lucid.optim, lucid.gpu, lucid.cuda, lucid.backends\n"
            "x = lucid.ones(3) * 2\nprint('mlx' in sys.modules)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_without_mlx_one_clear_error() -> None:
    r = _py(NO_MLX + "import lucid\n"
            "print(lucid.gpu.is_available(), lucid.cuda.is_available(), "
            "lucid.backends.mps.is_available(), lucid.cuda.device_count())\n"
            "for dev in ('gpu', 'cuda', 'mps'):\n"
            "    try:\n"
            "        lucid.ones(2, device=dev)\n"
            "    except RuntimeError as e:\n"
            "        print(type(e).__name__, e)\n"
            "try:\n    lucid.ones(2).to('gpu')\nexcept RuntimeError as e:\n    print('to', e)\n")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[0] == "False False False 0"
    for line in lines[1:]:
        assert 'pip install "lucid-jit[gpu]"' in line and "MLX" in line
    assert len(lines) == 5


# ---- backend coverage and dtypes ---------------------------------------------------------------


def test_gpu_backend_covers_every_numpy_backend_method() -> None:
    public = {n for n in dir(NumpyBackend) if not n.startswith("_")}
    missing = sorted(n for n in public if not hasattr(GpuBackend, n))
    assert missing == []
    for n in public:  # overridden, never inherited numpy code
        assert n in GpuBackend.__dict__ or n in ("name", "array_type"), n


@pytest.mark.parametrize("d", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                               "float32"])
def test_dtypes_round_trip(d: str) -> None:
    a = np.array([[0, 1], [1, 0]]).astype(d)
    x = lucid.tensor(a, device="gpu")
    assert x.dtype == getattr(lucid, d if d != "bool" else "bool") and x.numpy().dtype == a.dtype
    np.testing.assert_array_equal(x.numpy(), a)
    assert x.argmax().dtype is lucid.int64 and x.sum().dtype is x.cpu().sum().dtype


def test_float64_policy() -> None:
    be = get_backend("gpu")
    if be.float64:  # MLX's CPU stream
        x = lucid.tensor([1.0, 2.0], dtype=lucid.float64, device="gpu")
        assert x.dtype is lucid.float64 and (x.exp() * 1).dtype is lucid.float64
        np.testing.assert_allclose(x.exp().numpy(), np.exp([1.0, 2.0]), rtol=1e-15)
    # on Metal and CUDA float64 raises a TypeError naming the dtype
    metal = GpuBackend.__new__(GpuBackend)
    metal.kind, metal.float64 = "metal", False
    for make in (lambda: metal.from_numpy(np.zeros(2)), lambda: metal.zeros((2,), lucid.float64),
                 lambda: metal.astype(metal.ones((2,), lucid.float32), lucid.float64)):
        with pytest.raises(TypeError, match="float64 is not supported on the MLX metal device"):
            make()


def test_exact_float64_math_on_the_cpu_stream() -> None:
    if not get_backend("gpu").float64:
        pytest.skip("no float64 on this gpu stream")
    v = np.random.default_rng(0).uniform(-30, 30, 1000)
    x = lucid.tensor(v, device="gpu")
    from scipy.special import erf, expit

    be = get_backend("gpu")
    gelu = lucid.nn.functional.gelu(x)  # exact GELU: the public op built on the backend's erf
    for got, want in ((x.exp(), np.exp(v)), (x.sin(), np.sin(v)), (x.cos(), np.cos(v)),
                      (x.sigmoid(), expit(v)), (be.erf(be.from_numpy(v)), erf(v)),
                      (gelu, 0.5 * v * (1.0 + erf(v / np.sqrt(2.0)))),
                      (x.softmax(0), np.exp(v - v.max()) / np.exp(v - v.max()).sum()),
                      (x.logsumexp(0), np.log(np.exp(v - v.max()).sum()) + v.max())):
        got = np.asarray(got.numpy() if isinstance(got, lucid.Tensor) else be.to_numpy(got))
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)


# ---- mixed devices -----------------------------------------------------------------------------

_a = lucid.ones(3)
MIXED = {
    "add": lambda b: _a + b, "eq": lambda b: _a == b, "lt": lambda b: _a < b,
    "cat": lambda b: lucid.cat([_a, b]), "where": lambda b: lucid.where(_a > 0, _a, b),
    "add_": lambda b: _a.clone().add_(b), "setitem": lambda b: _a.clone().__setitem__(0, b[0]),
    "matmul": lambda b: _a @ b, "maximum": lambda b: lucid.maximum(_a, b),
    "masked_fill": lambda b: _a.masked_fill(b > 0, 1.0), "clamp": lambda b: _a.clamp(b, None),
    "logical_and": lambda b: lucid.logical_and(_a > 0, b > 0), "isclose": lambda b:
    lucid.isclose(_a, b), "mse": lambda b: lucid.nn.functional.mse_loss(_a, b),
    "linear": lambda b: lucid.nn.functional.linear(_a[None], b[None]),
    "gather": lambda b: lucid.gather(b, 0, lucid.tensor([0, 1])),
}


@pytest.mark.parametrize("name", list(MIXED))
def test_mixing_devices_raises(name: str) -> None:
    b = lucid.ones(3, device="gpu")
    msg = ("Expected all tensors to be on the same device, but found at least two devices, "
           r"(cpu and gpu|gpu and cpu)!")
    with pytest.raises(RuntimeError, match=msg):
        MIXED[name](b)


def test_cpu_indices_index_a_gpu_tensor() -> None:
    x = lucid.arange(6.0, device="gpu")
    assert x[lucid.tensor([4, 1])].tolist() == [4.0, 1.0]
    assert x[lucid.tensor([4, 1])].device == "gpu"


def test_backward_gradient_on_another_device_raises() -> None:
    y = lucid.ones(2, device="gpu", requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="grad_output"):
        y.backward(lucid.ones(2))


# ---- in place, views and aliases --------------------------------------------------------------


def test_inplace_writes_reach_views_bases_and_aliases() -> None:
    x = lucid.arange(6.0, device="gpu").reshape(2, 3)
    row, col, d, alias = x[0], x[:, 1], x.detach(), x.data
    row.add_(10)  # a view written in place changes its base and its sibling views
    assert x.tolist() == [[10.0, 11.0, 12.0], [3.0, 4.0, 5.0]] and col.tolist() == [11.0, 4.0]
    x.mul_(2)  # the base written in place changes its views and its aliases
    assert row.tolist() == [20.0, 22.0, 24.0] and d.tolist() == x.tolist()
    alias.zero_()
    assert x.sum().item() == 0.0 and row.tolist() == [0.0, 0.0, 0.0]
    x[1] = lucid.tensor([1.0, 2.0, 3.0], device="gpu")
    x[x > 2] = -1.0
    x[:, lucid.tensor([0, 2], device="gpu")] += 5
    assert x.tolist() == [[5.0, 0.0, 5.0], [6.0, 2.0, 4.0]] and col.tolist() == [0.0, 2.0]
    t = x.t()
    t.fill_(7.0)
    assert x.tolist() == [[7.0] * 3] * 2
    with pytest.raises(RuntimeError, match="more than one element"):
        lucid.ones(1, 3, device="gpu").expand(2, 3).add_(1)


def test_init_and_random_fills_write_through_views() -> None:
    for dev in ("cpu", "gpu"):
        w = lucid.zeros(3, 4, device=dev)
        lucid.nn.init.ones_(w[0])
        lucid.manual_seed(0)
        w[:, 1].uniform_(5, 6)
        if dev == "cpu":
            want = w.numpy()
    np.testing.assert_array_equal(w.numpy(), want)
    assert (w.numpy()[:, 1] >= 5).all() and w.numpy()[0, 0] == 1.0


class _OnGpu:
    """``lucid`` with "gpu" as the device of new tensors (for the shared view cases)."""

    def tensor(self, *a: Any, **k: Any) -> Any:
        return lucid.tensor(*a, device="gpu", **k)

    def zeros(self, *a: Any, **k: Any) -> Any:
        return lucid.zeros(*a, device="gpu", **k)


def _view_cases() -> dict:
    sys.path.insert(0, os.path.join(REPO, "tests"))
    from test_inplace import VIEW_CASES, _grid

    # on "gpu" reshape always gives a view (MLX arrays have no strides); PyTorch documents
    # that reshape may copy or not, and this case pins the cpu copy
    return {k: v for k, v in VIEW_CASES.items() if k != "reshape_copy_leaves_base"}, _grid


@pytest.mark.parametrize("name", list(_view_cases()[0]))
def test_inplace_on_views_gpu_matches_cpu(name: str) -> None:
    cases, grid = _view_cases()
    (x, w), (gx, gw) = grid(lucid), grid(_OnGpu())
    out, gout = cases[name](lucid, x, w), cases[name](_OnGpu(), gx, gw)
    assert gout.device == "gpu"
    assert gout.item() == pytest.approx(out.item(), rel=1e-6)
    out.backward()
    gout.backward()
    np.testing.assert_allclose(gx.grad.numpy(), x.grad.numpy(), rtol=1e-6)


def test_view_registry_stays_small() -> None:
    """Views of a long-lived tensor taken every step do not pile up."""
    reg = copied_views._views
    w = lucid.ones(4, 4, device="gpu")
    for _ in range(1000):
        _ = w.t()[0]
    assert len(reg[id(w._data)][1]) < 200
    n = len(reg)
    del w, _
    assert len(reg) < n  # an array's entry goes with it


# ---- laziness stays inside ---------------------------------------------------------------------


def test_reading_values_needs_no_eval() -> None:
    x = lucid.randn(3, 4, device="gpu")
    y = (x * 2 + 1).relu().sum(1)
    assert isinstance(y.item() if y.numel() == 1 else y.sum().item(), float)
    np.testing.assert_allclose(y.numpy(), np.maximum(x.numpy() * 2 + 1, 0).sum(1), rtol=1e-6)
    assert "device='gpu'" in repr(y) and len(y.tolist()) == 3 and float(y[0]) == y.tolist()[0]
    assert bool((y >= 0).all()) and np.asarray(y).shape == (3,)
    f = (y * 0).numpy()
    f[0] = 5.0  # numpy() hands out a copy: the device array is untouched
    assert (y * 0).tolist() == [0.0, 0.0, 0.0]


def test_seed_gives_same_numbers_on_both_devices() -> None:
    for fn in (lambda d: lucid.randn(3, 2, device=d), lambda d: lucid.rand(4, device=d),
               lambda d: lucid.randint(0, 9, (5,), device=d),
               lambda d: lucid.randperm(6, device=d),
               lambda d: lucid.nn.functional.dropout(lucid.ones(8, device=d), 0.5)):
        lucid.manual_seed(3)
        a = fn("cpu").numpy()
        lucid.manual_seed(3)
        b = fn("gpu").numpy()
        np.testing.assert_array_equal(a, b)


def test_warning_free_ops() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = lucid.tensor([0.0, 1.0, -1.0], device="gpu")
        (x.log() * 0).tolist()
        (x / 0).tolist()
