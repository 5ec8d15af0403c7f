"""The whole-sequence LSTM, GRU and RNN kernels (``kernels.rnn_seq``) against the per-step
numpy reference, serial and split over threads, and through ``nn.LSTM`` / ``nn.GRU`` /
``nn.RNN`` against the "numpy" backend."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.backend import _rnn_loop, _rnn_ref
from lucid.kernels import rnn as K
from lucid.kernels import rnn_seq as S


def _inputs(rng, t, b, h, dtype, gates):
    return (rng.standard_normal((t, b, gates * h)).astype(dtype),
            rng.standard_normal((b, h)).astype(dtype),
            rng.standard_normal((b, h)).astype(dtype) if gates == 4 else None,
            (rng.standard_normal((gates * h, h)) * 0.3).astype(dtype),
            rng.standard_normal(gates * h).astype(dtype))


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
@pytest.mark.parametrize("nt", [1, 2, 3])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"])
@pytest.mark.parametrize("b_len", [3, 9, S.SMALL_ROWS])  # rows of 4 + a rest; BLAS's path
@pytest.mark.parametrize("abt", [True, False])  # small batches' products in _abt, or BLAS
def test_matches_the_step_loop(monkeypatch, dtype, tol, nt, reverse, bias, mode, b_len,
                               abt) -> None:
    rng = np.random.default_rng(nt + 2 * reverse)
    t_len, hsz = 6, 6
    gx, h0, c0, w, b = _inputs(rng, t_len, b_len, hsz, dtype, S.GATES[mode])
    b = b if bias else None
    y0, s0 = _rnn_loop.forward(_rnn_ref, mode, gx, h0, c0, w, b, None, None, reverse)
    monkeypatch.setattr(S, "split", lambda *a: nt)
    monkeypatch.setattr(S, "abt_rows", lambda: S.SMALL_ROWS if abt else 0)
    y1, s1 = _rnn_loop.forward(K, mode, gx, h0, c0, w, b, None, None, reverse, seq=S)
    width = 4 * hsz // nt if S.GATES[mode] > 1 else 0  # the RNN's backward reads hs
    assert s1.seq is S and s1.acts.shape == (t_len, nt, b_len, width)
    np.testing.assert_allclose(y1, y0, rtol=tol, atol=tol)
    dy = rng.standard_normal(y0.shape).astype(dtype)
    g0 = _rnn_loop.backward(_rnn_ref, s0, dy)
    g1 = _rnn_loop.backward(K, s1, dy)
    for name, a, c in zip(("dgx", "dh0", "dc0", "dw_hh", "db_hh", "dw_hr"), g0, g1):
        if a is None:
            assert c is None, name
        else:
            np.testing.assert_allclose(c, a, rtol=tol, atol=tol, err_msg=name)


@pytest.mark.parametrize("m, k, n", [(1, 5, 3), (4, 7, 2), (7, 16, 5), (20, 200, 400),
                                     (21, 33, 9), (0, 4, 4), (3, 0, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_row_product_matches_numpy(rng, m, k, n, dtype) -> None:
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((n, k)).astype(dtype)
    c = np.full((m, n), np.nan, dtype)
    S._abt(a, b, c)
    want = a.astype(np.float64) @ b.astype(np.float64).T
    tol = 1e-12 if dtype == np.float64 else 1e-5 * max(k, 1) ** 0.5
    np.testing.assert_allclose(c, want, rtol=tol, atol=tol)


def test_gate_permutation_and_the_gather_scatter_pair() -> None:
    b = np.arange(16, dtype=np.float64)
    p = S.permute_gates(b, 2, 4)
    assert p.shape == (2, 8)
    # thread 1's block holds units 2..3 of each gate (i, f, g, o blocks of 4 units)
    np.testing.assert_array_equal(p[1], b[[2, 3, 6, 7, 10, 11, 14, 15]])
    np.testing.assert_array_equal(S.permute_gates(b[:12], 2, 3)[1], b[[2, 3, 6, 7, 10, 11]])
    a = np.arange(3 * 12, dtype=np.float64).reshape(3, 12)  # 3 rows, three gates of 4 units
    blk = np.full((3, 6), np.nan)
    S._columns(blk, a, 2, 3, True)
    np.testing.assert_array_equal(blk, a[:, [2, 3, 6, 7, 10, 11]])
    back = np.zeros_like(a)
    S._columns(blk, back, 2, 3, False)
    np.testing.assert_array_equal(back[:, [2, 3, 6, 7, 10, 11]], blk)
    np.testing.assert_array_equal(back[:, [0, 1, 4, 5, 8, 9]], 0)



@pytest.mark.parametrize("gates", [3, 4])
@pytest.mark.parametrize("nt", [1, 2, 3])
@pytest.mark.parametrize("transpose", [False, True])
def test_weight_block_of_each_thread(gates, nt, transpose) -> None:
    """Thread k's rows of every gate of w_hh (units k*Hk..), as they are or transposed, with
    tiles of 16 cut at both edges (Hk = 18, H = 37)."""
    hk, h = 18, 37
    w = np.arange(gates * nt * hk * h, dtype=np.float32).reshape(gates * nt * hk, h)
    for k in range(nt):
        rows = [g * nt * hk + k * hk + i for g in range(gates) for i in range(hk)]
        blk = np.full((h, gates * hk) if transpose else (gates * hk, h), np.nan, np.float32)
        S._block_of(w, k, gates, blk, transpose)
        np.testing.assert_array_equal(blk, w[rows].T if transpose else w[rows])

def test_split_needs_divisible_units(monkeypatch) -> None:
    monkeypatch.setattr(S.numba, "get_num_threads", lambda: 2)
    monkeypatch.setattr(S, "use_parallel", lambda n, kind: True)
    assert S.split(20, 200, 200) == (2 if S._BLAS.available() else 1)
    assert S.split(20, 201, 200) == 1
    monkeypatch.setattr(S, "use_parallel", lambda n, kind: False)
    assert S.split(20, 200, 200) == 1


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN", "RNN_RELU"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_module_matches_the_numpy_backend(monkeypatch, bidirectional, cls) -> None:
    monkeypatch.setattr(S, "split", lambda b, h, p, g: 2 if h % 2 == 0 else 1)
    calls = []
    fwd = S.sequence_forward
    monkeypatch.setattr(S, "sequence_forward", lambda *a: calls.append(a[-1]) or fwd(*a))
    lucid.manual_seed(0)
    kw = {"nonlinearity": "relu"} if cls == "RNN_RELU" else {}
    m = getattr(lucid.nn, cls.split("_")[0])(5, 8, num_layers=2, bidirectional=bidirectional,
                                             **kw).double()
    x = np.random.default_rng(0).standard_normal((7, 4, 5))
    outs = {}
    for dev in ("cpu", "numpy"):
        m.zero_grad()
        mm = m.to(dev)
        xt = lucid.tensor(x, device=dev, requires_grad=True)
        y, hc = mm(xt)
        h, c = hc if cls == "LSTM" else (hc, hc)
        (y.square().sum() + h.sum() + 2 * c.sum()).backward()
        outs[dev] = [v.detach().numpy() for v in (y, h, c)] + [xt.grad.numpy()] + [
            p.grad.numpy() for p in mm.parameters()]
        m = mm
    assert calls == [2] * (4 if bidirectional else 2)  # every cpu layer ran the kernel
    for a, b in zip(outs["cpu"], outs["numpy"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
