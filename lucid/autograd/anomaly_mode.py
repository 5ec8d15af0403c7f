"""Anomaly detection for the backward engine, as ``torch.autograd.anomaly_mode``.

While it is on, every node recorded in the forward pass keeps the Python stack that created
it, and the engine runs each backward through ``checked_backward``: an error raised there
is preceded by a warning that shows that forward stack, and (with ``check_nan``) a backward
that returns NaN raises ``RuntimeError`` naming its function. While it is off the engine
and ``Op.apply`` read one flag and nothing more.
"""

from __future__ import annotations

import functools
import traceback
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_anomaly_enabled"]

F = TypeVar("F", bound=Callable[..., Any])


class _AnomalyState:
    """Process-wide, as PyTorch's (unlike grad mode, which is per thread)."""

    __slots__ = ("on", "check_nan")

    def __init__(self) -> None:
        self.on = False
        self.check_nan = True


_state = _AnomalyState()


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (``torch.is_anomaly_enabled``)."""
    return _state.on


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also checks backward outputs for NaN."""
    return _state.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (``torch.set_anomaly_enabled``)."""
    _state.on = bool(enabled)
    _state.check_nan = bool(check_nan)


class detect_anomaly:
    """Context manager that turns on anomaly detection for the autograd engine, as
    ``torch.autograd.detect_anomaly``: a backward error is preceded by a warning showing the
    forward call that created the failing node, and with ``check_nan`` (default) a backward
    that returns NaN raises ``RuntimeError("Function 'XBackward0' returned nan values in
    its 0th output.")``. It slows every op down: use it for debugging only. lucid also
    accepts it as a decorator.

    Example::

        with lucid.autograd.detect_anomaly():
            loss = model(x).sum()
            loss.backward()         # RuntimeError naming the op whose backward made NaN
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the "
                      "runtime and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)

    def __call__(self, fn: F) -> F:
        check_nan = self.check_nan

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev, prev_nan = is_anomaly_enabled(), is_anomaly_check_nan_enabled()
            set_anomaly_enabled(True, check_nan)
            try:
                return fn(*args, **kwargs)
            finally:
                set_anomaly_enabled(prev, prev_nan)

        return wrapper  # type: ignore[return-value]


class set_detect_anomaly:
    """Turn anomaly detection on or off (``mode``), at once, as
    ``torch.autograd.set_detect_anomaly``; used as a context manager, the previous setting
    comes back on exit.

    Example::

        with lucid.autograd.set_detect_anomaly(True, check_nan=True):
            loss.backward()
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


def forward_stack() -> list[traceback.FrameSummary]:
    """The Python stack of the caller's caller (the code that ran the op)."""
    return traceback.extract_stack()[:-2]


def checked_backward(call: Callable[[Any, Any], Any] | None) -> Callable[[Any, Any], Any]:
    """The engine's per-node backward (``call(node, grad)``, or ``node.backward(grad)`` when
    None) with the anomaly checks around it."""
    check_nan = _state.check_nan

    def run(fn: Any, g: Any) -> Any:
        try:
            out = fn.backward(g) if call is None else call(fn, g)
        except Exception:
            _warn_forward(fn)
            raise
        if check_nan:
            grads = out if out.__class__ is tuple else (out,)
            for i, gr in enumerate(grads):
                if gr is None or not hasattr(gr, "shape"):
                    continue
                a = getattr(gr, "_data", gr)
                be = fn.be if call is None else gr._be
                if be.item(be.any(be.isnan(a))):
                    _warn_forward(fn)
                    raise RuntimeError(
                        f"Function '{fn.name()}' returned nan values in its {i}th output.")
        return out

    return run


def _warn_forward(fn: Any) -> None:
    stack = getattr(fn, "_anomaly_trace", None)
    if stack is None:
        warnings.warn(f"Error detected in {fn.name()}. No forward pass information available. "
                      "Enable detect anomaly during forward pass for more information.",
                      stacklevel=4)
        return
    warnings.warn(f"Error detected in {fn.name()}. Traceback of forward call that caused the "
                  "error:\n" + "".join(traceback.format_list(stack)), stacklevel=4)
