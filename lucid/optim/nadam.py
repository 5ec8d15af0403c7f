"""NAdam: Adam with Nesterov momentum and momentum decay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    bump,
    check_flags,
    check_range,
    moment_group,
    scalar_tensor,
    zeros_state,
)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam (``torch.optim.NAdam``: same options, defaults, state layout and numbers).

    With ``mu_t = beta1 * (1 - 0.5 * 0.96**(t*momentum_decay))`` and ``mu_product`` their
    running product: ``m = lerp(m, g, 1-beta1)``, ``v = beta2*v + (1-beta2)*g*g``,
    ``d = sqrt(v/(1-beta2**t)) + eps``, then
    ``p += -lr*(1-mu_t)/(1-mu_product) * g/d - lr*mu_{t+1}/(1-mu_product*mu_{t+1}) * m/d``.
    ``decoupled_weight_decay=True`` scales ``p`` by ``1 - lr*wd`` instead of adding ``wd*p``
    to ``g``. State: ``step``, ``mu_product`` (0-d tensors), ``exp_avg``, ``exp_avg_sq``.

    Example::

        opt = lucid.optim.NAdam(net.parameters(), lr=2e-3, momentum_decay=4e-3)
        opt.step()
    """

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_range(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        check_flags(defaults)
        super().__init__(params, defaults)

    def init_state(self, state: dict[str, Any], param: Tensor, group: dict[str, Any]) -> None:
        state["step"] = scalar_tensor(0.0)
        state["mu_product"] = scalar_tensor(1.0)
        state["exp_avg"] = zeros_state(param)
        state["exp_avg_sq"] = zeros_state(param)

    def prepare_group(self, group: dict[str, Any]) -> tuple:
        lr, beta1, beta2, decay, l2 = moment_group(group)
        return (lr, beta1, beta2, group["eps"], l2, decay, group["momentum_decay"],
                group["maximize"])

    def apply_single(self, grad: Tensor, param: Tensor, state: dict[str, Any],
                     hyper: tuple) -> tuple[tuple, tuple]:
        lr, beta1, beta2, eps, l2, decay, md, maximize = hyper
        t = bump(state["step"])
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (t * md)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((t + 1) * md)))
        mp = _scale(state["mu_product"], mu)
        m = state["exp_avg"]
        v = state["exp_avg_sq"]
        return (param, m, v), param._be.nadam_update(
            param._data, grad._data, m._data, v._data, beta1=beta1, beta2=beta2, eps=eps,
            weight_decay=l2, decay=decay, bc2=1 - beta2**t,
            c_grad=-lr * (1.0 - mu) / (1.0 - mp), c_avg=(-lr * mu_next) / (1.0 - mp * mu_next),
            maximize=maximize)


def _scale(t: Any, factor: float) -> float:
    """``t *= factor`` for a 0-d state tensor, rounded in its own dtype; returns the value."""
    be = t._be
    t._data = be.assign(t._data, be.mul(t._data, be.asarray(factor, be.dtype_of(t._data))))
    t._vc[0] += 1
    return float(be.item(t._data))
