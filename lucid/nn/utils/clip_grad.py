"""Gradient clipping by total norm or by value (``torch.nn.utils.clip_grad``)."""

from __future__ import annotations

import math
import types
import warnings
from collections.abc import Iterable

from ... import _dtype
from ..._tensor import Tensor
from ...autograd import no_grad
from ...ops.creation import tensor
from ...ops.movement import stack
from ...ops.reduce import norm, norms
from ...ops.views import written

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]

TensorOrTensors = Tensor | Iterable[Tensor]


def _as_list(tensors: TensorOrTensors) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def get_total_norm(tensors: TensorOrTensors, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The ``norm_type`` norm of the norms of ``tensors``, i.e. of all their values viewed as
    one vector (0-d tensor; 0.0 for no tensors). ``foreach`` is accepted for compatibility.

    Example::

        grads = [p.grad for p in net.parameters() if p.grad is not None]
        lucid.nn.utils.get_total_norm(grads)        # tensor(1.2345)
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return tensor(0.0)
    with no_grad():
        per = norms(tensors, norm_type)  # one 1-D tensor when all share device and dtype
        if per is None:
            first = tensors[0]
            each = [norm(t, norm_type).to(first.device) for t in tensors]
            d = each[0].dtype
            for n in each[1:]:
                d = _dtype.promote_types(d, n.dtype)
            per = stack([n.to(d) for n in each])
        total = norm(per, norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: TensorOrTensors, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the gradients of ``parameters`` in place by ``min(1, max_norm/(total_norm+1e-6))``.

    Example::

        total = lucid.nn.utils.get_total_norm(grads)
        lucid.nn.utils.clip_grads_with_norm_(net.parameters(), 1.0, total)
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        # as torch: max_norm / t is computed as reciprocal(t) * max_norm
        coef = ((total_norm + 1e-6).reciprocal() * float(max_norm)).clamp(max=1.0)
        if all(g.device == coef.device and g.dtype is coef.dtype for g in grads):
            coef = coef.item()  # the same float32/64 value, without a .to() for each
        for g in grads:
            if isinstance(coef, float) and not g._rg:
                try:  # in the gradient's memory: one pass (mul_ makes a product and copies it)
                    g._data = g._be.imul(g._data, coef)
                except ValueError:  # read-only memory: mul_ raises its error
                    g.mul_(coef)
                    continue
                written(g)
            else:
                g.mul_(coef if isinstance(coef, float) else coef.to(g.device))


def clip_grad_norm_(parameters: TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Clip the gradients of ``parameters`` in place so that their total norm (all gradients
    seen as one vector) is at most ``max_norm``; returns the total norm before clipping.

    ``norm_type`` may be ``inf``. With ``error_if_nonfinite`` a NaN/inf total norm raises
    instead of scaling by it. ``foreach`` is accepted for compatibility.

    Example::

        loss.backward()
        total = lucid.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
        opt.step()
    """
    if isinstance(parameters, Tensor):
        params = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        params = list(parameters)
        if is_generator and len(params) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=2)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated alias of ``clip_grad_norm_``.

    Example::

        lucid.nn.utils.clip_grad_norm(net.parameters(), 1.0)   # FutureWarning
    """
    warnings.warn("`lucid.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`lucid.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: TensorOrTensors, clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient of ``parameters`` in place to ``[-clip_value, clip_value]``.

    Example::

        lucid.nn.utils.clip_grad_value_(net.parameters(), clip_value=0.5)
    """
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
