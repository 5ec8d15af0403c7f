"""Shared pieces of the "gpu" backend: the MLX import, device detection and dtype maps.

Only ``lucid/backend/gpu.py`` and ``lucid/backend/_gpu_*.py`` import MLX; this module is the one
place that does, so a missing MLX gives one clear error.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import _dtype

INSTALL_HINT = (
    'The "gpu" device runs on MLX, which is not installed. Install it with: '
    'pip install "lucid-jit[gpu]"'
)

try:
    import mlx.core as mx
except ImportError:  # pragma: no cover - exercised in a subprocess without mlx
    raise RuntimeError(INSTALL_HINT) from None

# lucid dtype <-> mlx dtype
MX: dict[_dtype.dtype, Any] = {
    _dtype.bool_: mx.bool_, _dtype.uint8: mx.uint8, _dtype.int8: mx.int8,
    _dtype.int16: mx.int16, _dtype.int32: mx.int32, _dtype.int64: mx.int64,
    _dtype.float16: mx.float16, _dtype.bfloat16: mx.bfloat16, _dtype.float32: mx.float32,
    _dtype.float64: mx.float64,
    _dtype.complex64: mx.complex64,  # MLX has no complex128
}
FROM_MX: dict[Any, _dtype.dtype] = {v: k for k, v in MX.items()}
# mlx dtypes with no lucid equivalent (argmax gives uint32) read as the nearest lucid dtype
FROM_MX.update({mx.uint32: _dtype.int64, mx.uint16: _dtype.int32, mx.uint64: _dtype.int64})
MX_BY_NP: dict[np.dtype, Any] = {d.np: m for d, m in MX.items()}
FLOATS = (mx.float16, mx.float32, mx.float64, mx.bfloat16)

_warned = [False]


def to_host(x: Any) -> np.ndarray:
    """A numpy copy of an MLX array; bfloat16 (no buffer format numpy reads) goes through its
    bits into an ``ml_dtypes`` bfloat16 array."""
    if x.dtype == mx.bfloat16:
        return np.array(x.view(mx.uint16)).view(_dtype.bfloat16.np)
    return np.array(x)


def reducible(x: Any) -> Any:
    """``x`` as an MLX reduction may read it.

    NOTE: MLX 0.32's CPU reductions (sum, mean, all, any) can spin forever over an empty array
    that is not row-contiguous (a transposed (3, 0)); an empty array holds no data, so a fresh
    one of its shape is the same input.
    """
    return mx.zeros(x.shape, x.dtype) if x.size == 0 else x


def detect() -> str:
    """Where MLX runs lucid's "gpu" device: "metal", "cuda" or "cpu" (MLX's CPU stream).

    lucid follows MLX's default device, which is the GPU whenever MLX has one.
    """
    if mx.default_device() == mx.cpu:
        return "cpu"
    if mx.metal.is_available():
        return "metal"
    cuda = getattr(mx, "cuda", None)
    if cuda is not None and cuda.is_available():
        return "cuda"
    return "cpu"  # pragma: no cover


def warn_cpu_stream() -> None:
    """Say once per process that "gpu" runs on MLX's CPU stream here."""
    if not _warned[0]:
        _warned[0] = True
        warnings.warn(
            'lucid: no Metal or CUDA device is available to MLX; the "gpu" device runs on '
            "MLX's CPU stream (same results, no acceleration).", RuntimeWarning, stacklevel=3)


def float64_error(where: str) -> TypeError:
    return TypeError(
        f"float64 is not supported on the MLX {where} device (lucid's \"gpu\"); use float32, "
        "or keep float64 tensors on \"cpu\""
    )


# ---- float64 on MLX's CPU stream -------------------------------------------------------------
# NOTE: MLX's CPU stream evaluates exp, sin, cos, sigmoid, erf, logsumexp, softmax and
# fast.layer_norm at float32 precision even for float64 arrays (errors ~1e-7 instead of ~1e-16);
# float64 inputs take these compositions of MLX ops that are exact (expm1, tan, log, ...).


def exp(x: Any) -> Any:
    if x.dtype != mx.float64:
        return mx.exp(x)
    pos = x >= 0
    e = mx.expm1(mx.where(pos, x, -x)) + 1.0
    return mx.where(pos, e, 1.0 / e)


def _half_tan(x: Any) -> tuple[Any, Any]:
    t = mx.tan(x * 0.5)
    return t, 1.0 / (1.0 + t * t)


def sin(x: Any) -> Any:
    if x.dtype != mx.float64:
        return mx.sin(x)
    t, r = _half_tan(x)
    return mx.where(mx.isinf(t), 0.0, 2.0 * t * r)


def cos(x: Any) -> Any:
    if x.dtype != mx.float64:
        return mx.cos(x)
    t, r = _half_tan(x)
    return mx.where(mx.isinf(t), -1.0, (1.0 - t * t) * r)


def sigmoid(x: Any) -> Any:
    if x.dtype != mx.float64:
        return mx.sigmoid(x)
    e = exp(-mx.abs(x))
    return mx.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def erf(x: Any) -> Any:
    if x.dtype != mx.float64:
        return mx.erf(x)
    # NOTE: scipy.special costs ~0.1 s to import; only float64 erf (host memory) needs it
    from scipy.special import erf as _erf

    return mx.array(_erf(np.array(x)), dtype=mx.float64)


def logsumexp(x: Any, axis: Any, keepdims: bool = False) -> Any:
    if x.dtype != mx.float64:
        return mx.logsumexp(x, axis=axis, keepdims=keepdims)
    m = mx.max(x, axis=axis, keepdims=True)
    m = mx.where(mx.isfinite(m), m, 0.0)
    out = mx.log(mx.sum(exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else mx.squeeze(out, axis=axis)
