"""Recurrent layers (RNN, LSTM, GRU and their cells): torch parity with loaded weights (outputs,
final states, every gradient), numpy references of the gate equations, a float64 gradcheck
through a module, packed batches, devices and torch's errors (the recurrence op and its step
kernels: test_rnn_kernels.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from devices import DEVICES

import lucid
import lucid.nn as nn
from lucid.nn.modules.rnn import RNNBase, RNNCellBase
from lucid.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

TOL = {np.float32: 2e-5, np.float64: 1e-11}


def _lucid_like(tm: object, name: str, *args: object, **kw: object) -> nn.Module:
    lm = getattr(nn, name)(*args, **kw)
    sd = {k: lucid.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    lm.load_state_dict(sd)
    return lm


def _t(a: np.ndarray) -> lucid.Tensor:
    return lucid.tensor(a, requires_grad=True)


def _close(a: object, b: object, tol: float) -> None:
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


CASES = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("RNN", {"bidirectional": True, "bias": False}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 3}),
    ("LSTM", {"proj_size": 2, "num_layers": 2, "bidirectional": True, "bias": False}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "bidirectional": True}),
    ("GRU", {"bias": False}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("name,kw", CASES)
def test_layer_matches_torch(torch, name, kw, batch_first, dtype) -> None:
    warnings.simplefilter("ignore")  # torch: projections not supported with oneDNN
    tdt = torch.float32 if dtype is np.float32 else torch.float64
    t_len, b, i, h = 5, 3, 4, 6
    tm = getattr(torch.nn, name)(i, h, batch_first=batch_first, **kw).to(tdt)
    lm = _lucid_like(tm, name, i, h, batch_first=batch_first, **kw)
    if dtype is np.float64:
        lm = lm.double()
    rng = np.random.default_rng(0)
    dirs = 2 if kw.get("bidirectional") else 1
    n = kw.get("num_layers", 1) * dirs
    p = kw.get("proj_size", 0) or h
    x = rng.standard_normal((b, t_len, i) if batch_first else (t_len, b, i)).astype(dtype)
    states = [rng.standard_normal((n, b, p)).astype(dtype)]
    if name == "LSTM":
        states.append(rng.standard_normal((n, b, h)).astype(dtype))
    xt = torch.tensor(x, requires_grad=True)
    st = [torch.tensor(s, requires_grad=True) for s in states]
    xl = _t(x)
    sl = [_t(s) for s in states]
    ot, ht = tm(xt, tuple(st) if name == "LSTM" else st[0])
    ol, hl = lm(xl, tuple(sl) if name == "LSTM" else sl[0])
    ht = list(ht) if name == "LSTM" else [ht]
    hl = list(hl) if name == "LSTM" else [hl]
    tol = TOL[dtype]
    _close(ot, ol, tol)
    for a, c in zip(ht, hl):
        _close(a, c, tol)
    w = [rng.standard_normal(tuple(o.shape)).astype(dtype) for o in [ot, *ht]]
    sum((o * torch.tensor(v)).sum() for o, v in zip([ot, *ht], w)).backward()
    sum((o * lucid.tensor(v)).sum() for o, v in zip([ol, *hl], w)).backward()
    _close(xt.grad, xl.grad, tol * 10)
    for a, c in zip(st, sl):
        _close(a.grad, c.grad, tol * 10)
    for (k, pt), (k2, pl) in zip(tm.named_parameters(), lm.named_parameters()):
        assert k == k2
        _close(pt.grad, pl.grad, tol * 10)


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("name,kw", [("LSTM", {"num_layers": 2, "bidirectional": True,
                                               "proj_size": 2}),
                                     ("GRU", {"bidirectional": True}), ("RNN", {})])
def test_packed_matches_torch(torch, name, kw, enforce_sorted) -> None:
    warnings.simplefilter("ignore")
    tru = torch.nn.utils.rnn
    tm = getattr(torch.nn, name)(3, 4, **kw).double()
    lm = _lucid_like(tm, name, 3, 4, **kw).double()
    lens = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 4, 3))
    dirs = 2 if kw.get("bidirectional") else 1
    n = kw.get("num_layers", 1) * dirs
    h0 = rng.standard_normal((n, 4, kw.get("proj_size", 0) or 4))
    c0 = rng.standard_normal((n, 4, 4))
    xt, h0t = torch.tensor(x, requires_grad=True), torch.tensor(h0, requires_grad=True)
    xl, h0l = _t(x), _t(h0)
    hxt = (h0t, torch.tensor(c0)) if name == "LSTM" else h0t
    hxl = (h0l, lucid.tensor(c0)) if name == "LSTM" else h0l
    ot, ht = tm(tru.pack_padded_sequence(xt, lens, enforce_sorted=enforce_sorted), hxt)
    ol, hl = lm(pack_padded_sequence(xl, lens, enforce_sorted=enforce_sorted), hxl)
    assert isinstance(ol, nn.utils.rnn.PackedSequence)
    _close(ot.data, ol.data, 1e-11)
    assert ot.batch_sizes.tolist() == ol.batch_sizes.tolist()
    if name == "LSTM":
        _close(ht[1], hl[1], 1e-11)
        ht, hl = ht[0], hl[0]
    _close(ht, hl, 1e-11)
    yt, lt = tru.pad_packed_sequence(ot, batch_first=True)
    yl, ll = pad_packed_sequence(ol, batch_first=True)
    assert lt.tolist() == ll.tolist() == lens
    w = rng.standard_normal(tuple(yt.shape))
    ((yt * torch.tensor(w)).sum() + (ht * ht).sum()).backward()
    ((yl * lucid.tensor(w)).sum() + (hl * hl).sum()).backward()
    _close(xt.grad, xl.grad, 1e-10)
    _close(h0t.grad, h0l.grad, 1e-10)
    for pt, pl in zip(tm.parameters(), lm.parameters()):
        _close(pt.grad, pl.grad, 1e-10)


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cells_match_torch(torch, name, dtype) -> None:
    tdt = torch.float32 if dtype is np.float32 else torch.float64
    kw = {"nonlinearity": "relu"} if name == "RNNCell" else {}
    tm = getattr(torch.nn, name)(3, 5, **kw).to(tdt)
    lm = _lucid_like(tm, name, 3, 5, **kw)
    if dtype is np.float64:
        lm = lm.double()
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3)).astype(dtype)
    hs = [rng.standard_normal((4, 5)).astype(dtype) for _ in range(2 if name == "LSTMCell" else 1)]
    xt, xl = torch.tensor(x, requires_grad=True), _t(x)
    ht, hl = [torch.tensor(h, requires_grad=True) for h in hs], [_t(h) for h in hs]
    at = tm(xt, tuple(ht) if name == "LSTMCell" else ht[0])
    al = lm(xl, tuple(hl) if name == "LSTMCell" else hl[0])
    at = torch.cat(at, 1) if name == "LSTMCell" else at
    al = lucid.cat(al, 1) if name == "LSTMCell" else al
    tol = TOL[dtype]
    _close(at, al, tol)
    w = rng.standard_normal(tuple(at.shape)).astype(dtype)
    (at * torch.tensor(w)).sum().backward()
    (al * lucid.tensor(w)).sum().backward()
    _close(xt.grad, xl.grad, tol * 10)
    for a, c in zip(ht, hl):
        _close(a.grad, c.grad, tol * 10)
    for pt, pl in zip(tm.parameters(), lm.parameters()):
        _close(pt.grad, pl.grad, tol * 10)
    # unbatched, no state
    u_t = tm(torch.tensor(x[0]))
    u_l = lm(lucid.tensor(x[0]))
    if name == "LSTMCell":
        _close(u_t[1], u_l[1], tol)
        u_t, u_l = u_t[0], u_l[0]
    _close(u_t, u_l, tol)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_unbatched_and_default_state_match_torch(torch, name) -> None:
    tm = getattr(torch.nn, name)(3, 4, num_layers=2).double()
    lm = _lucid_like(tm, name, 3, 4, num_layers=2).double()
    x = np.random.default_rng(3).standard_normal((6, 3))
    ot, ht = tm(torch.tensor(x))
    ol, hl = lm(lucid.tensor(x))
    _close(ot, ol, 1e-12)
    if name == "LSTM":
        assert tuple(hl[1].shape) == (2, 4)
        _close(ht[1], hl[1], 1e-12)
        ht, hl = ht[0], hl[0]
    _close(ht, hl, 1e-12)


# ---- numpy references (no torch needed) --------------------------------------------------------


def _sig(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _ref(mode: str, x: np.ndarray, p: dict, h: np.ndarray, c: np.ndarray) -> tuple:
    """One layer, one direction, straight from the documented equations."""
    outs = []
    for xt in x:
        gi = xt @ p["weight_ih_l0"].T + p["bias_ih_l0"]
        gh = h @ p["weight_hh_l0"].T + p["bias_hh_l0"]
        if mode == "LSTM":
            i, f, g, o = np.split(gi + gh, 4, axis=1)
            c = _sig(f) * c + _sig(i) * np.tanh(g)
            h = _sig(o) * np.tanh(c)
        elif mode == "GRU":
            ir, iz, in_ = np.split(gi, 3, axis=1)
            hr, hz, hn = np.split(gh, 3, axis=1)
            r, z = _sig(ir + hr), _sig(iz + hz)
            n = np.tanh(in_ + r * hn)
            h = (1 - z) * n + z * h
        else:
            h = np.tanh(gi + gh)
        outs.append(h)
    return np.stack(outs), h, c


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_layers_match_numpy_equations(name) -> None:
    m = getattr(nn, name)(3, 5).double()
    p = {k: v.detach().numpy() for k, v in m.state_dict().items()}
    rng = np.random.default_rng(4)
    x = rng.standard_normal((7, 2, 3))
    h0, c0 = rng.standard_normal((2, 5)), rng.standard_normal((2, 5))
    hx = (lucid.tensor(h0[None]), lucid.tensor(c0[None])) if name == "LSTM" else \
        lucid.tensor(h0[None])
    out, hn = m(lucid.tensor(x), hx)
    r_out, r_h, r_c = _ref(name, x, p, h0, c0)
    np.testing.assert_allclose(out.detach().numpy(), r_out, atol=1e-12)
    if name == "LSTM":
        np.testing.assert_allclose(hn[1].detach().numpy()[0], r_c, atol=1e-12)
        hn = hn[0]
    np.testing.assert_allclose(hn.detach().numpy()[0], r_h, atol=1e-12)


def test_bidirectional_reverse_direction_is_the_reversed_sequence() -> None:
    m = nn.GRU(3, 4, bidirectional=True).double()
    single = nn.GRU(3, 4).double()
    single.load_state_dict({k.replace("_reverse", ""): v for k, v in m.state_dict().items()
                            if k.endswith("_reverse")})
    x = lucid.randn(6, 2, 3, dtype=lucid.float64)
    out, hn = m(x)
    out_r, hn_r = single(x.flip(0))
    np.testing.assert_allclose(out[:, :, 4:].detach().numpy(), out_r.flip(0).detach().numpy(),
                               atol=1e-12)
    np.testing.assert_allclose(hn[1].detach().numpy(), hn_r[0].detach().numpy(), atol=1e-12)


# ---- gradchecks ----------------------------------------------------------------------------------


def test_module_gradcheck_lstm_projection_bidirectional() -> None:
    m = nn.LSTM(2, 3, num_layers=2, bidirectional=True, proj_size=2).double()
    x = lucid.randn(3, 2, 2, dtype=lucid.float64, requires_grad=True)
    h0 = lucid.randn(4, 2, 2, dtype=lucid.float64, requires_grad=True)
    c0 = lucid.randn(4, 2, 3, dtype=lucid.float64, requires_grad=True)

    def f(x, h0, c0, w):
        out, (h, c) = m(x, (h0, c0))
        return out.sum() + (h * h).sum() + (c * w).sum()

    w = lucid.randn(4, 2, 3, dtype=lucid.float64)
    assert lucid.autograd.gradcheck(lambda a, b, c: f(a, b, c, w), [x, h0, c0])


# ---- devices -----------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_devices_agree_with_cpu(device, name) -> None:
    warnings.simplefilter("ignore")
    kw = {"proj_size": 2} if name == "LSTM" else {}
    m = getattr(nn, name)(3, 4, bidirectional=True, **kw)
    x = lucid.randn(5, 2, 3)
    xs = {}
    for dev in ("cpu", device):
        md = m.to(dev)
        xd = x.to(dev).detach().requires_grad_(True)
        out, hn = md(xd)
        hn = hn[1] if name == "LSTM" else hn
        assert out.device.type == dev
        (out.sum() + (hn * hn).sum()).backward()
        xs[dev] = (out.detach().cpu().numpy(), xd.grad.cpu().numpy(),
                   md.weight_hh_l0_reverse.grad.cpu().numpy())
        md.zero_grad()
        m = md.to("cpu")
    for a, b in zip(xs["cpu"], xs[device]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# ---- module surface ----------------------------------------------------------------------------


def test_state_dict_keys_and_shapes_are_torchs() -> None:
    m = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    keys = list(m.state_dict())
    assert keys[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                        "weight_hr_l0"]
    assert keys[5:10] == [k + "_reverse" for k in keys[:5]]
    assert keys[10] == "weight_ih_l1" and len(keys) == 20
    assert tuple(m.weight_ih_l1.shape) == (20, 4)
    assert tuple(m.weight_hh_l0.shape) == (20, 2)
    assert tuple(m.weight_hr_l0_reverse.shape) == (2, 5)
    assert list(nn.GRUCell(2, 3, bias=False).state_dict()) == ["weight_ih", "weight_hh"]
    assert len(m.all_weights) == 4 and m.all_weights[1][0] is m.weight_ih_l0_reverse
    assert m.flatten_parameters() is None
    assert isinstance(m, RNNBase) and isinstance(nn.GRUCell(2, 3), RNNCellBase)


@pytest.mark.parametrize("name,kw", [("GRU", {"num_layers": 3, "bidirectional": True}),
                                     ("LSTM", {"proj_size": 2, "bias": False}),
                                     ("RNN", {"nonlinearity": "relu"}),
                                     ("GRUCell", {}), ("LSTMCell", {})])
def test_state_dict_keys_and_repr_equal_torchs(torch, name, kw) -> None:
    tm = getattr(torch.nn, name)(3, 4, **kw)
    lm = getattr(nn, name)(3, 4, **kw)
    assert list(lm.state_dict()) == list(tm.state_dict())
    for (k, a), b in zip(tm.state_dict().items(), lm.state_dict().values()):
        assert tuple(a.shape) == tuple(b.shape), k
    assert repr(lm) == repr(tm)


def test_initialisation_is_uniform_in_one_over_sqrt_hidden() -> None:
    m = nn.LSTM(8, 16)
    for p in m.parameters():
        a = p.detach().numpy()
        assert np.abs(a).max() <= 0.25 and np.abs(a).max() > 0.2


def test_dropout_between_layers_only_in_training() -> None:
    m = nn.LSTM(3, 8, num_layers=2, dropout=0.5)
    x = lucid.randn(4, 2, 3)
    m.eval()
    a, _ = m(x)
    b, _ = m(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    m.train()
    c, _ = m(x)
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.2)


def test_errors_match_torch() -> None:
    lstm, gru, rnn = nn.LSTM(3, 4), nn.GRU(3, 4), nn.RNN(3, 4)
    x = lucid.randn(5, 2, 3)
    with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size. "
                                           r"Expected 3, got 2"):
        gru(lucid.randn(5, 2, 2))
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D instead"):
        lstm(lucid.randn(1, 5, 2, 3))
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D, got 1D tensor"):
        rnn(lucid.randn(3))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[1, 3, 4\]"):
        gru(x, lucid.zeros(1, 3, 4))
    with pytest.raises(RuntimeError,
                       match=r"Expected hidden\[1\] size \(1, 2, 4\), got \[1, 3, 4\]"):
        lstm(x, (lucid.zeros(1, 2, 4), lucid.zeros(1, 3, 4)))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx should also be 3-D"):
        rnn(x, lucid.zeros(2, 4))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx and cx should also be 2-D"):
        lstm(lucid.randn(5, 3), (lucid.zeros(1, 1, 4), lucid.zeros(1, 1, 4)))
    with pytest.raises(ValueError, match=r"RNN input dtype \(lucid.float64\) does not match"):
        lstm(x.double())
    with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0"):
        lstm(lucid.randn(0, 2, 3))
    assert tuple(gru(lucid.randn(4, 0, 3))[0].shape) == (4, 0, 4)
    with pytest.raises(RuntimeError, match="Input and hidden tensors are not the same dtype"):
        lstm(x, (lucid.zeros(1, 2, 4), lucid.zeros(1, 2, 4, dtype=lucid.float64)))
    with pytest.raises(RuntimeError, match="Input and hidden tensors are not the same dtype"):
        nn.GRUCell(3, 4)(lucid.randn(2, 3), lucid.zeros(2, 4, dtype=lucid.float64))
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'gelu'"):
        nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.LSTM(3, 4, dropout=1.5)
    with pytest.raises(TypeError, match="hidden_size should be of type int, got: float"):
        nn.GRU(3, 4.0)
    cell = nn.LSTMCell(3, 4)
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 5 expected 3"):
        cell(lucid.randn(2, 5))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch "
                                           "size 3"):
        nn.GRUCell(3, 4)(lucid.randn(2, 3), lucid.zeros(3, 4))
    with pytest.raises(RuntimeError, match="hidden1 has inconsistent hidden_size: got 5, "
                                           "expected 4"):
        cell(lucid.randn(2, 3), (lucid.zeros(2, 4), lucid.zeros(2, 5)))
    with pytest.raises(ValueError, match="RNNCell: Expected input to be 1D or 2D, got 3D"):
        nn.RNNCell(3, 4)(lucid.randn(1, 2, 3))


def test_in_place_change_of_a_saved_tensor_is_caught() -> None:
    m = nn.GRU(2, 3)
    out, _ = m(lucid.randn(4, 1, 2, requires_grad=True))
    out.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_lstm_trains() -> None:
    lucid.manual_seed(0)
    m = nn.LSTM(2, 8, batch_first=True)
    head = nn.Linear(8, 1)
    opt = lucid.optim.Adam(list(m.parameters()) + list(head.parameters()), lr=0.05)
    x = lucid.randn(16, 6, 2)
    y = x.sum((1, 2)).unsqueeze(1)
    losses = []
    for _ in range(30):
        out, _ = m(x)
        loss = ((head(out[:, -1]) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.3 * losses[0]


def test_backward_twice_with_retain_graph_accumulates() -> None:
    m = nn.LSTM(2, 3, proj_size=2)
    x = lucid.randn(4, 2, 2, requires_grad=True)
    out, (h, c) = m(x)
    loss = out.sum() + c.sum()
    loss.backward(retain_graph=True)
    g1 = x.grad.numpy().copy()
    w1 = m.weight_hh_l0.grad.numpy().copy()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * g1, rtol=1e-6)
    np.testing.assert_allclose(m.weight_hh_l0.grad.numpy(), 2 * w1, rtol=1e-6)


def test_half_precision_runs_close_to_float32() -> None:
    m = nn.GRU(3, 4)
    x = lucid.randn(5, 2, 3)
    ref, _ = m(x)
    out, _ = m.half()(x.half())
    assert out.dtype == lucid.float16
    np.testing.assert_allclose(out.float().detach().numpy(), ref.detach().numpy(), atol=1e-2)
