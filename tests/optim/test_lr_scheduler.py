"""Learning-rate schedulers: lr sequences equal to torch's, state_dict round trips through
lucid.save/load, construction-time step, warnings and errors."""

from __future__ import annotations

import io
import math
import warnings

import pytest

import lucid
import lucid.nn as nn
import lucid.optim as optim
from lucid.optim import lr_scheduler as S


def _decay(e: int) -> float:
    return 0.95**e


def _flat(e: int) -> float:
    return 0.9


# name -> (optimizer name, optimizer kwargs, builder(fw_scheduler_module, opt)), where the
# builder receives lucid.optim.lr_scheduler or torch.optim.lr_scheduler
SCHEDULES = {
    "LambdaLR": ("SGD", {}, lambda m, o: m.LambdaLR(o, _decay)),
    "LambdaLR-per-group": ("SGD", {}, lambda m, o: m.LambdaLR(o, [_decay, lambda e: 1 / (e + 1)])),
    "MultiplicativeLR": ("SGD", {}, lambda m, o: m.MultiplicativeLR(o, _flat)),
    "StepLR": ("SGD", {}, lambda m, o: m.StepLR(o, step_size=7, gamma=0.5)),
    "MultiStepLR": ("SGD", {}, lambda m, o: m.MultiStepLR(o, [5, 12, 12, 20], gamma=0.3)),
    "ConstantLR": ("SGD", {}, lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=6)),
    "LinearLR": ("SGD", {}, lambda m, o: m.LinearLR(o, 0.2, 0.9, total_iters=10)),
    "ExponentialLR": ("SGD", {}, lambda m, o: m.ExponentialLR(o, gamma=0.93)),
    "PolynomialLR": ("SGD", {}, lambda m, o: m.PolynomialLR(o, total_iters=12, power=2.0)),
    "CosineAnnealingLR": ("SGD", {}, lambda m, o: m.CosineAnnealingLR(o, T_max=8,
                                                                       eta_min=1e-3)),
    "SequentialLR": ("SGD", {}, lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.1, total_iters=5), m.CosineAnnealingLR(o, T_max=20)],
        milestones=[5])),
    "SequentialLR-3": ("SGD", {}, lambda m, o: m.SequentialLR(
        o, [m.ConstantLR(o, factor=0.5, total_iters=3), m.ExponentialLR(o, gamma=0.9),
            m.StepLR(o, step_size=4)], milestones=[4, 15])),
    "ChainedScheduler": ("SGD", {}, lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.5, total_iters=4), m.ExponentialLR(o, gamma=0.9)])),
    "CosineAnnealingWarmRestarts": ("SGD", {}, lambda m, o: m.CosineAnnealingWarmRestarts(
        o, T_0=5, T_mult=2, eta_min=0.01)),
    "OneCycleLR-sgd": ("SGD", {"momentum": 0.9}, lambda m, o: m.OneCycleLR(
        o, max_lr=0.5, total_steps=31)),
    "OneCycleLR-adam-linear-3phase": ("Adam", {}, lambda m, o: m.OneCycleLR(
        o, max_lr=[0.5, 0.1], epochs=3, steps_per_epoch=10, anneal_strategy="linear",
        three_phase=True, pct_start=0.25)),
}


def _opt(fw, name: str, kw: dict):
    if fw is lucid:
        a, b = nn.Parameter(lucid.ones(2)), nn.Parameter(lucid.ones(3))
        o = getattr(optim, name)
    else:
        a, b = fw.ones(2, requires_grad=True), fw.ones(3, requires_grad=True)
        o = getattr(fw.optim, name)
    for p in (a, b):
        p.grad = fw.zeros(p.shape)
    return o([{"params": [a]}, {"params": [b], "lr": 0.05}], lr=0.1, **kw)


def _run(fw, key: str, steps: int = 30) -> list[tuple]:
    name, kw, build = SCHEDULES[key]
    opt = _opt(fw, name, kw)
    sched = build(fw.optim.lr_scheduler if fw is not lucid else S, opt)
    seq = [tuple(sched.get_last_lr())]
    for _ in range(steps):
        opt.step()
        sched.step()
        moms = tuple(g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups)
        seq.append((*sched.get_last_lr(), *moms))
    return seq


@pytest.mark.parity
@pytest.mark.parametrize("key", list(SCHEDULES))
def test_lr_sequence_matches_torch(key: str, torch) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither run warns
        assert _run(lucid, key) == _run(torch, key)


@pytest.mark.parity
def test_reduce_lr_on_plateau_matches_torch(torch) -> None:
    metrics = [1.0, 0.9, 0.95, 0.96, 0.97, 0.8, 0.8, 0.81, 0.85, 0.86, 0.79, 0.79, 0.79, 0.79,
               0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3]
    for kw in [{"mode": "min", "factor": 0.5, "patience": 2, "cooldown": 1},
               {"mode": "max", "factor": 0.3, "patience": 1, "threshold_mode": "abs",
                "threshold": 0.05, "min_lr": [0.02, 0.001]},
               {"patience": 0, "eps": 0.03}]:
        seqs = []
        for fw, mod in ((lucid, S), (torch, torch.optim.lr_scheduler)):
            opt = _opt(fw, "SGD", {})
            sched = mod.ReduceLROnPlateau(opt, **kw)
            seq = []
            for m in metrics:
                opt.step()
                sched.step(m)
                seq.append((*sched.get_last_lr(), sched.num_bad_epochs, sched.best,
                            sched.cooldown_counter, sched.last_epoch))
            seqs.append(seq)
        assert seqs[0] == seqs[1]


@pytest.mark.parity
def test_state_dict_keys_match_torch(torch) -> None:
    for key in ("StepLR", "CosineAnnealingLR", "OneCycleLR-sgd", "SequentialLR"):
        name, kw, build = SCHEDULES[key]
        lsd = build(S, _opt(lucid, name, kw)).state_dict()
        tsd = build(torch.optim.lr_scheduler, _opt(torch, name, kw)).state_dict()
        assert sorted(lsd) == sorted(tsd), key


@pytest.mark.parametrize("key", list(SCHEDULES))
def test_state_dict_round_trip(key: str) -> None:
    name, kw, build = SCHEDULES[key]
    full = _run(lucid, key, 20)
    opt = _opt(lucid, name, kw)
    sched = build(S, opt)
    for _ in range(10):
        opt.step()
        sched.step()
    buf = io.BytesIO()
    lucid.save({"opt": opt.state_dict(), "sched": sched.state_dict()}, buf)
    buf.seek(0)
    ck = lucid.load(buf)
    opt2 = _opt(lucid, name, kw)
    sched2 = build(S, opt2)
    opt2.load_state_dict(ck["opt"])
    sched2.load_state_dict(ck["sched"])
    seq = []
    for _ in range(10):
        opt2.step()
        sched2.step()
        moms = tuple(g.get("momentum", g.get("betas", (None,))[0]) for g in opt2.param_groups)
        seq.append((*sched2.get_last_lr(), *moms))
    assert seq == full[11:]


def test_construction_sets_initial_lr_and_takes_the_first_step() -> None:
    opt = _opt(lucid, "SGD", {})
    sched = S.LinearLR(opt, start_factor=0.5, total_iters=4)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.05]
    assert sched.last_epoch == 0 and sched.base_lrs == [0.1, 0.05]
    assert sched.get_last_lr() == [0.05, 0.025] == [g["lr"] for g in opt.param_groups]
    with pytest.raises(KeyError, match="initial_lr"):
        S.StepLR(_opt(lucid, "SGD", {}), step_size=2, last_epoch=3)
    resumed = S.StepLR(opt, step_size=2, last_epoch=3)
    assert resumed.last_epoch == 4


def test_step_lr_values_and_closed_form() -> None:
    opt = _opt(lucid, "SGD", {})
    sched = S.StepLR(opt, step_size=3, gamma=0.1)
    lrs = []
    for _ in range(7):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs == pytest.approx([0.1, 0.1, 0.01, 0.01, 0.01, 0.001, 0.001])
    with pytest.warns(UserWarning, match="epoch parameter"):
        sched.step(9)
    assert sched.get_last_lr()[0] == pytest.approx(0.1 * 0.1**3)


def test_cosine_annealing_reaches_eta_min() -> None:
    opt = _opt(lucid, "SGD", {})
    sched = S.CosineAnnealingLR(opt, T_max=10, eta_min=0.01)
    for _ in range(10):
        opt.step()
        sched.step()
    assert sched.get_last_lr()[0] == pytest.approx(0.01)
    assert sched.get_last_lr()[1] == pytest.approx(0.01)


def test_warnings() -> None:
    opt = _opt(lucid, "SGD", {})
    sched = S.ExponentialLR(opt, gamma=0.5)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()


def test_errors() -> None:
    opt = _opt(lucid, "SGD", {})
    with pytest.raises(TypeError, match="is not an Optimizer"):
        S.StepLR(object(), step_size=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Constant multiplicative factor"):
        S.ConstantLR(opt, factor=2.0)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        S.LambdaLR(opt, [_decay])
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        S.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode sideways is unknown"):
        S.ReduceLROnPlateau(opt, mode="sideways")
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        S.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="total_steps OR"):
        S.OneCycleLR(opt, max_lr=0.1)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        S.OneCycleLR(optim.Adagrad([nn.Parameter(lucid.ones(1))]), max_lr=0.1, total_steps=5)
    one = S.OneCycleLR(_opt(lucid, "SGD", {"momentum": 0.9}), max_lr=0.1, total_steps=2)
    one.optimizer.step()
    one.step()
    one.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        one.step()
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        S.SequentialLR(opt, [S.ReduceLROnPlateau(opt), S.StepLR(opt, 2)], milestones=[2])
    with pytest.raises(ValueError, match="number of milestone points"):
        S.SequentialLR(opt, [S.StepLR(opt, 2)], milestones=[2])
    other = _opt(lucid, "SGD", {})
    with pytest.raises(ValueError, match="belong to the same optimizer"):
        S.ChainedScheduler([S.StepLR(opt, 2), S.StepLR(other, 2)])


def test_warm_restarts_with_fractional_epochs() -> None:
    opt = _opt(lucid, "SGD", {})
    sched = S.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=2, eta_min=0.0)
    sched.step(4 + 8 + 2.0)  # third cycle (length 16), two epochs in
    assert sched.T_i == 16 and sched.T_cur == 2
    assert sched.get_last_lr()[0] == pytest.approx(0.05 * (1 + math.cos(math.pi * 2 / 16)))
