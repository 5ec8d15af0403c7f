"""torch's smaller top-level names: ``can_cast`` (every dtype pair against torch),
``typename``, ``trapz`` and ``cumulative_trapezoid`` (values and gradients)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid

NAN, INF = float("nan"), float("inf")
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]


def test_can_cast_matches_torch_for_every_pair(torch: Any) -> None:
    for a in DTYPES:
        for b in DTYPES:
            assert lucid.can_cast(getattr(lucid, a), getattr(lucid, b)) == \
                torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)


def test_typename() -> None:
    assert lucid.typename(lucid.zeros(2)) == "lucid.FloatTensor"
    assert lucid.typename(lucid.zeros(2, dtype=lucid.int64)) == "lucid.LongTensor"
    assert lucid.typename(lucid.nn.Linear(2, 2)) == "lucid.nn.modules.linear.Linear"
    assert lucid.typename(lucid.nn.Linear) == "lucid.nn.modules.linear.Linear"
    assert lucid.typename(3) == "int" and lucid.typename(int) == "int"


@pytest.mark.parametrize("kw", [{}, {"dx": 0.5}, {"x": "x"}, {"x": "x2", "dim": 0}])
def test_cumulative_trapezoid_and_trapz_match_torch(torch: Any, kw: dict) -> None:
    rng = np.random.default_rng(0)
    y = rng.standard_normal((4, 5))
    xs = {"x": np.sort(rng.standard_normal(5)), "x2": np.sort(rng.standard_normal((4, 5)), 0)}
    for name in ("cumulative_trapezoid", "trapz"):
        ly, ty = lucid.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
        lk = {k: lucid.tensor(xs[v]) if k == "x" else v for k, v in kw.items()}
        tk = {k: torch.tensor(xs[v]) if k == "x" else v for k, v in kw.items()}
        lo, to = getattr(lucid, name)(ly, **lk), getattr(torch, name)(ty, **tk)
        np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-12)
        w = rng.standard_normal(tuple(to.shape))
        (lo * lucid.tensor(w)).sum().backward()
        (to * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(ly.grad.numpy(), ty.grad.numpy(), rtol=1e-12)


def test_cumulative_trapezoid_of_nothing_and_its_errors() -> None:
    assert lucid.cumulative_trapezoid(lucid.zeros(3, 0)).shape == (3, 0)
    assert lucid.cumulative_trapezoid(lucid.ones(1)).shape == (0,)
    with pytest.raises(TypeError, match="x and dx cannot both be given"):
        lucid.cumulative_trapezoid(lucid.ones(3), lucid.ones(3), dx=1.0)


def _both(torch: Any, fn: Any) -> None:
    got, want = fn(lucid), fn(torch)
    for g, w in zip(got, want):
        if isinstance(g, (list, tuple)):
            assert [np.asarray(x).tolist() for x in g] == [np.asarray(x).tolist() for x in w]
        else:
            np.testing.assert_allclose(np.asarray(g, dtype=float), np.asarray(w, dtype=float),
                                       rtol=1e-6, atol=1e-7)


def test_range_frombuffer_nonzero_static_diagonal_scatter(torch: Any) -> None:
    def run(m: Any) -> list:
        with pytest.warns(UserWarning, match="range is deprecated"):
            r = m.range(1, 4)
        buf = bytearray(b"\x01\x02\x03\x04\x05\x06")
        return [r.numpy(), m.range(0, 1, 0.25).numpy(),
                m.frombuffer(buf, dtype=m.int16).numpy(),
                m.frombuffer(buf, dtype=m.uint8, count=2, offset=3).numpy(),
                m.nonzero_static(m.tensor([[0, 3], [0, 5]]), size=3).numpy(),
                m.nonzero_static(m.tensor([1, 1, 1]), size=2, fill_value=9).numpy(),
                m.diagonal_scatter(m.zeros(3, 4), m.arange(1.0, 4.0), 1).numpy(),
                m.diagonal_scatter(m.zeros(3, 4), m.ones(2), -1).numpy()]
    _both(torch, run)


def test_frombuffer_shares_memory() -> None:
    buf = bytearray(4)
    t = lucid.frombuffer(buf, dtype=lucid.uint8)
    t[1] = 7
    assert buf[1] == 7
    with pytest.raises(ValueError, match="must not be greater than actual buffer length"):
        lucid.frombuffer(buf, dtype=lucid.int32, count=2)


@pytest.mark.parametrize("kw", [{}, {"spacing": 2.0}, {"edge_order": 2}, {"dim": 1},
                                {"spacing": [0.5, 2.0]}, {"coords": True, "edge_order": 2},
                                {"coords": True}])
def test_gradient_values_and_backward_match_torch(torch: Any, kw: dict) -> None:
    x = np.array([[1.0, 4, 9, 16], [2, 3, 5, 9], [0, 1, 1, 2]])
    outs = []
    for m in (lucid, torch):
        t = m.tensor(x, requires_grad=True)
        k = dict(kw)
        if k.pop("coords", False):
            k["spacing"] = [m.tensor([0.0, 1.0, 3.0]), m.tensor([0.0, 1.0, 3.0, 4.0])]
        gs = m.gradient(t, **k)
        sum((g * (i + 1)).sum() for i, g in enumerate(gs)).backward()
        outs.append(([g.detach().numpy() for g in gs], t.grad.numpy()))
    tol = 1e-6 if "coords" in kw else 1e-12  # (float32 coordinates: torch's weights round)
    for g, w in zip(outs[0][0], outs[1][0]):
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=tol, atol=tol)


def test_histogramdd_and_mvlgamma_match_torch(torch: Any) -> None:
    pts = np.random.default_rng(1).random((20, 2))
    for bins in ([2, 3], 4):
        lh = lucid.histogramdd(lucid.tensor(pts), bins=bins, range=[0.0, 1.0, 0.0, 1.0])
        th = torch.histogramdd(torch.tensor(pts), bins=bins, range=[0.0, 1.0, 0.0, 1.0])
        np.testing.assert_array_equal(lh.hist.numpy(), th.hist.numpy())
        for a, b in zip(lh.bin_edges, th.bin_edges):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    x = np.array([2.5, 3.0, 7.25])
    lx, tx = lucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    lo, to = lucid.mvlgamma(lx, 3), torch.mvlgamma(tx, 3)
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-12)
    lo.sum().backward()
    to.sum().backward()
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-10)
    with pytest.raises(RuntimeError, match=r"greater than \(p-1\)/2"):
        lucid.mvlgamma(lucid.tensor([0.5]), 3)


def test_shifts_match_torch(torch: Any) -> None:
    def run(m: Any) -> list:
        a = m.tensor([1, 2, 8, -8], dtype=m.int32)
        s = m.tensor([1, 31, 40, 2], dtype=m.int32)
        b = m.tensor([-8, 8, -3], dtype=m.int8)
        c = a.clone()
        c <<= 1
        return [m.bitwise_left_shift(a, s).numpy(), (a >> s).numpy(),
                m.bitwise_right_shift(b, m.tensor([1, 9, 20], dtype=m.int8)).numpy(),
                (1 << m.tensor([1, 2])).numpy(), (m.tensor([4, 9]) >> 1).numpy(), c.numpy(),
                a.bitwise_left_shift(2).numpy()]
    _both(torch, run)
    with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
        lucid.bitwise_left_shift(lucid.ones(2), 1)


def test_tensor_methods_torch_keeps(torch: Any) -> None:
    def run(m: Any) -> list:
        y = m.tensor([1.0, 2.0])
        y.apply_(lambda v: v * 3)
        y.map_(m.tensor([1.0, 1.0]), lambda a, b: a + b)
        w = m.arange(4.0)
        w.resize_(2)
        v = m.arange(6.0).reshape(2, 3).t()
        v.resize_(6)
        x = m.tensor([0.5, 2.0], dtype=m.float64)
        x.float_power_(2)
        q = m.tensor([1 + 2j])
        q.conj_physical_()
        n = m.tensor([2.5, 3.0], dtype=m.float64)
        n.mvlgamma_(2)
        return [y.numpy(), w.numpy(), v.numpy(), x.numpy(), q.numpy().real, q.numpy().imag,
                n.numpy(), m.arange(6.0).resize_as_(m.ones(2, 2)).shape,
                m.ones(2).is_distributed(), m.ones(3, 2).new_empty_strided((2, 3), (1, 2)).stride(),
                [t.shape for t in m.arange(5).unsafe_split_with_sizes([2, 3])]]
    _both(torch, run)
    assert lucid.ones(2).name is None
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        lucid.ones(2, requires_grad=True).resize_(3)
    with pytest.raises(RuntimeError, match="Can't call apply_"):
        lucid.ones(2, requires_grad=True).apply_(abs)
    with pytest.raises(RuntimeError, match="float_power_ has dtype Float"):
        lucid.ones(2).float_power_(2)


def test_vmap_matches_a_loop_and_torch(torch: Any) -> None:
    x = np.random.default_rng(2).standard_normal((4, 3))
    for m in (lucid, torch):
        t = m.tensor(x, requires_grad=True)
        out = m.vmap(lambda v, w: (v * w).sum(), in_dims=(0, None))(t, m.tensor(2.0))
        out.sum().backward()
        np.testing.assert_allclose(out.detach().numpy(), 2 * x.sum(1), rtol=1e-12)
        np.testing.assert_allclose(t.grad.numpy(), np.full_like(x, 2.0))
        a, b = m.vmap(lambda v: (v + 1, v.sum()), in_dims=1, out_dims=(1, 0))(m.tensor(x))
        assert tuple(a.shape) == (4, 3) and tuple(b.shape) == (3,)
        with pytest.raises(RuntimeError, match="randomness error mode"):
            m.vmap(lambda v, m=m: v + m.randn(()))(m.ones(3))
        same = m.vmap(lambda v, m=m: v + m.randn(()), randomness="same")(m.zeros(3))
        assert bool((same == same[0]).all())
        with pytest.raises(ValueError, match="same size in the mapped dimension"):
            m.vmap(m.add)(m.ones(2), m.ones(3))


def test_switches_and_rng_fork() -> None:
    assert not lucid.is_inference_mode_enabled()
    with lucid.inference_mode():
        assert lucid.is_inference_mode_enabled()
        with lucid.inference_mode(False):
            assert not lucid.is_inference_mode_enabled()
    lucid.manual_seed(3)
    with lucid.random.fork_rng():
        lucid.randn(5)
    after = lucid.randn(2)
    lucid.manual_seed(3)
    np.testing.assert_array_equal(after.numpy(), lucid.randn(2).numpy())
    lucid.set_deterministic_debug_mode("warn")
    try:
        assert lucid.get_deterministic_debug_mode() == 1
        assert lucid.is_deterministic_algorithms_warn_only_enabled()
    finally:
        lucid.set_deterministic_debug_mode(0)
    assert lucid.get_deterministic_debug_mode() == 0
    with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
        lucid.set_deterministic_debug_mode("loud")
    assert lucid.get_autocast_cpu_dtype() is lucid.bfloat16
    with lucid.autocast("cpu"):
        assert lucid.is_autocast_cpu_enabled()
    assert issubclass(lucid.OutOfMemoryError, RuntimeError)
    assert lucid.legacy_contiguous_format is lucid.contiguous_format
    assert isinstance(lucid.ones(2, dtype=lucid.bfloat16), lucid.BFloat16Tensor)
    before = lucid.get_default_dtype()
    try:
        with pytest.warns(UserWarning, match="set_default_tensor_type"):
            lucid.set_default_tensor_type("torch.DoubleTensor")
        assert lucid.get_default_dtype() is lucid.float64
    finally:
        lucid.set_default_dtype(before)


def test_binomial_and_older_norms(torch: Any) -> None:
    lucid.manual_seed(0)
    draws = lucid.binomial(lucid.full((20000,), 10.0), lucid.full((20000,), 0.3)).numpy()
    assert abs(draws.mean() - 3.0) < 0.05 and abs(draws.var() - 2.1) < 0.1
    assert set(np.unique(draws)) <= set(range(11))
    odd = lucid.binomial(lucid.tensor([0.5, 1.5, -1.0, NAN, INF, 2.7]), lucid.full((6,), 0.5))
    assert odd[0].item() == 0 and odd[1].item() in (0, 1) and odd[2].item() == 0
    assert np.isnan(odd[3].item()) and odd[4].item() == INF and odd[5].item() <= 2
    with pytest.raises(RuntimeError, match="floating-point dtypes for count"):
        lucid.binomial(lucid.ones(2, dtype=lucid.int64), lucid.ones(2))
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    for args in (([1, 2],), ([0], True)):
        np.testing.assert_allclose(lucid.frobenius_norm(lucid.tensor(x), *args).numpy(),
                                   torch.frobenius_norm(torch.tensor(x), *args).numpy(),
                                   rtol=1e-12)
    for args in ((), (True,), ([0, 2], True)):
        np.testing.assert_allclose(lucid.nuclear_norm(lucid.tensor(x), *args).numpy(),
                                   torch.nuclear_norm(torch.tensor(x), *args).numpy(),
                                   rtol=1e-10)
