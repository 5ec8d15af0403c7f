"""Grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

The flag is per thread, as in PyTorch (a ``no_grad`` in one thread never affects another);
the hot path reads it as one attribute of a ``threading.local``.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "set_multithreading_enabled", "is_multithreading_enabled"]

F = TypeVar("F", bound=Callable[..., Any])

class _GradState(threading.local):
    def __init__(self) -> None:
        self.on = True  # every new thread starts with grad enabled
        self.inference = False  # inside ``inference_mode()``


_state = _GradState()


def is_grad_enabled() -> bool:
    """Whether operations are currently recorded for backward."""
    return _state.on


class _GradModeBase:
    _mode = True

    def __enter__(self) -> None:
        self._prev = _state.on
        _state.on = self._mode

    def __exit__(self, *exc: object) -> None:
        _state.on = self._prev

    def __call__(self, fn: F) -> F:
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev = _state.on
            _state.on = mode
            try:
                return fn(*args, **kwargs)
            finally:
                _state.on = prev

        return wrapper  # type: ignore[return-value]


class no_grad(_GradModeBase):
    """Context manager and decorator that disables graph recording.

    Example::

        with lucid.no_grad():
            y = x * 2          # y.requires_grad is False
    """

    _mode = False

    def __init__(self, orig_func: Callable[..., Any] | None = None) -> None:
        pass  # ``__new__`` handles both ``@no_grad`` and ``@no_grad()``

    def __new__(cls, orig_func: Callable[..., Any] | None = None):  # type: ignore[no-untyped-def]
        self = super().__new__(cls)
        if orig_func is not None and callable(orig_func):
            return _GradModeBase.__call__(self, orig_func)
        return self


class enable_grad(no_grad):
    """Context manager and decorator that enables graph recording inside ``no_grad``."""

    _mode = True


class inference_mode(no_grad):
    """Same as ``no_grad`` in lucid (there is no separate inference tensor kind)."""

    def __new__(cls, mode: Any = True):  # type: ignore[no-untyped-def]
        if callable(mode) and not isinstance(mode, bool):
            inst = object.__new__(cls)
            inst._mode = False
            return inst(mode)
        self = object.__new__(cls)
        self._mode = not bool(mode)
        return self

    def __init__(self, mode: Any = True) -> None:
        pass

    def __enter__(self) -> None:
        super().__enter__()
        self._prev_inference = _state.inference
        _state.inference = not self._mode

    def __exit__(self, *exc: object) -> None:
        _state.inference = self._prev_inference
        super().__exit__(*exc)

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


def is_inference_mode_enabled() -> bool:
    """Whether ``inference_mode()`` is in effect in this thread (``torch``'s top-level
    ``is_inference_mode_enabled``)."""
    return _state.inference


class set_grad_enabled(_GradModeBase):
    """Set grad mode on or off; works as a function, context manager or decorator.

    Example::

        lucid.set_grad_enabled(False)      # off until switched back
        with lucid.set_grad_enabled(True):
            ...
    """

    def __init__(self, mode: bool) -> None:
        self._prev = _state.on
        self._mode = bool(mode)
        _state.on = self._mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _state.on = self._prev

    def __call__(self, fn: F) -> F:
        _state.on = self._prev  # as a decorator it only applies inside the call
        return super().__call__(fn)


_multithreading = [True]


def is_multithreading_enabled() -> bool:
    """Whether the backward pass may run on several threads (the last setting made by
    ``set_multithreading_enabled``; lucid's engine runs every backward on the calling thread
    either way)."""
    return _multithreading[0]


class set_multithreading_enabled(_GradModeBase):
    """Allow or forbid a multithreaded backward, at once; used as a context manager or
    decorator, the previous setting comes back on exit (``torch.autograd
    .set_multithreading_enabled``). lucid's engine is single-threaded, so this changes only
    what ``is_multithreading_enabled`` reports. As a decorator it applies only inside the
    decorated calls (as ``set_grad_enabled``), where PyTorch 2.13's leaves the mode switched
    from the moment of decorating.

    Example::

        with lucid.autograd.set_multithreading_enabled(False):
            loss.backward()
    """

    def __init__(self, mode: bool) -> None:
        self.prev = _multithreading[0]
        self.mode = bool(mode)
        _multithreading[0] = self.mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _multithreading[0] = self.prev

    def __call__(self, fn: F) -> F:
        _multithreading[0] = self.prev
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev = _multithreading[0]
            _multithreading[0] = mode
            try:
                return fn(*args, **kwargs)
            finally:
                _multithreading[0] = prev

        return wrapper  # type: ignore[return-value]

    def clone(self) -> set_multithreading_enabled:
        """A new manager with the same mode."""
        return self.__class__(self.mode)
