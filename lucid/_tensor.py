"""``Tensor``: a backend array with its device, dtype and gradient bookkeeping.

This file holds state, conversion and gradient bookkeeping only. The math methods
(``x.exp()``, ``x + y``, ...) and ``backward`` are bound in one explicit table,
``lucid/ops/tensor_methods.py``, because they live in layers above this one (``ops/``,
``autograd/engine.py``); ``lucid/_tensor.pyi`` lists the whole surface for IDEs.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from . import _dtype
from ._convert import to_array
from ._device import device
from ._dims import norm_dim
from ._memory_format import channel_order, laid_out
from ._repr import tensor_repr
from .backend import get_backend

__all__ = ["Tensor", "Size"]

_object_new = object.__new__


class Size(tuple):
    """The shape of a tensor: a tuple of ints, printed as ``lucid.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"lucid.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i: Any) -> Any:  # slicing keeps the type, as in PyTorch
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r


class _RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook."""

    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks = hooks
        self._hook = hook
        hooks.append(hook)

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    def __enter__(self) -> _RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class Tensor:
    """A multi-dimensional array on a device, with reverse-mode autograd.

    Build tensors with ``lucid.tensor``, ``lucid.zeros``, ``lucid.randn`` and friends.

    Example::

        x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = (x * x).sum()
        y.backward()
        x.grad            # tensor([2., 4., 6.])
    """

    __slots__ = ("_data", "_be", "_rg", "_grad", "grad_fn", "_vc", "__dict__", "__weakref__")
    _lucid_tensor = True  # recognised by lucid._convert without importing this module
    # rarely set; living in the instance dict keeps tensor creation cheap
    _base: Tensor | None = None
    _view_ops: tuple | None = None  # (op class, args, params) steps from _base to this view
    _views: list | None = None  # weakrefs to views of this non-leaf, renewed after in-place ops
    _hooks: list | None = None
    _post_hooks: list | None = None
    __array_priority__ = 1000  # numpy defers ``ndarray + Tensor`` to Tensor.__radd__

    def __init__(self, *args: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> None:
        # ``Tensor(2, 3)`` -> uninitialised float tensor; ``Tensor([1, 2])`` -> float data
        be = get_backend(device)
        d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
        if len(args) == 1 and isinstance(args[0], Size):
            data = be.zeros(tuple(args[0]), d)
        elif len(args) == 1 and not isinstance(args[0], int):
            data = to_array(args[0], d, be)
        else:  # sizes; ``Tensor()`` is an empty 1-D tensor, as in PyTorch
            data = be.zeros(tuple(int(s) for s in args) if args else (0,), d)
        _init(self, data, be, False, None)
        if requires_grad:
            self.requires_grad_(True)

    # ---- core properties -------------------------------------------------------------------
    @property
    def data(self) -> Tensor:
        """This tensor's values, detached from the graph (shares memory)."""
        t = _make(self._data, self._be, False, None)
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._data = value._data
        self._be = value._be

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    @property
    def dtype(self) -> _dtype.dtype:
        return self._be.dtype_of(self._data)

    @property
    def device(self) -> device:
        return self._be.device

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def is_cuda(self) -> bool:
        return self._be.name == "gpu"

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    @property
    def grad(self) -> Tensor | None:
        """The gradient accumulated by ``backward()`` (None until then)."""
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            _check_grad(self, value)
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def _version(self) -> int:
        return self._vc[0]

    @property
    def retains_grad(self) -> bool:
        fn = self.grad_fn
        return fn is not None and fn._retain is not None and fn._retain() is self

    keep_grad = retains_grad

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    def element_size(self) -> int:
        return self.dtype.itemsize

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def size(self, dim: int | None = None) -> Any:
        """The shape as ``lucid.Size``, or the size of one dimension."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[norm_dim(dim, self._data.ndim)]

    def dim(self) -> int:
        return self._data.ndim

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """Whether the values are laid out without gaps in ``memory_format``'s order
        (row-major by default; ``lucid.channels_last``: N, H, W, C)."""
        order = channel_order(memory_format, self._data.ndim)
        if order is None:
            return bool(self._be.is_contiguous(self._data))
        strides = getattr(self._data, "strides", None)
        if strides is None:  # MLX arrays are row-major
            return False
        size = self._data.itemsize or 1
        return laid_out(tuple(self._data.shape), tuple(s // size for s in strides), order)

    ndimension = dim

    def numel(self) -> int:
        n = 1
        for s in self._data.shape:
            n *= s
        return n

    nelement = numel

    # ---- conversion --------------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The values as a numpy array (shares memory on "cpu")."""
        if self._rg and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        return self._be.to_numpy(self._data)

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self.numel() != 1:
            raise RuntimeError(
                f"a Tensor with {self.numel()} elements cannot be converted to Scalar"
            )
        return self._be.item(self._data)

    def tolist(self) -> Any:
        return self._be.tolist(self._data)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = np.asarray(self._be.to_numpy(self._data))
        return a if dtype is None else a.astype(dtype, copy=False)

    def __len__(self) -> int:
        if not self._data.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if not self._data.ndim:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # type: ignore[attr-defined]

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous"
                if self.numel() else "Boolean value of Tensor with no values is ambiguous"
            )
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return repr(self) if not spec else format(str(self), spec)

    def __deepcopy__(self, memo: dict) -> Tensor:
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment."
            )
        new = type(self).__new__(type(self))
        _init(new, self._be.copy(self._data), self._be, self._rg, None)
        for k, v in getattr(self, "__dict__", {}).items():
            if k not in ("_base", "_view_ops", "_views", "_hooks", "_post_hooks"):
                new.__dict__[k] = _deepcopy(v, memo)
        if self.grad is not None:
            new.grad = self.grad.__deepcopy__(memo)
        memo[id(self)] = new
        return new

    # ---- autograd ------------------------------------------------------------------------------
    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set whether autograd records ops on this (leaf) tensor; returns self."""
        requires_grad = bool(requires_grad)
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(
                "only Tensors of floating point dtype can require gradients, "
                f"got {self.dtype}"
            )
        self._rg = requires_grad
        return self

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        if self.grad_fn is None:
            if not self._rg:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        self.grad_fn._retain = weakref.ref(self)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> _RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor
        replaces the gradient. Returns a handle whose ``remove()`` unregisters it."""
        if not self._rg:
            raise RuntimeError(
                "cannot register a hook on a tensor that doesn't require gradient"
            )
        if self.grad_fn is not None:
            return self.grad_fn.register_hook(hook)
        if self._hooks is None:
            self._hooks = []
        return _RemovableHandle(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]
                                           ) -> _RemovableHandle:
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        if self._post_hooks is None:
            self._post_hooks = []
        return _RemovableHandle(self._post_hooks, hook)

    def detach(self) -> Tensor:
        """A tensor sharing this one's data, outside the graph."""
        t = _make(self._data, self._be, False, None)
        t._vc = self._vc
        return t

    def detach_(self) -> Tensor:
        """Detach this tensor from the graph in place; it becomes a leaf."""
        self.grad_fn = None
        self._rg = False
        return self

    # ---- pickling ------------------------------------------------------------------------------
    def __reduce_ex__(self, protocol: Any) -> tuple:
        """Pickle by device name, values, ``requires_grad``, class and instance attributes.

        NOTE: the backend object holds process state, so it is never pickled; unpickling
        looks it up again with ``get_backend(name)``. As in PyTorch, ``.grad`` and the graph
        are dropped (a non-leaf comes back as a leaf) and ``copy.copy`` shares the values.
        """
        be = self._be
        data = self._data
        if not isinstance(data, np.ndarray):
            data = np.array(be.to_numpy(data))
        state = {k: v for k, v in getattr(self, "__dict__", {}).items()
                 if k not in ("_base", "_view_ops", "_views", "_hooks", "_post_hooks")}
        return (type(self)._from_pickle, (data, be.name, bool(self._rg), state))

    @classmethod
    def _from_pickle(cls, data: np.ndarray, device_name: str, requires_grad: bool,
                     state: dict) -> Tensor:
        be = get_backend(device_name)
        t = _object_new(cls)
        _init(t, be.from_numpy(np.asarray(data)), be, requires_grad, None)
        if state:
            t.__dict__.update(state)
        return t


def _init(t: Tensor, data: Any, be: Any, rg: bool, fn: Any) -> None:
    t._data = data
    t._be = be
    t._rg = rg
    t._grad = None
    t.grad_fn = fn
    t._vc = [0]


def _check_grad(t: Tensor, g: Any) -> None:
    """PyTorch's checks when ``.grad`` is assigned: a tensor of the same size, dtype and
    device (an optimizer would otherwise broadcast a wrong-shaped gradient silently)."""
    if not isinstance(g, Tensor):
        raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                        f"{type(g).__name__}")
    if g._be is not t._be:
        raise RuntimeError("assigned grad has data located on a different device")
    if tuple(g._data.shape) != tuple(t._data.shape):
        raise RuntimeError(f"attempting to assign a gradient of size '{list(g.shape)}' to a "
                           f"tensor of size '{list(t.shape)}'. Please ensure that the gradient "
                           "and the tensor are the same size")
    if g.dtype is not t.dtype:
        raise RuntimeError(f"attempting to assign a gradient with dtype '{g.dtype.name}' to a "
                           f"tensor with dtype '{t.dtype.name}'. The gradient must match the "
                           "tensor's dtype")


def _make(data: Any, be: Any, rg: bool, fn: Any) -> Tensor:
    """Fast constructor used by every op (no checks)."""
    t = _object_new(Tensor)
    t._data = data
    t._be = be
    t._rg = rg
    t._grad = None
    t.grad_fn = fn
    t._vc = [0]
    return t


def _deepcopy(v: Any, memo: dict) -> Any:
    return copy.deepcopy(v, memo)
