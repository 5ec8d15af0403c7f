"""``vmap``: map a function over a batch dim of its inputs, as ``torch.func.vmap``.

lucid runs the function once per batch element (the inputs sliced along their ``in_dims``)
and stacks the results along ``out_dims``: the values, gradients (the slices and the stack
are differentiable ops) and errors are those of the per-example function, which is what
torch's batching rules reproduce; the speed is that of a loop. ``randomness`` follows torch:
"error" refuses a function that draws random numbers, "different" draws per element,
"same" draws the same numbers for every element.

Example::

    batched_dot = lucid.vmap(lucid.dot)
    batched_dot(lucid.randn(5, 3), lucid.randn(5, 3))     # shape (5,)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ..ops.movement import stack
from ..ops.random import get_rng_state, set_rng_state

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")


def _flat_dims(args: tuple, in_dims: Any) -> list[Any]:
    if isinstance(in_dims, int) or in_dims is None:
        return [in_dims] * len(args)
    if not isinstance(in_dims, (tuple, list)) or len(in_dims) != len(args):
        raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                         f"compatible with the structure of `inputs`. in_dims has structure "
                         f"{type(in_dims).__name__} of length "
                         f"{len(in_dims) if isinstance(in_dims, (tuple, list)) else 1} but "
                         f"inputs has {len(args)} positional arguments.")
    return list(in_dims)


def _sizes(arg: Any, dim: Any, out: list[int]) -> None:
    if dim is None:
        return
    if isinstance(arg, Tensor):
        if not -arg.ndim <= dim < max(arg.ndim, 1) or arg.ndim == 0:
            raise ValueError(f"vmap: Tried to map over dim {dim} of a tensor with "
                             f"{arg.ndim} dims; the dim is out of range")
        out.append(arg.shape[dim])
    elif isinstance(arg, (tuple, list)):
        for a in arg:
            _sizes(a, dim, out)
    elif isinstance(arg, dict):
        for a in arg.values():
            _sizes(a, dim, out)
    else:
        raise ValueError(f"vmap: Got in_dim={dim} for an input but the input is of type "
                         f"{type(arg).__name__}. We cannot vmap over non-Tensor arguments, "
                         "please use None as the respective in_dim")


def _slice(arg: Any, dim: Any, i: int) -> Any:
    if dim is None:
        return arg
    if isinstance(arg, Tensor):
        return arg.select(dim, i)  # type: ignore[attr-defined]
    if isinstance(arg, (tuple, list)):
        return type(arg)(_slice(a, dim, i) for a in arg)
    if isinstance(arg, dict):
        return {k: _slice(a, dim, i) for k, a in arg.items()}
    return arg


def _stack(outs: list[Any], dim: Any) -> Any:
    first = outs[0]
    if isinstance(first, Tensor):
        return stack(outs, dim)
    if isinstance(first, (tuple, list)):
        dims = dim if isinstance(dim, (tuple, list)) else [dim] * len(first)
        return type(first)(_stack([o[k] for o in outs], dims[k]) for k in range(len(first)))
    if isinstance(first, dict):
        return {k: _stack([o[k] for o in outs], dim) for k in first}
    raise ValueError(f"vmap: `fn` must only return Tensors, got type {type(first).__name__}")


def _same_state(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_state(a[k], b[k]) for k in a)
    if isinstance(a, Tensor):
        return a.shape == b.shape and bool((a == b).all())
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same_state(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except ValueError:  # numpy arrays
        return bool((a == b).all())


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0,
         randomness: str = "error", *, chunk_size: int | None = None) -> Callable[..., Any]:
    """``func`` mapped over dim ``in_dims`` of its inputs (an int for every input, or one per
    positional argument, None for an unmapped one), its outputs stacked along ``out_dims``
    (see the module docstring)."""
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    @functools.wraps(func)
    def mapped(*args: Any, **kwargs: Any) -> Any:
        dims = _flat_dims(args, in_dims)
        sizes: list[int] = []
        for a, d in zip(args, dims):
            _sizes(a, d, sizes)
        if not sizes:
            raise ValueError("vmap(f, in_dims=..., ...)(<inputs>): at least one input must be "
                             "a Tensor mapped over a dim (in_dims all None or no Tensor "
                             "inputs)")
        if len(set(sizes)) != 1:
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sizes} for the mapped dimension")
        outs = []
        start = get_rng_state()
        for i in range(sizes[0]):
            if randomness == "same":
                set_rng_state(start)
            outs.append(func(*(_slice(a, d, i) for a, d in zip(args, dims)), **kwargs))
            if randomness == "error" and i == 0 and not _same_state(get_rng_state(), start):
                raise RuntimeError("vmap: called random operation while in randomness error "
                                   "mode. Please either use the 'same' or 'different' "
                                   "randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
        return _stack(outs, out_dims)

    return mapped
