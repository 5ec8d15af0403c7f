"""The housekeeping surface PyTorch scripts touch: lucid.accelerator, lucid.cuda, lucid.mps,
lucid.backends, matmul precision, lucid.version, lucid.compile / jit / onnx, nn.parallel,
torch's module paths and lucid.multiprocessing."""

from __future__ import annotations

import importlib.util
import multiprocessing as mp
import warnings

import numpy as np
import pytest

import lucid
import lucid.multiprocessing as lmp
import lucid.nn as nn

HAS_MLX = importlib.util.find_spec("mlx") is not None
pytestmark = pytest.mark.filterwarnings("ignore:lucid. no Metal or CUDA device")


# ---- accelerator / cuda / mps --------------------------------------------------------------

def test_accelerator_answers_for_gpu():
    acc = lucid.accelerator
    assert acc.is_available() == lucid.cuda.is_available() == lucid.gpu.is_available()
    assert acc.device_count() == lucid.cuda.device_count()
    if not HAS_MLX:
        assert acc.current_accelerator() is None
        with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
            acc.current_device_index()
        return
    assert acc.current_accelerator() == lucid.device("gpu")
    assert isinstance(acc.current_accelerator(), lucid.device)
    assert (acc.current_accelerator(check_available=True) is None) == (not acc.is_available())
    assert acc.current_device_index() == acc.current_device_idx() == 0
    acc.set_device_index(0)
    acc.set_device_idx("cuda:0")
    acc.set_device_index(-1)  # a no-op, as in PyTorch
    with pytest.raises(RuntimeError, match="Invalid device index 1"):
        acc.set_device_index(1)
    with pytest.raises(ValueError, match="cpu doesn't match the current accelerator gpu"):
        acc.set_device_index("cpu")
    with acc.device_index(0):
        assert acc.current_device_index() == 0
    with acc.device_index(None):
        pass
    acc.synchronize()
    acc.empty_cache()
    assert acc.memory_reserved() >= acc.memory_allocated() >= 0
    acc.reset_peak_memory_stats()
    assert acc.max_memory_allocated() >= 0


def test_accelerator_device_moves_tensors():
    if not HAS_MLX:
        pytest.skip("mlx is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = lucid.ones(3).to(lucid.accelerator.current_accelerator())
    assert x.device == "gpu" and x.sum().item() == 3.0


def test_cuda_names(torch):
    c = lucid.cuda
    for name in ("is_available", "set_device", "current_device", "device_count",
                 "manual_seed", "manual_seed_all", "synchronize", "empty_cache",
                 "memory_allocated", "max_memory_allocated", "memory_reserved",
                 "reset_peak_memory_stats", "get_device_name", "get_device_properties",
                 "is_bf16_supported"):
        assert callable(getattr(c, name)) and hasattr(torch.cuda, name), name
    assert c.is_bf16_supported() is c.is_available()  # MLX holds bfloat16 natively
    assert c.is_bf16_supported(including_emulation=False) is c.is_available()
    assert c.manual_seed(1) is None and c.manual_seed_all(1) is None
    assert c.is_initialized() == c.is_available()
    if not HAS_MLX:
        return
    c.set_device(0)
    c.set_device("cuda")
    c.set_device(lucid.device("gpu", 0))
    with pytest.raises(RuntimeError, match="Invalid device ordinal 2"):
        c.set_device(2)
    with pytest.raises(ValueError, match="Expected a gpu device"):
        c.set_device("cpu")
    props = c.get_device_properties(0)
    assert "MLX" in props.name and props.total_memory >= 0 and props.major == 0
    assert "MLX" in repr(props)
    assert c.memory_reserved() >= c.memory_allocated()


def test_mps_flags():
    assert lucid.mps.is_available() == lucid.backends.mps.is_available()
    assert lucid.mps.device_count() == int(lucid.mps.is_available())
    lucid.mps.synchronize()
    lucid.mps.empty_cache()
    assert lucid.mps.manual_seed(0) is None


# ---- backends, precision, version -----------------------------------------------------------

def test_backends_flags_match_torch_defaults(torch):
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(lucid.backends.cudnn, name) == getattr(torch.backends.cudnn, name)
    assert lucid.backends.cudnn.is_available() is False
    assert lucid.backends.cudnn.version() is None
    assert lucid.backends.openmp.is_available() in (True, False)
    assert lucid.backends.cuda.matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32
    assert lucid.get_float32_matmul_precision() == torch.get_float32_matmul_precision()


def test_cudnn_flags_are_settable_and_restored():
    c = lucid.backends.cudnn
    c.benchmark = True
    try:
        assert lucid.backends.cudnn.benchmark is True
        with c.flags(enabled=False, deterministic=True):
            assert c.enabled is False and c.deterministic is True
        assert c.enabled is True and c.deterministic is False and c.benchmark is True
    finally:
        c.benchmark = False


def test_float32_matmul_precision_links_allow_tf32():
    m = lucid.backends.cuda.matmul
    try:
        m.allow_tf32 = True
        assert lucid.get_float32_matmul_precision() == "high"
        lucid.set_float32_matmul_precision("medium")
        assert m.allow_tf32 is True
        lucid.set_float32_matmul_precision("highest")
        assert m.allow_tf32 is False
        with pytest.warns(UserWarning, match="foo is not one of 'highest', 'high', or "
                          "'medium'"):
            lucid.set_float32_matmul_precision("foo")
        assert lucid.get_float32_matmul_precision() == "highest"
        with pytest.raises(AttributeError, match="Unknown attribute foo"):
            m.foo = 1
        m.allow_fp16_reduced_precision_reduction = False
        assert m.allow_fp16_reduced_precision_reduction is False
        # the setting never changes results: float32 stays float32
        lucid.set_float32_matmul_precision("medium")
        a = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
        out = (lucid.tensor(a) @ lucid.tensor(a)).numpy()
        np.testing.assert_allclose(out, a.astype(np.float64) @ a, rtol=1e-5, atol=1e-5)
    finally:
        lucid.set_float32_matmul_precision("highest")
        m.allow_fp16_reduced_precision_reduction = True


def test_version_and_config():
    assert lucid.version.__version__ == lucid.__version__
    assert lucid.version.cuda is None and isinstance(lucid.version.git_version, str)
    assert "numba" in lucid.__config__.show()
    assert "threads" in lucid.__config__.parallel_info()


# ---- compile / jit / onnx -------------------------------------------------------------------

def _net():
    lucid.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def test_compile_returns_the_model_with_the_same_results():
    net = _net()
    x = lucid.randn(3, 4)
    c = lucid.compile(net)
    assert c is net and list(c.state_dict()) == list(net.state_dict())
    assert lucid.equal(c(x), net(x))
    deco = lucid.compile(mode="max-autotune")

    def f(a):
        return a.relu() * 2

    assert deco(f) is f and lucid.compile(f, backend="eager", dynamic=True) is f
    # PyTorch 2.13's messages, verbatim
    with pytest.raises(RuntimeError, match="^Unrecognized mode=foo, should be one of: default, "
                       "lite, reduce-overhead, max-autotune-no-cudagraphs, max-autotune$"):
        lucid.compile(f, mode="foo")
    with pytest.raises(RuntimeError, match="^Either mode or options can be specified, but both "
                       "can't be specified at the same time.$"):
        lucid.compile(f, mode="default", options={"a": 1})
    with pytest.raises(AssertionError, match="A callable function is expected"):
        lucid.compile(3)
    assert lucid.compiler.is_compiling() is False and lucid.compiler.disable(f) is f


def test_jit_passthroughs():
    net = _net()
    x = lucid.randn(2, 4)
    assert lucid.jit.script(net) is net
    traced = lucid.jit.trace(net, example_inputs=(x,))
    assert lucid.equal(traced(x), net(x)) and traced(lucid.randn(5, 4)).shape == (5, 2)

    class M(nn.Module):
        @lucid.jit.ignore
        def helper(self):
            return 1

        @lucid.jit.unused
        def other(self):
            return 2

        @lucid.jit.export
        def exported(self):
            return 3

        @lucid.jit.ignore(drop=True)
        def dropped(self):
            return 4

    m = M()
    assert (m.helper(), m.other(), m.exported(), m.dropped()) == (1, 2, 3, 4)
    assert lucid.jit.is_scripting() is False and lucid.jit.annotate(int, 5) == 5
    with pytest.raises(TypeError, match="expects a module or function"):
        lucid.jit.trace(3)


def test_onnx_export_names_the_alternative(tmp_path):
    with pytest.raises(NotImplementedError, match=r"state_dict.*safetensors"):
        lucid.onnx.export(_net(), (lucid.randn(1, 4),), str(tmp_path / "m.onnx"))
    assert lucid.onnx.is_in_onnx_export() is False


# ---- nn.parallel and module paths -----------------------------------------------------------

def test_data_parallel_is_a_pass_through(torch):
    net = _net()
    dp = nn.DataParallel(net)
    x = lucid.randn(6, 4)
    assert lucid.equal(dp(x), net(x)) and dp.module is net
    assert isinstance(nn.parallel.DataParallel(net), nn.Module)
    tnet = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    assert list(dp.state_dict()) == list(torch.nn.DataParallel(tnet).state_dict())
    assert lucid.equal(nn.parallel.data_parallel(net, x), net(x))
    with pytest.raises(ValueError, match="at most one device"):
        nn.DataParallel(net, device_ids=[0, 1])
    (dp(x) ** 2).sum().backward()
    assert net[0].weight.grad is not None


def test_distributed_data_parallel_needs_a_process_group():
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        nn.parallel.DistributedDataParallel(_net())


def test_torch_module_paths():
    from lucid.nn.modules.activation import MultiheadAttention
    from lucid.nn.modules.linear import NonDynamicallyQuantizableLinear
    from lucid.nn.modules.loss import _Loss
    from lucid.nn.modules.module import Module

    assert MultiheadAttention is nn.MultiheadAttention and Module is nn.Module
    assert issubclass(NonDynamicallyQuantizableLinear, nn.Linear)
    assert issubclass(nn.MSELoss, _Loss)
    mha = nn.MultiheadAttention(8, 2)
    assert type(mha.out_proj) is NonDynamicallyQuantizableLinear


# ---- multiprocessing ------------------------------------------------------------------------

def _square_into(rank, q):
    q.put((rank, (lucid.full((2,), float(rank)) ** 2)))


def _fail(rank):
    raise ValueError("boom in child")


def test_multiprocessing_reexports():
    for name in ("Process", "Queue", "Pool", "Pipe", "cpu_count", "get_start_method",
                 "set_start_method", "get_context"):
        assert getattr(lmp, name) is getattr(mp, name)
    assert lmp.get_sharing_strategy() in lmp.get_all_sharing_strategies()


def _spawn_bounded(fn, args=(), nprocs=2, limit=60.0):
    """spawn without join, then join with a deadline so a hung child fails the test fast
    (forkserver with lucid preloaded: children start in about a second)."""
    mp.get_context("forkserver").set_forkserver_preload(["lucid"])
    ctx = lmp.spawn(fn, args=args, nprocs=nprocs, join=False, start_method="forkserver")
    try:
        assert ctx.join(timeout=limit), "spawned processes did not finish in time"
    finally:
        for p in ctx.processes:
            if p.is_alive():
                p.kill()


def test_spawn_passes_tensors_and_reports_failures():
    q = lmp.get_context("forkserver").SimpleQueue()
    _spawn_bounded(_square_into, args=(q,))
    got = dict(q.get() for _ in range(2))
    assert sorted(got) == [0, 1] and got[1].tolist() == [1.0, 1.0]
    with pytest.raises(lmp.ProcessRaisedException, match="(?s)Process 0 terminated.*boom"):
        _spawn_bounded(_fail, nprocs=1)


# ---- lucid.cuda.amp -------------------------------------------------------------------------

def test_cuda_amp_spellings_warn_and_forward_to_amp(torch):
    from lucid.cuda.amp import GradScaler, autocast

    with pytest.warns(FutureWarning, match=r"`lucid.cuda.amp.autocast\(args...\)` is "
                      "deprecated. Please use `lucid.amp.autocast\\('cuda', args...\\)`"):
        ac = autocast()
    assert isinstance(ac, lucid.amp.autocast) and ac.fast_dtype is lucid.float16
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = GradScaler(init_scale=8.0)
        tref = torch.cuda.amp.GradScaler(init_scale=8.0)
    assert isinstance(scaler, lucid.amp.GradScaler)
    assert scaler.is_enabled() == lucid.cuda.is_available()
    assert tref.is_enabled() == torch.cuda.is_available()
