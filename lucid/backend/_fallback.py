"""One mechanism for a kernel backend to decline: its reference method runs instead.

``falls_back_to(Reference)`` wraps every method a kernel backend class defines itself that
the reference class also declares: when a kernel the method calls is not compiled yet (a
cold cache; ``lucid/_background_compile.py`` compiles it in a helper process and raises
``KernelNotReady``), the reference method runs with the same arguments. A kernel call
either runs whole or raises before it starts, and each method calls its mutating kernel
last (optimizer updates, batch-norm running statistics, in-place arithmetic), so a method
that falls back has changed nothing. Methods whose reference draws from a generator keep
the draw outside the kernel call (see ``cpu.host_dropout_scale``).

Cost on the warm path: one Python call per backend method (~60 ns); the ``try`` is free.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .._background_compile import KernelNotReady, catcher, compiling_here

__all__ = ["falls_back_to"]


def _wrap(fast: Callable, ref: Callable) -> Callable:
    def method(*args: Any, **kwargs: Any) -> Any:
        try:
            return fast(*args, **kwargs)
        except KernelNotReady:
            return compiling_here(ref, *args, **kwargs)

    method.__name__, method.__qualname__ = fast.__name__, fast.__qualname__
    method.__doc__, method.__wrapped__ = fast.__doc__, fast  # type: ignore[attr-defined]
    return catcher(method)


def falls_back_to(reference: type) -> Callable[[type], type]:
    """Class decorator: each public method of the class that ``reference`` also declares
    runs ``reference``'s when one of its kernels is not ready (same kind: static or not)."""

    def deco(cls: type) -> type:
        for name, attr in list(vars(cls).items()):
            if name.startswith("_"):
                continue
            static = isinstance(attr, staticmethod)
            if not (static or inspect.isfunction(attr)):
                continue
            try:
                ref = inspect.getattr_static(reference, name)
            except AttributeError:
                continue
            if isinstance(ref, staticmethod) != static:
                raise TypeError(f"{cls.__name__}.{name} and {reference.__name__}.{name} must "
                                "both be static methods or both instance methods")
            if static:
                setattr(cls, name, staticmethod(_wrap(attr.__func__, ref.__func__)))
            else:
                setattr(cls, name, _wrap(attr, ref))
        return cls

    return deco
