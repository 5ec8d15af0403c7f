"""Objects in checkpoints that are not plain data (whole modules, custom classes): pickled, with
every tensor and numpy array kept out of the pickle (stored as ordinary checkpoint tensors and
referenced by key).

Loading such an object is where code could run, so it follows PyTorch 2.6+: with
``weights_only=True`` (the default of ``lucid.load``) the pickle is read by a restricted
unpickler that resolves only allowlisted globals (a few harmless built-ins, lucid's dtypes,
devices and sizes, and what ``add_safe_globals`` / ``safe_globals`` allow); anything else
fails with PyTorch's "Weights only load failed" explanation before it is called. With
``weights_only=False`` the standard unpickler runs, which can execute arbitrary code: use it
only for files from a trusted source.
"""

from __future__ import annotations

import base64
import builtins
import collections
import io
import pickle
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from . import _dtype
from ._device import device
from ._tensor import Size

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals",
           "dump_object", "load_object", "PICKLE_PROTOCOL", "WeightsOnlyError"]

PICKLE_PROTOCOL = 4

_DEFAULT_SAFE: dict[tuple[str, str], Any] = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("builtins", "set"): builtins.set,
    ("builtins", "frozenset"): builtins.frozenset,
    ("builtins", "complex"): builtins.complex,
    ("builtins", "bytearray"): builtins.bytearray,
    ("builtins", "slice"): builtins.slice,
    ("builtins", "range"): builtins.range,
    ("lucid._device", "device"): device,
    ("lucid._tensor", "Size"): Size,
}
_user_safe: list[Any] = []
_local = threading.local()


def _entry(obj: Any) -> tuple[tuple[str, str], Any]:
    if isinstance(obj, tuple):
        fn, name = obj
        mod, _, qual = name.rpartition(".")
        return (mod, qual), fn
    return (obj.__module__, obj.__qualname__), obj


def add_safe_globals(safe_globals: list[Callable[..., Any] | tuple[Any, str]]) -> None:
    """Allow these classes or functions when ``lucid.load(..., weights_only=True)`` reads a
    pickled object (as ``torch.serialization.add_safe_globals``). An entry may be
    ``(obj, "module.name")`` when the object is saved under another name.

    Example::

        lucid.serialization.add_safe_globals([Net])
        model = lucid.load("model.lucid")
    """
    _user_safe.extend(safe_globals)


def clear_safe_globals() -> None:
    """Forget every global ``add_safe_globals`` allowed."""
    _user_safe.clear()


def get_safe_globals() -> list[Any]:
    """The globals ``add_safe_globals`` allowed (not the built-in defaults)."""
    return list(_user_safe)


@contextmanager
def safe_globals(safe_globals: list[Callable[..., Any] | tuple[Any, str]]) -> Iterator[None]:
    """Allow these globals for loads inside the ``with`` block only.

    Example::

        with lucid.serialization.safe_globals([Net]):
            model = lucid.load("model.lucid")
    """
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append(list(safe_globals))
    try:
        yield
    finally:
        stack.pop()


def _allowed() -> dict[tuple[str, str], Any]:
    table = dict(_DEFAULT_SAFE)
    for group in [_user_safe, *getattr(_local, "stack", [])]:
        for g in group:
            key, obj = _entry(g)
            table[key] = obj
    return table


def _unsafe_message(module: str, name: str) -> str:
    full = f"{module}.{name}"
    return (
        "Weights only load failed. This file can still be loaded, to do so you have two "
        "options, do those steps only if you trust the source of the checkpoint. \n\t(1) "
        "lucid.load's `weights_only` argument defaults to True (as in PyTorch 2.6+). "
        "Re-running `lucid.load` with `weights_only` set to `False` will likely succeed, but "
        "it can result in arbitrary code execution. Do it only if you got the file from a "
        "trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please check "
        "the recommended steps in the following error message.\n\tWeightsUnpickler error: "
        f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
        f"`lucid.serialization.add_safe_globals([{full}])` or the "
        f"`lucid.serialization.safe_globals([{full}])` context manager to allowlist this "
        "global if you trust this class/function.")


class _Pickler(pickle.Pickler):
    def __init__(self, fh: io.BytesIO, ref: Callable[[Any], Any]) -> None:
        super().__init__(fh, protocol=PICKLE_PROTOCOL)
        self._ref = ref

    def persistent_id(self, obj: Any) -> Any:
        return self._ref(obj)


def dump_object(obj: Any, ref: Callable[[Any], Any]) -> str:
    """``obj`` pickled (base64), each tensor or array replaced by ``ref(obj)`` (a JSON-able
    reference; ``ref`` returns None for everything else)."""
    fh = io.BytesIO()
    _Pickler(fh, ref).dump(obj)
    return base64.b64encode(fh.getvalue()).decode("ascii")


class WeightsOnlyError(pickle.UnpicklingError):
    """``weights_only=True`` met a global that is not allowlisted (PyTorch raises an
    ``UnpicklingError`` with the same explanation)."""


class _WeightsOnlyUnpickler(pickle.Unpickler):
    def __init__(self, fh: io.BytesIO, load_ref: Callable[[Any], Any]) -> None:
        super().__init__(fh)
        self._load_ref = load_ref
        self._allowed = _allowed()

    def find_class(self, module: str, name: str) -> Any:
        hit = self._allowed.get((module, name))
        if hit is not None:
            return hit
        if module == "lucid._dtype" and isinstance(getattr(_dtype, name, None), _dtype.dtype):
            return getattr(_dtype, name)
        raise WeightsOnlyError(_unsafe_message(module, name))

    def persistent_load(self, pid: Any) -> Any:
        return self._load_ref(pid)


class _FullUnpickler(pickle.Unpickler):
    def __init__(self, fh: io.BytesIO, load_ref: Callable[[Any], Any]) -> None:
        super().__init__(fh)
        self._load_ref = load_ref

    def persistent_load(self, pid: Any) -> Any:
        return self._load_ref(pid)


def load_object(data: str, load_ref: Callable[[Any], Any], weights_only: bool) -> Any:
    """Undo ``dump_object``: ``load_ref(reference)`` gives back each tensor or array."""
    raw = base64.b64decode(data.encode("ascii"), validate=True)
    cls = _WeightsOnlyUnpickler if weights_only else _FullUnpickler
    return cls(io.BytesIO(raw), load_ref).load()
