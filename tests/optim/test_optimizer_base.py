"""Optimizer mechanics without torch: parameter groups, errors, zero_grad, closures, hooks,
in-place updates, state_dict layout, round trips through lucid.save/load, loading rules."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
from optim_util import CASES, arrays, case_id, grads, lucid_params, set_grads, values

import lucid
import lucid.nn as nn
import lucid.optim as optim


def _make(name: str, params, **kw):
    return getattr(optim, name)(params, **kw)


# ---- construction and groups ---------------------------------------------------------------


def test_errors_on_construction() -> None:
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        optim.SGD(nn.Parameter(lucid.ones(2)), lr=0.1)
    w = nn.Parameter(lucid.ones(2))
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.Adam([w * 2])
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors"):
        optim.Adam([w, 3.0])
    with pytest.raises(TypeError, match="ordered collections"):
        optim.Adam([{"params": {w}}])
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                         "group"):
        optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.Adam([w], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.Adam([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero "
                                         "dampening"):
        optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        optim.Adam([w], fused=True, foreach=True)
    with pytest.raises(NotImplementedError, match="differentiable"):
        optim.SGD([w], differentiable=True)


def test_param_groups_fill_defaults_and_keep_their_own_options() -> None:
    a, b = nn.Parameter(lucid.ones(2)), nn.Parameter(lucid.ones(3))
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5, "momentum": 0.9}], lr=0.1)
    g0, g1 = opt.param_groups
    assert g0["params"] == [a] or g0["params"][0] is a
    assert g0["lr"] == 0.1 and g0["momentum"] == 0 and g1["lr"] == 0.5
    assert g1["params"][0] is b and g1["momentum"] == 0.9
    assert list(g0) == ["params", "lr", "momentum", "dampening", "weight_decay", "nesterov",
                        "maximize", "foreach", "differentiable", "fused"]
    c = nn.Parameter(lucid.ones(1))
    opt.add_param_group({"params": [c], "lr": 1e-3})
    assert len(opt.param_groups) == 3 and opt.param_groups[2]["dampening"] == 0
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    assert "Parameter Group 2" in repr(opt) and "lr: 0.001" in repr(opt)


def test_required_option_and_named_parameters() -> None:
    class Plain(optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": optim.optimizer.required})

    w = nn.Parameter(lucid.ones(2))
    with pytest.raises(ValueError, match="didn't specify a value of required optimization "
                                         "parameter lr"):
        Plain([w])
    assert Plain([{"params": [w], "lr": 1.0}]).param_groups[0]["lr"] == 1.0
    net = nn.Linear(2, 3)
    opt = optim.Adam(net.named_parameters())
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([w, w], lr=0.1)


def test_zero_grad() -> None:
    ps = lucid_params(arrays())
    set_grads(ps, grads(np.random.default_rng(0)))
    opt = optim.SGD(ps, lr=0.1)
    keep = ps[0].grad
    opt.zero_grad(set_to_none=False)
    assert ps[0].grad is keep and not keep.numpy().any()
    opt.zero_grad()
    assert all(p.grad is None for p in ps)


def test_step_skips_parameters_without_grad_and_runs_closure_with_grad_enabled() -> None:
    a, b = nn.Parameter(lucid.ones(3)), nn.Parameter(lucid.ones(2))
    opt = optim.Adam([a, b], lr=0.1)
    seen = []

    def closure():
        seen.append(lucid.is_grad_enabled())
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    with lucid.no_grad():
        loss = opt.step(closure)
    assert seen == [True] and float(loss) == 3.0
    assert b not in opt.state and np.all(b.numpy(force=True) == 1.0)
    assert np.allclose(a.detach().numpy(), 0.9)


def test_step_hooks() -> None:
    w = nn.Parameter(lucid.ones(2))
    w.grad = lucid.ones(2)
    opt = optim.SGD([w], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", float(w[0]))))
    opt.register_step_post_hook(lambda o, a, k: calls.append(("post", round(float(w[0]), 4))))
    opt.step()
    h1.remove()
    opt.step()
    assert calls == [("pre", 1.0), ("post", 0.9), ("post", 0.8)]


# ---- in-place updates ----------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=case_id)
@pytest.mark.parametrize("device", ["cpu", "numpy"])
def test_updates_in_place(case, device: str) -> None:
    name, kw = case
    ps = lucid_params(arrays(), device)
    mem = [p._data for p in ps]
    ver = [p._version for p in ps]
    opt = _make(name, ps, **kw)
    rng = np.random.default_rng(1)
    before = values(ps)
    for _ in range(2):
        set_grads(ps, grads(rng))
        opt.step()
    for p, m, v, b in zip(ps, mem, ver, before):
        assert p._data is m  # same array object: views and optimizer state stay valid
        assert p._version == v + 2
        assert p.requires_grad and p.is_leaf and p.grad_fn is None
        assert not np.array_equal(p.detach().numpy(), b)
    for st in opt.state.values():
        for k, t in st.items():
            if k not in ("step", "mu_product"):
                assert t._be.name == device and t._data.flags.c_contiguous


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_numpy_backend_and_float64(case) -> None:
    name, kw = case
    results = {}
    for device, dtype in [("cpu", "float32"), ("numpy", "float32"), ("cpu", "float64")]:
        ps = lucid_params(arrays(dtype=dtype), device)
        opt = _make(name, ps, **kw)
        rng = np.random.default_rng(3)
        for _ in range(5):
            set_grads(ps, grads(rng, dtype))
            opt.step()
        results[(device, dtype)] = values(ps)
        assert all(p.dtype == getattr(lucid, dtype) for p in ps)
        for st in opt.state.values():
            for k, t in st.items():
                want = lucid.float32 if k in ("step", "mu_product") else getattr(lucid, dtype)
                assert t.dtype == want, k
    for a, b, c in zip(*results.values()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-5)


def test_step_counter_dtype_follows_default_dtype() -> None:
    lucid.set_default_dtype(lucid.float64)
    w = nn.Parameter(lucid.ones(2))
    w.grad = lucid.ones(2)
    opt = optim.Adam([w])
    opt.step()
    assert opt.state[w]["step"].dtype == lucid.float64 and opt.state[w]["step"].ndim == 0


# ---- state_dict -----------------------------------------------------------------------------


def _trained(name: str, kw: dict, steps: int = 3, seed: int = 0):
    ps = lucid_params(arrays(seed))
    extra = nn.Parameter(lucid.ones(4))
    opt = _make(name, [{"params": ps[:2]}, {"params": ps[2:] + [extra], "lr": 0.02}], **kw)
    rng = np.random.default_rng(seed + 10)
    for _ in range(steps):
        set_grads(ps, grads(rng))  # `extra` never gets a gradient
        opt.step()
    return ps + [extra], opt, rng


def test_state_dict_layout() -> None:
    ps, opt, _ = _trained("Adam", {"amsgrad": True})
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2, 3, 4]]
    assert sd["param_groups"][1]["lr"] == 0.02 and list(sd["param_groups"][0])[-1] == "params"
    assert sorted(sd["state"]) == [0, 1, 2, 3]  # the parameter without grad has no state
    st = sd["state"][2]
    assert list(st) == ["step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"]
    assert st["step"].dtype == lucid.float32 and st["step"].shape == () and float(
        st["step"]) == 3.0
    assert st["exp_avg"] is opt.state[ps[2]]["exp_avg"]  # referenced, not copied


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_state_dict_round_trip_through_save_and_load(case) -> None:
    name, kw = case
    ps, opt, rng = _trained(name, kw)
    buf = io.BytesIO()
    lucid.save({"optim": opt.state_dict(), "params": [p.detach() for p in ps]}, buf)
    buf.seek(0)
    ck = lucid.load(buf)
    # a fresh optimizer over fresh parameters, loaded from the checkpoint
    ps2 = [nn.Parameter(t) for t in ck["params"]]
    opt2 = _make(name, [{"params": ps2[:2]}, {"params": ps2[2:], "lr": 0.5}], **kw)
    opt2.load_state_dict(ck["optim"])
    assert opt2.param_groups[1]["lr"] == 0.02 and opt2.param_groups[1]["params"][0] is ps2[2]
    state_rng = np.random.default_rng(99)
    for _ in range(3):
        gs = grads(state_rng)
        set_grads(ps[:4], gs)
        set_grads(ps2[:4], gs)
        opt.step()
        opt2.step()
    for a, b in zip(values(ps), values(ps2)):
        np.testing.assert_array_equal(a, b)


def test_load_state_dict_errors_leave_the_optimizer_unchanged() -> None:
    ps, opt, _ = _trained("Adam", {})
    sd = opt.state_dict()
    other = optim.Adam([nn.Parameter(lucid.ones(2))])
    before = other.state_dict()
    with pytest.raises(ValueError, match="loaded state dict has a different number of "
                                         "parameter groups"):
        other.load_state_dict(sd)
    two = optim.Adam([{"params": [nn.Parameter(lucid.ones(2))]},
                      {"params": [nn.Parameter(lucid.ones(2))]}])
    with pytest.raises(ValueError, match="loaded state dict contains a parameter group that "
                                         "doesn't match the size of optimizer's group"):
        two.load_state_dict(sd)
    assert other.state_dict() == before and len(two.state) == 0


def test_load_state_dict_copies_and_casts_to_the_parameter() -> None:
    ps, opt, _ = _trained("Adam", {})
    sd = opt.state_dict()
    ps64 = [nn.Parameter(lucid.tensor(p.detach().numpy().astype(np.float64),
                                      device="numpy")) for p in ps]
    opt64 = optim.Adam([{"params": ps64[:2]}, {"params": ps64[2:]}])
    opt64.load_state_dict(sd)
    st = opt64.state[ps64[0]]
    assert st["exp_avg"].dtype == lucid.float64 and st["exp_avg"]._be.name == "numpy"
    assert st["step"].dtype == lucid.float32  # the step counter keeps its dtype
    # lucid differs from PyTorch here: the loaded state never aliases the source dict
    assert not np.shares_memory(st["exp_avg"]._data, sd["state"][0]["exp_avg"]._data)
    same = optim.Adam([{"params": ps[:2]}, {"params": ps[2:]}])
    same.load_state_dict(sd)
    assert same.state[ps[0]]["exp_avg"] is not sd["state"][0]["exp_avg"]
    np.testing.assert_array_equal(same.state[ps[0]]["exp_avg"].numpy(),
                                  sd["state"][0]["exp_avg"].numpy())


def test_load_accepts_numpy_state_and_plain_number_steps() -> None:
    w = nn.Parameter(lucid.zeros(3))
    opt = optim.Adam([w], lr=0.1)
    opt.load_state_dict({
        "state": {0: {"step": 4, "exp_avg": np.ones(3), "exp_avg_sq": np.ones(3)}},
        "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0,
                          "amsgrad": False, "params": [0]}],
    })
    st = opt.state[w]
    assert isinstance(st["step"], lucid.Tensor) and float(st["step"]) == 4.0
    assert st["exp_avg"].dtype == lucid.float32
    g = opt.param_groups[0]
    assert g["maximize"] is False and g["decoupled_weight_decay"] is False  # filled in
    w.grad = lucid.zeros(3)
    opt.step()
    assert float(st["step"]) == 5.0


def test_adamw_keeps_decoupled_weight_decay_after_load() -> None:
    w = nn.Parameter(lucid.ones(2))
    adam = optim.Adam([w])
    opt = optim.AdamW([nn.Parameter(lucid.ones(2))])
    opt.load_state_dict(adam.state_dict())
    assert opt.param_groups[0]["decoupled_weight_decay"] is True


def test_adagrad_creates_state_in_the_constructor() -> None:
    ps = lucid_params(arrays())
    opt = optim.Adagrad(ps, initial_accumulator_value=0.25)
    assert len(opt.state) == len(ps)
    st = opt.state[ps[0]]
    assert float(st["step"]) == 0.0 and np.all(st["sum"].numpy() == 0.25)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.state_dict()


def test_a_subclass_defines_only_its_per_parameter_rule() -> None:
    """``Optimizer.step`` runs hooks, closure, lazy state and write-back for any rule."""

    class Scaled(optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.5})

        def prepare_group(self, group):
            return float(group["lr"])

        def init_state(self, state, param, group):
            state["count"] = 0

        def apply_single(self, grad, param, state, lr):
            state["count"] += 1
            return (param,), (param._data - lr * grad._data,)

    a, b = nn.Parameter(lucid.ones(2)), nn.Parameter(lucid.ones(3))
    a.grad = lucid.ones(2)
    opt = Scaled([a, b])
    calls: list[str] = []
    opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append("post"))
    version = a._version
    assert opt.step(lambda: calls.append("closure") or 7) == 7
    assert calls == ["pre", "closure", "post"]
    np.testing.assert_array_equal(a.detach().numpy(), [0.5, 0.5])
    assert a._version == version + 1 and b not in opt.state
    opt.step()
    assert opt.state[a]["count"] == 2 and opt.state_dict()["state"] == {0: {"count": 2}}
    with pytest.raises(NotImplementedError):
        optim.Optimizer([a], {}).step()


# ---- integer state loads as the parameter's dtype, as PyTorch casts it --------------------

_INT_STATE_OPTIMIZERS = ["Adam", "AdamW", "SGD", "RMSprop", "Adagrad", "Adamax", "NAdam",
                         "RAdam", "Adadelta"]


def _int_state_run(m, name: str, which: str) -> tuple[list, dict]:
    """One step, the state's tensors turned to int64 (``which``: "buffers", "step" or
    "all"), loaded into a fresh optimizer, one more step: the parameter and state dtypes."""
    kw = {"momentum": 0.9} if name == "SGD" else {}
    p = m.nn.Parameter(m.tensor([1.0, 2.0, 3.0]))
    opt = getattr(m.optim, name)([p], lr=0.1, **kw)
    p.grad = m.tensor([0.1, 0.2, 0.3])
    opt.step()
    sd = opt.state_dict()
    st = sd["state"][0]
    for k, v in list(st.items()):
        is_step = k == "step"
        if isinstance(v, m.Tensor) and (which == "all" or (which == "step") == is_step):
            st[k] = v.to(m.int64) if is_step else v.round().to(m.int64)
    p2 = m.nn.Parameter(m.tensor([1.0, 2.0, 3.0]))
    opt2 = getattr(m.optim, name)([p2], lr=0.1, **kw)
    opt2.load_state_dict(sd)
    p2.grad = m.tensor([0.1, 0.2, 0.3])
    opt2.step()
    dtypes = {k: str(v.dtype).rsplit(".", 1)[-1] for k, v in opt2.state[p2].items()
              if hasattr(v, "dtype")}
    return p2.detach().numpy().tolist(), dtypes


@pytest.mark.parametrize("which", ["buffers", "step", "all"])
@pytest.mark.parametrize("name", _INT_STATE_OPTIMIZERS)
def test_integer_state_is_cast_to_the_parameter_dtype(name: str, which: str) -> None:
    values, dtypes = _int_state_run(lucid, name, which)
    assert all(np.isfinite(values))
    for k, d in dtypes.items():
        if k == "step":
            assert d == ("int64" if which != "buffers" else "float32"), k
        else:
            assert d == "float32", k


@pytest.mark.parametrize("which", ["buffers", "step", "all"])
@pytest.mark.parametrize("name", _INT_STATE_OPTIMIZERS)
def test_integer_state_against_torch(torch, name: str, which: str) -> None:
    lv, ld = _int_state_run(lucid, name, which)
    tv, td = _int_state_run(torch, name, which)
    np.testing.assert_allclose(lv, tv, rtol=1e-5)
    assert ld == td


def test_integer_adam_state_from_numpy_steps_like_float_state() -> None:
    w = nn.Parameter(lucid.zeros(3))
    opt = optim.Adam([w], lr=0.1)
    opt.load_state_dict({
        "state": {0: {"step": np.int64(4), "exp_avg": np.ones(3, np.int64),
                      "exp_avg_sq": np.ones(3, np.int64)}},
        "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0,
                          "amsgrad": False, "params": [0]}],
    })
    st = opt.state[w]
    assert st["exp_avg"].dtype == lucid.float32 and st["exp_avg_sq"].dtype == lucid.float32
    w.grad = lucid.ones(3)
    opt.step()
    # exp_avg = 0.9 + 0.1 = 1, exp_avg_sq = 0.999 + 0.001 = 1, bias corrections at step 5
    b1, b2 = 1 - 0.9 ** 5, 1 - 0.999 ** 5
    want = -0.1 * (1 / b1) / (np.sqrt(1 / b2) + 1e-8)
    np.testing.assert_allclose(w.detach().numpy(), np.full(3, want), rtol=1e-5)
