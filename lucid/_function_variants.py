"""torch's top-level forms of Tensor methods, made from the methods themselves.

- In-place functions: ``lucid.abs_(x)`` is ``x.abs_()`` (torch has one per in-place method).
- Copy forms of view ops: ``lucid.transpose_copy(x, 0, 1)`` is ``x.transpose(0, 1)`` in fresh
  memory (torch's functionalization names, which export and some model code use).
- Methods torch also exposes as functions: ``lucid.detach(x)``, ``lucid.put(x, ...)``,
  ``lucid.split_with_sizes(x, ...)``, and the ``unsafe_`` split forms (the same split: lucid
  never aliases outputs unsafely).

Each function carries its method's signature with ``self`` spelt ``input``, as torch's do.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ._tensor import Tensor
from .ops.complex import view_as_complex, view_as_real

INPLACE = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
    "clamp_max_", "clamp_min_", "clip_", "conj_physical_", "cos_", "cosh_", "deg2rad_",
    "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_",
    "gcd_", "i0_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "neg_",
    "negative_", "rad2deg_", "reciprocal_", "relu_", "resize_as_", "round_", "rsqrt_",
    "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_",
    "xlogy_", "zero_",
)

# copy form -> the view method it copies
COPIES = {
    "detach_copy": "detach", "diagonal_copy": "diagonal",
    "expand_copy": "expand", "permute_copy": "permute", "select_copy": "select",
    "split_copy": "split", "split_with_sizes_copy": "split_with_sizes",
    "squeeze_copy": "squeeze", "t_copy": "t", "transpose_copy": "transpose",
    "unbind_copy": "unbind", "unfold_copy": "unfold", "unsqueeze_copy": "unsqueeze",
    "view_copy": "view",
}

# top-level name -> the method it calls
METHODS = {
    "absolute": "absolute", "detach": "detach", "get_device": "get_device",
    "is_inference": "is_inference", "is_neg": "is_neg", "narrow_copy": "narrow_copy",
    "put": "put", "resolve_neg": "resolve_neg", "split_with_sizes": "split_with_sizes",
    "unsafe_chunk": "chunk", "unsafe_split": "split",
    "unsafe_split_with_sizes": "split_with_sizes",
}

__all__ = [*INPLACE, *COPIES, *METHODS, "alias_copy", "fill", "is_distributed", "slice_copy",
           "view_as_complex_copy", "view_as_real_copy"]


def _signature(method: Callable) -> inspect.Signature | None:
    try:
        sig = inspect.signature(method)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if not params:
        return None
    return sig.replace(parameters=[params[0].replace(name="input"), *params[1:]])


def _fresh(out: Any) -> Any:
    if isinstance(out, Tensor):
        return out.clone()
    return type(out)(_fresh(o) for o in out)


def _function(name: str, method: str, copy: bool) -> Callable[..., Any]:
    def fn(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        out = getattr(input, method)(*args, **kwargs)
        return _fresh(out) if copy else out

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``input.{method}(...)`` in fresh memory (torch.{name})." if copy
                  else f"``input.{method}(...)`` (torch.{name}).")
    sig = _signature(getattr(Tensor, method))
    if sig is not None:
        fn.__signature__ = sig  # type: ignore[attr-defined]
    return fn


def alias_copy(input: Tensor) -> Tensor:
    """``input`` in fresh memory (torch.alias_copy)."""
    return input.clone()


def fill(input: Tensor, value: Any) -> Tensor:
    """A copy of ``input`` with every element ``value`` (torch.fill, the out-of-place
    ``fill_``)."""
    return input.clone().fill_(value)


def is_distributed(input: Tensor) -> bool:
    """Whether ``input`` is a distributed tensor: never, for a lucid tensor (its data
    parallelism replicates ordinary tensors)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_distributed(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    return False


def view_as_complex_copy(input: Tensor) -> Tensor:
    """``view_as_complex(input)`` in fresh memory (torch.view_as_complex_copy)."""
    return view_as_complex(input).clone()


def view_as_real_copy(input: Tensor) -> Tensor:
    """``view_as_real(input)`` in fresh memory (torch.view_as_real_copy)."""
    return view_as_real(input).clone()


def slice_copy(input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
               step: int = 1) -> Tensor:
    """``input[..., start:end:step, ...]`` along ``dim`` in fresh memory (torch.slice_copy)."""
    index = [slice(None)] * input.ndim
    index[dim] = slice(start, end, step)
    return input[tuple(index)].clone()


for _name in INPLACE:
    globals()[_name] = _function(_name, _name, False)
for _name, _method in COPIES.items():
    globals()[_name] = _function(_name, _method, True)
for _name, _method in METHODS.items():
    globals()[_name] = _function(_name, _method, False)
del _name, _method
