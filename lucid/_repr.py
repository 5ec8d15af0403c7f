"""PyTorch-style ``repr`` of tensors: the same formatting rules as ``torch/_tensor_str.py``
(precision 4, summarised above 1000 elements with 3 edge items, 80 columns)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _dtype

_PRECISION = 4
_THRESHOLD = 1000
_EDGE = 3
_LINEWIDTH = 80


class _Formatter:
    """One width and style (int-like, fixed or scientific) for every element."""

    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci = False
        self.width = 1
        if not floating:
            for v in values.tolist():
                self.width = max(self.width, len(str(v)))
            return
        v = values[np.isfinite(values) & (values != 0)].astype(np.float64)
        if v.size == 0:
            return
        a = np.abs(v)
        lo, hi = float(a.min()), float(a.max())
        self.int_mode = bool(np.all(v == np.ceil(v)))
        self.sci = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        vals = v.tolist()
        if self.sci:
            self.width = max(len(f"{x:.{_PRECISION}e}") for x in vals)
        elif self.int_mode:
            self.width = max(len(f"{x:.0f}") + 1 for x in vals)
        else:
            self.width = max(len(f"{x:.{_PRECISION}f}") for x in vals)

    def __call__(self, value: Any) -> str:
        if self.floating:
            if self.sci:
                ret = f"{value:{self.width}.{_PRECISION}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{_PRECISION}f}"
        else:
            ret = str(value)
        return (self.width - len(ret)) * " " + ret


def _summarized(a: np.ndarray) -> np.ndarray:
    """The flattened values that are shown when ``a`` is summarised."""
    if a.ndim == 0:
        return a.reshape(1)
    if a.ndim == 1:
        return np.concatenate([a[:_EDGE], a[-_EDGE:]]) if a.shape[0] > 2 * _EDGE else a
    rows = range(a.shape[0])
    if a.shape[0] > 2 * _EDGE:
        rows = [*range(_EDGE), *range(a.shape[0] - _EDGE, a.shape[0])]
    return np.concatenate([_summarized(a[i]) for i in rows])


def _vector(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, math.floor((_LINEWIDTH - indent) / (fmt.width + 2)))
    if summarize and a.shape[0] > 2 * _EDGE:
        data = [fmt(v) for v in a[:_EDGE].tolist()] + [" ..."] + \
            [fmt(v) for v in a[-_EDGE:].tolist()]
    else:
        data = [fmt(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if a.ndim == 0:
        return fmt(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    n = a.shape[0]
    if summarize and n > 2 * _EDGE:
        slices = [_nested(a[i], indent + 1, summarize, fmt) for i in range(_EDGE)] + ["..."] + \
            [_nested(a[i], indent + 1, summarize, fmt) for i in range(n - _EDGE, n)]
    else:
        slices = [_nested(a[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > _LINEWIDTH:
            parts.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            parts.append(", " + s)
            last += len(s) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t: Any) -> str:
    a = np.asarray(t._be.to_numpy(t._data))
    d = t.dtype
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t._be.name != "cpu":
        suffixes.append(f"device='{t._be.name}'")
    default = _dtype.get_default_dtype()
    if a.size == 0:
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if d is not default:
            suffixes.append(f"dtype=lucid.{d.name}")
        body = "[]"
    else:
        if d not in (default, _dtype.int64, _dtype.bool_):
            suffixes.append(f"dtype=lucid.{d.name}")
        summarize = a.size > _THRESHOLD
        fmt = _Formatter(_summarized(a) if summarize else a.reshape(-1), d.is_floating_point)
        body = _nested(a, indent, summarize, fmt)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
