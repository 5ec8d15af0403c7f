"""``autocast``: regions where chosen ops run in a lower-precision dtype, as
``torch.autocast``. The casting policy (which ops, which dtype) lives in
``lucid/ops/_autocast.py``; this module owns the public switches."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..ops import _autocast as _ac

__all__ = ["autocast", "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
           "set_autocast_dtype", "is_autocast_available", "clear_autocast_cache",
           "is_autocast_cache_enabled", "set_autocast_cache_enabled", "custom_fwd", "custom_bwd"]

F = TypeVar("F", bound=Callable[..., Any])

# device_type string -> device kind ("cuda" and "mps" name lucid's "gpu" device)
_KINDS = {"cpu": "cpu", "gpu": "gpu", "cuda": "gpu", "mps": "gpu"}
_LOW = (_dtype.bfloat16, _dtype.float16)


def _kind(device_type: object) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    kind = _KINDS.get(device_type.split(":", 1)[0])
    if kind is None:
        raise RuntimeError(f"unsupported autocast device_type '{device_type}': expected 'cpu' "
                           "or 'gpu' ('cuda' and 'mps' name lucid's gpu device)")
    return kind


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast supports ``device_type`` ("cpu", "gpu", "cuda", "mps")."""
    return isinstance(device_type, str) and device_type.split(":", 1)[0] in _KINDS


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` in this thread; with no argument, for the
    gpu device (PyTorch's default, "cuda")."""
    return _ac.state.enabled[_kind("gpu" if device_type is None else device_type)]


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Turn autocast on or off for ``device_type`` in this thread (``autocast`` is the usual
    way: it restores the previous setting on exit)."""
    st = _ac.state
    st.enabled[_kind(device_type)] = bool(enabled)
    st.on = st.enabled["cpu"] or st.enabled["gpu"]


def get_autocast_dtype(device_type: str) -> _dtype.dtype:
    """The dtype autocast uses for ``device_type``: bfloat16 for "cpu" and float16 for the
    gpu unless a region or ``set_autocast_dtype`` chose another."""
    return _ac.state.dtype[_kind(device_type)]


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    """Set the low-precision dtype autocast uses for ``device_type`` in this thread."""
    _ac.state.dtype[_kind(device_type)] = _dtype.to_dtype(dtype)


def get_autocast_cpu_dtype() -> _dtype.dtype:
    """``get_autocast_dtype("cpu")`` (torch's older name)."""
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype: Any) -> None:
    """``set_autocast_dtype("cpu", dtype)`` (torch's older name)."""
    set_autocast_dtype("cpu", dtype)


def is_autocast_cpu_enabled() -> bool:
    """``is_autocast_enabled("cpu")`` (torch's older name)."""
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """``set_autocast_enabled("cpu", enabled)`` (torch's older name)."""
    set_autocast_enabled("cpu", enabled)


def clear_autocast_cache() -> None:
    """Drop the cached low-precision copies of parameters (done when the outermost autocast
    region exits)."""
    _ac.clear_cache()


def is_autocast_cache_enabled() -> bool:
    """Whether autocast regions cast each float32 parameter once and reuse the copy."""
    return _ac.state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Turn the parameter cast cache of autocast regions on or off for this thread."""
    _ac.state.cache_enabled = bool(enabled)


class autocast:
    """Run the ops of a region in mixed precision, as ``torch.autocast``.

    Inside, ops on tensors of ``device_type`` follow PyTorch's lists: matmul, mm, bmm,
    addmm, baddbmm, linear, the convolutions, prelu and scaled_dot_product_attention run in
    ``dtype`` (default bfloat16 on "cpu", float16 on "gpu"/"cuda"); losses, ``prod`` and
    (on the gpu) softmax, log_softmax, layer_norm, group_norm, sums, exp, log, pow, ... run in
    float32; ``cat``/``stack`` (and on the gpu ``dot``, ``addcmul``, ...) take the widest
    input dtype. Other ops run in their inputs' dtype. float64 tensors are never cast.
    Regions nest (``enabled=False`` turns autocast off inside), work as decorators, and
    restore the previous state on exit. Gradients flow back to each input in its own dtype.

    Example::

        with lucid.autocast("cpu"):
            y = model(x)             # linear layers run in bfloat16
            loss = F.mse_loss(y, t)  # float32
        loss.backward()
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        self._kind = _kind(device_type)
        self.device = device_type
        self.fast_dtype = (_ac.state.dtype[self._kind] if dtype is None
                           else _dtype.to_dtype(dtype))
        self._enabled = bool(enabled)
        self._cache_enabled = cache_enabled
        self._saved: list[tuple] = []
        if self._enabled and self.fast_dtype not in _LOW:
            where = "CPU" if self._kind == "cpu" else "GPU"
            warnings.warn(f"In {where} autocast, but the target dtype is not supported. "
                          f"Disabling autocast.\n{where} Autocast only supports dtypes of "
                          "lucid.bfloat16, lucid.float16 currently.", stacklevel=2)
            self._enabled = False

    def __enter__(self) -> autocast:
        st, k = _ac.state, self._kind
        self._saved.append((st.enabled[k], st.dtype[k], st.cache_enabled))
        st.enabled[k] = self._enabled
        st.dtype[k] = self.fast_dtype
        if self._cache_enabled is not None:
            st.cache_enabled = bool(self._cache_enabled)
        st.on = st.enabled["cpu"] or st.enabled["gpu"]
        st.depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        st, k = _ac.state, self._kind
        st.depth -= 1
        if st.depth == 0:
            st.cache.clear()
        st.enabled[k], st.dtype[k], st.cache_enabled = self._saved.pop()
        st.on = st.enabled["cpu"] or st.enabled["gpu"]

    def __call__(self, func: F) -> F:
        """Use as a decorator: ``func`` runs inside this region."""
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def __repr__(self) -> str:
        return (f"autocast(device_type={self.device!r}, dtype={self.fast_dtype!r}, "
                f"enabled={self._enabled})")


def _cast_inputs(value: Any, kind: str, d: _dtype.dtype) -> Any:
    """``value`` with its floating tensors on device kind ``kind`` (float64 excepted) cast to
    ``d``, through lists, tuples and mappings."""
    if isinstance(value, Tensor):
        vd = value.dtype
        if vd.is_floating_point and vd is not _dtype.float64 and _ac.device_kind(value) == kind:
            return value.to(d)  # type: ignore[attr-defined]
        return value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, Mapping):
        return {_cast_inputs(k, kind, d): _cast_inputs(v, kind, d) for k, v in value.items()}
    if isinstance(value, Iterable):
        it = (_cast_inputs(v, kind, d) for v in value)
        return type(value)(it) if isinstance(value, (list, tuple)) else it
    return value


def custom_fwd(fwd: Any = None, *, device_type: str, cast_inputs: Any = None) -> Any:
    """Decorate the ``forward`` of a ``lucid.autograd.Function`` for autocast, as
    ``torch.amp.custom_fwd``: with ``cast_inputs`` (a dtype), inside an autocast region its
    floating tensor inputs are cast to that dtype and ``forward`` runs with autocast off;
    without it, ``forward`` runs under the current autocast state. Pair with ``custom_bwd``.

    Example::

        class MyMM(lucid.autograd.Function):
            @staticmethod
            @lucid.amp.custom_fwd(device_type="cpu", cast_inputs=lucid.float32)
            def forward(ctx, a, b): ...

            @staticmethod
            @lucid.amp.custom_bwd(device_type="cpu")
            def backward(ctx, grad): ...
    """
    kind = _kind(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    d = None if cast_inputs is None else _dtype.to_dtype(cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        on = _ac.state.enabled[kind]
        if d is None:
            ctx._fwd_used_autocast = on
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not on:
            return fwd(*args, **kwargs)
        with autocast(device_type, enabled=False):
            return fwd(*_cast_inputs(args, kind, d), **_cast_inputs(kwargs, kind, d))

    return decorate_fwd


def custom_bwd(bwd: Any = None, *, device_type: str) -> Any:
    """Decorate the ``backward`` of a ``lucid.autograd.Function``: it runs under the autocast
    state its ``custom_fwd``-decorated forward saw, as ``torch.amp.custom_bwd``."""
    _kind(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
