"""PyTorch-style ``repr`` of tensors."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dtype


def _fmt_floats(a: np.ndarray) -> Any:
    finite = a[np.isfinite(a)]
    if finite.size == 0:
        return lambda v: _special(v)
    amax, amin = np.abs(finite).max(), np.abs(finite).min()
    integral = np.all(finite == np.round(finite))
    sci = amax >= 1e8 or (amin != 0 and amin < 1e-4) or (amin != 0 and amax / amin > 1e3 and
                                                          not integral)
    if integral and not sci:
        width = max(len(f"{v:.0f}.") for v in finite)
        return lambda v: _special(v) if not np.isfinite(v) else f"{v:.0f}.".rjust(width)
    if sci:
        return lambda v: _special(v) if not np.isfinite(v) else f"{v:.4e}"
    width = max(len(f"{v:.4f}") for v in finite)
    return lambda v: _special(v) if not np.isfinite(v) else f"{v:.4f}".rjust(width)


def _special(v: float) -> str:
    return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")


def _body(a: np.ndarray, d: _dtype.dtype) -> str:
    if d.is_floating_point:
        f = _fmt_floats(a.astype(np.float64))
        formatter = {"float_kind": f}
    elif d is _dtype.bool_:
        formatter = {"bool": lambda v: "True" if v else "False"}
    else:
        formatter = None
    threshold = 1000
    return np.array2string(a, separator=", ", formatter=formatter, threshold=threshold,
                           edgeitems=3, prefix="tensor(", max_line_width=80)


def tensor_repr(t: Any) -> str:
    a = np.asarray(t._be.to_numpy(t._data))
    d = t.dtype
    body = _body(a, d) if a.size else "[]"
    extras = []
    if t._be.name != "cpu":
        extras.append(f"device='{t._be.name}'")
    if a.size == 0 and a.shape != (0,):
        extras.append(f"size={tuple(a.shape)}")
    if d not in (_dtype.int64, _dtype.bool_, _dtype.get_default_dtype()) or (
            a.size == 0 and d is not _dtype.get_default_dtype()):
        extras.append(f"dtype=lucid.{d.name}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._rg:
        extras.append("requires_grad=True")
    inner = ", ".join([body] + extras)
    return f"tensor({inner})"
