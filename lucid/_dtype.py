"""dtypes, PyTorch's type-promotion rules and their numpy equivalents."""

from __future__ import annotations

import numpy as np

__all__ = [
    "dtype", "bool_", "int8", "int16", "int32", "int64", "uint8", "float16", "float32",
    "float64", "get_default_dtype", "set_default_dtype", "to_dtype", "promote_types",
    "result_type",
]

# category ranks: bool < integer < floating
_BOOL, _INT, _FLOAT = 0, 1, 2


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
        return False


bool_ = dtype("bool", np.bool_, _BOOL, 0)
uint8 = dtype("uint8", np.uint8, _INT, 1)
int8 = dtype("int8", np.int8, _INT, 1)
int16 = dtype("int16", np.int16, _INT, 2)
int32 = dtype("int32", np.int32, _INT, 3)
int64 = dtype("int64", np.int64, _INT, 4)
float16 = dtype("float16", np.float16, _FLOAT, 1)
float32 = dtype("float32", np.float32, _FLOAT, 2)
float64 = dtype("float64", np.float64, _FLOAT, 3)

_ALL = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64)
_BY_NP: dict[np.dtype, dtype] = {d.np: d for d in _ALL}
_BY_NAME: dict[str, dtype] = {d.name: d for d in _ALL}
_BY_NAME.update(
    bool_=bool_, half=float16, float=float32, double=float64, long=int64, int=int32,
    short=int16, char=int8, byte=uint8,
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
    r = _BY_NP.get(npd)
    if r is None:
        raise TypeError(f"lucid does not support dtype {npd}")
    return r


def from_numpy_dtype(npd: np.dtype) -> dtype:
    r = _BY_NP.get(npd)
    if r is None:
        raise TypeError(
            f"can't convert np.ndarray of type {npd}. The only supported types are: "
            "float64, float32, float16, int64, int32, int16, int8, uint8, and bool."
        )
    return r


def promote_types(a: dtype, b: dtype) -> dtype:
    """PyTorch's ``promote_types``: the smallest dtype both values fit in."""
    if a is b:
        return a
    if a._cat != b._cat:
        return a if a._cat > b._cat else b
    if a._cat == _INT and (a is uint8 or b is uint8):
        other = b if a is uint8 else a
        if other is uint8:
            return uint8
        # uint8 with a signed int: int8 -> int16, otherwise the signed type
        return int16 if other is int8 else other
    return a if a._rank >= b._rank else b


def _scalar_cat(x: object) -> int:
    if isinstance(x, bool):
        return _BOOL
    if isinstance(x, int):
        return _INT
    return _FLOAT


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
            res = (bool_, int64, _default_float)[scal]
        elif scal > res._cat:
            res = (bool_, int64, _default_float)[scal]
    assert res is not None
    return res


_TORCH_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                "int32": "Int", "int64": "Long", "float16": "Half", "float32": "Float",
                "float64": "Double"}


_C10_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
               "int16": "short int", "int32": "int", "int64": "long int", "float16": "c10::Half",
               "float32": "float", "float64": "double"}


def c10_name(d: dtype) -> str:
    """The C++ type name PyTorch prints in some messages ("float", "long int")."""
    return _C10_NAMES[d.name]


def torch_name(d: dtype) -> str:
    """PyTorch's short name for a dtype, as used in its error messages ("Float", "Long")."""
    return _TORCH_NAMES[d.name]
