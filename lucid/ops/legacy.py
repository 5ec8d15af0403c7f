"""PyTorch's legacy tensor types and tensor facts: ``lucid.FloatTensor`` & co. (constructors
that also work in ``isinstance``), ``Tensor.type()``, ``data_ptr``, the ``is_cpu`` /
``is_cuda``-style flags, ``is_nonzero``, ``view_as`` and ``reshape_as``, the legacy
constructor ``new``, ``get_device`` and ``dim_order``."""

from __future__ import annotations

import builtins
import warnings
from typing import Any

import numpy as np

from .. import _dtype
from .._convert import to_array
from .._memory_format import channels_last, contiguous_format, memory_format
from .._tensor import Size, Tensor, _make
from ..backend import get_backend
from ._util import cast
from .creation import empty, tensor
from .shape import reshape, view


def _type_name(d: _dtype.dtype, be: Any) -> str:
    where = "lucid.cuda." if be.name == "gpu" else "lucid."
    return f"{where}{_dtype.torch_name(d)}Tensor"


class _LegacyTensorType(builtins.type):
    """The metaclass of ``lucid.FloatTensor`` and friends: calling one builds a tensor of its
    dtype; ``isinstance(x, lucid.FloatTensor)`` is true for float32 tensors."""

    dtype: _dtype.dtype

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:  # type: ignore[override]
        d = cls.dtype
        be = get_backend(device)
        if len(args) == 1 and isinstance(args[0], Tensor):
            t = args[0]
            if t.dtype is not d:
                raise TypeError(f"expected {_dtype.torch_name(d)} (got "
                                f"{_dtype.torch_name(t.dtype)})")
            return t.detach()
        if len(args) == 1 and isinstance(args[0], Size):
            shape = tuple(args[0])
        elif len(args) == 1 and not isinstance(args[0], (int, np.integer)):
            return _make(to_array(args[0], d, be), be, False, None)
        else:
            shape = tuple(int(s) for s in args) if args else (0,)
            if builtins.any(s < 0 for s in shape):
                raise RuntimeError(f"Trying to create tensor with negative dimension "
                                   f"{min(shape)}: {list(shape)}")
        return _make(be.zeros(shape, d), be, False, None)

    def __repr__(cls) -> str:
        return f"<class 'lucid.{cls.__name__}'>"


def _legacy(name: str, d: _dtype.dtype) -> Any:
    cls = _LegacyTensorType(name, (), {
        "dtype": d, "is_cuda": False, "__module__": "lucid",
        "__doc__": f"The legacy constructor of ``lucid.{d.name}`` tensors: ``{name}(2, 3)`` "
                   f"(zeros of that size), ``{name}([1, 2])`` (data); ``isinstance(x, "
                   f"lucid.{name})`` tests the dtype."})
    return cls


FloatTensor = _legacy("FloatTensor", _dtype.float32)
DoubleTensor = _legacy("DoubleTensor", _dtype.float64)
HalfTensor = _legacy("HalfTensor", _dtype.float16)
LongTensor = _legacy("LongTensor", _dtype.int64)
IntTensor = _legacy("IntTensor", _dtype.int32)
ShortTensor = _legacy("ShortTensor", _dtype.int16)
CharTensor = _legacy("CharTensor", _dtype.int8)
ByteTensor = _legacy("ByteTensor", _dtype.uint8)
BoolTensor = _legacy("BoolTensor", _dtype.bool_)
BFloat16Tensor = _legacy("BFloat16Tensor", _dtype.bfloat16)

_BY_LEGACY_NAME = {
    c.__name__: c.dtype for c in (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor,
                                  ShortTensor, CharTensor, ByteTensor, BoolTensor,
                                  BFloat16Tensor)}


def set_default_tensor_type(t: Any) -> None:
    """torch's deprecated ``set_default_tensor_type``: a legacy float type (or its name,
    "torch.DoubleTensor" or "lucid.DoubleTensor") sets the default dtype; lucid's tensors
    are created on the default device (``set_default_device``), so a CUDA type name sets
    the dtype only."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    d = _dtype_of_type_arg(t)
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(d)


def _dtype_of_type_arg(dtype: Any) -> _dtype.dtype:
    if isinstance(dtype, _LegacyTensorType):
        return dtype.dtype
    if isinstance(dtype, str):
        short = dtype.rsplit(".", 1)[-1]
        if short in _BY_LEGACY_NAME:
            return _BY_LEGACY_NAME[short]
        raise ValueError(f"invalid type: '{dtype}'")
    return _dtype.to_dtype(dtype)


def tensor_type(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any
                ) -> Any:
    """Without ``dtype``: the legacy type name, e.g. ``'lucid.FloatTensor'`` (``lucid.cuda.``
    on the gpu). With a dtype, a legacy type (``lucid.LongTensor``) or its name
    (``'torch.LongTensor'`` works too): this tensor cast to it (itself when it already is).

    Example::

        lucid.ones(2).type()                     # 'lucid.FloatTensor'
        lucid.ones(2).type(lucid.LongTensor)     # tensor([1, 1])
    """
    if dtype is None:
        return _type_name(self.dtype, self._be)
    return cast(self, _dtype_of_type_arg(dtype))


def data_ptr(self: Tensor) -> int:
    """The address of this tensor's first element: equal for tensors sharing memory from
    the same element (a view's pointer is offset from its base's). 0 for an empty tensor.
    On a backend without addressable host memory (the gpu), a number that is stable for
    the tensor's array and shared by its aliases."""
    if self.numel() == 0:
        return 0
    d = self._data
    if isinstance(d, np.ndarray):
        return int(d.__array_interface__["data"][0])
    return id(d)


def is_nonzero(input: Tensor) -> bool:
    """The truth of a one-element tensor (an error for empty or larger tensors).

    Example::

        lucid.is_nonzero(lucid.tensor([1.0]))    # True
    """
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item())


def view_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.view(other.shape)``."""
    return view(self, tuple(other.shape))


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.reshape(other.shape)``."""
    return reshape(self, tuple(other.shape))


def is_cpu(self: Tensor) -> bool:
    """True for tensors in host memory ("cpu" and the "numpy" reference backend)."""
    return self._be.name != "gpu"


def is_false(self: Tensor) -> bool:
    """Always False: lucid has no such tensors (XPU, MPS, meta, sparse, quantized, nested)."""
    return False


def new(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The legacy constructor ``x.new(...)``: a tensor of ``x``'s dtype and device from
    sizes (``x.new(2, 3)`` or a ``Size``: uninitialized), data (a list, tuple, array or
    tensor) or nothing (an empty tensor).

    Example::

        lucid.zeros(2).new(2, 3).shape            # (2, 3)
        lucid.zeros(2).new([1, 2])                # tensor([1., 2.])
    """
    dtype = kwargs.pop("dtype", None) or self.dtype
    device = kwargs.pop("device", None) or self.device
    if kwargs:
        raise TypeError(f"new() got an unexpected keyword argument {next(iter(kwargs))!r}")
    if not args:
        return empty(0, dtype=dtype, device=device)
    if len(args) == 1 and not isinstance(args[0], (int, np.integer, Size)):
        data = args[0]
        return tensor(data.detach() if isinstance(data, Tensor) else data, dtype=dtype,
                      device=device)
    sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], Size) else args
    if not all(isinstance(n, (int, np.integer)) for n in sizes):
        raise TypeError("new(): argument 'size' must be tuple of ints, but found element of "
                        f"type {next(type(n).__name__ for n in sizes if not isinstance(n, int))}")
    return empty(*(int(n) for n in sizes), dtype=dtype, device=device)


def typename(obj: Any) -> str:
    """``torch.typename`` with lucid names: tensors by legacy type (``'lucid.FloatTensor'``,
    ``'lucid.gpu.FloatTensor'``), other objects by module-qualified name (``'int'`` for
    builtins).

    Example::

        lucid.typename(lucid.zeros(2))    # 'lucid.FloatTensor'
    """
    if isinstance(obj, Tensor):
        name = _dtype.torch_name(obj.dtype) + "Tensor"
        dev = obj._be.name
        return f"lucid.{name}" if dev == "cpu" else f"lucid.{dev}.{name}"
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = type(obj).__module__ or ""
        qualname = type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def get_device(self: Tensor) -> int:
    """The device index: -1 for host tensors ("cpu", "numpy"), 0 on the "gpu"."""
    return -1 if self._be.name != "gpu" else 0


def same(self: Tensor) -> Tensor:
    """The tensor itself: ``resolve_neg()`` (lucid keeps no lazy negation bit)."""
    return self


def pin_memory(self: Tensor, device: Any = None) -> Tensor:
    """The tensor itself: host memory is what the "gpu" device (MLX) reads, so there is
    nothing to pin. ``device`` names the accelerator to pin for (None: the current one); a
    "cpu" device is refused, as torch's ("CPU device type not an accelerator")."""
    if device is not None and _device_type(device) == "cpu":
        raise RuntimeError("CPU device type not an accelerator.")
    return self


def is_pinned(self: Tensor, device: Any = None) -> bool:
    """False: lucid pins nothing (see ``pin_memory``), for any ``device``."""
    return False


def _device_type(device: Any) -> str:
    return str(getattr(device, "type", device)).split(":")[0]


def to_dense(self: Tensor, dtype: Any = None, *, masked_grad: bool | None = None) -> Tensor:
    """A dense tensor's ``to_dense()``: the tensor itself, or cast to ``dtype``.
    ``masked_grad`` (how a sparse input's gradient is masked) changes nothing for a dense
    tensor."""
    if dtype is None:
        return self
    d = _dtype.to_dtype(dtype)
    return self if d is self.dtype else cast(self, d)


def _contiguous_in(t: Tensor, fmt: Any) -> bool:
    """``t.is_contiguous(memory_format=fmt)``, False for a format of another rank (torch's
    answer there)."""
    try:
        return bool(t.is_contiguous(memory_format=fmt))  # type: ignore[attr-defined]
    except RuntimeError:
        return False


_AMBIGUOUS = ("The tensor does not have unique dim order, or cannot map to exact one of the "
              "given memory formats.")


def _dim_perm(t: Tensor, shape: tuple[int, ...], st: tuple[int, ...], check: bool
              ) -> tuple[tuple[int, ...], bool]:
    """The dims outermost first by stride, and whether ``check`` finds two of them in no
    definite order (torch's ``compute_elementwise_output_logical_to_physical_perm``)."""
    ndim = len(shape)
    if ndim < 2:
        return tuple(builtins.range(ndim)), False
    cont, last = _contiguous_in(t, contiguous_format), _contiguous_in(t, channels_last)
    if cont != last:
        return (tuple(builtins.range(ndim)) if cont else
                (0, *builtins.range(2, ndim), 1)), False

    def ge(a: int, b: int) -> bool:
        return b == 0 or (a != 0 and (a >= b or a % b == 0))

    def order(a: int, b: int) -> int:
        sa, sb = st[a], st[b]
        if sa == 0 or sb == 0:
            return 0
        if sa == sb:
            return 0 if ge(shape[b], shape[a]) else 1
        return -1 if ge(sb, sa) else (1 if ge(sa, sb) else 0)

    perm = list(reversed(builtins.range(ndim)))
    for i in builtins.range(1, ndim):
        b = i
        for a in reversed(builtins.range(i)):
            c = order(perm[a], perm[b])
            if c > 0:
                perm[a], perm[b] = perm[b], perm[a]
                b = a
            elif c < 0:
                break
    ambiguous = check and any(order(perm[i], perm[i + 1]) != -1
                              for i in builtins.range(ndim - 1))
    return tuple(reversed(perm)), ambiguous


def dim_order(self: Tensor, *, ambiguity_check: bool | list = False) -> tuple[int, ...]:
    """The dims from outermost to innermost in memory (``(0, 1, ...)`` when contiguous), as
    ``torch.Tensor.dim_order``. ``ambiguity_check=True`` raises ``RuntimeError`` when the
    order is not unique (a size-1 dim, or two equal strides); a list of memory formats
    accepts such a tensor when it is contiguous in exactly one of them.

    Example::

        lucid.empty(2, 3, 5, 7).transpose(1, 2).dim_order()       # (0, 2, 1, 3)
    """
    if not isinstance(ambiguity_check, bool):
        if not isinstance(ambiguity_check, list) or not all(
                isinstance(f, memory_format) for f in ambiguity_check):
            raise TypeError("The ambiguity_check argument must be a bool or a list of memory "
                            "formats.")
    st = tuple(self.stride())  # type: ignore[attr-defined]
    shape = tuple(self.shape)
    if ambiguity_check is not False:
        multiple = any(a == b for a, b in zip(st, st[1:])) or any(n == 1 for n in shape)
        formats = ambiguity_check if isinstance(ambiguity_check, list) else []
        if multiple and sum(1 for f in formats if _contiguous_in(self, f)) != 1:
            raise RuntimeError(_AMBIGUOUS)
    perm, ambiguous = _dim_perm(self, shape, st, bool(ambiguity_check))
    if ambiguous:
        raise RuntimeError("The tensor does not have unique dim order.")
    return perm


def narrow_copy(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``narrow`` as a new contiguous tensor."""
    return self.narrow(dim, start, length).clone()  # type: ignore[attr-defined]


__all__ = [
    "BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor",
    "HalfTensor", "IntTensor", "LongTensor", "ShortTensor", "is_nonzero",
    "set_default_tensor_type", "typename"
]
