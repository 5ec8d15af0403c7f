"""Hook plumbing for modules: removable handles, and the identity ops that let a module's
full backward hooks see (and replace) the gradients of its inputs and outputs.

``Op`` nodes have one output, so a group of tensors passes through a ``_Pack`` node whose
output holds all their arrays, and each tensor comes back out through its own ``_Select``
node. The backward engine sums the gradients flowing into a node before running it, so the
``_Pack`` node runs once, with the gradients of every member of the group (``_Grads``
merges them), which is where the hooks fire. This mirrors PyTorch's BackwardHookFunction.
"""

from __future__ import annotations

import itertools
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor, _make
from ..autograd import grad_mode
from ..autograd.function import Op

__all__ = ["RemovableHandle", "BackwardHook"]


class RemovableHandle:
    """A handle returned by every ``register_*_hook``; ``remove()`` unregisters the hook.

    Also a context manager that removes the hook on exit.

    Example::

        h = model.register_forward_hook(lambda m, args, out: print(out.shape))
        model(x)
        h.remove()
    """

    _ids = itertools.count()

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._ids)
        if extra_dict is None:
            extra_dict = []
        elif not isinstance(extra_dict, list):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self) -> None:
        """Unregister the hook (a no-op when it is already gone).

        Example::

            handle.remove()
        """
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class _Grads:
    """Gradients of a ``_Pack`` group, by member index; the engine sums these with ``+``."""

    __slots__ = ("g",)

    def __init__(self, g: dict) -> None:
        self.g = g

    def __add__(self, other: _Grads) -> _Grads:
        g = dict(self.g)
        for k, v in other.g.items():
            g[k] = v if k not in g else g[k] + v
        return _Grads(g)

    __radd__ = __add__


class _Pack(Op):
    """Identity over a group of tensors; its backward calls ``on_grads`` once for all."""

    def forward(self, *arrays: Any, on_grads: Callable) -> Any:
        self.on_grads = on_grads
        self.shapes = [(a.shape, self.be.dtype_of(a)) for a in arrays]
        return tuple(arrays)

    def backward(self, g: _Grads) -> tuple:
        return self.on_grads(self, g.g)


class _Select(Op):
    def forward(self, packed: tuple, i: int) -> Any:
        self.i = i
        return packed[i]

    def backward(self, g: Any) -> tuple:
        return _Grads({self.i: g}), None


def _identity_group(tensors: list[Tensor], on_grads: Callable) -> list[Tensor] | None:
    """``tensors`` passed through one identity node, or None when no graph is recorded."""
    if not grad_mode.is_grad_enabled() or not any(t.requires_grad for t in tensors):
        return None
    packed = _Pack.apply(*tensors, on_grads=on_grads)
    # as PyTorch's BackwardHookFunction: tensors that need no grad stay out of the graph
    return [_Select.apply(packed, i) if t.requires_grad else t for i, t in enumerate(tensors)]


def _wrap(x: Any, be: Any) -> Tensor | None:
    return None if x is None else _make(x, be, False, None)


def _unwrap(x: Any, name: str) -> Any:
    if x is None:
        return None
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must contain Tensors or None, got {type(x).__name__}")
    return x._data


class BackwardHook:
    """One module call's backward hooks: wraps the call's inputs and outputs in identity
    nodes, runs ``full_backward_pre`` hooks on the output gradients and ``full_backward``
    hooks on the input gradients (each may return replacements)."""

    def __init__(self, module: Any, user_hooks: list, user_pre_hooks: list) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_inputs = -1
        self.n_outputs = -1
        self.input_idx: list[int] | None = None
        self.output_idx: list[int] | None = None

    def _apply(self, args: tuple, on_grads: Callable) -> tuple[tuple, list[int] | None]:
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        new = _identity_group([args[i] for i in idx], on_grads)
        if new is None:
            return args, None
        out = list(args)
        for i, t in zip(idx, new):
            out[i] = t
        return (tuple(out) if type(args) is tuple else type(args)(out)), idx

    def setup_input_hook(self, args: tuple) -> tuple:
        res, self.input_idx = self._apply(args, self._input_grads)
        self.n_inputs = len(args)
        return res

    def setup_output_hook(self, result: Any) -> Any:
        single = not isinstance(result, tuple)
        args = (result,) if single else result
        res, self.output_idx = self._apply(args, self._output_grads)
        self.n_outputs = len(args)
        return res[0] if single else res

    def _output_grads(self, node: _Pack, grads: dict) -> tuple:
        be = node.be
        full = [None] * self.n_outputs
        for k, i in enumerate(self.output_idx or []):
            full[i] = _wrap(grads.get(k), be)
        self.grad_outputs = tuple(full)
        for hook in self.user_pre_hooks:
            r = hook(self.module, self.grad_outputs)
            if r is None:
                continue
            if not isinstance(r, tuple):
                r = (r,)
            if len(r) != len(self.grad_outputs):
                raise RuntimeError(
                    "Backward pre hook returned an invalid number of grad_output, got "
                    f"{len(r)}, but expected {len(self.grad_outputs)}"
                )
            self.grad_outputs = r
        local = self.grad_outputs
        if self.input_idx is None:
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to "
                "module outputs since no inputs require gradients.", stacklevel=2,
            )
            grad_inputs = (None,) * self.n_inputs
            for hook in self.user_hooks:
                r = hook(self.module, grad_inputs, self.grad_outputs)
                if r is not None and not (isinstance(r, tuple) and all(x is None for x in r)):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should "
                        "always return None or None for all gradients."
                    )
            self.grad_outputs = None
        return tuple(_unwrap(local[i], "grad_output") for i in self.output_idx or [])

    def _input_grads(self, node: _Pack, grads: dict) -> tuple:
        be = node.be
        got = []
        for k in range(len(node.shapes)):
            g = grads.get(k)
            if g is None:  # as PyTorch: a tensor input that got no gradient gets zeros
                shape, d = node.shapes[k]
                g = be.zeros(shape, d)
            got.append(g)
        if self.grad_outputs is None:
            return tuple(got)
        full: list[Any] = [None] * self.n_inputs
        for k, i in enumerate(self.input_idx or []):
            full[i] = _wrap(got[k], be)
        res = tuple(full)
        for hook in self.user_hooks:
            r = hook(self.module, res, self.grad_outputs)
            if r is None:
                continue
            if not isinstance(r, tuple):
                r = (r,)
            if len(r) != len(res):
                raise RuntimeError(
                    "Backward hook returned an invalid number of grad_input, got "
                    f"{len(r)}, but expected {len(res)}"
                )
            res = r
        self.grad_outputs = None
        return tuple(_unwrap(res[i], "grad_input") for i in self.input_idx or [])
