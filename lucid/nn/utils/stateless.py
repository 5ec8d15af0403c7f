"""Call a module with some of its parameters and buffers replaced
(``torch.nn.utils.stateless``; ``lucid.func.functional_call`` is the current name).

Example::

    params = {k: v * 0 for k, v in net.named_parameters()}
    out = lucid.func.functional_call(net, params, (x,))     # net itself is unchanged
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from ..._tensor import Tensor
from ..module import Module
from ..parallel import DataParallel

__all__ = ["functional_call"]

_MISSING: Any = object()


def _swap_tensor(module: Module, name: str, tensor: Any) -> Any:
    """Put ``tensor`` at ``module.<name>`` (a parameter / buffer slot keeps its kind) and
    return what was there (``_MISSING`` when nothing was); ``_MISSING`` deletes."""
    if tensor is not _MISSING and not isinstance(tensor, Tensor) and tensor is not None:
        raise TypeError(f"{tensor} is not an instance of lucid.Tensor")
    if "." in name:
        raise KeyError('tensor name can\'t contain "."')
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')
    for registry in (module._parameters, module._buffers):
        if name in registry:
            orig = registry[name]
            if tensor is _MISSING:
                del registry[name]
            else:
                registry[name] = tensor
            return orig
    orig = getattr(module, name) if hasattr(module, name) else _MISSING
    if orig is not _MISSING and not isinstance(orig, Tensor) and orig is not None:
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of lucid.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


def _submodule(root: Module, path: str) -> Module:
    module = root
    if path:
        for attr in path.split("."):
            try:
                sub = getattr(module, attr)
            except AttributeError as ex:
                raise AttributeError(f"{module._get_name()} has no attribute `{attr}`") from ex
            if not isinstance(sub, Module):
                raise TypeError(f"submodule `{path}`: {sub} is not an instance of "
                                "lucid.nn.Module")
            module = sub
    return module


def _swap_all(root: Module, named: dict[str, Any]) -> dict[str, Any]:
    done: dict[str, Any] = {}
    try:
        for name, t in named.items():
            prefix, _, attr = name.rpartition(".")
            done[name] = _swap_tensor(_submodule(root, prefix), attr, t)
    except Exception:
        _swap_all(root, done)
        raise
    return done


def _untie(module: Module, given: dict[str, Tensor]) -> dict[str, Tensor]:
    """Extend ``given`` to every name tied to (the same tensor as) a given name."""
    all_named: dict[str, Tensor] = {}
    all_named.update(module.named_parameters(remove_duplicate=False))
    all_named.update(module.named_buffers(remove_duplicate=False))
    by_tensor: dict[int, set[str]] = {}
    for name, t in all_named.items():
        by_tensor.setdefault(id(t), set()).add(name)
    tied: dict[str, set[str]] = {n: s for s in by_tensor.values() if len(s) > 1 for n in s}
    given_tied = {n for n in given if n in tied}
    for name in given_tied:
        names = tied[name]
        if len(names & given_tied) > 1 and len({id(given[n]) for n in names & given_tied}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
    out = dict(given)
    for name in given_tied:
        for other in tied[name]:
            out[other] = given[name]
    return out


@contextlib.contextmanager
def _reparametrize_module(module: Module, parameters_and_buffers: dict[str, Tensor],
                          tie_weights: bool = False, strict: bool = False) -> Iterator[None]:
    named = _untie(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(valid - set(named)), sorted(set(named) - valid)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(msgs)))
    orig: dict[str, Any] = {}
    try:
        orig = _swap_all(module, named)
        yield
    finally:
        new = _swap_all(module, orig)
        parameters_and_buffers.update(
            {k: new[k] for k in parameters_and_buffers if k in new})


def _functional_call(module: Module, parameters_and_buffers: dict[str, Tensor],
                     args: Any = None, kwargs: dict[str, Any] | None = None, *,
                     tie_weights: bool = True, strict: bool = False) -> Any:
    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights,
                               strict=strict):
        return module(*args, **kwargs)


def functional_call(module: Module, parameters_and_buffers: dict[str, Tensor],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameters_and_buffers`` (dotted names, as ``state_dict``) replaced for the call only.

    Gradients flow to the given tensors. ``tie_weights`` also replaces tensors tied to a
    given one; ``strict`` requires exactly every parameter and buffer. Deprecated
    (FutureWarning) in favour of ``lucid.func.functional_call``, as in PyTorch.

    Example::

        out = nn.utils.stateless.functional_call(net, {"fc.weight": w}, (x,))
    """
    warnings.warn(
        "`lucid.nn.utils.stateless.functional_call` is deprecated. Please use "
        "`lucid.func.functional_call` instead which is a drop-in replacement.",
        FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
