"""Helpers of ``load_state_dict``: the result type, wrapped hooks, reading checkpoint values
(lucid, numpy, torch, nested lists) and the staged changes that make a load atomic."""

from __future__ import annotations

import copy
import threading
import weakref
from collections import namedtuple
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _make
from ._util import convert_array
from .parameter import Buffer, Parameter

__all__: list[str] = []

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the missing and unexpected keys."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _WrappedHook:
    """A load pre-hook, optionally bound to its module through a weak reference."""

    def __init__(self, hook: Callable, module: Any = None) -> None:
        self.hook = hook
        self.with_module = module is not None
        if self.with_module:
            self.module = weakref.ref(module)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self) -> dict:
        state = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state: dict) -> None:
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


# ---- staging (the atomic load) ---------------------------------------------------------------
_local = threading.local()


def _stages() -> list:
    s = getattr(_local, "stages", None)
    if s is None:
        s = _local.stages = []
    return s


class _Txn:
    """Heads a ``load_state_dict`` batch. Applying the batch runs its actions in order; an
    action that fails while applied (a ``set_extra_state`` that raises) restores everything
    applied before it, from snapshots taken just before each write, so a failed load
    changes nothing. Writes staged after the last ``set_extra_state`` need no snapshot."""

    __slots__ = ("applied", "last_call")

    def __init__(self) -> None:
        self.applied: list[Any] = []
        self.last_call = -1

    def apply(self, backup: bool) -> None:
        self.applied = []

    def undo(self) -> None:
        pass

    def needs_backup(self, index: int) -> bool:
        return index < self.last_call

    def done(self, action: Any) -> None:
        self.applied.append(action)

    def rollback(self) -> None:
        for a in reversed(self.applied):
            try:
                a.undo()
            except Exception:  # keep restoring the rest; the original error is raised
                pass
        self.applied = []


class _Action:
    __slots__ = ("txn", "index")

    def __init__(self) -> None:
        self.txn: _Txn | None = None
        self.index = 0

    def _backup(self, backup: bool) -> bool:
        return backup or (self.txn is not None and self.txn.needs_backup(self.index))

    def _done(self) -> None:
        if self.txn is not None:
            self.txn.done(self)


class _Copy(_Action):
    """Write checked values into an existing Parameter / Buffer (identity kept)."""

    __slots__ = ("t", "arr", "old")

    def __init__(self, t: Tensor, arr: Any) -> None:
        super().__init__()
        self.t, self.arr, self.old = t, arr, None

    def apply(self, backup: bool) -> None:
        t = self.t
        if self._backup(backup):
            self.old = (t._be.copy(t._data), t._vc[0])
        t._data = t._be.assign(t._data, self.arr)
        t._vc[0] += 1
        self._done()

    def undo(self) -> None:
        if self.old is not None:
            data, version = self.old
            self.t._data = self.t._be.assign(self.t._data, data)
            self.t._vc[0] = version


class _Assign(_Action):
    """Replace a registry entry (``load_state_dict(assign=True)``)."""

    __slots__ = ("module", "name", "value", "rg", "old")

    def __init__(self, module: Any, name: str, value: Tensor, rg: bool | None) -> None:
        super().__init__()
        self.module, self.name, self.value, self.rg, self.old = module, name, value, rg, None

    def _registry(self) -> dict:
        m = self.module
        return m._parameters if self.name in m._parameters else m._buffers

    def apply(self, backup: bool) -> None:
        self.old = self._registry()[self.name]
        if self.rg is not None and self.value.requires_grad != self.rg:
            self.value.requires_grad_(self.rg)
        setattr(self.module, self.name, self.value)
        self._done()

    def undo(self) -> None:
        if self.old is not None:
            self._registry()[self.name] = self.old


_NO_SNAPSHOT = object()


class _Call(_Action):
    """A deferred ``set_extra_state``. Before it runs, the module's current extra state is
    snapshotted (``get_extra_state``, deep-copied) so the call can be undone; if it raises,
    its own module and every write applied before it are restored and the error propagates."""

    __slots__ = ("fn", "module", "old")

    def __init__(self, fn: Callable[[], None], module: Any = None) -> None:
        super().__init__()
        self.fn, self.module, self.old = fn, module, _NO_SNAPSHOT

    def _snapshot(self) -> None:
        self.old = _NO_SNAPSHOT
        m = self.module
        if m is None or not hasattr(m, "get_extra_state"):
            return
        try:
            self.old = copy.deepcopy(m.get_extra_state())
        except Exception:  # an extra state that cannot be read back cannot be restored
            self.old = _NO_SNAPSHOT

    def apply(self, backup: bool) -> None:
        self._snapshot()
        try:
            self.fn()
        except BaseException:
            self.undo()
            if self.txn is not None:
                self.txn.rollback()
            raise
        self._done()

    def undo(self) -> None:
        if self.old is not _NO_SNAPSHOT:
            old, self.old = self.old, _NO_SNAPSHOT
            try:
                self.module.set_extra_state(old)
            except Exception:
                pass


def _stage(action: Any) -> None:
    s = _stages()
    if not s:  # called outside load_state_dict: apply at once
        action.apply(False)
        return
    batch = s[-1]
    if not batch or not isinstance(batch[0], _Txn):
        batch.insert(0, _Txn())
    txn = batch[0]
    action.txn, action.index = txn, len(batch)
    if isinstance(action, _Call):
        txn.last_call = action.index
    batch.append(action)


# ---- reading checkpoint values ------------------------------------------------------------
class _NotTensorLike(Exception):
    pass


def _is_torch_tensor(v: Any) -> bool:
    return type(v).__module__.startswith("torch") and hasattr(v, "detach") \
        and hasattr(v, "numpy")


def _read(value: Any) -> tuple[Any, Any]:
    """``(array, backend)`` for a lucid Tensor, ``(numpy array, None)`` for anything else
    array-like (numpy, torch tensors, nested lists, numbers)."""
    if isinstance(value, Tensor):
        return value._data, value._be
    if _is_torch_tensor(value):
        v = value.detach()
        if v.device.type != "cpu":
            v = v.cpu()
        if str(v.dtype) == "torch.bfloat16":
            v = v.float()
        a = v.numpy()
    elif isinstance(value, (np.ndarray, np.generic)):
        a = np.asarray(value)
    elif isinstance(value, (list, tuple, bool, int, float)) or hasattr(value, "__array__"):
        try:
            a = np.asarray(value)
        except (ValueError, TypeError):
            raise _NotTensorLike from None
        if not hasattr(value, "__array__") and a.dtype == np.float64:
            a = a.astype(_dtype.get_default_dtype().np)  # Python floats: the default dtype
    else:
        raise _NotTensorLike
    if a.dtype.kind not in "biuf":
        raise _NotTensorLike
    return a, None


def _snapshot(t: Tensor) -> Tensor:
    return _make(t._be.copy(t._data), t._be, False, None)


def _assigned(param: Tensor, value: Any, arr: Any, src: Any) -> tuple[Tensor, bool | None]:
    """The object ``assign=True`` installs for ``param``, and the requires_grad to give it."""
    if isinstance(value, Tensor):
        t = value if tuple(value.shape) == tuple(arr.shape) else _make(arr, src, False, None)
    else:
        be = param._be
        t = _make(convert_array(np.array(arr), src, be, None), be, False, None)  # never alias input
    if isinstance(param, Parameter):
        if param.requires_grad and not t.dtype.is_floating_point:
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        return (t if isinstance(t, Parameter) else Parameter(t, requires_grad=False)), \
            param.requires_grad
    if isinstance(param, Buffer) and not isinstance(t, Buffer):
        return Buffer(t), None
    return t, None
