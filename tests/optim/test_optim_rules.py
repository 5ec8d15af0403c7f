"""Each optimizer against its textbook update rule, written here in float64 numpy (no torch):
five steps, every option set, on the "cpu" and "numpy" backends."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from optim_util import CASES, arrays, case_id, grads, lucid_params, set_grads, values

import lucid
import lucid.nn as nn
import lucid.optim as optim

DEFAULTS = {
    "SGD": {"momentum": 0.0, "dampening": 0.0, "weight_decay": 0.0, "nesterov": False},
    "Adam": {"betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0, "amsgrad": False,
             "decoupled_weight_decay": False},
    "AdamW": {"betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 1e-2, "amsgrad": False,
              "decoupled_weight_decay": True},
    "RMSprop": {"alpha": 0.99, "eps": 1e-8, "weight_decay": 0.0, "momentum": 0.0,
                "centered": False},
    "Adagrad": {"lr_decay": 0.0, "weight_decay": 0.0, "initial_accumulator_value": 0.0,
                "eps": 1e-10},
    "Adamax": {"betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0},
    "NAdam": {"betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0, "momentum_decay": 4e-3,
              "decoupled_weight_decay": False},
    "RAdam": {"betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0,
              "decoupled_weight_decay": False},
}


def textbook(name: str, o: dict[str, Any], p: np.ndarray, g: np.ndarray, s: dict, t: int
             ) -> None:
    """One step of ``name`` on float64 arrays, in place (the algorithms of the PyTorch docs)."""
    lr = o["lr"]
    g = -g if o.get("maximize") else g.copy()
    wd = o["weight_decay"]
    if wd and o.get("decoupled_weight_decay"):
        p *= 1 - lr * wd
    elif wd:
        g = g + wd * p
    if name == "SGD":
        if o["momentum"]:
            s["b"] = g.copy() if t == 1 else o["momentum"] * s["b"] + (1 - o["dampening"]) * g
            g = g + o["momentum"] * s["b"] if o["nesterov"] else s["b"]
        p -= lr * g
        return
    if name == "Adagrad":
        s.setdefault("sum", np.full_like(p, o["initial_accumulator_value"]))
        s["sum"] += g * g
        p -= lr / (1 + (t - 1) * o["lr_decay"]) * g / (np.sqrt(s["sum"]) + o["eps"])
        return
    if name == "RMSprop":
        a = o["alpha"]
        s["sq"] = a * s.get("sq", 0) + (1 - a) * g * g
        avg = s["sq"]
        if o["centered"]:
            s["ga"] = a * s.get("ga", 0) + (1 - a) * g
            avg = avg - s["ga"] ** 2
        avg = np.sqrt(avg) + o["eps"]
        if o["momentum"]:
            s["b"] = o["momentum"] * s.get("b", 0) + g / avg
            p -= lr * s["b"]
        else:
            p -= lr * g / avg
        return
    b1, b2 = o["betas"]
    eps = o["eps"]
    s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
    if name == "Adamax":
        s["u"] = np.maximum(b2 * s.get("u", 0), np.abs(g) + eps)
        p -= lr / (1 - b1**t) * s["m"] / s["u"]
        return
    s["v"] = b2 * s.get("v", 0) + (1 - b2) * g * g
    if name in ("Adam", "AdamW"):
        v = s["v"]
        if o["amsgrad"]:
            s["vmax"] = v = np.maximum(s.get("vmax", 0), v)
        p -= lr / (1 - b1**t) * s["m"] / (np.sqrt(v) / math.sqrt(1 - b2**t) + eps)
    elif name == "NAdam":
        mu = b1 * (1 - 0.5 * 0.96 ** (t * o["momentum_decay"]))
        mu1 = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * o["momentum_decay"]))
        # as PyTorch, the running product is a float32 scalar (the default dtype's)
        s["mu_prod"] = float(np.float32(s.get("mu_prod", 1.0)) * np.float32(mu))
        d = np.sqrt(s["v"] / (1 - b2**t)) + eps
        p -= lr * (1 - mu) / (1 - s["mu_prod"]) * g / d
        p -= lr * mu1 / (1 - s["mu_prod"] * mu1) * s["m"] / d
    else:  # RAdam
        m_hat = s["m"] / (1 - b1**t)
        rho_inf = 2 / (1 - b2) - 1
        rho = rho_inf - 2 * t * b2**t / (1 - b2**t)
        if rho > 5:
            r = math.sqrt((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho))
            p -= lr * m_hat * r * math.sqrt(1 - b2**t) / (np.sqrt(s["v"]) + eps)
        else:
            p -= lr * m_hat


@pytest.mark.parametrize("device", ["cpu", "numpy"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_matches_textbook_rule(case, device: str) -> None:
    name, kw = case
    opts = {**DEFAULTS[name], **kw}
    ref = [a.copy() for a in arrays(dtype="float64")]
    ps = lucid_params(arrays(dtype="float64"), device)
    opt = getattr(optim, name)(ps, **kw)
    states: list[dict] = [{} for _ in ps]
    rng = np.random.default_rng(7)
    steps = 8 if name == "RAdam" else 5  # RAdam rectifies from step 6 on (beta2 = 0.999)
    for t in range(1, steps + 1):
        gs = grads(rng, "float64")
        set_grads(ps, gs)
        opt.step()
        for p, g, s in zip(ref, gs, states):
            textbook(name, opts, p, g, s, t)
    for a, b in zip(values(ps), ref):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_maximize_equals_negated_gradients() -> None:
    for name in ("SGD", "Adam", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam"):
        kw = {"lr": 0.01, "momentum": 0.9} if name in ("SGD", "RMSprop") else {"lr": 0.01}
        a, b = lucid_params(arrays()), lucid_params(arrays())
        oa = getattr(optim, name)(a, maximize=True, **kw)
        ob = getattr(optim, name)(b, **kw)
        rng = np.random.default_rng(0)
        for _ in range(3):
            gs = grads(rng)
            set_grads(a, gs)
            set_grads(b, [-g for g in gs])
            oa.step()
            ob.step()
        for x, y in zip(values(a), values(b)):
            np.testing.assert_array_equal(x, y)


def test_adamw_is_adam_with_decoupled_weight_decay() -> None:
    a, b = lucid_params(arrays()), lucid_params(arrays())
    oa = optim.AdamW(a, lr=0.01, weight_decay=0.1)
    ob = optim.Adam(b, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)
    rng = np.random.default_rng(0)
    for _ in range(3):
        gs = grads(rng)
        set_grads(a, gs)
        set_grads(b, gs)
        oa.step()
        ob.step()
    for x, y in zip(values(a), values(b)):
        np.testing.assert_array_equal(x, y)


def test_changing_lr_between_steps_takes_effect() -> None:
    w = nn.Parameter(lucid.zeros(1, dtype=lucid.float64))
    opt = optim.SGD([w], lr=1.0)
    for lr in (1.0, 0.5, 0.25):
        opt.param_groups[0]["lr"] = lr
        w.grad = lucid.ones(1, dtype=lucid.float64)
        opt.step()
    assert w.item() == -1.75


def test_training_reduces_the_loss() -> None:
    lucid.manual_seed(0)
    x = lucid.randn(64, 4)
    y = x @ lucid.tensor([[1.0], [-2.0], [0.5], [3.0]])
    for name in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam"):
        net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        opt = getattr(optim, name)(net.parameters(), lr=0.05)
        first = None
        for _ in range(60):
            opt.zero_grad()
            loss = ((net(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            first = first if first is not None else loss.item()
        assert loss.item() < 0.5 * first, name
