"""Adadelta, LBFGS, SparseAdam and CyclicLR: trajectories against torch and numpy references."""

from __future__ import annotations

import numpy as np
import pytest
from optim_util import arrays, grads, lucid_params, set_grads, values

import lucid
import lucid.nn as nn
import lucid.optim as optim
from lucid.optim.lr_scheduler import CyclicLR

# ---- Adadelta -------------------------------------------------------------------------------

ADADELTA = [{}, {"lr": 0.5, "rho": 0.8, "eps": 1e-4},
            {"weight_decay": 0.1, "maximize": True}]


def _adadelta_ref(p, gs, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
    p = p.astype(np.float64)
    v, u = np.zeros_like(p), np.zeros_like(p)
    for g in gs:
        g = -g if maximize else g
        g = g + weight_decay * p
        v = rho * v + (1 - rho) * g * g
        delta = np.sqrt(u + eps) / np.sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta
    return p


@pytest.mark.parametrize("kw", ADADELTA)
def test_adadelta_matches_numpy(kw, backend):
    rng = np.random.default_rng(1)
    arrs = arrays(0, "float64")
    params = [nn.Parameter(lucid.tensor(a.copy(), device=backend)) for a in arrs]
    opt = optim.Adadelta(params, **kw)
    history = [grads(rng, "float64") for _ in range(5)]
    for gs in history:
        set_grads(params, gs)
        opt.step()
    for i, p in enumerate(values(params)):
        np.testing.assert_allclose(p, _adadelta_ref(arrs[i], [h[i] for h in history], **kw),
                                   rtol=1e-12, atol=1e-12)
    st = opt.state[params[0]]
    assert list(st) == ["step", "square_avg", "acc_delta"] and float(st["step"]) == 5


@pytest.mark.parametrize("kw", ADADELTA)
def test_adadelta_matches_torch(kw, torch):
    rng = np.random.default_rng(2)
    arrs = arrays(3)
    params = lucid_params(arrs)
    tparams = [torch.nn.Parameter(torch.tensor(a.copy())) for a in arrs]
    opt, topt = optim.Adadelta(params, **kw), torch.optim.Adadelta(tparams, **kw)
    for _ in range(6):
        gs = grads(rng)
        set_grads(params, gs)
        for tp, g in zip(tparams, gs):
            tp.grad = torch.tensor(g.copy())
        opt.step()
        topt.step()
    for p, tp in zip(params, tparams):
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-6,
                                   atol=1e-7)
    ts = topt.state_dict()["state"][0]
    ls = opt.state_dict()["state"][0]
    np.testing.assert_allclose(ls["acc_delta"].numpy(), ts["acc_delta"].numpy(), rtol=1e-5,
                               atol=1e-9)
    # torch's state dict loads and continues identically
    opt2 = optim.Adadelta(lucid_params(arrs), **kw)
    opt2.load_state_dict(topt.state_dict())
    assert float(opt2.state[opt2.param_groups[0]["params"][0]]["step"]) == 6


def test_adadelta_bad_arguments():
    p = [nn.Parameter(lucid.zeros(2))]
    with pytest.raises(ValueError, match="Invalid rho value: 1.5"):
        optim.Adadelta(p, rho=1.5)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.Adadelta(p, lr=-1)
    with pytest.raises(ValueError, match="Invalid epsilon value"):
        optim.Adadelta(p, eps=-1.0)


# ---- LBFGS ----------------------------------------------------------------------------------

def _problem(m, dtype):
    """A least-squares plus quartic problem: loss(w) on fixed data."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((20, 5)).astype(dtype)
    b = rng.standard_normal(20).astype(dtype)
    w0 = rng.standard_normal(5).astype(dtype)
    w = (nn.Parameter(lucid.tensor(w0.copy())) if m is lucid
         else m.nn.Parameter(m.tensor(w0.copy())))
    at, bt = m.tensor(a), m.tensor(b)

    def loss_of():
        r = at @ w - bt
        return (r * r).sum() + 0.1 * (w**4).sum()
    return w, loss_of


@pytest.mark.parametrize("kw", [{}, {"line_search_fn": "strong_wolfe"},
                                {"history_size": 3, "max_iter": 7, "lr": 0.5},
                                {"line_search_fn": "strong_wolfe", "history_size": 2}])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_lbfgs_matches_torch(kw, dtype, torch):
    out = []
    for m, o in ((lucid, optim), (torch, torch.optim)):
        w, loss_of = _problem(m, dtype)
        opt = o.LBFGS([w], **kw)
        calls = [0]

        def closure(opt=opt, loss_of=loss_of, calls=calls):
            opt.zero_grad()
            loss = loss_of()
            loss.backward()
            calls[0] += 1
            return loss

        losses = [float(opt.step(closure).detach()) for _ in range(3)]
        st = opt.state[w]
        out.append((w.detach().numpy().copy(), losses, calls[0], st["func_evals"],
                    st["n_iter"]))
    (w1, l1, c1, f1, n1), (w2, l2, c2, f2, n2) = out
    tol = 1e-9 if dtype == "float64" else 2e-4
    np.testing.assert_allclose(w1, w2, rtol=tol, atol=tol)
    np.testing.assert_allclose(l1, l2, rtol=tol)
    if dtype == "float64":
        assert (c1, f1, n1) == (c2, f2, n2)


def test_lbfgs_minimises_and_state_round_trips(tmp_path):
    w, loss_of = _problem(lucid, "float64")
    opt = optim.LBFGS([w], line_search_fn="strong_wolfe", history_size=5)

    def closure():
        opt.zero_grad()
        loss = loss_of()
        loss.backward()
        return loss

    first = float(opt.step(closure))
    opt.step(closure)
    assert float(loss_of()) < first
    path = tmp_path / "opt.lucid"
    lucid.save(opt.state_dict(), path)
    w2, loss2 = _problem(lucid, "float64")
    opt2 = optim.LBFGS([w2], line_search_fn="strong_wolfe", history_size=5)
    with lucid.no_grad():
        w2.copy_(w)
    opt2.load_state_dict(lucid.load(path))

    def closure2():
        opt2.zero_grad()
        loss = loss2()
        loss.backward()
        return loss

    opt.step(closure)
    opt2.step(closure2)
    np.testing.assert_allclose(w2.detach().numpy(), w.detach().numpy(), rtol=1e-12)


def test_lbfgs_errors():
    a, b = nn.Parameter(lucid.zeros(2)), nn.Parameter(lucid.zeros(2))
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        optim.LBFGS([{"params": [a]}, {"params": [b]}])
    opt = optim.LBFGS([a], line_search_fn="bogus")

    def closure():
        opt.zero_grad()
        loss = ((a - 1) ** 2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


# ---- SparseAdam -----------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{}, {"lr": 0.05, "betas": (0.8, 0.9), "eps": 1e-6},
                                {"maximize": True}])
def test_sparse_adam_matches_torch_embedding(kw, torch):
    w0 = np.random.default_rng(0).standard_normal((10, 4)).astype(np.float32)
    emb = nn.Embedding(10, 4)
    temb = torch.nn.Embedding(10, 4, sparse=True)
    with lucid.no_grad():
        emb.weight.copy_(lucid.tensor(w0))
    with torch.no_grad():
        temb.weight.copy_(torch.tensor(w0))
    opt = optim.SparseAdam(emb.parameters(), **kw)
    topt = torch.optim.SparseAdam(temb.parameters(), **kw)
    rng = np.random.default_rng(1)
    for _ in range(5):
        idx = rng.integers(0, 10, size=(6,))
        tgt = rng.standard_normal((6, 4)).astype(np.float32)
        opt.zero_grad()
        ((emb(lucid.tensor(idx)) - lucid.tensor(tgt)) ** 2).sum().backward()
        opt.step()
        topt.zero_grad()
        ((temb(torch.tensor(idx)) - torch.tensor(tgt)) ** 2).sum().backward()
        topt.step()
    np.testing.assert_allclose(emb.weight.detach().numpy(), temb.weight.detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    st, tst = opt.state[emb.weight], topt.state[temb.weight]
    assert st["step"] == tst["step"] == 5 and isinstance(st["step"], int)
    np.testing.assert_allclose(st["exp_avg_sq"].numpy(), tst["exp_avg_sq"].numpy(),
                               rtol=1e-5, atol=1e-9)
    untouched = [r for r in range(10) if not np.any(tst["exp_avg"].numpy()[r])]
    np.testing.assert_array_equal(emb.weight.detach().numpy()[untouched], w0[untouched])


def test_sparse_adam_bad_arguments():
    p = [nn.Parameter(lucid.zeros(2))]
    with pytest.raises(ValueError, match="Invalid learning rate: 0.0"):
        optim.SparseAdam(p, lr=0.0)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        optim.SparseAdam(p, betas=(0.9, 1.0))


# ---- CyclicLR -------------------------------------------------------------------------------

CYCLIC = [
    {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 4},
    {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3, "step_size_down": 5,
     "mode": "triangular2"},
    {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2, "mode": "exp_range", "gamma": 0.9},
    {"base_lr": [0.01, 0.02], "max_lr": 0.2, "step_size_up": 3,
     "scale_fn": lambda x: 0.5 ** x, "scale_mode": "iterations"},
    {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3, "cycle_momentum": False},
]


@pytest.mark.parametrize("kw", CYCLIC)
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_cyclic_lr_matches_torch(kw, opt_name, torch):
    def build(m):
        a = m.nn.Parameter(m.zeros(2))
        b = m.nn.Parameter(m.zeros(2))
        extra = {"momentum": 0.9} if opt_name == "SGD" else {}
        opt = getattr(m.optim, opt_name)([{"params": [a]}, {"params": [b]}], lr=1.0,
                                         **extra)
        return opt, m.optim.lr_scheduler.CyclicLR(opt, **kw)

    (opt, sched), (topt, tsched) = build(lucid), build(torch)
    key = "momentum" if opt_name == "SGD" else "betas"
    for _ in range(14):
        assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-12)
        for g, tg in zip(opt.param_groups, topt.param_groups):
            assert g["lr"] == pytest.approx(tg["lr"], rel=1e-12)
            assert np.allclose(g[key], tg[key], rtol=1e-12)
        opt.step()
        topt.step()
        sched.step()
        tsched.step()


def test_cyclic_lr_numbers_and_state_dict():
    p = nn.Parameter(lucid.zeros(1))
    opt = optim.SGD([p], lr=1.0, momentum=0.9)
    sched = CyclicLR(opt, base_lr=0.0, max_lr=1.0, step_size_up=2, mode="triangular2")
    seen = []
    for _ in range(8):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert seen == pytest.approx([0, 0.5, 1, 0.5, 0, 0.25, 0.5, 0.25])
    state = sched.state_dict()
    assert state["_scale_fn_custom"] is None and state["last_epoch"] == 8
    sched2 = CyclicLR(optim.SGD([p], lr=1.0, momentum=0.9), base_lr=0.0, max_lr=1.0,
                      step_size_up=2, mode="triangular2")
    sched2.load_state_dict(state)
    assert sched2.last_epoch == 8 and sched2.scale_fn(2) == 0.5
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        CyclicLR(opt, 0.1, 1.0, mode="nope")
    with pytest.raises(ValueError, match="optimizer must support momentum"):
        CyclicLR(optim.Adagrad([p]), 0.1, 1.0)


@pytest.mark.filterwarnings("ignore:lucid. no Metal or CUDA device")
@pytest.mark.parametrize("name,kw", [("Adadelta", {"weight_decay": 0.1}),
                                     ("SparseAdam", {"lr": 0.1}),
                                     ("LBFGS", {"line_search_fn": "strong_wolfe"})])
def test_gpu_device_matches_cpu(name, kw):
    pytest.importorskip("mlx")
    out = []
    for dev in ("cpu", "gpu"):
        w = nn.Parameter(lucid.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3),
                                      device=dev))
        opt = getattr(optim, name)([w], **kw)

        def closure(opt=opt, w=w):
            opt.zero_grad()
            loss = ((w - 0.5) ** 2 * lucid.tensor([[1.0, 0.0, 2.0]], device=w.device)).sum()
            loss.backward()
            return loss

        for _ in range(3):
            if name == "LBFGS":
                opt.step(closure)
            else:
                closure()
                opt.step()
        assert w.device == dev
        out.append(w.detach().cpu().numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-5, atol=1e-6)
