"""Hooks and calling for ``Module``: ``register_*_hook`` for forward and backward hooks,
``__call__`` with the hooks run around ``forward`` (PyTorch's ``_call_impl``), the removable
handles every registration returns, and the identity ops that let full backward hooks see (and
replace) the gradients of a module's inputs and outputs.

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

__all__ = ["RemovableHandle", "BackwardHook", "add_hook"]


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


def add_hook(hooks: Any, hook: Callable[..., Any], prepend: bool = False,
             flags: tuple[tuple[Any, bool], ...] = ()) -> RemovableHandle:
    """Register ``hook`` in the ordered dict ``hooks`` (first when ``prepend``) and mark it in
    each flag dict whose flag is set; the returned handle removes it from all of them."""
    handle = RemovableHandle(hooks, extra_dict=[d for d, _ in flags] or None)
    hooks[handle.id] = hook
    for d, on in flags:
        if on:
            d[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


class _ModuleHooks:
    """``__call__`` and hook registration for ``Module``."""

    # ---- registration ---------------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` before every ``forward``; a returned value replaces
        the positional args (a non-tuple is wrapped in one). With ``with_kwargs`` the hook
        is ``hook(module, args, kwargs)`` and returns ``None`` or ``(args, kwargs)``.

        Example::

            h = net.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
            h.remove()
        """
        return add_hook(self._forward_pre_hooks, hook, prepend,
                        ((self._forward_pre_hooks_with_kwargs, with_kwargs),))

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False, always_call: bool = False
                              ) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after every ``forward``; a returned value
        replaces the output. ``with_kwargs``: ``hook(module, args, kwargs, output)``.
        ``always_call``: also called (with output None) when ``forward`` raises.

        Example::

            acts = {}
            net.fc1.register_forward_hook(lambda m, a, out: acts.update(fc1=out))
        """
        return add_hook(self._forward_hooks, hook, prepend,
                        ((self._forward_hooks_with_kwargs, with_kwargs),
                         (self._forward_hooks_always_called, always_call)))

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False
                                    ) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` when the gradients with respect to
        the module's positional inputs are computed; a returned tuple replaces
        ``grad_input``. Entries are None for non-Tensor inputs and for outputs that got no
        gradient. When no input requires grad it fires at the outputs with all-None
        ``grad_input``. The module's forward sees identity views of its tensor inputs.

        Example::

            net.register_full_backward_hook(lambda m, gi, go: print(go[0].shape))
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single "
                "Module. Please use only one of them."
            )
        self._is_full_backward_hook = True
        return add_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Deprecated in PyTorch in favour of ``register_full_backward_hook``.

        Deliberate difference: lucid runs these hooks with the full-hook semantics
        (gradients with respect to the module's inputs and outputs), never PyTorch's legacy
        "last op of forward" ones; a FutureWarning says so.

        Example::

            net.register_backward_hook(lambda m, gi, go: None)
        """
        if self._is_full_backward_hook is True:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single "
                "Module. Please use only one of them."
            )
        warnings.warn(
            "register_backward_hook is deprecated; lucid runs the hook as a full backward hook "
            "(see register_full_backward_hook).", FutureWarning, stacklevel=2,
        )
        self._is_full_backward_hook = False
        return add_hook(self._backward_hooks, hook)

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False
                                        ) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients with respect to the module's
        outputs are computed; a returned tuple replaces ``grad_output``.

        Example::

            net.register_full_backward_pre_hook(lambda m, go: tuple(g * 0.5 for g in go))
        """
        return add_hook(self._backward_pre_hooks, hook, prepend)

    # ---- calling --------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` with the registered hooks around it."""
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def _run_forward_hook(self, hook_id: int, hook: Callable[..., Any], args: tuple,
                          kwargs: dict, result: Any) -> Any:
        if hook_id in self._forward_hooks_with_kwargs:
            r = hook(self, args, kwargs, result)
        else:
            r = hook(self, args, result)
        return result if r is None else r

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        result = None
        called: set[int] = set()
        try:
            for hook_id, hook in list(self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    r = hook(self, args, kwargs)
                    if r is not None:
                        if isinstance(r, tuple) and len(r) == 2:
                            args, kwargs = r
                        else:
                            raise RuntimeError(
                                "forward pre-hook must return None or a tuple of "
                                f"(new_args, new_kwargs), but got {r}."
                            )
                else:
                    r = hook(self, args)
                    if r is not None:
                        args = r if isinstance(r, tuple) else (r,)
            bw_hook = None
            full_hooks = list(self._backward_hooks.values())
            pre_hooks = list(self._backward_pre_hooks.values())
            if full_hooks or pre_hooks:
                bw_hook = BackwardHook(self, full_hooks, pre_hooks)
                args = bw_hook.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called:
                    called.add(hook_id)
                result = self._run_forward_hook(hook_id, hook, args, kwargs, result)
            if bw_hook is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn(
                        "For backward hooks to be called, module output should be a Tensor or "
                        f"a tuple of Tensors but received {type(result)}", stacklevel=2,
                    )
                result = bw_hook.setup_output_hook(result)
            return result
        except Exception:
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called and hook_id not in called:
                    try:
                        result = self._run_forward_hook(hook_id, hook, args, kwargs, result)
                    except Exception as e:
                        warnings.warn(
                            "module forward hook with ``always_call=True`` raised an exception "
                            f"that was silenced as another error was raised in forward: {e}",
                            stacklevel=2,
                        )
            raise
