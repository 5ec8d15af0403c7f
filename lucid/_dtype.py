"""dtypes, PyTorch's type-promotion rules and their numpy equivalents."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "dtype", "bool_", "int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16",
    "float32", "float64", "finfo", "iinfo", "get_default_dtype", "set_default_dtype",
    "to_dtype", "promote_types", "can_cast",
    "result_type", "complex64", "complex128",
]

# category ranks: bool < integer < floating < complex
_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A lucid data type, e.g. ``lucid.float32``.

    Compares equal to itself, to its name (``"float32"``) and to the matching numpy dtype.
    """

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_signed", "_cat", "_rank")

    def __init__(self, name: str, np_dtype: type, cat: int, rank: int) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.is_floating_point = cat == _FLOAT
        self.is_signed = name not in ("bool", "uint8")
        self._cat = cat
        self._rank = rank

    def __repr__(self) -> str:
        return f"lucid.{self.name}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, dtype):
            return self is other
        if isinstance(other, str):
            return other == self.name
        try:
            return np.dtype(other) == self.np  # type: ignore[arg-type]
        except TypeError:
            return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)

    def __reduce__(self) -> str:
        return self.name if self.name != "bool" else "bool_"

    @property
    def is_complex(self) -> bool:
        return self._cat == _COMPLEX

    def to_real(self) -> dtype:
        """The dtype of a complex dtype's parts (``complex64`` -> ``float32``); other dtypes
        return themselves."""
        return _REAL_OF.get(self.name, self)

    def to_complex(self) -> dtype:
        """The complex dtype whose parts have this floating dtype's precision (``float64``
        -> ``complex128``, narrower floats -> ``complex64``); complex dtypes return
        themselves."""
        if self._cat == _COMPLEX:
            return self
        if self._cat != _FLOAT:
            raise TypeError(f"to_complex is only supported for floating point dtypes, got "
                            f"{self}")
        return complex128 if self._rank >= 3 else complex64


class _Bfloat16(dtype):
    """bfloat16, whose numpy dtype comes from ``ml_dtypes``: imported on first use of ``.np``
    (ml_dtypes 0.7 takes ~1.1 s to import, two thirds of ``import lucid`` without it)."""

    __slots__ = ()

    def __init__(self) -> None:
        self.name = "bfloat16"
        self.itemsize = 2
        self.is_floating_point = True
        self.is_signed = True
        self._cat = _FLOAT
        self._rank = 1

    @property  # type: ignore[override]
    def np(self) -> np.dtype:
        return np.dtype(_ml_dtypes().bfloat16)


_ML: Any = None


def _ml_dtypes() -> Any:
    """The ``ml_dtypes`` module, imported once; registers bfloat16's numpy dtype."""
    global _ML
    if _ML is None:
        import ml_dtypes  # NOTE: lazy: 1.1 s to import, needed only for bfloat16 and finfo

        _ML = ml_dtypes
        bf = np.dtype(ml_dtypes.bfloat16)
        _BY_NP[bf] = bfloat16
        HALF_NP.add(bf)
    return _ML


def _from_np(npd: np.dtype) -> dtype | None:
    """The lucid dtype of a numpy dtype, or None (bfloat16 arrays made by ml_dtypes before
    lucid loaded it register it here)."""
    r = _BY_NP.get(npd)
    if r is None and npd.name == "bfloat16":
        _ml_dtypes()
        r = _BY_NP.get(npd)
    return r


bool_ = dtype("bool", np.bool_, _BOOL, 0)
uint8 = dtype("uint8", np.uint8, _INT, 1)
int8 = dtype("int8", np.int8, _INT, 1)
int16 = dtype("int16", np.int16, _INT, 2)
int32 = dtype("int32", np.int32, _INT, 3)
int64 = dtype("int64", np.int64, _INT, 4)
float16 = dtype("float16", np.float16, _FLOAT, 1)
# NOTE: numpy has no bfloat16; ml_dtypes registers one (numpy ufuncs compute it through float32)
bfloat16: dtype = _Bfloat16()
float32 = dtype("float32", np.float32, _FLOAT, 2)
float64 = dtype("float64", np.float64, _FLOAT, 3)

# complex values as numpy holds them (real and imaginary parts interleaved); the rank is that
# of the parts' float dtype, so complex64 with float64 promotes to complex128, as in PyTorch
complex64 = dtype("complex64", np.complex64, _COMPLEX, 2)
complex128 = dtype("complex128", np.complex128, _COMPLEX, 3)
_REAL_OF = {"complex64": float32, "complex128": float64}

_ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
        complex64, complex128)
HALF = (float16, bfloat16)  # 2-byte floats: computed through float32, as on PyTorch's CPU
# the numpy dtypes of HALF: a set that gains bfloat16's when ml_dtypes loads (_ml_dtypes)
HALF_NP: set[np.dtype] = {float16.np}
_BY_NP: dict[np.dtype, dtype] = {d.np: d for d in _ALL if d is not bfloat16}
_BY_NAME: dict[str, dtype] = {d.name: d for d in _ALL}
_BY_NAME.update(
    bool_=bool_, half=float16, float=float32, double=float64, long=int64, int=int32,
    short=int16, char=int8, byte=uint8, cfloat=complex64, cdouble=complex128,
)

_default_float = float32


def get_default_dtype() -> dtype:
    """The floating dtype that Python floats and ``lucid.tensor([1.0])`` become."""
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (float32 or float64, as in PyTorch)."""
    global _default_float
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_float = d


def to_dtype(d: object) -> dtype:
    """Normalise a lucid dtype, a numpy dtype, a name or a Python type to a lucid dtype."""
    if isinstance(d, dtype):
        return d
    if isinstance(d, str):
        r = _BY_NAME.get(d)
        if r is None:
            raise TypeError(f"unknown dtype {d!r}")
        return r
    if d is float:
        return _default_float
    if d is int:
        return int64
    if d is bool:
        return bool_
    if not isinstance(d, (np.dtype, type)) and str(d).startswith("torch."):
        # a torch.dtype: torch.float32 -> "float32"
        r = _BY_NAME.get(str(d).rsplit(".", 1)[-1])
        if r is not None:
            return r
    try:
        npd = np.dtype(d)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(f"unknown dtype {d!r}") from None
    r = _from_np(npd)
    if r is None:
        raise TypeError(f"lucid does not support dtype {npd}")
    return r


def from_numpy_dtype(npd: np.dtype) -> dtype:
    r = _from_np(npd)
    if r is None:
        raise TypeError(
            f"can't convert np.ndarray of type {npd}. The only supported types are: "
            "float64, float32, float16, bfloat16, int64, int32, int16, int8, uint8, and bool."
        )
    return r


def can_cast(from_: dtype, to: dtype) -> bool:
    """PyTorch's ``can_cast``: whether its casting rules allow ``from_`` to ``to`` (never
    complex to real, floating to integer, or anything but bool to bool).

    Example::

        lucid.can_cast(lucid.float64, lucid.float32)    # True
        lucid.can_cast(lucid.float32, lucid.int32)      # False
    """
    if from_._cat == _COMPLEX and to._cat != _COMPLEX:
        return False
    if from_._cat == _FLOAT and to._cat in (_INT, _BOOL):
        return False
    return not (from_._cat != _BOOL and to._cat == _BOOL)


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """PyTorch's ``promote_types``: the smallest dtype both values fit in."""
    if type1 is type2:
        return type1
    if type1._cat != type2._cat:
        hi, lo = (type1, type2) if type1._cat > type2._cat else (type2, type1)
        if hi._cat == _COMPLEX and lo._cat == _FLOAT and lo._rank > hi._rank:
            return lo.to_complex()  # complex64 with float64 -> complex128
        return hi
    if type1._rank == type2._rank and type1._cat == _FLOAT:  # float16 with bfloat16
        return float32
    if type1._cat == _INT and (type1 is uint8 or type2 is uint8):
        other = type2 if type1 is uint8 else type1
        if other is uint8:
            return uint8
        # uint8 with a signed int: int8 -> int16, otherwise the signed type
        return int16 if other is int8 else other
    return type1 if type1._rank >= type2._rank else type2


def _scalar_cat(x: object) -> int:
    if isinstance(x, bool):
        return _BOOL
    if isinstance(x, int):
        return _INT
    if isinstance(x, complex):
        return _COMPLEX
    return _FLOAT


def _default_of(cat: int, like: dtype | None = None) -> dtype:
    """The dtype a Python scalar of category ``cat`` takes (a complex scalar beside a float
    tensor ``like`` takes the complex dtype of ``like``'s precision)."""
    if cat == _COMPLEX:
        return (like if like is not None and like._cat == _FLOAT else _default_float
                ).to_complex()
    return (bool_, int64, _default_float)[cat]


def result_type(*operands: object) -> dtype:
    """PyTorch's ``result_type`` over tensors and Python scalars.

    Dimensioned tensors take part by dtype; zero-dim tensors only raise the category
    (bool < integer < float); Python scalars only raise the category and map to the
    default dtype of that category (int64, the default float).
    """
    dim_t = zero_t = scal = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            if x.ndim:  # type: ignore[attr-defined]
                dim_t = d if dim_t is None else promote_types(dim_t, d)
            else:
                zero_t = d if zero_t is None else promote_types(zero_t, d)
        else:
            c = _scalar_cat(x)
            scal = c if scal is None or c > scal else scal
    res = dim_t
    if zero_t is not None:
        if res is None:
            res = zero_t
        elif zero_t._cat > res._cat:
            res = zero_t
    if scal is not None:
        if res is None:
            res = _default_of(scal)
        elif scal > res._cat:
            res = _default_of(scal, res)
    assert res is not None
    return res


def result_type_args(tensor: object = None, other: object = None, *, scalar: object = None,
                     scalar1: object = None, scalar2: object = None) -> dtype:
    """``torch.result_type``'s argument forms: ``(tensor, other)`` (tensors or numbers,
    positionally or by those names), ``(scalar=, tensor=)`` and ``(scalar1=, scalar2=)``;
    the dtype ``result_type`` gives for the two."""
    if scalar1 is not None or scalar2 is not None:
        pair, extra = (scalar1, scalar2), (tensor, other, scalar)
    elif scalar is not None:
        pair, extra = (scalar, tensor), (other,)
    else:
        pair, extra = (tensor, other), ()
    if any(x is None for x in pair) or any(x is not None for x in extra):
        raise TypeError("result_type() received an invalid combination of arguments: expected "
                        "(tensor, other), (scalar, tensor) or (scalar1, scalar2)")
    return result_type(*pair)


class finfo:
    """Machine limits of a floating dtype, as ``torch.finfo``: ``bits``, ``eps``, ``max``,
    ``min``, ``tiny`` (= ``smallest_normal``), ``resolution`` and ``dtype`` (its name).

    Example::

        lucid.finfo(lucid.bfloat16).eps    # 0.0078125
        lucid.finfo().max                  # the default dtype's (float32) largest value
    """

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type: object = None) -> None:  # noqa: A002
        d = _default_float if type is None else _info_dtype("finfo", type)
        d = d.to_real()  # a complex dtype: the limits of its parts, as torch.finfo
        if not d.is_floating_point:
            raise TypeError(f"lucid.finfo() requires a floating point input type. Use "
                            f"lucid.iinfo to handle '{d!r}'")
        fi = _ml_dtypes().finfo(d.np)
        self.bits = d.itemsize * 8
        self.eps = float(fi.eps)
        self.max = float(fi.max)
        self.min = float(fi.min)
        self.tiny = self.smallest_normal = float(fi.smallest_normal)
        self.resolution = 10.0 ** -int(fi.precision)
        self.dtype = d.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))


class iinfo:
    """Limits of an integer dtype, as ``torch.iinfo``: ``bits``, ``max``, ``min`` and
    ``dtype`` (its name).

    Example::

        lucid.iinfo(lucid.uint8).max       # 255
    """

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type: object) -> None:  # noqa: A002
        d = _info_dtype("iinfo", type)
        if d is bool_:
            raise TypeError("lucid.bool is not supported by lucid.iinfo")
        if d._cat != _INT:
            raise TypeError(f"lucid.iinfo() requires an integer input type. Use "
                            f"lucid.finfo to handle '{d!r}'")
        ii = np.iinfo(d.np)
        self.bits, self.max, self.min, self.dtype = ii.bits, int(ii.max), int(ii.min), d.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))


def _info_dtype(fn: str, t: object) -> dtype:
    if isinstance(t, (bool, int, float)) or t is None:
        raise TypeError(f"{fn}(): argument 'type' (position 1) must be lucid.dtype, not "
                        f"{type(t).__name__}")
    return to_dtype(t)


_TORCH_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                "int32": "Int", "int64": "Long", "float16": "Half", "bfloat16": "BFloat16",
                "float32": "Float",
                "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


_C10_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
               "int16": "short int", "int32": "int", "int64": "long int", "float16": "c10::Half",
               "bfloat16": "c10::BFloat16",
               "float32": "float", "float64": "double",
               "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def c10_name(d: dtype) -> str:
    """The C++ type name PyTorch prints in some messages ("float", "long int")."""
    return _C10_NAMES[d.name]


def torch_name(d: dtype) -> str:
    """PyTorch's short name for a dtype, as used in its error messages ("Float", "Long")."""
    return _TORCH_NAMES[d.name]
