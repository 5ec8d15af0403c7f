"""ASGD, Rprop, Adafactor and Muon against torch.optim: the same parameters and injected
gradients give the same parameters and state after every step, the same state_dict layout
and param_groups, and a state_dict saved by either side continues the run identically."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.optim as optim
from lucid.optim.muon import zeropower_via_newtonschulz

pytestmark = pytest.mark.parity

SHAPES = [(7, 5), (5,), (2, 3, 4), (300,), (1,)]
MATRICES = [(7, 5), (4, 9), (6, 6)]

CASES: list[tuple[str, dict[str, Any]]] = [
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 1e-2, "alpha": 0.6, "t0": 5, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.05, "t0": 3, "maximize": True, "foreach": False}),
    ("ASGD", {"lr": 0.02, "t0": 4, "weight_decay": 0.05, "foreach": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
    ("Rprop", {"lr": 0.02, "maximize": True, "foreach": True}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.05, "eps": (1e-4, 1e-2), "d": 1.5, "weight_decay": 0.1,
                   "beta2_decay": -0.5}),
    ("Adafactor", {"lr": 0.03, "maximize": True, "foreach": False}),
    ("Adafactor", {"lr": 0.03, "weight_decay": 0.01, "foreach": True}),
    ("Muon", {}),
    ("Muon", {"lr": 0.02, "nesterov": False, "weight_decay": 0.0, "momentum": 0.8,
              "adjust_lr_fn": "match_rms_adamw"}),
    ("Muon", {"lr": 0.02, "adjust_lr_fn": "original", "ns_steps": 3,
              "ns_coefficients": (3.0, -3.2, 1.2), "eps": 1e-5}),
]


def _case_id(case: tuple[str, dict[str, Any]]) -> str:
    name, kw = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in kw.items())


def _shapes(name: str) -> list[tuple[int, ...]]:
    return MATRICES if name == "Muon" else SHAPES


def _grads(rng: np.random.Generator, shapes: list, dtype: str, step: int) -> list[np.ndarray]:
    gs = [rng.standard_normal(s).astype(dtype) for s in shapes]
    if step % 4 == 2:  # zero gradients exercise Rprop's sign == 0 branch
        gs[1] = np.zeros_like(gs[1])
    return gs


def _pair(torch, name: str, kw: dict, dtype: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    arrs = [rng.standard_normal(s).astype(dtype) for s in _shapes(name)]
    tp = [torch.tensor(a.copy(), requires_grad=True) for a in arrs]
    lp = [nn.Parameter(lucid.tensor(a.copy())) for a in arrs]
    return tp, lp, getattr(torch.optim, name)(tp, **kw), getattr(optim, name)(lp, **kw)


def _set(tp, lp, torch, gs) -> None:
    for t, p, g in zip(tp, lp, gs):
        t.grad = torch.tensor(g)
        p.grad = lucid.tensor(g.copy())


def _compare_state(lopt, topt, atol: float) -> None:
    ls, ts = lopt.state_dict(), topt.state_dict()
    assert sorted(ls["state"]) == sorted(ts["state"])
    for k, tst in ts["state"].items():
        lst = ls["state"][k]
        assert list(lst) == list(tst)
        for key, tv in tst.items():
            lv = lst[key]
            assert isinstance(lv, lucid.Tensor), key
            assert str(lv.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], key
            assert tuple(lv.shape) == tuple(tv.shape), key
            rtol = 3e-7 if tv.dtype == tv.new_zeros(()).float().dtype else 0
            np.testing.assert_allclose(lv.numpy(), tv.numpy(), rtol=rtol, atol=atol,
                                       err_msg=key)
    assert ls["param_groups"] == ts["param_groups"]


@pytest.mark.parametrize("dtype,atol", [("float64", 1e-13), ("float32", 2e-6)])
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_steps_match_torch(case, dtype: str, atol: float, torch) -> None:
    """Twenty steps with identical gradients: parameters and every state tensor agree after
    each step.

    Two places round differently by design. torch's foreach=True ASGD is another
    arrangement of the same update (``p -= eta*(g + (wd + lambd)*p)``, eta computed in
    float32 tensors) where lucid runs the single-tensor one: agreement to ~1e-7 relative.
    Muon rounds its orthogonalised update to bfloat16, and torch's lerp of the momentum
    buffer uses a fused multiply-add: one ulp there can move a bfloat16 rounding by one
    bfloat16 ulp (2**-7 relative), so the parameters agree to ``lr * 2**-7`` per step (the
    buffers, which depend on the gradients alone, agree to rounding; the Newton-Schulz
    iteration itself is pinned bit for bit below)."""
    name, kw = case
    if kw.get("foreach") and name == "ASGD":
        atol = max(atol, 1e-7 if dtype == "float64" else 1e-5)
    tp, lp, topt, lopt = _pair(torch, name, kw, dtype)
    lr = kw.get("lr", 1e-3)
    rng = np.random.default_rng(5)
    for step in range(20):
        _set(tp, lp, torch, _grads(rng, _shapes(name), dtype, step))
        topt.step()
        lopt.step()
        p_atol = atol if name != "Muon" else max(atol, 1.2 * lr * 2**-7 * (step + 1))
        for p, t in zip(lp, tp):
            np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=0,
                                       atol=p_atol, err_msg=f"step {step}")
        _compare_state(lopt, topt, atol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_newton_schulz_rounds_as_torch(dtype: str, torch) -> None:
    """Muon's orthogonalisation rounds to bfloat16 where torch's does: all but a few
    elements (float32 products summed in another order by the two matmuls, landing on the
    other side of a bfloat16 rounding) are bit for bit torch's, and those few are a
    bfloat16 ulp or two away."""
    tmuon = pytest.importorskip("torch.optim._muon")
    be = lucid.tensor([0.0])._be
    rng = np.random.default_rng(0)
    differ = total = 0
    for i in range(80):
        g = rng.standard_normal([(7, 5), (4, 9), (6, 6), (1, 3)][i % 4]).astype(dtype)
        coeffs, steps = ((3.4445, -4.775, 2.0315), 5) if i % 2 else ((3.0, -3.2, 1.2), 3)
        want = tmuon._zeropower_via_newtonschulz(torch.tensor(g), coeffs, steps,
                                                 1e-7).float().numpy()
        got = np.asarray(zeropower_via_newtonschulz(be, g, coeffs, steps, 1e-7))
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=2**-6, atol=2**-8)
        differ += int((got != want).sum())
        total += got.size
    assert differ <= total // 200


def test_asgd_averages_after_t0(torch) -> None:
    """The averaged parameter ``ax`` tracks the mean of the iterates once ``t0`` passed."""
    tp, lp, topt, lopt = _pair(torch, "ASGD", {"lr": 0.1, "t0": 2, "lambd": 0.0}, "float64")
    rng = np.random.default_rng(0)
    for step in range(8):
        _set(tp, lp, torch, _grads(rng, SHAPES, "float64", step))
        topt.step()
        lopt.step()
    st = lopt.state[lp[0]]
    assert float(st["mu"]) == pytest.approx(1 / 6)
    assert float(st["eta"]) == pytest.approx(0.1, rel=1e-7)
    np.testing.assert_allclose(st["ax"].numpy(), topt.state[tp[0]]["ax"].numpy(), atol=1e-14)
    assert not np.allclose(st["ax"].numpy(), lp[0].detach().numpy())


@pytest.mark.parametrize("case", [c for i, c in enumerate(CASES) if i % 2 == 1], ids=_case_id)
def test_torch_state_dict_continues_in_lucid(case, torch) -> None:
    """Ten torch steps, then torch's state_dict (torch tensors) is loaded into a lucid
    optimizer built with another lr: the next ten steps agree."""
    name, kw = case
    tp, lp, topt, _ = _pair(torch, name, kw, "float64")
    rng = np.random.default_rng(1)
    for step in range(10):
        for t, g in zip(tp, _grads(rng, _shapes(name), "float64", step)):
            t.grad = torch.tensor(g)
        topt.step()
    lp = [nn.Parameter(lucid.tensor(t.detach().numpy().copy())) for t in tp]
    lopt = getattr(optim, name)(lp, **{**kw, "lr": 0.5})
    lopt.load_state_dict(topt.state_dict())
    assert lopt.param_groups[0]["lr"] == topt.param_groups[0]["lr"]
    for step in range(10):
        _set(tp, lp, torch, _grads(rng, _shapes(name), "float64", step))
        topt.step()
        lopt.step()
    atol = 1e-7 if kw.get("foreach") and name == "ASGD" else 1e-12  # see test_steps_match_torch
    p_atol = 1.2 * kw.get("lr", 1e-3) * 2**-7 * 10 if name == "Muon" else atol
    for p, t in zip(lp, tp):
        np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=0,
                                   atol=p_atol)
    _compare_state(lopt, topt, atol)


@pytest.mark.parametrize("name", ["ASGD", "Rprop", "Adafactor", "Muon"])
def test_state_dict_round_trip(name: str, tmp_path) -> None:
    """A saved and reloaded optimizer (through lucid.save/load) continues exactly as the
    original; the loaded state is a copy, and step counters stay host scalars."""
    rng = np.random.default_rng(3)
    arrs = [rng.standard_normal(s) for s in _shapes(name)]
    a = [nn.Parameter(lucid.tensor(x.copy())) for x in arrs]
    opt_a = getattr(optim, name)(a, lr=0.05)
    for step in range(6):
        for p, g in zip(a, _grads(rng, _shapes(name), "float64", step)):
            p.grad = lucid.tensor(g)
        opt_a.step()
    lucid.save(opt_a.state_dict(), str(tmp_path / "opt.lucid"))
    b = [nn.Parameter(lucid.tensor(p.detach().numpy().copy())) for p in a]
    opt_b = getattr(optim, name)(b, lr=1.0)
    opt_b.load_state_dict(lucid.load(str(tmp_path / "opt.lucid")))
    assert opt_b.param_groups[0]["lr"] == 0.05
    for key, v in opt_b.state[b[0]].items():
        assert v is not opt_a.state[a[0]][key]
        if key in ("step", "eta", "mu"):
            assert v.device.type == "cpu" and v.dtype == lucid.float32
    for step in range(6):
        gs = _grads(rng, _shapes(name), "float64", step)
        for p, q, g in zip(a, b, gs):
            p.grad = lucid.tensor(g.copy())
            q.grad = lucid.tensor(g.copy())
        opt_a.step()
        opt_b.step()
    for p, q in zip(a, b):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


@pytest.mark.parametrize("name", ["ASGD", "Rprop", "Adafactor", "Muon"])
def test_defaults_and_param_group_keys_match_torch(name: str, torch) -> None:
    shape = (2, 2)
    t = getattr(torch.optim, name)([torch.ones(shape, requires_grad=True)])
    lo = getattr(optim, name)([nn.Parameter(lucid.ones(shape))])
    assert lo.defaults == t.defaults
    assert list(lo.param_groups[0]) == list(t.param_groups[0])


def test_closure_returns_loss() -> None:
    w = nn.Parameter(lucid.tensor([[1.0, -2.0], [0.5, 3.0]]))
    for name in ("ASGD", "Rprop", "Adafactor", "Muon"):
        opt = getattr(optim, name)([w])

        def closure(opt=opt):
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss

        assert isinstance(opt.step(closure), lucid.Tensor)


BAD: list[tuple[str, dict[str, Any]]] = [
    ("ASGD", {"lr": -1.0}),
    ("ASGD", {"weight_decay": -0.1}),
    ("Rprop", {"lr": -1.0}),
    ("Rprop", {"etas": (1.1, 1.2)}),
    ("Rprop", {"etas": (0.5, 0.9)}),
    ("Adafactor", {"lr": -1.0}),
    ("Adafactor", {"beta2_decay": 0.1}),
    ("Adafactor", {"eps": (-1.0, 1e-3)}),
    ("Adafactor", {"eps": (None, -1.0)}),
    ("Adafactor", {"d": 0.5}),
    ("Adafactor", {"weight_decay": -1.0}),
    ("Muon", {"lr": -1.0}),
    ("Muon", {"momentum": -0.1}),
    ("Muon", {"weight_decay": -0.1}),
    ("Muon", {"adjust_lr_fn": "bogus"}),
]


@pytest.mark.parametrize("case", BAD, ids=_case_id)
def test_invalid_options_raise_as_torch(case, torch) -> None:
    name, kw = case
    with pytest.raises(ValueError) as terr:
        getattr(torch.optim, name)([torch.ones(2, 2, requires_grad=True)], **kw)
    with pytest.raises(ValueError) as lerr:
        getattr(optim, name)([nn.Parameter(lucid.ones(2, 2))], **kw)
    assert str(lerr.value) == str(terr.value)


def test_muon_rejects_non_matrices_as_torch(torch) -> None:
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        torch.optim.Muon([torch.ones(3, requires_grad=True)])
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        optim.Muon([nn.Parameter(lucid.ones(3))])


def test_muon_update_is_nearly_orthogonal() -> None:
    """With no momentum history, no decay and lr 1, the step of a square parameter is the
    Newton-Schulz orthogonalisation of the gradient: singular values near 1."""
    rng = np.random.default_rng(0)
    w = nn.Parameter(lucid.tensor(np.zeros((8, 8))))
    w.grad = lucid.tensor(rng.standard_normal((8, 8)))
    optim.Muon([w], lr=1.0, weight_decay=0.0, momentum=0.0, nesterov=False).step()
    s = np.linalg.svd(-w.detach().numpy(), compute_uv=False)
    assert np.all((s > 0.5) & (s < 1.5))


def test_capturable_and_differentiable_are_refused() -> None:
    p = [nn.Parameter(lucid.ones(2))]
    with pytest.raises(NotImplementedError):
        optim.ASGD(p, capturable=True)
    with pytest.raises(NotImplementedError):
        optim.Rprop(p, differentiable=True)


def test_deepcopy_keeps_running() -> None:
    w = nn.Parameter(lucid.tensor([1.0, 2.0]))
    opt = optim.Rprop([w], lr=0.1)
    w.grad = lucid.tensor([1.0, -1.0])
    opt.step()
    clone = copy.deepcopy(opt)
    assert clone.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
