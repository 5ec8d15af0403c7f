"""lucid.optim.swa_utils against torch.optim.swa_utils: SWALR's learning rates, the
averages AveragedModel keeps (SWA, EMA, with and without buffers), update_bn's statistics
and the state_dict layouts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.optim as optim
from lucid.optim import swa_utils

pytestmark = pytest.mark.parity


def _lucid_sd(tsd) -> dict:
    return {k: lucid.tensor(v.detach().numpy().copy()) for k, v in tsd.items()}


def _nets(torch, seed: int = 0):
    """The same Linear-BatchNorm-ReLU-Linear net in torch and lucid (float64)."""
    torch.manual_seed(seed)
    tnet = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6),
                               torch.nn.ReLU(), torch.nn.Linear(6, 2)).double()
    lnet = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(),
                         nn.Linear(6, 2)).to(lucid.float64)
    lnet.load_state_dict(_lucid_sd(tnet.state_dict()))
    return tnet, lnet


def _perturb(torch, tnet, lnet, rng: np.random.Generator) -> None:
    """Move both nets' parameters and buffers to the same new values (a training step)."""
    new = {}
    for k, v in tnet.state_dict().items():
        if v.dtype.is_floating_point:
            new[k] = v + torch.tensor(rng.standard_normal(tuple(v.shape)))
        else:
            new[k] = v + 1
    tnet.load_state_dict(new)
    lnet.load_state_dict(_lucid_sd(new))


def _assert_sd_equal(lsd, tsd, atol: float = 1e-14) -> None:
    assert list(lsd) == list(tsd)
    for k, tv in tsd.items():
        lv = lsd[k]
        assert str(lv.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], k
        np.testing.assert_allclose(lv.numpy(), tv.detach().numpy(), rtol=0, atol=atol,
                                   err_msg=k)


# ---- SWALR ---------------------------------------------------------------------------------
@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 3, 10])
def test_swalr_lr_sequence_matches_torch(strategy: str, anneal_epochs: int, torch) -> None:
    tw = [torch.ones(2, requires_grad=True), torch.ones(3, requires_grad=True)]
    lw = [nn.Parameter(lucid.ones(2)), nn.Parameter(lucid.ones(3))]
    topt = torch.optim.SGD([{"params": [tw[0]]}, {"params": [tw[1]], "lr": 0.3}], lr=0.1)
    lopt = optim.SGD([{"params": [lw[0]]}, {"params": [lw[1]], "lr": 0.3}], lr=0.1)
    ts = torch.optim.swa_utils.SWALR(topt, swa_lr=[0.05, 0.01], anneal_epochs=anneal_epochs,
                                     anneal_strategy=strategy)
    ls = swa_utils.SWALR(lopt, swa_lr=[0.05, 0.01], anneal_epochs=anneal_epochs,
                         anneal_strategy=strategy)
    assert ls.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-15, abs=1e-18)
    assert [g["swa_lr"] for g in lopt.param_groups] == [0.05, 0.01]
    for _ in range(14):
        topt.step()
        lopt.step()
        ts.step()
        ls.step()
        assert ls.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-15, abs=1e-18)
        assert [g["lr"] for g in lopt.param_groups] == pytest.approx(
            [g["lr"] for g in topt.param_groups], rel=1e-15, abs=1e-18)


def test_swalr_after_another_scheduler_matches_torch(torch) -> None:
    """SWALR takes over from a decaying schedule at its current lr, as in the SWA recipe."""
    tw, lw = torch.ones(2, requires_grad=True), nn.Parameter(lucid.ones(2))
    topt, lopt = torch.optim.SGD([tw], lr=0.5), optim.SGD([lw], lr=0.5)
    tsched = torch.optim.lr_scheduler.ExponentialLR(topt, gamma=0.7)
    lsched = optim.lr_scheduler.ExponentialLR(lopt, gamma=0.7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tswa = torch.optim.swa_utils.SWALR(topt, swa_lr=0.05, anneal_epochs=4)
        lswa = swa_utils.SWALR(lopt, swa_lr=0.05, anneal_epochs=4)
    for epoch in range(12):
        topt.step()
        lopt.step()
        if epoch < 5:
            tsched.step()
            lsched.step()
        else:
            tswa.step()
            lswa.step()
        assert lopt.param_groups[0]["lr"] == pytest.approx(topt.param_groups[0]["lr"],
                                                           rel=1e-14)


def test_swalr_state_dict_round_trip(torch) -> None:
    lw = nn.Parameter(lucid.ones(2))
    lopt = optim.SGD([lw], lr=0.5)
    sched = swa_utils.SWALR(lopt, swa_lr=0.05, anneal_epochs=5, anneal_strategy="linear")
    for _ in range(2):
        lopt.step()
        sched.step()
    sd = sched.state_dict()
    assert "anneal_func" not in sd and "optimizer" not in sd
    tw = torch.ones(2, requires_grad=True)
    tsd = torch.optim.swa_utils.SWALR(torch.optim.SGD([tw], lr=0.5), swa_lr=0.05).state_dict()
    assert set(sd) == set(tsd)
    other = optim.SGD([nn.Parameter(lucid.ones(2))], lr=0.5)
    restored = swa_utils.SWALR(other, swa_lr=0.05, anneal_epochs=5, anneal_strategy="cos")
    restored.load_state_dict(sd)
    assert restored._anneal_strategy == "linear"
    assert restored.anneal_func(0.3) == 0.3
    other.param_groups[0]["lr"] = lopt.param_groups[0]["lr"]
    lopt.step()
    other.step()
    sched.step()
    restored.step()
    assert restored.get_last_lr() == sched.get_last_lr()


@pytest.mark.parametrize("kw,msg", [({"anneal_strategy": "exp"}, "anneal_strategy must be"),
                                    ({"anneal_epochs": -1}, "anneal_epochs must be"),
                                    ({"anneal_epochs": 2.5}, "anneal_epochs must be"),
                                    ({"swa_lr": [0.1, 0.2]}, "swa_lr must have the same")])
def test_swalr_rejects_bad_arguments(kw, msg) -> None:
    opt = optim.SGD([nn.Parameter(lucid.ones(2))], lr=0.5)
    with pytest.raises(ValueError, match=msg):
        swa_utils.SWALR(opt, **{"swa_lr": 0.1, **kw})


# ---- averaging functions -------------------------------------------------------------------
def test_avg_fns_match_torch(torch) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(5), rng.standard_normal(5)
    tsu, lsu = torch.optim.swa_utils, swa_utils
    ta, tb, la, lb = torch.tensor(a), torch.tensor(b), lucid.tensor(a), lucid.tensor(b)
    np.testing.assert_allclose(lsu.get_swa_avg_fn()(la, lb, lucid.tensor(3)).numpy(),
                               tsu.get_swa_avg_fn()(ta, tb, torch.tensor(3)).numpy(), atol=1e-15)
    np.testing.assert_allclose(lsu.get_ema_avg_fn(0.9)(la, lb, 3).numpy(),
                               tsu.get_ema_avg_fn(0.9)(ta, tb, 3).numpy(), atol=1e-15)
    for lmake, tmake, n in [(lsu.get_swa_multi_avg_fn, tsu.get_swa_multi_avg_fn, 4),
                            (lambda: lsu.get_ema_multi_avg_fn(0.8),
                             lambda: tsu.get_ema_multi_avg_fn(0.8), 4)]:
        tl, ll = [ta.clone(), tb.clone()], [la.clone(), lb.clone()]
        tmake()(tl, [tb, ta], torch.tensor(n))
        lmake()(ll, [lb, la], lucid.tensor(n))
        for x, y in zip(ll, tl):
            np.testing.assert_allclose(x.numpy(), y.numpy(), atol=1e-15)


@pytest.mark.parametrize("decay", [-0.1, 1.5])
def test_ema_fns_reject_bad_decay(decay: float) -> None:
    with pytest.raises(ValueError, match="Invalid decay value"):
        swa_utils.get_ema_avg_fn(decay)
    with pytest.raises(ValueError, match="Invalid decay value"):
        swa_utils.get_ema_multi_avg_fn(decay)


# ---- AveragedModel -------------------------------------------------------------------------
def _fns(mod, kind: str) -> dict:
    if kind == "swa":
        return {}
    if kind == "ema_multi":
        return {"multi_avg_fn": mod.get_ema_multi_avg_fn(0.9)}
    if kind == "ema":
        return {"avg_fn": mod.get_ema_avg_fn(0.75)}
    return {"multi_avg_fn": mod.get_swa_multi_avg_fn()}


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("kind", ["swa", "ema_multi", "ema", "swa_multi"])
def test_averaged_model_matches_torch(kind: str, use_buffers: bool, torch) -> None:
    tnet, lnet = _nets(torch)
    tavg = torch.optim.swa_utils.AveragedModel(tnet, use_buffers=use_buffers,
                                               **_fns(torch.optim.swa_utils, kind))
    lavg = swa_utils.AveragedModel(lnet, use_buffers=use_buffers, **_fns(swa_utils, kind))
    _assert_sd_equal(lavg.state_dict(), tavg.state_dict())
    rng = np.random.default_rng(1)
    if kind == "swa_multi" and use_buffers:  # the integer batch counter: both refuse
        tavg.update_parameters(tnet)
        lavg.update_parameters(lnet)
        with pytest.raises(RuntimeError):
            tavg.update_parameters(tnet)
        with pytest.raises(RuntimeError):
            lavg.update_parameters(lnet)
        return
    for _ in range(5):
        _perturb(torch, tnet, lnet, rng)
        tavg.update_parameters(tnet)
        lavg.update_parameters(lnet)
        _assert_sd_equal(lavg.state_dict(), tavg.state_dict())
    assert int(lavg.n_averaged) == 5 and lavg.n_averaged.dtype == lucid.int64
    x = np.random.default_rng(2).standard_normal((3, 4))
    tavg.eval()
    lavg.eval()
    np.testing.assert_allclose(lavg(lucid.tensor(x)).detach().numpy(),
                               tavg(torch.tensor(x)).detach().numpy(), atol=1e-13)


def test_averaged_model_is_a_copy() -> None:
    net = nn.Linear(3, 2)
    avg = swa_utils.AveragedModel(net)
    assert avg.module is not net and avg.module.weight is not net.weight
    before = avg.module.weight.detach().numpy().copy()
    with lucid.no_grad():
        net.weight.add_(1.0)
    np.testing.assert_array_equal(avg.module.weight.detach().numpy(), before)
    avg.update_parameters(net)
    np.testing.assert_array_equal(avg.module.weight.detach().numpy(),
                                  net.weight.detach().numpy())
    assert avg.module.weight.requires_grad and avg.module.weight.grad is None


def test_averaged_model_state_dict_round_trip(tmp_path) -> None:
    net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    avg = swa_utils.AveragedModel(net)
    avg.update_parameters(net)
    with lucid.no_grad():
        for p in net.parameters():
            p.mul_(2.0)
    avg.update_parameters(net)
    lucid.save(avg.state_dict(), str(tmp_path / "swa.lucid"))
    other = swa_utils.AveragedModel(nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)))
    other.load_state_dict(lucid.load(str(tmp_path / "swa.lucid")))
    assert int(other.n_averaged) == 2
    for (k, a), b in zip(avg.state_dict().items(), other.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)


def test_averaged_model_rejects_two_fns() -> None:
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        swa_utils.AveragedModel(nn.Linear(2, 2), avg_fn=swa_utils.get_swa_avg_fn(),
                                multi_avg_fn=swa_utils.get_swa_multi_avg_fn())


# ---- update_bn -----------------------------------------------------------------------------
@pytest.mark.parametrize("batch_kind", ["tensor", "tuple"])
def test_update_bn_matches_torch(batch_kind: str, torch) -> None:
    tnet, lnet = _nets(torch)
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((8, 4)) * (i + 1) + i for i in range(4)]
    if batch_kind == "tensor":
        tloader = [torch.tensor(x) for x in xs]
        lloader = [lucid.tensor(x) for x in xs]
    else:
        tloader = [(torch.tensor(x), torch.zeros(8)) for x in xs]
        lloader = [[lucid.tensor(x), lucid.zeros(8)] for x in xs]
    tnet.eval()
    lnet.eval()
    lnet[1].momentum = tnet[1].momentum = 0.3
    torch.optim.swa_utils.update_bn(tloader, tnet)
    swa_utils.update_bn(lloader, lnet)
    _assert_sd_equal(lnet.state_dict(), tnet.state_dict(), atol=1e-12)
    assert not lnet.training and lnet[1].momentum == 0.3
    assert int(lnet[1].num_batches_tracked) == 4


def test_update_bn_on_averaged_model_and_without_bn(torch) -> None:
    tnet, lnet = _nets(torch)
    tavg = torch.optim.swa_utils.AveragedModel(tnet)
    lavg = swa_utils.AveragedModel(lnet)
    x = np.random.default_rng(4).standard_normal((16, 4))
    torch.optim.swa_utils.update_bn([torch.tensor(x)], tavg)
    swa_utils.update_bn([lucid.tensor(x)], lavg)
    _assert_sd_equal(lavg.state_dict(), tavg.state_dict(), atol=1e-12)
    calls: list[int] = []
    plain = nn.Linear(4, 2)
    plain.register_forward_hook(lambda *a: calls.append(1))
    swa_utils.update_bn([lucid.tensor(x)], plain)
    assert calls == []  # no batch norm: the loader is not even read
