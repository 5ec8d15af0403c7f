"""SparseAdam: Adam that updates only the rows a gradient touches ("lazy" Adam)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .._tensor import Tensor
from .optimizer import Optimizer, zeros_state

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Lazy Adam for embedding tables (``torch.optim.SparseAdam``: same options, defaults,
    state and numbers).

    PyTorch feeds it sparse gradients (``nn.Embedding(..., sparse=True)``) and updates the
    moments and the parameter only at the gradient's indices. lucid's gradients are dense,
    so the touched rows are the rows (entries along dim 0) where the gradient has a nonzero
    value: for an embedding table these are exactly the rows looked up in the batch (a
    looked-up row whose gradient is exactly zero everywhere is skipped, where PyTorch would
    decay its moments). For those rows::

        m += (1-beta1)*(g - m);  v += (1-beta2)*(g*g - v)
        p -= lr*sqrt(1-beta2**t)/(1-beta1**t) * m / (sqrt(v) + eps)

    State per parameter: ``step`` (a Python int, as in PyTorch), ``exp_avg``, ``exp_avg_sq``.

    Example::

        emb = lucid.nn.Embedding(10000, 64)
        opt = lucid.optim.SparseAdam(emb.parameters(), lr=1e-3)
    """

    _scalar_state = ()  # "step" is a Python int

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})

    def init_state(self, state: dict[str, Any], param: Tensor, group: dict[str, Any]) -> None:
        state["step"] = 0
        state["exp_avg"] = zeros_state(param)
        state["exp_avg_sq"] = zeros_state(param)

    def prepare_group(self, group: dict[str, Any]) -> tuple:
        beta1, beta2 = (float(b) for b in group["betas"])
        return float(group["lr"]), beta1, beta2, float(group["eps"]), group["maximize"]

    def apply_single(self, grad: Tensor, param: Tensor, state: dict[str, Any],
                     hyper: tuple) -> tuple[tuple, tuple]:
        lr, beta1, beta2, eps, maximize = hyper
        state["step"] += 1
        t = state["step"]
        be = param._be
        p, g = param._data, grad._data
        m, v = state["exp_avg"], state["exp_avg_sq"]
        if maximize:
            g = be.neg(g)
        nz = be.ne(g, 0)
        if len(p.shape) > 1:
            nz = be.any(nz, axis=tuple(range(1, len(p.shape))), keepdims=True)
        # PyTorch's order of operations (sparse_adam), applied where rows are touched
        upd_m = be.mul(be.sub(g, m._data), 1 - beta1)
        upd_v = be.mul(be.sub(be.mul(g, g), v._data), 1 - beta2)
        numer = be.add(upd_m, m._data)
        new_v = be.add(upd_v, v._data)
        denom = be.add(be.sqrt(new_v), eps)
        step_size = lr * math.sqrt(1 - beta2**t) / (1 - beta1**t)
        new_p = be.add(p, be.mul(be.div(numer, denom), -step_size))
        return (param, m, v), (be.where(nz, new_p, p), be.where(nz, numer, m._data),
                               be.where(nz, new_v, v._data))
