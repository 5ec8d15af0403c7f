"""``lucid.device``: a parsed device name ("cpu", "gpu"; "cuda" and "mps" mean "gpu"), and the
per-thread default device that factory functions use when given no ``device=``."""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["device", "device_name", "get_default_device", "set_default_device"]


class _Default(threading.local):
    """The default device of this thread (PyTorch's is per thread too), and the defaults that
    ``with lucid.device(...)`` blocks replaced, innermost last."""

    def __init__(self) -> None:
        self.name = "cpu"
        self.dev: device | None = None
        self.stack: list[tuple[str, device | None]] = []


_default = _Default()

_ALIASES = {"cuda": "gpu", "mps": "gpu", "metal": "gpu"}


class device:
    """A device name, e.g. ``lucid.device("cpu")``.

    ``"cuda"`` and ``"mps"`` are accepted as names of lucid's ``"gpu"`` device so PyTorch
    scripts run unchanged. A device compares equal to its name string.
    """

    __slots__ = ("type", "index")

    def __init__(self, type: str | device, index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string such as 'cpu' or 'gpu', got {type!r}")
        name = type.strip().lower()
        if ":" in name:
            name, _, idx = name.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        self.type = _ALIASES.get(name, name)
        self.index = index

    def __repr__(self) -> str:
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, TypeError):
                return False
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and (
            self.index is None or other.index is None or self.index == other.index
        )

    def __hash__(self) -> int:
        return hash(self.type)

    def __reduce__(self) -> tuple:
        return (device, (self.type, self.index))

    def __enter__(self) -> device:
        """Make this the default device until the block ends, as PyTorch's ``with
        torch.device(...)``: factory functions called without ``device=`` create there."""
        _default.stack.append((_default.name, _default.dev))
        _default.name, _default.dev = self.type, self
        return self

    def __exit__(self, *exc: object) -> None:
        _default.name, _default.dev = _default.stack.pop()

    def __call__(self, fn: Any) -> Any:
        """Use as a decorator: ``fn`` runs with this device as the default."""
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        wrapper.__name__, wrapper.__doc__ = getattr(fn, "__name__", "f"), fn.__doc__
        wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
        return wrapper


def set_default_device(device: object) -> None:  # noqa: A002 - PyTorch's name
    """Make ``device`` the default device of this thread for factory functions
    (``lucid.zeros``, ``lucid.tensor``, ``lucid.randn``, ...) called without ``device=``;
    None restores "cpu". As in PyTorch, other threads keep their own default.

    Example::

        lucid.set_default_device("gpu")
        lucid.zeros(3).device        # device(type='gpu')
        lucid.set_default_device(None)
    """
    if device is None:
        _default.name, _default.dev = "cpu", None
        return
    d = _as_device(device)
    _default.name, _default.dev = d.type, d


def get_default_device() -> device:
    """The device factory functions use when given no ``device=`` (``device(type='cpu')``
    unless ``set_default_device`` or a ``with lucid.device(...)`` block changed it)."""
    d = _default.dev
    return d if d is not None else device(_default.name)


def _as_device(d: object) -> device:
    if isinstance(d, device):
        return d
    if isinstance(d, int) and not isinstance(d, bool):
        return device("gpu", d)
    if isinstance(d, str):
        return device(d)
    t = getattr(d, "type", None)  # e.g. a torch.device
    if isinstance(t, str):
        return device(t, getattr(d, "index", None))
    raise TypeError(f"expected a device such as 'cpu' or 'gpu', got {d!r}")


def device_name(d: object) -> str:
    """The backend key for a device spec: a ``device``, a string, or None (-> the default
    device, "cpu" unless ``set_default_device`` changed it)."""
    if d is None:
        return _default.name
    if isinstance(d, device):
        return d.type
    if isinstance(d, str):
        if d == "cpu" or d == "gpu":
            return d
        return device(d).type
    if isinstance(d, int):
        return "gpu"
    t = getattr(d, "type", None)  # e.g. a torch.device
    if isinstance(t, str):
        return device(t).type
    raise TypeError(f"expected a device such as 'cpu' or 'gpu', got {d!r}")
