"""torch's functional recurrent ops (``lstm``, ``gru``, ``rnn_tanh``, ``rnn_relu`` over a flat
parameter list, padded and packed, and the four ``*_cell`` steps): outputs, final states and
every gradient against torch in float64 with the same weights, and torch's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from devices import DEVICES

import lucid
from lucid.ops import rnn_functional as R

TOL = 1e-10
MODES = {"lstm": ("LSTM", {}), "gru": ("GRU", {}), "rnn_tanh": ("RNN", {}),
         "rnn_relu": ("RNN", {"nonlinearity": "relu"})}


def _lt(t: object) -> lucid.Tensor:
    return lucid.tensor(t.detach().numpy().copy(), requires_grad=True)  # type: ignore[attr-defined]


def _close(a: object, b: object) -> None:
    a = np.asarray(a.detach().numpy())  # type: ignore[attr-defined]
    b = np.asarray(b.detach().numpy())  # type: ignore[attr-defined]
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=TOL, atol=TOL)


def _setup(torch: object, name: str, t_len: int, batch: int, inp: int, hid: int, layers: int,
           bidir: bool, bias: bool, proj: int = 0, batch_first: bool = False) -> tuple:
    """A torch layer's flat weights, an input and a hidden state, with lucid twins."""
    torch.manual_seed(0)  # type: ignore[attr-defined]
    cls, kw = MODES[name]
    if proj:
        kw = {**kw, "proj_size": proj}
    m = getattr(torch.nn, cls)(inp, hid, num_layers=layers, bidirectional=bidir, bias=bias,
                               dtype=torch.float64, **kw)  # type: ignore[attr-defined]
    tw = [w.detach().clone().requires_grad_(True) for w in m._flat_weights]
    dirs = 2 if bidir else 1
    shape = (batch, t_len, inp) if batch_first else (t_len, batch, inp)
    tx = torch.randn(*shape, dtype=torch.float64, requires_grad=True)  # type: ignore
    real = proj or hid
    th = torch.randn(layers * dirs, batch, real, dtype=torch.float64,  # type: ignore
                     requires_grad=True)
    tc = torch.randn(layers * dirs, batch, hid, dtype=torch.float64,  # type: ignore
                     requires_grad=True)
    thx = (th, tc) if name == "lstm" else th
    lhx = (_lt(th), _lt(tc)) if name == "lstm" else _lt(th)
    return tw, tx, thx, [_lt(w) for w in tw], _lt(tx), lhx


def _hidden_list(hx: object) -> list:
    return list(hx) if isinstance(hx, tuple) else [hx]


def _compare(torch: object, t_out: tuple, l_out: tuple, t_leaves: list, l_leaves: list) -> None:
    assert len(t_out) == len(l_out)
    for a, b in zip(l_out, t_out):
        _close(a, b)
    rng = np.random.default_rng(1)
    gs = [rng.standard_normal(tuple(o.shape)) for o in t_out]
    t_loss = sum((o * torch.from_numpy(g)).sum() for o, g in zip(t_out, gs))  # type: ignore
    l_loss = sum((o * lucid.tensor(g)).sum() for o, g in zip(l_out, gs))
    t_grads = torch.autograd.grad(t_loss, t_leaves)  # type: ignore[attr-defined]
    l_loss.backward()
    for lw, tg in zip(l_leaves, t_grads):
        _close(lw.grad, tg)


SEQ_CASES = [
    (name, layers, bidir, bias, bf, train)
    for name in MODES
    for layers, bidir, bias in ((1, False, True), (2, True, True), (2, False, False))
    for bf in (False, True)
    for train in (False, True)
]


@pytest.mark.parametrize("name,layers,bidir,bias,batch_first,train", SEQ_CASES)
def test_sequence_matches_torch(torch, name, layers, bidir, bias, batch_first, train) -> None:
    tw, tx, thx, lw, lx, lhx = _setup(torch, name, 5, 3, 4, 6, layers, bidir, bias,
                                      batch_first=batch_first)
    args = (bias, layers, 0.0, train, bidir, batch_first)
    t_out = getattr(torch, name)(tx, thx, tw, *args)
    l_out = getattr(R, name)(lx, lhx, lw, *args)
    _compare(torch, t_out, l_out, [tx, *_hidden_list(thx), *tw],
             [lx, *_hidden_list(lhx), *lw])


@pytest.mark.parametrize("layers,bidir,bias", [(1, False, True), (2, True, False)])
def test_lstm_projections_match_torch(torch, layers, bidir, bias) -> None:
    warnings.simplefilter("ignore")  # torch: projections not supported with oneDNN
    tw, tx, thx, lw, lx, lhx = _setup(torch, "lstm", 4, 2, 3, 5, layers, bidir, bias, proj=2)
    args = (bias, layers, 0.0, True, bidir, False)
    t_out = torch.lstm(tx, thx, tw, *args)
    l_out = R.lstm(lx, lhx, lw, *args)
    assert l_out[1].shape == (layers * (2 if bidir else 1), 2, 2)
    _compare(torch, t_out, l_out, [tx, *thx, *tw], [lx, *lhx, *lw])


@pytest.mark.parametrize("name", list(MODES))
@pytest.mark.parametrize("bidir", [False, True])
def test_packed_overload_matches_torch(torch, name, bidir) -> None:
    tw, tx, thx, lw, _, lhx = _setup(torch, name, 5, 3, 4, 6, 2, bidir, True)
    packed = torch.nn.utils.rnn.pack_padded_sequence(tx, [5, 3, 2])
    t_data = packed.data.detach().clone().requires_grad_(True)
    l_data = _lt(t_data)
    t_out = getattr(torch, name)(t_data, packed.batch_sizes, thx, tw, True, 2, 0.0, False, bidir)
    l_bs = lucid.tensor(packed.batch_sizes.numpy())
    l_out = getattr(R, name)(l_data, l_bs, lhx, lw, True, 2, 0.0, False, bidir)
    assert l_out[0].shape == (10, 12 if bidir else 6)
    _compare(torch, t_out, l_out, [t_data, *_hidden_list(thx), *tw],
             [l_data, *_hidden_list(lhx), *lw])


def test_keyword_arguments_select_each_overload(torch) -> None:
    tw, tx, thx, lw, lx, lhx = _setup(torch, "gru", 3, 2, 4, 5, 1, False, True)
    kw = {"has_biases": True, "num_layers": 1, "dropout": 0.0, "train": False,
          "bidirectional": False}
    t_out = torch.gru(input=tx, hx=thx, params=tw, batch_first=False, **kw)
    l_out = R.gru(input=lx, hx=lhx, params=lw, batch_first=False, **kw)
    for a, b in zip(l_out, t_out):
        _close(a, b)
    l_pos = R.gru(lx, lhx, params=lw, batch_first=False, **kw)
    _close(l_pos[0], t_out[0])
    bs = [3, 2, 1]
    data = torch.randn(6, 4, dtype=torch.float64)
    t_out = torch.gru(data=data, batch_sizes=torch.tensor(bs), hx=thx[:, :1].expand(1, 3, 5)
                      .contiguous(), params=tw, **kw)
    l_hx = lucid.tensor(thx[:, :1].expand(1, 3, 5).detach().numpy().copy())
    l_out = R.gru(data=lucid.tensor(data.numpy()), batch_sizes=lucid.tensor(bs), hx=l_hx,
                  params=lw, **kw)
    for a, b in zip(l_out, t_out):
        _close(a, b)
    l_pos = R.gru(lucid.tensor(data.numpy()), lucid.tensor(bs), l_hx, lw, **kw)
    _close(l_pos[0], t_out[0])


def test_dropout_between_layers(torch) -> None:
    _, _, _, lw, lx, lhx = _setup(torch, "gru", 5, 3, 4, 6, 2, False, True)
    eval_out = R.gru(lx, lhx, lw, True, 2, 0.0, False, False, False)[0]
    no_train = R.gru(lx, lhx, lw, True, 2, 0.5, False, False, False)[0]
    _close(no_train, eval_out)
    lucid.manual_seed(0)
    trained = R.gru(lx, lhx, lw, True, 2, 0.5, True, False, False)[0]
    assert trained.shape == eval_out.shape
    assert not np.allclose(trained.detach().numpy(), eval_out.detach().numpy())
    # one layer: nothing follows it, so dropout changes nothing (as torch)
    one = _setup(torch, "gru", 5, 3, 4, 6, 1, False, True)
    _close(R.gru(one[4], one[5], one[3], True, 1, 0.9, True, False, False)[0],
           R.gru(one[4], one[5], one[3], True, 1, 0.0, True, False, False)[0])


def test_sequence_errors_as_torch(torch) -> None:
    tw, tx, thx, lw, lx, lhx = _setup(torch, "gru", 3, 2, 4, 5, 2, False, True)

    def both(t_call: object, l_call: object) -> None:
        with pytest.raises(Exception) as te:
            t_call()  # type: ignore[operator]
        with pytest.raises(type(te.value)) as le:
            l_call()  # type: ignore[operator]
        assert str(le.value) == str(te.value)

    both(lambda: torch.gru(tx, thx, tw[:3], True, 2, 0.0, False, False, False),
         lambda: R.gru(lx, lhx, lw[:3], True, 2, 0.0, False, False, False))
    both(lambda: torch.gru(tx, thx, tw, True, 1, 0.0, False, False, False),
         lambda: R.gru(lx, lhx, lw, True, 1, 0.0, False, False, False))
    both(lambda: torch.gru(tx, thx[:1], tw[:4], True, 1, 0.0, False, True, False),
         lambda: R.gru(lx, lhx[:1], lw[:4], True, 1, 0.0, False, True, False))
    both(lambda: torch.gru(tx, thx, tw[:4], True, 2, 0.0, False, False, False),
         lambda: R.gru(lx, lhx, lw[:4], True, 2, 0.0, False, False, False))
    both(lambda: torch.gru(tx[:0], thx, tw, True, 2, 0.0, False, False, False),
         lambda: R.gru(lx[:0], lhx, lw, True, 2, 0.0, False, False, False))
    both(lambda: torch.lstm(tx, (thx,), [], True, 1, 0.0, False, False, False),
         lambda: R.lstm(lx, (lhx,), [], True, 1, 0.0, False, False, False))
    bs_f = lucid.tensor([2.0, 1.0])
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        R.gru(lx[0], bs_f, lhx, lw, True, 2, 0.0, False, False)


def test_unbatched_input_is_rejected_as_torch(torch) -> None:
    tw, tx, thx, lw, lx, lhx = _setup(torch, "lstm", 3, 1, 4, 5, 1, False, True)
    with pytest.raises(IndexError):
        torch.lstm(tx[:, 0], (thx[0][:, 0], thx[1][:, 0]), tw, True, 1, 0.0, False, False, False)
    with pytest.raises(IndexError):
        R.lstm(lx[:, 0], (lhx[0][:, 0], lhx[1][:, 0]), lw, True, 1, 0.0, False, False, False)
    with pytest.raises(IndexError):
        R.gru_cell(lx[0, 0], lhx[0][0, 0], lw[0][:15], lw[1][:15])


CELL_CASES = [(name, bias) for name in ("lstm_cell", "gru_cell", "rnn_tanh_cell",
                                        "rnn_relu_cell") for bias in ("both", "none", "hh")]


@pytest.mark.parametrize("name,bias", CELL_CASES)
def test_cells_match_torch(torch, name, bias) -> None:
    torch.manual_seed(0)
    gates = {"lstm_cell": 4, "gru_cell": 3}.get(name, 1) * 5
    f64 = torch.float64
    tx = torch.randn(3, 4, dtype=f64, requires_grad=True)
    tw = [torch.randn(gates, 4, dtype=f64, requires_grad=True),
          torch.randn(gates, 5, dtype=f64, requires_grad=True)]
    if bias != "none":
        tw += [torch.randn(gates, dtype=f64, requires_grad=True) for _ in range(2)]
    hs = [torch.randn(3, 5, dtype=f64, requires_grad=True)
          for _ in range(2 if name == "lstm_cell" else 1)]
    lx, lws, lhs = _lt(tx), [_lt(w) for w in tw], [_lt(h) for h in hs]
    thx = tuple(hs) if name == "lstm_cell" else hs[0]
    lhx = tuple(lhs) if name == "lstm_cell" else lhs[0]
    if bias == "hh":
        t_out = getattr(torch, name)(tx, thx, tw[0], tw[1], b_hh=tw[3])
        l_out = getattr(R, name)(lx, lhx, lws[0], lws[1], b_hh=lws[3])
        tw, lws = tw[:2] + tw[3:], lws[:2] + lws[3:]
    else:
        t_out = getattr(torch, name)(tx, thx, *tw)
        l_out = getattr(R, name)(lx, lhx, *lws)
    if name != "lstm_cell":
        t_out, l_out = (t_out,), (l_out,)
    _compare(torch, t_out, l_out, [tx, *hs, *tw], [lx, *lhs, *lws])


def test_cell_errors_as_torch(torch) -> None:
    f64 = torch.float64
    tx, tw_ih, tw_hh = torch.randn(2, 3, dtype=f64), torch.randn(12, 3, dtype=f64), \
        torch.randn(12, 4, dtype=f64)
    lx, lw_ih, lw_hh = (lucid.tensor(t.numpy()) for t in (tx, tw_ih, tw_hh))
    cases = [
        (lambda m: m.gru_cell(xx(m), hh(m, 3, 4), wi(m), wh(m))),
        (lambda m: m.gru_cell(xx(m), hh(m, 2, 5), wi(m), wh(m))),
        (lambda m: m.gru_cell(xx(m)[:, :2], hh(m, 2, 4), wi(m), wh(m))),
        (lambda m: m.lstm_cell(xx(m), (hh(m, 2, 4),), wi(m), wh(m))),
    ]

    def xx(m: object) -> object:
        return tx if m is torch else lx

    def wi(m: object) -> object:
        return tw_ih if m is torch else lw_ih

    def wh(m: object) -> object:
        return tw_hh if m is torch else lw_hh

    def hh(m: object, b: int, h: int) -> object:
        return torch.zeros(b, h, dtype=f64) if m is torch else lucid.zeros(b, h,
                                                                           dtype=lucid.float64)

    for case in cases:
        with pytest.raises(RuntimeError) as te:
            case(torch)
        with pytest.raises(RuntimeError) as le:
            case(R)
        assert str(le.value) == str(te.value)


@pytest.mark.parametrize("device", DEVICES)
def test_devices_agree_with_cpu(device) -> None:
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal(s).astype(np.float32) for s in ((12, 3), (12, 4), (12,), (12,))]
    data = rng.standard_normal((6, 3)).astype(np.float32)
    h0 = rng.standard_normal((1, 3, 4)).astype(np.float32)
    results = {}
    for dev in ("cpu", device):
        lw = [lucid.tensor(w, device=dev, requires_grad=True) for w in ws]
        x = lucid.tensor(data, device=dev, requires_grad=True)
        h = lucid.tensor(h0, device=dev, requires_grad=True)
        out, hn = R.gru(x, lucid.tensor([3, 2, 1]), h, lw, True, 1, 0.0, False, False)
        hc = R.gru_cell(x[:3], h[0], lw[0], lw[1], lw[2], lw[3])
        (out.sum() + hn.square().sum() + hc.sum()).backward()
        results[dev] = [t.detach().cpu().numpy() for t in (out, hn, hc, x.grad, h.grad, *(
            w.grad for w in lw))]
    for a, b in zip(results["cpu"], results[device]):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def test_shapes_and_dtypes_are_checked_before_the_kernels() -> None:
    gru = lucid.nn.GRU(3, 4)
    w = list(gru._flat_weights)
    x = lucid.randn(5, 2, 3)
    h = lucid.zeros(1, 2, 4)
    for bad_h in (lucid.zeros(1, 3, 4), lucid.zeros(1, 1, 4)):
        with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 2, 4\)"):
            R.gru(x, bad_h, w, True, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match="not the same dtype"):
        R.gru(x, h.double(), w, True, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match=r"w_hh has shape \[12, 3\], expected \[12, 4\]"):
        R.gru(x, h, [w[0], w[1][:, :3], w[2], w[3]], True, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match="b_hh has dtype"):
        R.gru(x, h, [w[0], w[1], w[2], w[3].double()], True, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 1, 4\)"):
        R.gru(x[0], lucid.tensor([1, 1]), h, w, True, 1, 0.0, False, False)
    lstm = lucid.nn.LSTM(3, 4)
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(1, 2, 4\)"):
        R.lstm(x, (h, lucid.zeros(1, 3, 4)), lstm._flat_weights, True, 1, 0.0, False, False,
               False)
    with pytest.raises(RuntimeError, match=r"w_hh has shape \[9, 4\], expected \[12, 4\]"):
        R.gru_cell(x[0], h[0], gru.weight_ih_l0, gru.weight_hh_l0[:9])
