"""Autocast's casting policy: which ops run in the low-precision dtype, which in float32 and
which at the widest input dtype, per device kind ("cpu", "gpu"), as PyTorch's lists are.

The state is per thread (PyTorch's is too). An op that autocast affects starts with::

    if _ac.state.on:
        input, weight = _ac.cast("linear", input, weight)

so with autocast off an op pays one attribute test; ``cast`` looks the op up in the table
of the inputs' device only while some autocast region is on. ``lucid.amp.autocast`` (the
public context manager) flips this state; this module is the one place that decides casts.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from .. import _dtype
from .._tensor import Tensor
from ._util import cast as _cast

__all__ = ["LOWER", "FP32", "PROMOTE", "CPU_POLICY", "GPU_POLICY", "state", "cast", "cast1",
           "policy", "device_kind", "clear_cache"]

LOWER, FP32, PROMOTE = "lower", "fp32", "promote"

_LOWER_CPU = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "bmm", "mm", "baddbmm", "addmm", "addbmm", "linear", "matmul",
              "prelu", "scaled_dot_product_attention")
_FP32_CPU = ("prod", "trace", "cdist", "mse_loss", "cosine_embedding_loss", "nll_loss",
             "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss", "cross_entropy",
             "l1_loss", "huber_loss", "margin_ranking_loss", "soft_margin_loss",
             "triplet_margin_loss", "multi_margin_loss", "kl_div", "multilabel_margin_loss",
             "binary_cross_entropy", "binary_cross_entropy_with_logits")
_LOWER_GPU = _LOWER_CPU + ("mv", "einsum", "addmv", "addr", "chain_matmul")
_FP32_GPU = ("acos", "asin", "arccos", "arcsin", "cosh", "erfinv", "exp", "expm1", "log", "log10",
             "log2", "log1p", "reciprocal", "rsqrt", "sinh", "tan", "pow", "softplus",
             "layer_norm", "group_norm", "norm", "cosine_similarity", "dist", "pdist", "cdist",
             "renorm", "logsumexp", "prod", "sum", "cumprod", "cumsum", "softmax", "log_softmax",
             "nll_loss", "cross_entropy", "poisson_nll_loss", "cosine_embedding_loss",
             "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss",
             "mse_loss", "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss",
             "triplet_margin_loss", "multi_margin_loss", "binary_cross_entropy_with_logits")
_PROMOTE_CPU = ("cat", "stack")
_PROMOTE_GPU = ("addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "tensordot",
                "scatter_add")


def _policy(lower: tuple, fp32: tuple, promote: tuple) -> dict[str, str]:
    t = dict.fromkeys(promote, PROMOTE)
    t.update(dict.fromkeys(fp32, FP32))
    t.update(dict.fromkeys(lower, LOWER))
    return t


# op name -> policy (PyTorch 2.13's CPU and CUDA autocast lists, for the ops lucid has)
CPU_POLICY: dict[str, str] = _policy(_LOWER_CPU, _FP32_CPU, _PROMOTE_CPU)
GPU_POLICY: dict[str, str] = _policy(_LOWER_GPU, _FP32_GPU, _PROMOTE_GPU)
_POLICY = {"cpu": CPU_POLICY, "gpu": GPU_POLICY}


class _State(threading.local):
    """This thread's autocast settings: ``on`` when any device kind is enabled."""

    def __init__(self) -> None:
        self.on = False
        self.enabled = {"cpu": False, "gpu": False}
        self.dtype = {"cpu": _dtype.bfloat16, "gpu": _dtype.float16}
        self.cache_enabled = True
        self.depth = 0  # nesting of autocast regions; the cast cache is cleared at 0
        self.cache: dict[int, tuple[Tensor, int, Tensor]] = {}


state = _State()


def device_kind(t: Tensor) -> str:
    """"gpu" for tensors of the MLX device, "cpu" for the numpy-array ones."""
    return "gpu" if t._be.name == "gpu" else "cpu"


def clear_cache() -> None:
    """Drop the float32 -> low-precision casts of parameters kept for this region."""
    state.cache.clear()


def _low(t: Tensor, d: _dtype.dtype) -> Tensor:
    # a float32 leaf parameter is cast once per autocast region (PyTorch's cast cache)
    if state.cache_enabled and t._rg and t.grad_fn is None and t._base is None:
        hit = state.cache.get(id(t))
        if hit is not None and hit[0] is t and hit[1] == t._vc[0] and hit[2].dtype is d:
            return hit[2]
        out = _cast(t, d)
        state.cache[id(t)] = (t, t._vc[0], out)
        return out
    return _cast(t, d)


def cast(op: str, *args: Any) -> tuple[Any, ...]:
    """``args`` with the floating tensors on an autocast-enabled device cast by ``op``'s
    policy: LOWER to the region's dtype, FP32 to float32, PROMOTE to the widest floating
    dtype among them. float64 tensors and other arguments pass unchanged, as in PyTorch."""
    kind = None
    for a in args:
        if isinstance(a, Tensor):
            kind = device_kind(a)
            break
    if kind is None or not state.enabled[kind]:
        return args
    pol = _POLICY[kind].get(op)
    if pol is None:
        return args
    if pol is LOWER:
        d = state.dtype[kind]
    elif pol is FP32:
        d = _dtype.float32
    else:
        d = None
        for a in args:
            if isinstance(a, Tensor) and a.dtype.is_floating_point \
                    and a.dtype is not _dtype.float64:
                d = a.dtype if d is None else _dtype.promote_types(d, a.dtype)
        if d is None:
            return args
    out = []
    for a in args:
        if isinstance(a, Tensor):
            ad = a.dtype
            if ad is not d and ad.is_floating_point and ad is not _dtype.float64 \
                    and device_kind(a) == kind:
                a = _low(a, d) if pol is LOWER and ad is _dtype.float32 else _cast(a, d)
        out.append(a)
    return tuple(out)


def cast1(op: str, t: Any) -> Any:
    """``cast`` of a single argument (returns it, not a tuple)."""
    return cast(op, t)[0]


def policy(op: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate an op called about once a step (a loss) with its autocast casts: its tensor
    arguments, positional and keyword, are cast by ``op``'s policy while autocast is on."""
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def f(*args: Any, **kwargs: Any) -> Any:
            if state.on:
                n = len(args)
                out = cast(op, *args, *kwargs.values())
                args, kwargs = out[:n], dict(zip(kwargs, out[n:]))
            return fn(*args, **kwargs)

        return f

    return deco
