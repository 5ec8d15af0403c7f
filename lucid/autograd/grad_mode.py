"""Grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

The flag lives in a one-element list so the hot path reads it with one index.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode"]

F = TypeVar("F", bound=Callable[..., Any])

_enabled = [True]


def is_grad_enabled() -> bool:
    """Whether operations are currently recorded for backward."""
    return _enabled[0]


class _GradModeBase:
    _mode = True

    def __enter__(self) -> None:
        self._prev = _enabled[0]
        _enabled[0] = self._mode

    def __exit__(self, *exc: object) -> None:
        _enabled[0] = self._prev

    def __call__(self, fn: F) -> F:
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev = _enabled[0]
            _enabled[0] = mode
            try:
                return fn(*args, **kwargs)
            finally:
                _enabled[0] = prev

        return wrapper  # type: ignore[return-value]


class no_grad(_GradModeBase):
    """Context manager and decorator that disables graph recording.

    Example::

        with lucid.no_grad():
            y = x * 2          # y.requires_grad is False
    """

    _mode = False

    def __init__(self, orig_func: Callable[..., Any] | None = None) -> None:
        # allows both ``@no_grad`` and ``@no_grad()``
        self._orig = orig_func

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
            return _GradModeBase.__call__(object.__new__(cls), mode)
        self = object.__new__(cls)
        self._mode = not bool(mode)
        return self

    def __init__(self, mode: Any = True) -> None:
        pass


class set_grad_enabled(_GradModeBase):
    """Set grad mode on or off; works as a function, context manager or decorator.

    Example::

        lucid.set_grad_enabled(False)      # off until switched back
        with lucid.set_grad_enabled(True):
            ...
    """

    def __init__(self, mode: bool) -> None:
        self._prev = _enabled[0]
        self._mode = bool(mode)
        _enabled[0] = self._mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _enabled[0] = self._prev

    def __call__(self, fn: F) -> F:
        _enabled[0] = self._prev  # as a decorator it only applies inside the call
        return super().__call__(fn)
