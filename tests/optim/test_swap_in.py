"""swap_in_optimizer_params_and_state against torch.optim's: a step inside the block moves
the swapped-in parameters and state exactly as torch's does, and leaves the optimizer, its
parameters and its state as they were."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.optim as optim
from lucid.optim import swap_in_optimizer_params_and_state

SHAPES = [(3, 2), (4,)]


def _setup(mod, make_param, rng_seed: int = 0):
    rng = np.random.default_rng(rng_seed)
    arrs = [rng.standard_normal(s) for s in SHAPES]
    params = [make_param(a) for a in arrs]
    opt = mod.optim.Adam([{"params": [params[0]]}, {"params": [params[1]], "lr": 0.05}],
                         lr=0.1, weight_decay=0.01)
    for p, a in zip(params, arrs):
        p.grad = mod.tensor(a * 0.5)
    opt.step()
    return params, opt


def test_step_on_swapped_in_params_matches_torch(torch) -> None:
    tps, topt = _setup(torch, lambda a: torch.tensor(a.copy(), requires_grad=True))
    lps, lopt = _setup(lucid, lambda a: nn.Parameter(lucid.tensor(a.copy())))
    before = [p.detach().numpy().copy() for p in lps]
    live_state = lopt.state
    rng = np.random.default_rng(1)
    arrs = [rng.standard_normal(s) for s in SHAPES]
    tshadow = {f"p{i}": torch.tensor(a.copy(), requires_grad=True) for i, a in enumerate(arrs)}
    lshadow = {f"p{i}": nn.Parameter(lucid.tensor(a.copy())) for i, a in enumerate(arrs)}
    tstate = copy.deepcopy(topt.state_dict())
    lstate = copy.deepcopy(lopt.state_dict())
    tstate["param_groups"][1]["lr"] = lstate["param_groups"][1]["lr"] = 0.2
    grads = [rng.standard_normal(s) for s in SHAPES]
    for (tp, lp), g in zip(zip(tshadow.values(), lshadow.values()), grads):
        tp.grad = torch.tensor(g)
        lp.grad = lucid.tensor(g)
    lm = lstate["state"][0]["exp_avg"]
    with torch.optim.swap_in_optimizer_params_and_state(topt, tshadow, tstate):
        topt.step()
    with swap_in_optimizer_params_and_state(lopt, lshadow, lstate):
        assert lopt.param_groups[1]["lr"] == 0.2
        assert lopt.param_groups[0]["params"][0] is lshadow["p0"]
        lopt.step()
    for lp, tp in zip(lshadow.values(), tshadow.values()):
        np.testing.assert_allclose(lp.detach().numpy(), tp.detach().numpy(), atol=1e-14)
    for k in (0, 1):
        for key, tv in tstate["state"][k].items():
            np.testing.assert_allclose(lstate["state"][k][key].numpy(), tv.numpy(),
                                       atol=1e-14, err_msg=key)
    assert lstate["state"][0]["exp_avg"] is lm  # updated in place, as torch's are
    assert lopt.state is live_state and lopt.param_groups[1]["lr"] == 0.05
    assert [g["params"] for g in lopt.param_groups] == [[lps[0]], [lps[1]]]
    for p, b in zip(lps, before):
        np.testing.assert_array_equal(p.detach().numpy(), b)


def test_restores_after_an_error() -> None:
    lps, lopt = _setup(lucid, lambda a: nn.Parameter(lucid.tensor(a.copy())))
    sd = copy.deepcopy(lopt.state_dict())
    shadow = {str(i): nn.Parameter(lucid.zeros(s)) for i, s in enumerate(SHAPES)}
    groups = [dict(g) for g in lopt.param_groups]
    with pytest.raises(KeyError):
        with swap_in_optimizer_params_and_state(lopt, shadow, sd):
            raise KeyError("inside")
    assert lopt.param_groups == groups


@pytest.mark.parametrize("edit,msg", [
    (lambda sd: sd.update(state=[]), "to be a dict mapping packed parameter ids"),
    (lambda sd: sd.update(param_groups=sd["param_groups"][:1]),
     "different number of parameter groups"),
    (lambda sd: sd["param_groups"][0].update(params=[0, 1]), "different number of params"),
    (lambda sd: sd["param_groups"][0].update(extra=1), "Keys only in swap-in: \\['extra'\\]"),
    (lambda sd: sd["state"].update({7: {}}), "got extra keys \\[7\\]"),
    (lambda sd: sd["state"].update({0: 3}), "state entries to be dictionaries"),
])
def test_invalid_swap_in_state_raises_as_torch(edit, msg: str, torch) -> None:
    tps, topt = _setup(torch, lambda a: torch.tensor(a.copy(), requires_grad=True))
    lps, lopt = _setup(lucid, lambda a: nn.Parameter(lucid.tensor(a.copy())))
    tsd, lsd = copy.deepcopy(topt.state_dict()), copy.deepcopy(lopt.state_dict())
    edit(tsd)
    edit(lsd)
    with pytest.raises(RuntimeError, match=msg) as terr:
        with torch.optim.swap_in_optimizer_params_and_state(topt, dict(enumerate(tps)), tsd):
            pass
    with pytest.raises(RuntimeError, match=msg) as lerr:
        with swap_in_optimizer_params_and_state(lopt, dict(enumerate(lps)), lsd):
            pass
    assert str(lerr.value) == str(terr.value)


def test_needs_initialised_state() -> None:
    opt = optim.SGD([nn.Parameter(lucid.ones(2))], lr=0.1, momentum=0.9)
    with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
        with swap_in_optimizer_params_and_state(opt, {}, opt.state_dict()):
            pass
