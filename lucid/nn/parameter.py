"""``Parameter`` and ``Buffer``: the two Tensor subclasses a ``Module`` registers on assignment.

Both unwrap a Tensor argument to its data, so a Parameter built from a computed tensor is a
fresh leaf and shares no graph with it.
"""

from __future__ import annotations

import copy
from typing import Any

from .. import _dtype
from .._tensor import Tensor, _init
from ..backend import get_backend, transfer
from ..ops.creation import tensor

__all__ = ["Parameter", "Buffer"]


def _unwrap(data: Any, dtype: Any, device: Any) -> tuple[Any, Any, list | None]:
    """(array, backend, version counter to share or None) for the data of a new subclass."""
    if data is None:
        be = get_backend(device)
        d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
        return be.empty((0,), d), be, None
    if isinstance(data, Tensor):
        arr, be, vc = data._data, data._be, data._vc
        if device is not None:
            dst = get_backend(device)
            if dst is not be:
                arr, be, vc = transfer(arr, be, dst, copy=True), dst, None
        if dtype is not None:
            d = _dtype.to_dtype(dtype)
            if be.dtype_of(arr) is not d:
                arr, vc = be.astype(arr, d), None
        return arr, be, vc
    t = tensor(data, dtype=dtype, device=device)
    return t._data, t._be, None


class Parameter(Tensor):
    """A Tensor that a ``Module`` registers as a trainable parameter when assigned to it.

    ``data`` (a Tensor, numpy array or nested list; None gives an empty tensor) is unwrapped
    to its values: a Parameter built from a tensor shares its memory but none of its graph,
    and is a leaf. ``requires_grad`` defaults to True, also under ``lucid.no_grad()``; only
    floating-point parameters may require grad. Ops on a Parameter return plain Tensors.

    Example::

        w = nn.Parameter(lucid.randn(3, 4))
        w.requires_grad, w.is_leaf          # (True, True)
    """

    def __init__(self, data: Any = None, requires_grad: bool = True, *, dtype: Any = None,
                 device: Any = None) -> None:
        arr, be, vc = _unwrap(data, dtype, device)
        _init(self, arr, be, False, None)
        if vc is not None:
            self._vc = vc
        if requires_grad:
            if not be.dtype_of(arr).is_floating_point:
                raise RuntimeError(
                    "Only Tensors of floating point and complex dtype can require gradients"
                )
            self._rg = True

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict) -> Parameter:
        # as PyTorch: a new Parameter over a copy of the values; .grad is not copied
        if id(self) in memo:
            return memo[id(self)]
        new = type(self).__new__(type(self))
        _init(new, self._be.copy(self._data), self._be, self._rg, None)
        for k, v in self.__dict__.items():
            if k not in ("_base", "_hooks", "_post_hooks"):
                new.__dict__[k] = copy.deepcopy(v, memo)
        memo[id(self)] = new
        return new


class Buffer(Tensor):
    """A Tensor that a ``Module`` registers as a buffer (state that is not trained, such as a
    running mean) when assigned to it.

    ``persistent=False`` keeps it out of the module's ``state_dict``. A Buffer never requires
    grad and never joins the graph: in-place updates from tensors that require grad write the
    values only (lucid differs from PyTorch here, where a buffer is a plain tensor that can
    be recorded).

    Example::

        self.running_mean = nn.Buffer(lucid.zeros(8))
        self.step = nn.Buffer(lucid.tensor(0), persistent=False)
    """

    def __init__(self, data: Any = None, persistent: bool = True, *, dtype: Any = None,
                 device: Any = None) -> None:
        arr, be, vc = _unwrap(data, dtype, device)
        _init(self, arr, be, False, None)
        if vc is not None:
            self._vc = vc
        self.persistent = bool(persistent)

    # NOTE: these shadow Tensor's slots, so no op (in-place ones included) can attach a
    # graph to a buffer: reads always say "no grad", writes are dropped.
    @property
    def _rg(self) -> bool:  # type: ignore[override]
        return False

    @_rg.setter
    def _rg(self, value: bool) -> None:
        pass

    @property
    def grad_fn(self) -> None:  # type: ignore[override]
        return None

    @grad_fn.setter
    def grad_fn(self, value: Any) -> None:
        pass

    def requires_grad_(self, requires_grad: bool = True) -> Buffer:
        """Buffers never require grad; ``requires_grad_(True)`` raises.

        Example::

            buf.requires_grad_(False)
        """
        if requires_grad:
            raise RuntimeError(
                "a Buffer never requires grad; register the tensor as an nn.Parameter to "
                "train it"
            )
        return self
