"""``state_dict`` and ``load_state_dict`` for ``Module``, with their hooks.

Each module saves and loads only its own parameters and buffers; the recursion adds
``prefix + name + "."``. Loading is atomic: ``_load_from_state_dict`` only checks and
stages its copies while ``load_state_dict`` runs, and they are applied once every module
validated without an error.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from .._tensor import Size
from ._util import convert_array
from .module_hooks import RemovableHandle, add_hook
from .module_state_dict_load import (
    _EXTRA_STATE_KEY_SUFFIX,
    _Assign,
    _assigned,
    _Call,
    _Copy,
    _IncompatibleKeys,
    _NotTensorLike,
    _read,
    _snapshot,
    _stage,
    _stages,
    _WrappedHook,
)

__all__: list[str] = []


class _ModuleStateDict:
    """State-dict methods of ``Module``."""

    # ---- extra state ----------------------------------------------------------------------
    def get_extra_state(self) -> Any:
        """Extra (non-tensor) state saved under ``"<prefix>_extra_state"``; override it
        together with ``set_extra_state``.

        Example::

            def get_extra_state(self):
                return {"steps": self.steps}
        """
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called."
        )

    def set_extra_state(self, state: Any) -> None:
        """Restore what ``get_extra_state`` returned.

        Example::

            def set_extra_state(self, state):
                self.steps = state["steps"]
        """
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called."
        )

    # ---- hooks ----------------------------------------------------------------------------
    def register_state_dict_pre_hook(self, hook: Callable[..., None]) -> RemovableHandle:
        """Call ``hook(module, prefix, keep_vars)`` before this module saves its state.

        Example::

            net.register_state_dict_pre_hook(lambda m, prefix, keep_vars: None)
        """
        return add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable[..., None]) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after this module (and
        its children) saved; it may edit ``state_dict`` in place and must return None.

        Example::

            net.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd.pop("x", None))
        """
        hook._from_public_api = True  # type: ignore[attr-defined]
        return add_hook(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError(
                "Cannot register the same function as the state dict post hook that was "
                "previously registered via register_state_dict_post_hook"
            )
        return add_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., None]) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads; it may rewrite the
        (copied) ``state_dict``.

        Example::

            def rename(m, sd, prefix, *rest):
                if prefix + "w" in sd:
                    sd[prefix + "weight"] = sd.pop(prefix + "w")
            net.fc.register_load_state_dict_pre_hook(rename)
        """
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook: Callable[..., None],
                                           with_module: bool = False) -> RemovableHandle:
        return add_hook(self._load_state_dict_pre_hooks,
                        _WrappedHook(hook, self if with_module else None))

    def register_load_state_dict_post_hook(self, hook: Callable[..., None]
                                           ) -> RemovableHandle:
        """Call ``hook(module, incompatible_keys)`` after a load; it may clear entries of
        ``incompatible_keys.missing_keys`` / ``unexpected_keys`` in place (a strict load
        then succeeds) and must return None.

        Deliberate difference from PyTorch (part of the atomic load): post-hooks run once
        every module has been validated and all values applied, children before parents,
        so each sees the complete key lists and the loaded values; if the load still fails
        afterwards, every copy is rolled back.

        Example::

            net.register_load_state_dict_post_hook(lambda m, keys: keys.missing_keys.clear())
        """
        return add_hook(self._load_state_dict_post_hooks, hook)

    # ---- saving ---------------------------------------------------------------------------
    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        skip = self._state_dict_pass_attr
        for name, p in self._parameters.items():
            if p is not None and name not in skip:
                destination[prefix + name] = p if keep_vars else _snapshot(p)
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set \
                    and name not in skip:
                destination[prefix + name] = b if keep_vars else _snapshot(b)
        if type(self).get_extra_state is not _ModuleStateDict.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Any]:
        """An ``OrderedDict`` of every parameter and persistent buffer by dotted name, with
        PyTorch's keys (``_metadata`` holds each module's ``_version``).

        Deliberate difference from PyTorch: with ``keep_vars=False`` (the default) each value
        is a detached tensor that owns a copy of the data, never a view of the parameter, so
        the result is a snapshot that later training cannot change. ``keep_vars=True``
        returns the Parameter and Buffer objects themselves.

        Example::

            sd = net.state_dict()
            list(sd)        # ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']
        """
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead.", FutureWarning,
                stacklevel=2,
            )
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            r = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if r is not None:
                    destination = r
            elif r is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    # ---- loading --------------------------------------------------------------------------
    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        """Check this module's own entries of ``state_dict`` (not its children's) and stage
        their copies; problems go into ``missing_keys``, ``unexpected_keys`` and
        ``error_msgs``. Override for per-module upgrades using
        ``local_metadata.get("version")``.

        Example::

            def _load_from_state_dict(self, sd, prefix, meta, *args):
                if meta.get("version", 1) < 2 and prefix + "w" in sd:
                    sd[prefix + "weight"] = sd.pop(prefix + "w")
                super()._load_from_state_dict(sd, prefix, meta, *args)
        """
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        skip = self._state_dict_pass_attr
        local_state = {k: v for k, v in self._parameters.items()
                       if v is not None and k not in skip}
        for k, v in self._buffers.items():
            if v is not None and k not in self._non_persistent_buffers_set and k not in skip:
                local_state[k] = v
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            try:
                arr, src = _read(value)
            except _NotTensorLike:
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected lucid.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(value)}"
                )
                continue
            shape = tuple(arr.shape)
            if param.ndim == 0 and shape == (1,):
                arr = arr.reshape(()) if src is None else src.reshape(arr, ())
                shape = ()
            if shape != tuple(param.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {Size(shape)} from "
                    f"checkpoint, the shape in current model is {param.shape}."
                )
                continue
            try:
                if assign:
                    _stage(_Assign(self, name, *_assigned(param, value, arr, src)))
                else:
                    _stage(_Copy(param, convert_array(arr, src, param._be, param.dtype)))
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the '
                    f"model are {param.shape} and whose dimensions in the checkpoint are "
                    f"{Size(shape)}, an exception occurred : {ex.args}."
                )
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not _ModuleStateDict.set_extra_state:
            if extra_key in state_dict:
                state = state_dict[extra_key]
                _stage(_Call(lambda: self.set_extra_state(state), module=self))
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head = key[len(prefix):].split(".", 1)
                    if len(head) > 1:
                        if head[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif head[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Load parameters and persistent buffers from ``state_dict`` into this module and
        its descendants; returns ``(missing_keys, unexpected_keys)``.

        Values may be lucid tensors, numpy arrays, nested lists or torch tensors (so a
        PyTorch model's ``state_dict()`` loads into the same architecture). They are cast
        to each target's dtype, moved to its device and copied into the existing Parameter
        and Buffer objects (identity kept, version bumped), so optimizers stay valid.
        ``assign=True`` instead installs new objects holding the checkpoint's values and
        dtypes (each Parameter keeps the module's ``requires_grad``).

        Deliberate difference from PyTorch: the load is atomic. Every key, shape and value
        is checked first; on any error (missing or unexpected keys with ``strict``, size
        mismatches, unreadable values) one RuntimeError lists them all and nothing in the
        model has changed.

        Example::

            net.load_state_dict(other.state_dict())
            net.load_state_dict(torch_model.state_dict())
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata  # type: ignore[attr-defined]
        with_post: list[Any] = []

        def load(module: Any, local: dict, prefix: str = "") -> None:
            meta = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                meta["assign_to_params_buffers"] = True
            module._load_from_state_dict(local, prefix, meta, True, missing, unexpected,
                                         errors)
            for name, child in module._modules.items():
                if child is not None:
                    cp = prefix + name + "."
                    load(child, {k: v for k, v in local.items() if k.startswith(cp)}, cp)
            if module._load_state_dict_post_hooks:
                with_post.append(module)

        staged: list[Any] = []
        stages = _stages()
        stages.append(staged)
        try:
            load(self, state_dict)
        finally:
            stages.pop()

        if errors or (strict and (missing or unexpected) and not with_post):
            raise RuntimeError(self._load_error(strict, missing, unexpected, errors))
        backup = bool(with_post)
        for a in staged:
            a.apply(backup)
        if not with_post:
            return _IncompatibleKeys(missing, unexpected)
        keys = _IncompatibleKeys(missing, unexpected)
        try:
            for m in with_post:
                for hook in m._load_state_dict_post_hooks.values():
                    if hook(m, keys) is not None:
                        raise AssertionError(
                            "Hooks registered with ``register_load_state_dict_post_hook`` are "
                            "not expected to return new values, if incompatible_keys need to "
                            "be modified, it should be done inplace."
                        )
            if strict and (missing or unexpected):
                raise RuntimeError(self._load_error(strict, missing, unexpected, errors))
        except BaseException:
            for a in reversed(staged):
                a.undo()
            raise
        return keys

    def _load_error(self, strict: bool, missing: list, unexpected: list, errors: list) -> str:
        msgs = list(errors)
        if strict:
            if unexpected:
                msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        return "Error(s) in loading state_dict for {}:\n\t{}".format(
            self.__class__.__name__, "\n\t".join(msgs))
