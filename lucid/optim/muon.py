"""Muon: momentum SGD whose update is orthogonalised by a Newton-Schulz iteration."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .. import _dtype
from .._tensor import Tensor
from ._lerp import lerp
from .optimizer import Optimizer, check_lr_tensor, zeros_state

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


class Muon(Optimizer):
    """Muon (``torch.optim.Muon``: same options, defaults, state layout and numbers).

    For 2-d parameters only: ``buf = lerp(buf, g, 1 - momentum)``; the update
    ``lerp(g, buf, momentum)`` (Nesterov) or ``buf`` is orthogonalised by ``ns_steps``
    quintic Newton-Schulz iterations with ``ns_coefficients`` (in bfloat16, as PyTorch);
    then ``p *= 1 - lr*wd`` and ``p -= adjusted_lr * update``, where ``adjusted_lr`` is
    ``lr * sqrt(max(1, A/B))`` (``adjust_lr_fn`` None or ``"original"``) or
    ``0.2 * lr * sqrt(max(A, B))`` (``"match_rms_adamw"``) for an ``A x B`` parameter.
    State per parameter: ``momentum_buffer``. Optimize biases and embeddings with another
    optimizer (AdamW, say).

    Example::

        opt = lucid.optim.Muon([p for p in net.parameters() if p.ndim == 2], lr=0.02)
        opt.step()
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B,
                                                                DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS,
                 adjust_lr_fn: str | None = None) -> None:
        check_lr_tensor(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def init_state(self, state: dict[str, Any], param: Tensor, group: dict[str, Any]) -> None:
        if param.is_complex():
            raise RuntimeError("Muon does not support complex parameters")
        state["momentum_buffer"] = zeros_state(param)

    def prepare_group(self, group: dict[str, Any]) -> tuple:
        return (float(group["lr"]), float(group["weight_decay"]), float(group["momentum"]),
                group["nesterov"], tuple(group["ns_coefficients"]), int(group["ns_steps"]),
                float(group["eps"]), group["adjust_lr_fn"])

    def apply_single(self, grad: Tensor, param: Tensor, state: dict[str, Any],
                     hyper: tuple) -> tuple[tuple, tuple]:
        lr, wd, momentum, nesterov, coefficients, ns_steps, eps, adjust = hyper
        be = param._be
        p, g = param._data, grad._data
        if len(g.shape) != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        buf = state["momentum_buffer"]
        new_buf = lerp(be, buf._data, g, 1 - momentum)
        update = lerp(be, g, new_buf, momentum) if nesterov else new_buf
        update = zeropower_via_newtonschulz(be, update, coefficients, ns_steps, eps)
        rows, cols = p.shape[:2]
        p = be.mul(p, 1 - lr * wd)
        p = be.add(p, be.mul(be.astype(update, be.dtype_of(p)), -adjust_lr(lr, adjust,
                                                                            rows, cols)))
        return (param, buf), (p, new_buf)


def adjust_lr(lr: float, adjust_lr_fn: str | None, rows: int, cols: int) -> float:
    """Muon's learning rate for a ``rows x cols`` parameter (PyTorch's ``_adjust_lr``)."""
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


def zeropower_via_newtonschulz(be: Any, grad: Any, coefficients: tuple[float, float, float],
                               ns_steps: int, eps: float) -> Any:
    """The approximate orthogonalisation ``U S' V^T`` of a 2-d ``grad`` (``S'`` near 1) by
    ``ns_steps`` iterations ``X <- a X + (b G + c G G) X`` with ``G = X X^T``, on the
    shorter side, from ``X = grad / |grad|``. Each step is rounded to bfloat16 where
    PyTorch's bfloat16 operations round (products accumulate in float32); the result is a
    float32 array holding bfloat16 values."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    tall = grad.shape[0] > grad.shape[1]
    x = _bf16(be, grad)
    if tall:
        x = be.swapaxes(x, 0, 1)
    norm = _bf16(be, be.sqrt(be.sum(be.mul(x, x))))
    x = _bf16(be, be.div(x, be.clip(norm, _bf16_scalar(eps), None)))
    for _ in range(ns_steps):
        xt = be.swapaxes(x, 0, 1)
        gram = _bf16(be, be.matmul(x, xt))
        upd = _bf16(be, be.add(be.mul(gram, b), be.mul(be.matmul(gram, gram), c)))
        x = _bf16(be, be.add(be.mul(x, a), be.matmul(upd, x)))
    if tall:
        x = be.swapaxes(x, 0, 1)
    return x


def _bf16(be: Any, x: Any) -> Any:
    """``x`` rounded to bfloat16, held as float32."""
    f32 = _dtype.float32
    if be.dtype_of(x) is not f32:
        x = be.astype(x, f32)
    return be.astype(be.astype(x, _dtype.bfloat16), f32)


def _bf16_scalar(v: float) -> float:
    """A Python float rounded to bfloat16, as a 0-d clamp bound of a bfloat16 tensor is."""
    return float(_dtype.bfloat16.np.type(v))
