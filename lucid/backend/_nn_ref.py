"""The numpy reference for the fused nn ops (softmax, cross-entropy, batch and layer norm),
part of the interface ``NumpyBackend`` defines: the "cpu" backend overrides them with numba
kernels, the "gpu" backend with MLX."""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import numpy as np

from ..kernels._splitmix import GOLDEN, MIX1, MIX2, threshold
from ..kernels._targets import check_targets
from . import _rnn_ref
from ._activation_ref import ActivationReference

Array = np.ndarray


def _wide(x: Array) -> Array:
    """``x`` as float64 (narrower floats widened; float64 as is)."""
    return x if x.dtype == np.float64 else x.astype(np.float64)


def draw_seed(gen: np.random.Generator) -> int:
    """One 64-bit seed from lucid's generator (advances it by one draw)."""
    return int(gen.bit_generator.random_raw())


def dropout_scale_host(shape: tuple[int, ...], seed: int, p: float, dt: np.dtype) -> Array:
    """Dropout's multiplier, numpy reference of ``kernels/random.py``: element i is
    ``1 / (1 - p)`` when splitmix64(seed + (i + 1) * GOLDEN) >> 11 >= ceil(p * 2**53)
    (a uniform in [0, 1) of 53 bits, >= p), else 0."""
    z = np.arange(1, math.prod(shape) + 1, dtype=np.uint64) * np.uint64(GOLDEN)
    z += np.uint64(seed)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(MIX1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(MIX2)
    z ^= z >> np.uint64(31)
    keep = (z >> np.uint64(11)) >= np.uint64(threshold(p))
    return (keep.astype(dt) * np.asarray(1.0 / (1.0 - p), dt)).reshape(shape)


class NnReference(ActivationReference):
    """Fused nn ops over numpy arrays (mixed into ``NumpyBackend``)."""

    def dropout_scale(self, gen: np.random.Generator, shape: tuple[int, ...], p: float,
                      d: Any) -> Any:
        """Dropout's multiplier of ``shape`` (0 or ``1 / (1 - p)``, p < 1) in dtype ``d``
        from one seed drawn from ``gen``; the same values on every backend."""
        return self.from_numpy(dropout_scale_host(shape, draw_seed(gen), p, d.np))  # type: ignore[attr-defined]

    def addmm(self, c: Any, a: Any, b: Any) -> Any:
        """``a @ b + c`` with ``c`` broadcast against the product (a linear layer's bias),
        added in place into the fresh product where it fits."""
        y = self.matmul(a, b)  # type: ignore[attr-defined]
        if (isinstance(y, np.ndarray) and getattr(c, "dtype", None) == y.dtype
                and np.broadcast_shapes(y.shape, np.shape(c)) == y.shape):
            return np.add(y, c, out=y)
        return np.add(y, c)

    def matmul_pair(self, a1: Any, b1: Any, a2: Any, b2: Any) -> tuple[Any, Any]:
        """``(a1 @ b1, a2 @ b2)`` for 2-D operands: two independent products a backend may
        run side by side (a linear layer's input and weight gradients)."""
        return self.matmul(a1, b1), self.matmul(a2, b2)  # type: ignore[attr-defined]

    @staticmethod
    def rnn_steps(dt: np.dtype) -> tuple[ModuleType, ModuleType | None]:
        """What ``_rnn_loop`` runs a recurrent layer of host ``dt`` arrays with: the per-step
        gate functions, and whole-sequence kernels (or None). The reference: its numpy steps,
        every GEMM on numpy's threads."""
        return _rnn_ref, None

    # ---- fused nn ops: softmax, cross-entropy, batch/layer norm (ops/activation, loss, norm) --
    @staticmethod
    def erf(x: Array) -> Array:
        # NOTE: scipy.special costs ~0.1 s to import; loaded when erf is first used
        from scipy.special import erf

        return erf(x).astype(x.dtype, copy=False)

    @staticmethod
    def leaky_relu(x: Array, slope: float) -> Array:
        """``x`` where positive, else ``slope * x``."""
        return np.where(x > 0, x, x * x.dtype.type(slope))

    @staticmethod
    def leaky_relu_backward(x: Array, g: Array, slope: float) -> Array:
        """``g`` where ``x > 0``, else ``slope * g``."""
        return np.where(x > 0, g, g * g.dtype.type(slope))

    @staticmethod
    def gelu(x: Array, approximate: bool = False) -> Array:
        """``x * Phi(x)``; the tanh form ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``
        when ``approximate``."""
        if approximate:
            inner = (x + 0.044715 * x * x * x) * math.sqrt(2.0 / math.pi)
            return (0.5 * x * (1 + np.tanh(inner))).astype(x.dtype, copy=False)
        return (0.5 * x * (1 + NnReference.erf(x * (1 / math.sqrt(2.0))))).astype(
            x.dtype, copy=False)

    @staticmethod
    def gelu_backward(x: Array, g: Array, approximate: bool = False) -> Array:
        """``g * gelu'(x)``."""
        if approximate:
            k0 = math.sqrt(2.0 / math.pi)
            t = np.tanh(k0 * (x + 0.044715 * x * x * x))
            d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k0 * (1 + 3 * 0.044715 * x * x)
        else:
            cdf = 0.5 * (1 + NnReference.erf(x * (1 / math.sqrt(2.0))))
            d = cdf + x * np.exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi))
        return (g * d).astype(g.dtype, copy=False)

    @staticmethod
    def softmax(x: Array, axis: int, log: bool = False) -> Array:
        """Softmax (log-softmax when ``log``) along ``axis``, shifted by the max for stability."""
        z = x - np.max(x, axis=axis, keepdims=True) if x.size else x
        s = np.sum(np.exp(z), axis=axis, keepdims=True)
        return z - np.log(s) if log else np.exp(z) / s

    @staticmethod
    def softmax_backward(y: Array, g: Array, axis: int, log: bool = False) -> Array:
        if log:
            return g - np.exp(y) * np.sum(g, axis=axis, keepdims=True)
        return y * (g - np.sum(g * y, axis=axis, keepdims=True))

    @staticmethod
    def attention(q: Array, k: Array, v: Array, bias: Array | None, scale: float,
                  causal: bool) -> tuple[Array, Array]:
        """``(softmax(q k^T scale + bias) v, weights)`` over the last two dims; ``causal``
        masks key j > query i (torch's ``tril`` of ones) instead of a bias. A query whose
        every score is -inf gets the weights 0 (torch's safe softmax in attention), not NaN."""
        s = np.matmul(q * q.dtype.type(scale), np.swapaxes(k, -1, -2))
        if causal:
            lq, n = s.shape[-2:]
            s = np.where(np.tril(np.ones((lq, n), dtype=bool)), s, s.dtype.type(-np.inf))
        elif bias is not None:
            s = s + bias
        blind = np.all(s == -np.inf, axis=-1, keepdims=True)
        a = NnReference.softmax(np.where(blind, 0, s), -1)
        a = np.where(blind, 0, a).astype(q.dtype, copy=False)
        return np.matmul(a, v), a

    @staticmethod
    def attention_backward(q: Array, k: Array, v: Array, attn: Array, g: Array, scale: float,
                           causal: bool = False) -> tuple[Array, Array, Array]:
        """``(gq, gk, gv)`` of ``attention``, given its weights ``attn`` and g = d out.
        ``causal`` says the weights came from a causal ``attention`` (zero above the
        diagonal), which a backend may use to skip those blocks; the result is the same."""
        sc = q.dtype.type(scale)
        gv = np.matmul(np.swapaxes(attn, -1, -2), g)
        ds = NnReference.softmax_backward(attn, np.matmul(g, np.swapaxes(v, -1, -2)), -1)
        return np.matmul(ds, k) * sc, np.matmul(np.swapaxes(ds, -1, -2), q * sc), gv

    @staticmethod
    def _ce_parts(x: Array, target: Array, weight: Array | None, ignore_index: int
                  ) -> tuple[Array, Array, Array, Array]:
        keep = target != ignore_index
        t = np.where(keep, target, 0)
        w = np.ones(x.shape[1], x.dtype) if weight is None else weight
        return keep, t, np.where(keep, w[t] if x.shape[1] else 0, 0).astype(x.dtype), w

    @staticmethod
    def cross_entropy(x: Array, target: Array, weight: Array | None, ignore_index: int,
                      label_smoothing: float) -> tuple[Array, Array, Array]:
        """Per-row loss of logits (rows, n) against class indices: ``(loss, lse, wt)`` with the
        row log-sum-exp and the target's class weight (0 where ``ignore_index``). Raises
        IndexError for a class index outside ``[0, n)``."""
        check_targets(target, x.shape[1], ignore_index)
        keep, t, wt, w = NnReference._ce_parts(x, target, weight, ignore_index)
        if x.size == 0:  # no rows, or no classes (only valid with no rows left to score)
            return (np.zeros(x.shape[0], x.dtype),) * 2 + (wt.astype(x.dtype),)
        m = np.max(x, axis=1, keepdims=True)
        lse = (m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True)))[:, 0]
        nll = lse - np.take_along_axis(x, t[:, None], 1)[:, 0]
        loss = (1 - label_smoothing) * wt * nll
        if label_smoothing > 0:
            loss = loss + label_smoothing / x.shape[1] * np.sum(w * (lse[:, None] - x), axis=1)
        loss = np.where(keep, loss, 0)  # an ignored row scores 0 whatever its logits
        return loss.astype(x.dtype), lse.astype(x.dtype), wt

    @staticmethod
    def cross_entropy_backward(x: Array, target: Array, lse: Array, weight: Array | None,
                               grow: Array, ignore_index: int, label_smoothing: float) -> Array:
        """d(sum_i grow[i] * loss[i]) / dx for ``cross_entropy``."""
        check_targets(target, x.shape[1], ignore_index)
        keep, t, wt, w = NnReference._ce_parts(x, target, weight, ignore_index)
        n, ls = x.shape[1], label_smoothing
        grow = np.where(keep, grow, 0).astype(x.dtype)
        a = grow * ((1 - ls) * wt + ls / n * np.sum(w))
        out = np.exp(x - lse[:, None]) * a[:, None] - (grow * ls / n)[:, None] * w
        out[np.arange(x.shape[0]), t] -= grow * (1 - ls) * wt
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def batch_norm_train(x: Array, weight: Array | None, bias: Array | None,
                         running_mean: Array | None, running_var: Array | None,
                         momentum: float, eps: float) -> tuple[Array, Array, Array]:
        """Training batch norm of x (N, C, *): ``(y, mean, invstd)``; running stats (if given)
        updated in place with the unbiased variance."""
        axes = (0, *range(2, x.ndim))
        shape = (1, -1) + (1,) * (x.ndim - 2)
        m = x.size // x.shape[1]
        xw = _wide(x)  # statistics and centring in float64: exact for data far from zero
        mean, var = np.mean(xw, axis=axes), np.var(xw, axis=axes)
        invstd = (1 / np.sqrt(var + eps)).astype(x.dtype)
        k = invstd if weight is None else weight * invstd
        y = (xw - mean.reshape(shape)) * k.reshape(shape)
        if bias is not None:
            y = y + bias.reshape(shape)
        if running_mean is not None:
            running_mean[...] = (1 - momentum) * running_mean + momentum * mean
            running_var[...] = (1 - momentum) * running_var + momentum * var * (m / (m - 1))
        # row-major whatever x's layout (the ufuncs above keep it), as the kernels' results
        return (y.astype(x.dtype, order="C", copy=False), mean.astype(x.dtype, copy=False),
                invstd)

    @staticmethod
    def batch_norm_backward(x: Array, g: Array, mean: Array, invstd: Array,
                            weight: Array | None, need_input: bool = True
                            ) -> tuple[Array | None, Array, Array]:
        """Gradients of ``batch_norm_train``: ``(grad_x or None, grad_weight, grad_bias)``."""
        axes = (0, *range(2, x.ndim))
        shape = (1, -1) + (1,) * (x.ndim - 2)
        m = x.size // x.shape[1]
        xh = (x - mean.reshape(shape)) * invstd.reshape(shape)
        gb = np.sum(g, axis=axes)
        gw = np.sum(g * xh, axis=axes)
        gx = None
        if need_input:
            k = invstd if weight is None else weight * invstd
            gx = k.reshape(shape) * (g - (gb / m).reshape(shape) - xh * (gw / m).reshape(shape))
            gx = gx.astype(x.dtype, copy=False)
        return gx, gw, gb

    @staticmethod
    def layer_norm(x: Array, weight: Array | None, bias: Array | None, eps: float
                   ) -> tuple[Array, Array, Array]:
        """Layer norm over the last axis of x (rows, D), then the affine: ``(y, mean, rstd)``."""
        xw = _wide(x)
        mean = np.mean(xw, axis=1)
        rstd = (1 / np.sqrt(np.var(xw, axis=1) + eps)).astype(x.dtype)
        y = (xw - mean[:, None]) * rstd[:, None]
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        return (y.astype(x.dtype, order="C", copy=False), mean.astype(x.dtype, copy=False),
                rstd)

    @staticmethod
    def layer_norm_backward(x: Array, g: Array, mean: Array, rstd: Array, weight: Array | None,
                            need_input: bool = True, need_affine: bool = True
                            ) -> tuple[Array | None, Array | None, Array | None]:
        """Gradients of ``layer_norm``: ``(grad_x, grad_weight, grad_bias)``, None if unneeded."""
        xh = (x - mean[:, None]) * rstd[:, None]
        gw = np.sum(g * xh, axis=0) if need_affine else None
        gb = np.sum(g, axis=0) if need_affine else None
        gx = None
        if need_input:
            gh = g if weight is None else g * weight
            gx = rstd[:, None] * (gh - np.mean(gh, axis=1, keepdims=True)
                                  - xh * np.mean(gh * xh, axis=1, keepdims=True))
            gx = gx.astype(x.dtype, copy=False)
        return gx, gw, gb
