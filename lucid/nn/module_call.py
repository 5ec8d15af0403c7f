"""Calling a module, and the forward / backward hooks around the call (PyTorch's
``_call_impl``)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from .hooks import BackwardHook, RemovableHandle

__all__: list[str] = []


def _move_to_front(d: Any, key: int) -> None:
    d.move_to_end(key, last=False)


class _ModuleCall:
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
        handle = RemovableHandle(self._forward_pre_hooks,
                                 extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            _move_to_front(self._forward_pre_hooks, handle.id)
        return handle

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
        handle = RemovableHandle(
            self._forward_hooks,
            extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called],
        )
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            _move_to_front(self._forward_hooks, handle.id)
        return handle

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
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            _move_to_front(self._backward_hooks, handle.id)
        return handle

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
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False
                                        ) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients with respect to the module's
        outputs are computed; a returned tuple replaces ``grad_output``.

        Example::

            net.register_full_backward_pre_hook(lambda m, go: tuple(g * 0.5 for g in go))
        """
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            _move_to_front(self._backward_pre_hooks, handle.id)
        return handle

    # ---- calling --------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` with the registered hooks around it."""
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

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
                if hook_id in self._forward_hooks_with_kwargs:
                    r = hook(self, args, kwargs, result)
                else:
                    r = hook(self, args, result)
                if r is not None:
                    result = r
            if bw_hook is not None:
                from .._tensor import Tensor

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
                        if hook_id in self._forward_hooks_with_kwargs:
                            r = hook(self, args, kwargs, result)
                        else:
                            r = hook(self, args, result)
                        if r is not None:
                            result = r
                    except Exception as e:
                        warnings.warn(
                            "module forward hook with ``always_call=True`` raised an exception "
                            f"that was silenced as another error was raised in forward: {e}",
                            stacklevel=2,
                        )
            raise
