"""Fractional max pooling (Graham, 2014), as ``torch.nn.functional``:
``fractional_max_pool2d`` / ``fractional_max_pool3d`` and their ``_with_indices`` forms.

Each (sample, channel) plane draws one number in [0, 1) per spatial dim
(``_random_samples``, of shape (N, C, 2) or (N, C, 3)); torch's ``generate_intervals`` turns
it into the window starts, computed here on the host in the input's precision. The windows
are read with one ``gather`` over the flattened plane and reduced with ``max`` over the
window, so the gradient goes to the first maximum of each window, as in torch. For 2-D the
samples are read as (W, H), for 3-D as (T, H, W), as torch's kernels read them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from . import select as _sel
from .creation import tensor
from .index import gather
from .random import rand

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]

_AXES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _sizes(v: Any, n: int, msg: str) -> tuple[int, ...]:
    if isinstance(v, (tuple, list)):
        if len(v) != n:
            raise RuntimeError(msg)
        return tuple(int(i) for i in v)
    return (int(v),) * n


def _intervals(sample: np.ndarray, in_size: int, out_size: int, k: int, dt: Any) -> np.ndarray:
    """torch's ``generate_intervals`` for every plane at once: ``sample`` (planes,) ->
    window starts (planes, out_size)."""
    seq = np.zeros((sample.shape[0], out_size), dtype=np.int64)
    if out_size > 1:
        alpha = dt.type(in_size - k) / dt.type(out_size - 1)
        i = np.arange(out_size, dtype=dt)[None, :]
        s = sample[:, None].astype(dt)
        seq = ((i + s) * alpha).astype(np.int64) - (s * alpha).astype(np.int64)
    if out_size > 0:
        seq[:, -1] = in_size - k
    return seq


def _check_samples(samples: Tensor, input: Tensor, b: int, c: int, n: int) -> None:
    if samples.dtype is not input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    if samples.shape[0] < b:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != n:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {n}; got "
                           f"{samples.shape[2]}.")


def _fractional(input: Tensor, kernel_size: Any, output_size: Any, output_ratio: Any,
                samples: Tensor | None, n: int) -> tuple[Tensor, Tensor]:
    name = f"fractional_max_pool{n}d"
    where = name + ("()" if n == 2 else "_out()")
    words = "two" if n == 2 else "three"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if isinstance(output_ratio, (tuple, list)) and len(output_ratio) > n:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             "of Ints.")
        ratio = output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * n
        if len(ratio) != n:
            raise IndexError("tuple index out of range")
        output_size = [int(input.shape[-n + d] * ratio[d]) for d in range(n)]
    k = _sizes(kernel_size, n, f"{name}: kernel_size must either be a single Int or tuple of "
                               + ("Ints" if n == 2 else "three Ints"))
    out = _sizes(output_size, n, f"{name}: output_size must either be a single Int or tuple of "
                                 + ("Ints" if n == 2 else f"{words} Ints"))
    xs = [int(s) for s in input.shape]
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{where}: Expected {n + 1}D or {n + 2}D tensor, but got: {xs}")
    for i in range(1, len(xs)):
        if xs[i] == 0:
            raise RuntimeError(f"{where}: Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{xs} with dimension {i} being empty.")
    batched = input.dim() == n + 2
    b, c = (xs[0], xs[1]) if batched else (1, xs[0])
    spatial = xs[-n:]
    if samples is None:
        if not input.dtype.is_floating_point:
            raise NotImplementedError('"check_uniform_bounds" not implemented for '
                                      f"'{_dtype.torch_name(input.dtype)}'")
        samples = rand(b, c, n, dtype=input.dtype, device=input.device)
    _check_samples(samples, input, b, c, n)
    for d in range(n):
        # torch's bound: the last window must fit (2-D), and also leave room to move (3-D)
        if out[d] + k[d] - 1 > spatial[d] - (n == 3):
            ax = _AXES[n][d]
            raise RuntimeError(f"{where}: pool {ax} {k[d]} too large relative to input {ax} "
                               f"{spatial[d]}")
    if min(out) < 0:
        neg = next(o for o in out if o < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {neg}: "
                           f"{[*xs[:-n], *out]}")
    # window starts are worked out in the input's dtype, rounding as torch's kernels do
    dt = np.dtype(input.dtype.np)
    host = np.asarray(samples.detach().to("cpu").numpy(), dtype=dt)[:b].reshape(b * c, n)
    order = (1, 0) if n == 2 else (0, 1, 2)  # 2-D planes hold (W, H) samples
    flat = np.zeros((b * c,) + tuple(out) + (1,) * n, dtype=np.int64)
    stride = 1
    for d in reversed(range(n)):
        starts = _intervals(host[:, order[d]], spatial[d], out[d], k[d], dt)
        pos = starts[:, :, None] + np.arange(k[d])[None, None, :]  # (planes, out_d, k_d)
        shape = [b * c] + [1] * (2 * n)
        shape[1 + d], shape[1 + n + d] = out[d], k[d]
        flat = flat + pos.reshape(shape) * stride
        stride *= spatial[d]
    window = math.prod(k)
    flat = flat.reshape(b, c, math.prod(out) * window)
    x = input if batched else input.unsqueeze(0)
    idx = tensor(flat, device=input.device)
    vals = gather(x.reshape(b, c, math.prod(spatial)), 2, idx).reshape(b, c, *out, window)
    result, arg = vals.max(dim=-1)
    nan = vals.isnan()  # type: ignore[attr-defined]
    if bool(nan.any()):  # torch's scan takes each NaN it meets: the window's last one wins
        last = (window - 1) - nan.flip(-1).to(_dtype.int64).argmax(-1)  # type: ignore
        arg = _sel.where(nan.any(-1), last, arg)
        result = gather(vals, -1, arg.unsqueeze(-1)).squeeze(-1)  # (its gradient goes there)
    indices = gather(idx.reshape(b, c, *out, window), -1, arg.unsqueeze(-1)).squeeze(-1)
    if not batched:
        return result.squeeze(0), indices.squeeze(0)
    return result, indices


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None
                                       ) -> tuple[Tensor, Tensor]:
    """2-D fractional max pooling over (N, C, H, W) or (C, H, W); returns ``(output,
    indices)`` with the int64 index ``h * W + w`` of every maximum. ``output_size`` or
    ``output_ratio`` (in (0, 1)) sets the output; ``_random_samples`` (N, C, 2) fixes the
    windows (drawn from the global generator when None).

    Example::

        y, idx = F.fractional_max_pool2d_with_indices(lucid.randn(1, 3, 9, 9), 2,
                                                      output_size=(5, 5))
    """
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """2-D fractional max pooling; with ``return_indices`` also the indices of the maxima.

    Example::

        F.fractional_max_pool2d(lucid.randn(2, 3, 10, 10), 3, output_ratio=(0.5, 0.5))
    """
    out = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None
                                       ) -> tuple[Tensor, Tensor]:
    """3-D fractional max pooling over (N, C, T, H, W) or (C, T, H, W); returns ``(output,
    indices)`` with the int64 index ``(t * H + h) * W + w`` of every maximum.
    ``_random_samples`` has shape (N, C, 3).

    Example::

        y, idx = F.fractional_max_pool3d_with_indices(lucid.randn(1, 2, 8, 8, 8), 2,
                                                      output_size=4)
    """
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """3-D fractional max pooling; with ``return_indices`` also the indices of the maxima.

    Example::

        F.fractional_max_pool3d(lucid.randn(1, 2, 8, 8, 8), 2, output_ratio=0.5)
    """
    out = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return out if return_indices else out[0]
