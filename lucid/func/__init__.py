"""Function transforms, as ``torch.func``: ``functional_call`` runs a module with
substituted parameters and buffers; ``vmap`` maps a function over a batch dim.

Example::

    import lucid
    params = {k: v.detach() * 2 for k, v in net.named_parameters()}
    out = lucid.func.functional_call(net, params, (x,))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._tensor import Tensor
from ..nn.module import Module
from ..nn.utils.stateless import _functional_call
from .vmap import vmap

__all__ = ["functional_call", "vmap"]


def functional_call(module: Module,
                    parameter_and_buffer_dicts: dict[str, Tensor] | Sequence[dict[str, Tensor]],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameter_and_buffer_dicts`` (one dict, or a sequence of dicts with disjoint keys;
    dotted names as in ``state_dict``) replaced for this call only.

    Gradients flow to the given tensors; the module's own tensors are restored afterwards.
    ``tie_weights`` (default) also replaces tensors tied to a given one; ``strict`` requires
    exactly every parameter and buffer. ``args`` that is not a tuple is one positional
    argument. For a parametrized tensor pass ``"<name>.parametrizations.weight.original"``
    to keep the parametrization.

    Example::

        w = lucid.zeros(2, 4, requires_grad=True)
        out = lucid.func.functional_call(nn.Linear(4, 2), {"weight": w}, lucid.randn(3, 4))
        out.sum().backward()          # w.grad is set; the Linear's weight is untouched
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts
                                  for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
