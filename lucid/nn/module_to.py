"""Moving and casting a module's parameters and buffers: ``_apply`` and ``to``, ``cpu``,
``gpu``/``cuda``, ``float``, ``double``, ``half``, ``type``, ``to_empty``.

Parameters and buffers keep their identity: the objects stay, their data is replaced (and so
is their ``.grad``'s), so an optimizer built before ``to()`` still holds the live tensors.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from .. import _dtype
from .._tensor import Tensor, _make
from ..autograd import grad_mode
from ..backend import get_backend
from ..ops.device import parse_to
from ._util import convert_array

__all__: list[str] = []

T = TypeVar("T")

_local = threading.local()


def _convert(t: Tensor, be: Any, dt: _dtype.dtype | None) -> Tensor:
    """``t``'s values on backend ``be`` (None: where it is) with dtype ``dt`` (None: kept), as
    a new tensor that owns its memory; ``t`` itself when nothing changes."""
    be = t._be if be is None else be
    arr = convert_array(t._data, t._be, be, dt)
    return t if arr is t._data else _make(arr, be, False, None)


def _adopt(t: Tensor, new: Tensor) -> None:
    if new is not t:
        t._data = new._data
        t._be = new._be


class _ModuleTo:
    """Device and dtype methods of ``Module``."""

    def _apply(self: T, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> T:
        """Replace the data of every parameter (and its ``.grad``) and buffer with that of
        ``fn(tensor)``: own tensors first, then each child once (shared submodules and
        tied tensors are converted once). Override to react to moves, calling super.
        """
        memo = getattr(_local, "memo", None)
        top = memo is None
        if top:
            memo = _local.memo = set()
        try:
            memo.add(id(self))
            for p in self._parameters.values():  # type: ignore[attr-defined]
                if p is None or id(p) in memo:
                    continue
                memo.add(id(p))
                with grad_mode.no_grad():
                    _adopt(p, fn(p))
                    if p.grad is not None:
                        _adopt(p.grad, fn(p.grad))
            for b in self._buffers.values():  # type: ignore[attr-defined]
                if b is None or id(b) in memo:
                    continue
                memo.add(id(b))
                with grad_mode.no_grad():
                    _adopt(b, fn(b))
            if recurse:
                for m in self._modules.values():  # type: ignore[attr-defined]
                    if m is not None and id(m) not in memo:
                        m._apply(fn)
        finally:
            if top:
                _local.memo = None
        return self

    def to(self: T, *args: Any, **kwargs: Any) -> T:
        """Move and/or cast the parameters and buffers in place; returns self.

        Forms (as ``Tensor.to``, one parser): ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)`` (its device and dtype), with keywords
        ``device=``, ``dtype=``, ``non_blocking=``, ``copy=``, ``memory_format=``. Only
        floating-point tensors are cast; integer buffers only move. Plain tensor attributes
        (not registered) are left alone. Every Parameter and Buffer object (and its
        ``.grad``) keeps its identity and gets new data; PyTorch keeps parameters too but
        replaces buffer objects.

        Example::

            net.to(lucid.float64)
            net.to("gpu")
            net.to("cpu", lucid.float32)
        """
        be, dt = parse_to(*args, **kwargs)[:2]
        if dt is not None and not dt.is_floating_point:
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={dt}"
            )
        return self._apply(  # type: ignore[attr-defined]
            lambda t: _convert(t, be, dt if t.dtype.is_floating_point else None))

    def cpu(self: T) -> T:
        """Move every parameter and buffer to the "cpu" device.

        Example::

            net.cpu()
        """
        be = get_backend("cpu")
        return self._apply(lambda t: _convert(t, be, None))  # type: ignore[attr-defined]

    def gpu(self: T, device: Any = None) -> T:
        """Move every parameter and buffer to the "gpu" device.

        Example::

            net.gpu()
        """
        be = get_backend("gpu")
        return self._apply(lambda t: _convert(t, be, None))  # type: ignore[attr-defined]

    def cuda(self: T, device: Any = None) -> T:
        """Alias of ``gpu()``, so PyTorch scripts run unchanged.

        Example::

            net.cuda()
        """
        return self.gpu(device)  # type: ignore[attr-defined]

    def type(self: T, dst_type: Any) -> T:
        """Cast every parameter and buffer (integer ones too) to ``dst_type``.

        Example::

            net.type(lucid.float64)
        """
        dt = _type_arg(dst_type)
        return self._apply(lambda t: _convert(t, None, dt))  # type: ignore[attr-defined]

    def float(self: T) -> T:
        """Cast floating-point parameters and buffers to float32.

        Example::

            net.float()
        """
        return self._float_cast(_dtype.float32)

    def double(self: T) -> T:
        """Cast floating-point parameters and buffers to float64.

        Example::

            net.double()
        """
        return self._float_cast(_dtype.float64)

    def half(self: T) -> T:
        """Cast floating-point parameters and buffers to float16.

        Example::

            net.half()
        """
        return self._float_cast(_dtype.float16)

    def bfloat16(self: T) -> T:
        """Cast floating-point parameters and buffers to bfloat16.

        Example::

            net.bfloat16()
        """
        return self._float_cast(_dtype.bfloat16)

    def to_empty(self: T, *, device: Any, recurse: bool = True) -> T:
        """Move parameters and buffers to ``device`` without copying values (they become
        uninitialised memory of the same shape and dtype).

        Example::

            net.to_empty(device="cpu")
        """
        be = get_backend(device)
        return self._apply(  # type: ignore[attr-defined]
            lambda t: _make(be.empty(tuple(t.shape), t.dtype), be, False, None),
            recurse=recurse)

    def share_memory(self: T) -> T:
        """A no-op kept for PyTorch compatibility (lucid has no multi-process tensors).

        Example::

            net.share_memory()
        """
        return self

    def _float_cast(self: T, dt: _dtype.dtype) -> T:
        return self._apply(  # type: ignore[attr-defined]
            lambda t: _convert(t, None, dt) if t.dtype.is_floating_point else t)


_LEGACY = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
           "BFloat16Tensor": "bfloat16",
           "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16",
           "CharTensor": "int8", "ByteTensor": "uint8", "BoolTensor": "bool"}


def _type_arg(dst: Any) -> _dtype.dtype:
    if isinstance(dst, str):
        name = dst.rsplit(".", 1)[-1]
        return _dtype.to_dtype(_LEGACY.get(name, name))
    return _dtype.to_dtype(dst)
