"""``assert_close``: PyTorch's ``torch.testing.assert_close`` for lucid tensors, numpy arrays,
Python numbers and (nested) sequences and mappings of them, with PyTorch's default tolerances
and its failure messages."""

from __future__ import annotations

import cmath
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor

__all__ = ["assert_close", "default_tolerances"]

Msg = str | Callable[[str], str] | None

# PyTorch's defaults: (rtol, atol); dtypes not listed (integers, bool) compare exactly
_DTYPE_PRECISIONS: dict[Any, tuple[float, float]] = {
    _dtype.float16: (0.001, 1e-5),
    _dtype.float32: (1.3e-6, 1e-5),
    _dtype.float64: (1e-7, 1e-7),
}
for _name, _tol in (("bfloat16", (0.016, 1e-5)), ("complex64", (1.3e-6, 1e-5)),
                    ("complex128", (1e-7, 1e-7))):
    if hasattr(_dtype, _name):
        _DTYPE_PRECISIONS[getattr(_dtype, _name)] = _tol
_NP_PRECISIONS = {np.dtype(np.float16): (0.001, 1e-5), np.dtype(np.float32): (1.3e-6, 1e-5),
                  np.dtype(np.float64): (1e-7, 1e-7), np.dtype(np.complex64): (1.3e-6, 1e-5),
                  np.dtype(np.complex128): (1e-7, 1e-7)}


class _Fail(Exception):
    """A mismatch (or bad input) found while walking the inputs: the exception type to raise
    and its message, plus the path of the item it occurred for."""

    def __init__(self, kind: type[Exception], message: str, path: tuple = ()) -> None:
        super().__init__(message)
        self.kind, self.message, self.path = kind, message, path


def default_tolerances(*inputs: Any) -> tuple[float, float]:
    """The loosest ``(rtol, atol)`` PyTorch uses by default for these tensors or dtypes:
    float16 ``(1e-3, 1e-5)``, float32 ``(1.3e-6, 1e-5)``, float64 ``(1e-7, 1e-7)``, and
    ``(0, 0)`` (exact) for integer and bool dtypes."""
    rtols, atols = [0.0], [0.0]
    for x in inputs:
        if isinstance(x, Tensor):
            r, a = _DTYPE_PRECISIONS.get(x.dtype, (0.0, 0.0))
        elif isinstance(x, _dtype.dtype):
            r, a = _DTYPE_PRECISIONS.get(x, (0.0, 0.0))
        elif isinstance(x, (np.ndarray, np.dtype)):
            r, a = _NP_PRECISIONS.get(np.dtype(getattr(x, "dtype", x)), (0.0, 0.0))
        else:
            raise TypeError(f"Expected a lucid.Tensor or a lucid.dtype, but got {type(x)} "
                            "instead.")
        rtols.append(r)
        atols.append(a)
    return max(rtols), max(atols)


def _tolerances(rtol: float | None, atol: float | None, *inputs: Any) -> tuple[float, float]:
    if (rtol is None) ^ (atol is None):
        raise _Fail(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                f"but got no {'rtol' if rtol is None else 'atol'}.")
    if rtol is not None and atol is not None:
        return rtol, atol
    return default_tolerances(*inputs)


def _mismatch_msg(default_id: str, identifier: Msg, extra: str | None, abs_diff: Any,
                  abs_idx: tuple | None, atol: float, rel_diff: Any, rel_idx: tuple | None,
                  rtol: float) -> str:
    equality = rtol == 0 and atol == 0

    def diff_msg(kind: str, diff: Any, idx: tuple | None, tol: float) -> str:
        m = f"{kind.title()} difference: {diff}" if idx is None else \
            f"Greatest {kind} difference: {diff} at index {idx}"
        return m + ("" if equality else f" (up to {tol} allowed)") + "\n"

    if identifier is None:
        identifier = default_id
    elif callable(identifier):
        identifier = identifier(default_id)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += extra.strip() + "\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _isclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float,
             equal_nan: bool) -> np.ndarray:
    """PyTorch's isclose: equal values (infinities included) are close; NaN only with
    ``equal_nan``; otherwise ``|a - b| <= atol + rtol * |b|``."""
    with np.errstate(invalid="ignore", over="ignore"):
        eq = a == b
        if equal_nan:
            eq |= np.isnan(a) & np.isnan(b)
        if a.dtype.kind in "biu":
            if rtol == 0 and atol == 0:
                return eq
            a, b = a.astype(np.float64), b.astype(np.float64)
        finite = np.isfinite(a) & np.isfinite(b)
        diff = np.abs(np.where(finite, a, 0) - np.where(finite, b, 0))
        near = finite & (diff <= atol + rtol * np.abs(np.where(finite, b, 0)))
        return eq | near


def _argmax(x: np.ndarray) -> int:
    """torch.max's index: the first NaN if any, else the first maximum."""
    nan = np.isnan(x)
    return int(np.argmax(nan)) if nan.any() else int(np.argmax(x))


def _item(x: Any) -> Any:
    return x.item() if hasattr(x, "item") else x


def _tensor_mismatch_msg(a: np.ndarray, b: np.ndarray, matches: np.ndarray, rtol: float,
                         atol: float, identifier: Msg) -> str:
    n = matches.size
    bad = n - int(matches.sum())
    extra = f"Mismatched elements: {bad} / {n} ({bad / n:.1%})"
    af, bf, mf = a.reshape(-1), b.reshape(-1), matches.reshape(-1)
    if af.dtype.kind in "biu":
        af, bf = af.astype(np.int64), bf.astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_diff = np.abs(af - bf)
        abs_diff[mf] = 0
        rel_diff = abs_diff / np.abs(bf) if af.dtype.kind in "fc" else \
            abs_diff / np.abs(bf).astype(np.float32)
        rel_diff = rel_diff.astype(abs_diff.dtype if af.dtype.kind in "fc" else np.float32)
        rel_diff[mf] = 0
    ia, ir = _argmax(abs_diff.astype(np.float64)), _argmax(rel_diff.astype(np.float64))
    return _mismatch_msg("Tensor-likes", identifier, extra, _item(abs_diff[ia]),
                         tuple(int(i) for i in np.unravel_index(ia, matches.shape)), atol,
                         _item(rel_diff[ir]),
                         tuple(int(i) for i in np.unravel_index(ir, matches.shape)), rtol)


def _scalar_mismatch_msg(actual: Any, expected: Any, rtol: float, atol: float,
                         identifier: Msg) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", identifier, f"Expected {expected} but got {actual}.",
                         abs_diff, None, atol, rel_diff, None, rtol)


def _host(t: Any) -> np.ndarray:
    if isinstance(t, Tensor):
        return np.asarray(t._be.to_numpy(t.detach()._data))
    return np.asarray(t)


def _compare_tensors(actual: Any, expected: Any, *, rtol: float | None, atol: float | None,
                     equal_nan: bool, check_device: bool, check_dtype: bool,
                     check_stride: bool, msg: Msg) -> None:
    def attr_fail(name: str, x: Any, y: Any) -> _Fail:
        return _Fail(AssertionError, f"The values for attribute '{name}' do not match: "
                                     f"{x} != {y}.")

    is_lucid = isinstance(actual, Tensor)
    if tuple(actual.shape) != tuple(expected.shape):
        raise attr_fail("shape", actual.shape, expected.shape)
    if is_lucid and check_stride and actual.stride() != expected.stride():
        raise attr_fail("stride()", actual.stride(), expected.stride())
    if is_lucid and check_device and actual.device != expected.device:
        raise attr_fail("device", actual.device, expected.device)
    if check_dtype and actual.dtype != expected.dtype:
        raise attr_fail("dtype", actual.dtype, expected.dtype)
    rtol, atol = _tolerances(rtol, atol, actual, expected)
    a, b = _host(actual), _host(expected)
    if a.dtype != b.dtype:
        common = _dtype.promote_types(actual.dtype, expected.dtype).np if is_lucid else \
            np.promote_types(a.dtype, b.dtype)
        a, b = a.astype(common), b.astype(common)
    matches = _isclose(a, b, rtol, atol, equal_nan)
    if matches.all():
        return
    if a.ndim == 0:
        raise _Fail(AssertionError, _scalar_mismatch_msg(a.item(), b.item(), rtol, atol, msg))
    raise _Fail(AssertionError, _tensor_mismatch_msg(a, b, matches, rtol, atol, msg))


def _compare_numbers(actual: Any, expected: Any, *, rtol: float | None, atol: float | None,
                     equal_nan: bool, check_dtype: bool, msg: Msg) -> None:
    if check_dtype and type(actual) is not type(expected):
        raise _Fail(AssertionError, f"The (d)types do not match: {type(actual)} != "
                                    f"{type(expected)}.")
    kinds = {int: (0.0, 0.0), float: (1e-7, 1e-7), complex: (1e-7, 1e-7)}
    defaults = max(kinds[type(actual)], kinds[type(expected)])
    rtol_, atol_ = (rtol, atol) if rtol is not None or atol is not None else defaults
    rtol_, atol_ = _tolerances(rtol_, atol_)
    if actual == expected:
        return
    isnan = cmath.isnan if isinstance(actual, complex) or isinstance(expected, complex) \
        else math.isnan
    if equal_nan and isnan(actual) and isnan(expected):
        return
    fin = all(math.isfinite(abs(v)) for v in (actual, expected))
    if fin and abs(actual - expected) <= atol_ + rtol_ * abs(expected):
        return
    raise _Fail(AssertionError, _scalar_mismatch_msg(actual, expected, rtol_, atol_, msg))


def _compare(actual: Any, expected: Any, path: tuple, allow_subclasses: bool,
             opts: dict[str, Any]) -> None:
    try:
        _compare_pair(actual, expected, allow_subclasses, opts, path)
    except _Fail as e:
        if not e.path:
            e.path = path
        raise


def _compare_pair(actual: Any, expected: Any, allow_subclasses: bool, opts: dict[str, Any],
                  path: tuple) -> None:
    if actual is None or expected is None:
        if actual is expected:
            return
        raise _Fail(AssertionError, f"None mismatch: {actual} is not {expected}")
    if isinstance(actual, bool) and isinstance(expected, bool):
        if actual is not expected:
            raise _Fail(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
        return
    tensor_like = (Tensor, np.ndarray)
    if isinstance(actual, tensor_like) and isinstance(expected, tensor_like):
        ta, tb = type(actual), type(expected)
        same = ta is tb or allow_subclasses and (issubclass(ta, tb) or issubclass(tb, ta))
        if same:
            _compare_tensors(actual, expected, rtol=opts["rtol"], atol=opts["atol"],
                             equal_nan=opts["equal_nan"], check_device=opts["check_device"],
                             check_dtype=opts["check_dtype"], check_stride=opts["check_stride"],
                             msg=opts["msg"])
            return
    number = (int, float, complex)
    if isinstance(actual, number) and isinstance(expected, number) \
            and not isinstance(actual, bool) and not isinstance(expected, bool):
        _compare_numbers(actual, expected, rtol=opts["rtol"], atol=opts["atol"],
                         equal_nan=opts["equal_nan"], check_dtype=opts["check_dtype"],
                         msg=opts["msg"])
        return
    strs = (str, bytes)
    if isinstance(actual, Sequence) and isinstance(expected, Sequence) \
            and not isinstance(actual, strs) and not isinstance(expected, strs):
        if len(actual) != len(expected):
            raise _Fail(AssertionError, "The length of the sequences mismatch: "
                                        f"{len(actual)} != {len(expected)}")
        for i, (x, y) in enumerate(zip(actual, expected)):
            _compare(x, y, (*path, i), allow_subclasses, opts)
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        ka, ke = set(actual.keys()), set(expected.keys())
        if ka != ke:
            missing, extra = ke - ka, ka - ke
            raise _Fail(AssertionError, "The keys of the mappings do not match:\n"
                        f"Missing keys in the actual mapping: {sorted(missing)}\n"
                        f"Additional keys in the actual mapping: {sorted(extra)}")
        keys: Any = actual.keys()
        try:
            keys = sorted(keys)
        except TypeError:
            keys = list(keys)
        for k in keys:
            _compare(actual[k], expected[k], (*path, k), allow_subclasses, opts)
        return
    raise _Fail(TypeError, "No comparison pair was able to handle inputs of type "
                           f"{type(actual)} and {type(expected)}.")


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, msg: Msg = None) -> None:
    """Assert that ``actual`` and ``expected`` are close, as ``torch.testing.assert_close``.

    Tensors (lucid tensors, or numpy arrays compared with numpy arrays) must have the same
    shape and, unless switched off, the same device and dtype; their values are close when
    ``|actual - expected| <= atol + rtol * |expected|`` elementwise (equal infinities are
    close; NaN only with ``equal_nan=True``). Without ``rtol``/``atol`` (give both or
    neither) PyTorch's defaults per dtype apply: float16 ``(1e-3, 1e-5)``, float32
    ``(1.3e-6, 1e-5)``, float64 ``(1e-7, 1e-7)``, integers and bool exact. Python numbers,
    ``None``, bools and nested sequences or mappings of all these are compared item by item.
    A failure raises AssertionError with PyTorch's message ("Tensor-likes are not close!
    ..."); ``msg`` replaces it (a string) or rewrites its first words (a callable).

    Example::

        from lucid.testing import assert_close
        assert_close(lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 2.0 + 1e-7]))
        assert_close(model.state_dict(), loaded_state_dict)
    """
    opts = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan, "check_device": check_device,
            "check_dtype": check_dtype, "check_stride": check_stride,
            "msg": msg if callable(msg) else None}
    try:
        _compare(actual, expected, (), allow_subclasses, opts)
    except _Fail as e:
        if isinstance(msg, str) and e.kind is AssertionError:
            raise AssertionError(msg) from None
        text = e.message
        if e.path:
            text += "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in e.path)
        raise e.kind(text) from None
