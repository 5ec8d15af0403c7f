"""Parameter initialisation, as ``torch.nn.init``.

Every function fills its tensor in place, outside the graph, and bumps its version. Numbers
are drawn on the host from lucid's global generator (or ``generator=``), so
``lucid.manual_seed`` makes initialisation reproducible on every device; the streams are
numpy's, so values differ from PyTorch's for the same seed.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..ops.random import default_generator
from ..ops.views import written

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
    "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
    "kaiming_normal_", "orthogonal_", "sparse_",
    "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
    "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse",
]


def _rng(generator: Any) -> np.random.Generator:
    if generator is None:
        generator = default_generator
    return generator.rng


def _write(tensor: Tensor, values: Any) -> Tensor:
    """Write ``values`` (numpy, broadcastable) into ``tensor``'s memory, outside the graph."""
    be = tensor._be
    arr = np.broadcast_to(np.asarray(values, dtype=tensor.dtype.np), tuple(tensor.shape))
    return written(tensor, be.from_numpy(np.ascontiguousarray(arr)))


def _shape(tensor: Tensor) -> tuple[int, ...]:
    return tuple(tensor.shape)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table).

    Example::

        nn.init.calculate_gain("leaky_relu", 0.2)   # 1.3867...
    """
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with samples from U(a, b).

    Example::

        nn.init.uniform_(w, -0.1, 0.1)
    """
    return _write(tensor, a + (b - a) * _rng(generator).random(_shape(tensor)))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None
            ) -> Tensor:
    """Fill with samples from N(mean, std**2).

    Example::

        nn.init.normal_(w, std=0.02)
    """
    return _write(tensor, mean + std * _rng(generator).standard_normal(_shape(tensor)))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Any = None) -> Tensor:
    """Fill with samples from N(mean, std**2) truncated to [a, b] (by rejection).

    Example::

        nn.init.trunc_normal_(w, std=0.02)
    """
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution "
            "of values may be incorrect.", stacklevel=2,
        )
    rng = _rng(generator)
    shape = _shape(tensor)
    lo, hi = float(np.asarray(a, tensor.dtype.np)), float(np.asarray(b, tensor.dtype.np))

    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    p = cdf((b - mean) / std) - cdf((a - mean) / std)
    out = np.empty(shape)
    todo = np.ones(shape, dtype=bool)
    while todo.any():
        n = int(todo.sum())
        if p > 0.3:  # normal proposals
            cand = mean + std * rng.standard_normal(n)
            ok = (cand >= lo) & (cand <= hi)
        else:  # uniform proposals on [a, b], accepted with the normal density
            cand = rng.uniform(a, b, n)
            mode = max(a, min(mean, b))
            log_ratio = -0.5 * ((cand - mean) / std) ** 2 + 0.5 * ((mode - mean) / std) ** 2
            ok = np.log(rng.random(n)) <= log_ratio
        idx = np.flatnonzero(todo)[ok]
        out.flat[idx] = cand[ok]
        todo.flat[idx] = False
    return _write(tensor, out)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``.

    Example::

        nn.init.constant_(b, 0.1)
    """
    return _write(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones.

    Example::

        nn.init.ones_(bn.weight)
    """
    return _write(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros.

    Example::

        nn.init.zeros_(fc.bias)
    """
    return _write(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix.

    Example::

        nn.init.eye_(w)
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*_shape(tensor)))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3/4/5-D (convolution) weight with the Dirac delta, preserving the identity
    of the inputs in as many channels as possible (per group).

    Example::

        nn.init.dirac_(conv_weight)
    """
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = _shape(tensor)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_grp = sizes[0] // groups
    min_dim = min(out_per_grp, sizes[1])
    v = np.zeros(sizes)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            v[(g * out_per_grp + d, d) + centre] = 1
    return _write(tensor, v)


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    dims = tensor.ndim
    if dims < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    shape = _shape(tensor)
    receptive = 1
    for s in shape[2:]:
        receptive *= s
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    Example::

        nn.init.xavier_uniform_(w, gain=nn.init.calculate_gain("tanh"))
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot normal: N(0, std**2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    Example::

        nn.init.xavier_normal_(w)
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """He uniform: U(-bound, bound) with ``bound = gain * sqrt(3 / fan)``.

    Example::

        nn.init.kaiming_uniform_(w, a=math.sqrt(5))    # nn.Linear's default
    """
    if 0 in _shape(tensor):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """He normal: N(0, std**2) with ``std = gain / sqrt(fan)``.

    Example::

        nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    """
    if 0 in _shape(tensor):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix (trailing dims flattened), times ``gain``.

    Example::

        nn.init.orthogonal_(w)
    """
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = _shape(tensor)[0]
    cols = tensor.numel() // rows
    flat = _rng(generator).standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _write(tensor, (gain * q).reshape(_shape(tensor)))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None
            ) -> Tensor:
    """A 2-D matrix with N(0, std**2) entries and a ``sparsity`` fraction of each column
    zeroed.

    Example::

        nn.init.sparse_(w, sparsity=0.1)
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rng = _rng(generator)
    rows, cols = _shape(tensor)
    num_zeros = math.ceil(sparsity * rows)
    v = std * rng.standard_normal((rows, cols))
    for c in range(cols):
        v[rng.permutation(rows)[:num_zeros], c] = 0
    return _write(tensor, v)


def _make_deprecate(meth: Any) -> Any:
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
            FutureWarning, stacklevel=2,
        )
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = f"Deprecated alias of ``{new_name}``."
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
