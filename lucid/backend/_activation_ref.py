"""The reference of the backends' ``activation`` / ``activation_backward``: each pointwise
activation composed of backend methods, so every backend (numpy reference, MLX) can run it
as is; the "cpu" backend replaces it with one numba pass (kernels/pointwise.py).

Parameters, in order: softplus (beta, threshold), elu (alpha, scale, 1 / input scale: elu,
selu and celu), hardtanh (min, max); the others take none. The cut-off tests are written so
that NaN takes the pass-through branch, value and gradient, as torch's kernels do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def softplus_stable(be: Any, z: Any) -> Any:
    """log(1 + exp(z)) without overflow: max(z, 0) + log1p(exp(-|z|))."""
    return be.add(be.maximum(z, 0), be.log1p(be.exp(be.neg(be.abs(z)))))


def _zero(be: Any, g: Any) -> Any:
    return be.zeros_like(g)


def _clip6(be: Any, x: Any) -> Any:
    return be.clip(be.add(x, 3), 0, 6)


FORWARD: dict[str, Callable[..., Any]] = {
    "sigmoid": lambda be, x: be.sigmoid(x),
    "tanh": lambda be, x: be.tanh(x),
    "silu": lambda be, x: be.mul(x, be.sigmoid(x)),
    "mish": lambda be, x: be.mul(x, be.tanh(softplus_stable(be, x))),
    "softplus": lambda be, x, beta, threshold: be.where(
        be.gt(be.mul(x, beta), threshold), x,
        be.div(softplus_stable(be, be.mul(x, beta)), beta)),
    # torch's log_sigmoid writes a new row-major result whatever the input's layout (the other
    # activations keep the input's, as the ufuncs here do)
    "logsigmoid": lambda be, x: be.contiguous(be.neg(softplus_stable(be, be.neg(x)))),
    "elu": lambda be, x, alpha, scale, iscale: be.mul(be.where(
        be.le(x, 0), be.mul(be.expm1(be.mul(be.minimum(x, 0), iscale)), alpha), x), scale),
    "hardswish": lambda be, x: be.mul(x, be.div(_clip6(be, x), 6)),
    "hardsigmoid": lambda be, x: be.div(_clip6(be, x), 6),
    "hardtanh": lambda be, x, lo, hi: be.clip(x, lo, hi),
}


def _silu_df(be: Any, x: Any, g: Any) -> Any:
    s = be.sigmoid(x)
    return be.mul(g, be.mul(s, be.add(be.mul(x, be.sub(1, s)), 1)))


def _mish_df(be: Any, x: Any, g: Any) -> Any:
    t = be.tanh(softplus_stable(be, x))
    return be.mul(g, be.add(t, be.mul(be.mul(x, be.sigmoid(x)), be.sub(1, be.mul(t, t)))))


BACKWARD: dict[str, Callable[..., Any]] = {
    "silu": _silu_df,
    "mish": _mish_df,
    "softplus": lambda be, x, g, beta, threshold: be.where(
        be.gt(be.mul(x, beta), threshold), g, be.mul(g, be.sigmoid(be.mul(x, beta)))),
    "logsigmoid": lambda be, x, g: be.mul(g, be.sigmoid(be.neg(x))),
    "elu": lambda be, x, g, alpha, scale, iscale: be.mul(be.where(
        be.le(x, 0),
        be.mul(g, be.mul(be.exp(be.mul(be.minimum(x, 0), iscale)), alpha * iscale)), g), scale),
    "hardswish": lambda be, x, g: be.where(
        be.le(x, -3), _zero(be, g),
        be.where(be.lt(x, 3), be.mul(g, be.add(be.div(x, 3), 0.5)), g)),
    "hardsigmoid": lambda be, x, g: be.where(be.logical_and(be.gt(x, -3), be.lt(x, 3)),
                                             be.div(g, 6), _zero(be, g)),
    "hardtanh": lambda be, x, g, lo, hi: be.where(be.logical_or(be.le(x, lo), be.ge(x, hi)),
                                                  _zero(be, g), g),
}


def forward(be: Any, name: str, x: Any, params: tuple[float, ...] = ()) -> Any:
    """``f(x)`` of the activation ``name`` through ``be``'s methods."""
    return FORWARD[name](be, x, *params)


def backward(be: Any, name: str, x: Any, g: Any, params: tuple[float, ...] = ()) -> Any:
    """``g * f'(x)`` of the activation ``name`` (a key of BACKWARD) through ``be``'s methods."""
    return BACKWARD[name](be, x, g, *params)


class ActivationReference:
    """The backend methods ``activation`` / ``activation_backward`` as these compositions over
    the backend's own methods (mixed into the numpy reference, "gpu" and ``GraphBackend``)."""

    def activation(self, name: str, x: Any, params: tuple[float, ...] = ()) -> Any:
        """The pointwise activation ``name`` (silu, mish, softplus, logsigmoid, elu, hardswish,
        hardsigmoid, hardtanh, sigmoid, tanh) with its parameters."""
        return forward(self, name, x, params)

    def activation_backward(self, name: str, x: Any, g: Any,
                            params: tuple[float, ...] = ()) -> Any:
        """``g * f'(x)`` of ``activation(name, x, params)`` (all but sigmoid and tanh, whose
        gradients come from their outputs: ``sigmoid_backward``, ``tanh_backward``)."""
        return backward(self, name, x, g, params)
