"""torch's numpy-style keyword aliases: every function and Tensor method torch binds to an
ATen operator also takes ``axis`` for ``dim``, ``keepdims`` for ``keepdim``, ``x``/``a``/
``x1`` for ``input`` and ``x2`` for ``other`` (``x.sum(axis=1)``, ``torch.mean(x, axis=0,
keepdims=True)``), so numpy-minded code runs unchanged.

``install(namespace)`` gives that to every public function of a namespace (and, for
``Tensor``, every method) whose parameters include one of the real names and do not already
use the alias for something else. The wrapper renames the alias before the call; a call
without keywords goes straight through. The function keeps its signature, as torch's do
(the aliases are a parser feature, not parameters).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["RENAMES", "install", "rename"]

ALIASES = {"dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a", "x1"),
           "other": ("x2",)}

_WRAPPED = "__lucid_numpy_aliases__"
# a wrapper carrying this attribute (a dict) applies the renames itself: no second wrapper
RENAMES = "__lucid_renames__"


def _renames(fn: Any, method: bool) -> dict[str, str] | None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = sig.parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return None
    names = list(params)[1 if method else 0:]
    out = {}
    for real, aliases in ALIASES.items():
        if real in names and params[real].kind is not inspect.Parameter.POSITIONAL_ONLY:
            for alias in aliases:
                if alias not in params:
                    out[alias] = real
    return out or None


def rename(kwargs: dict[str, Any], renames: dict[str, str], name: str) -> None:
    """Replace the aliases in ``kwargs`` by the names they stand for, in place."""
    for alias in renames.keys() & kwargs.keys():
        real = renames[alias]
        if real in kwargs:
            raise TypeError(f"{name}() got multiple values for argument '{real}' (as "
                            f"'{alias}')")
        kwargs[real] = kwargs.pop(alias)


def _wrap(fn: Callable[..., Any], renames: dict[str, str]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def with_aliases(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            rename(kwargs, renames, fn.__name__)
        return fn(*args, **kwargs)

    with_aliases.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    setattr(with_aliases, _WRAPPED, True)
    return with_aliases


def install(namespace: Any, names: Any = None) -> None:
    """Give the functions of ``namespace`` (a module's globals dict, or the Tensor class)
    torch's numpy-style keyword aliases; ``names`` limits which (default: every public
    callable)."""
    is_class = isinstance(namespace, type)
    items = vars(namespace) if is_class else namespace
    for name in list(items if names is None else names):
        if name.startswith("_") or name not in items:
            continue
        fn = items[name]
        if not (inspect.isfunction(fn) or isinstance(fn, functools.partial)) \
                or getattr(fn, _WRAPPED, False):
            continue
        renames = _renames(fn, is_class)
        if renames is not None and isinstance(getattr(fn, RENAMES, None), dict):
            getattr(fn, RENAMES).update(renames)  # a wrapper that renames already (out=)
        elif renames is not None:
            if is_class:
                setattr(namespace, name, _wrap(fn, renames))
            else:
                items[name] = _wrap(fn, renames)
