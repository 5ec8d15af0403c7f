"""Shared cases and helpers for the optimizer tests: every optimizer with its option sets,
a small model built identically in lucid and torch, and injected-gradient runs."""

from __future__ import annotations

from typing import Any

import numpy as np

import lucid
import lucid.nn as nn

# (optimizer name, options): every option of every optimizer appears at least once
CASES: list[tuple[str, dict[str, Any]]] = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "dampening": 0.3, "maximize": True}),
    ("Adam", {"lr": 1e-2}),
    ("Adam", {"lr": 1e-2, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 1e-2, "betas": (0.3, 0.9), "eps": 1e-6, "maximize": True}),
    ("Adam", {"lr": 1e-2, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 1e-2}),
    ("AdamW", {"lr": 1e-2, "weight_decay": 0.05, "amsgrad": True, "maximize": True}),
    ("RMSprop", {"lr": 1e-2}),
    ("RMSprop", {"lr": 1e-2, "centered": True, "momentum": 0.9, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 1e-2, "alpha": 0.9, "momentum": 0.5, "maximize": True}),
    ("Adagrad", {"lr": 5e-2}),
    ("Adagrad", {"lr": 5e-2, "lr_decay": 0.01, "weight_decay": 0.1,
                 "initial_accumulator_value": 0.1, "eps": 1e-8, "maximize": True}),
    ("Adamax", {"lr": 1e-2}),
    ("Adamax", {"lr": 1e-2, "betas": (0.8, 0.99), "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {"lr": 1e-2}),
    ("NAdam", {"lr": 1e-2, "weight_decay": 0.1, "momentum_decay": 8e-3}),
    ("NAdam", {"lr": 1e-2, "weight_decay": 0.1, "decoupled_weight_decay": True,
               "maximize": True}),
    ("RAdam", {"lr": 1e-2}),
    ("RAdam", {"lr": 1e-2, "weight_decay": 0.1}),
    ("RAdam", {"lr": 1e-2, "weight_decay": 0.1, "decoupled_weight_decay": True,
               "maximize": True}),
]


def case_id(case: tuple[str, dict[str, Any]]) -> str:
    name, kw = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in kw.items() if k != "lr")


SHAPES = [(7, 5), (5,), (300,), (3,)]


def arrays(seed: int = 0, dtype: str = "float32") -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def lucid_params(arrs: list[np.ndarray], device: str = "cpu") -> list[nn.Parameter]:
    return [nn.Parameter(lucid.tensor(a.copy(), device=device)) for a in arrs]


def grads(rng: np.random.Generator, dtype: str = "float32") -> list[np.ndarray]:
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def set_grads(params: list[Any], gs: list[np.ndarray]) -> None:
    for p, g in zip(params, gs):
        p.grad = lucid.tensor(g.copy(), device=p.device)


def values(params: list[Any]) -> list[np.ndarray]:
    return [p.detach().numpy().copy() for p in params]
