"""PyTorch-style ``repr`` of tensors: the same formatting rules as ``torch/_tensor_str.py``
(by default precision 4, summarised above 1000 elements with 3 edge items, 80 columns;
``set_printoptions`` changes them)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _dtype

__all__ = ["get_printoptions", "set_printoptions", "tensor_repr"]


class _PrintOptions:
    """The options every tensor repr reads (PyTorch's ``PRINT_OPTS``)."""

    def __init__(self) -> None:
        self.precision = 4
        self.threshold: float = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, math.inf, 3, 80)}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print, as ``torch.set_printoptions``: digits after the point
    (``precision``), the element count above which a tensor is summarised (``threshold``)
    with ``edgeitems`` items at each end, characters per line (``linewidth``), a preset
    (``profile``: "default", "short" or "full") and scientific notation (``sci_mode``:
    True, False, or None to choose automatically; every call sets it).

    Example::

        lucid.set_printoptions(precision=2)
        lucid.tensor([1.12345])                  # tensor([1.12])
        lucid.set_printoptions(profile="default")
    """
    if profile is not None and profile in _PROFILES:
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as a dict of ``set_printoptions``' keywords."""
    return dict(vars(PRINT_OPTS))


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
        forced = PRINT_OPTS.sci_mode
        self.sci = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if forced is None else forced
        vals = v.tolist()
        p = PRINT_OPTS.precision
        if self.sci:
            self.width = max(len(f"{x:.{p}e}") for x in vals)
        elif self.int_mode:
            self.width = max(len(f"{x:.0f}") + 1 for x in vals)
        else:
            self.width = max(len(f"{x:.{p}f}") for x in vals)

    def __call__(self, value: Any) -> str:
        if self.floating:
            p = PRINT_OPTS.precision
            if self.sci:
                ret = f"{value:{self.width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = str(value)
        return (self.width - len(ret)) * " " + ret


class _ComplexFormatter:
    """Complex values as PyTorch prints them: real parts and imaginary parts each with their
    own width and style, ``1.5000+2.0000j``."""

    def __init__(self, values: np.ndarray) -> None:
        self.re = _Formatter(values.real, True)
        self.im = _Formatter(values.imag, True)
        self.width = self.re.width + self.im.width + 1

    def __call__(self, value: Any) -> str:
        v = complex(value)
        im = (self.im(v.imag) + "j").lstrip()
        return self.re(v.real) + (im if im[0] in "+-" else "+" + im)


def _summarized(a: np.ndarray) -> np.ndarray:
    """The flattened values that are shown when ``a`` is summarised."""
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a.reshape(1)
    if a.ndim == 1:
        return np.concatenate([a[:edge], a[-edge:]]) if a.shape[0] > 2 * edge else a
    rows = range(a.shape[0])
    if a.shape[0] > 2 * edge:
        rows = [*range(edge), *range(a.shape[0] - edge, a.shape[0])]
    return np.concatenate([_summarized(a[i]) for i in rows])


def _vector(a: np.ndarray, indent: int, summarize: bool, fmt: Any) -> str:
    edge, linewidth = PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth
    per_line = max(1, math.floor((linewidth - indent) / (fmt.width + 2)))
    if summarize and a.shape[0] > 2 * edge:
        data = [fmt(v) for v in a[:edge].tolist()] + [" ..."] + \
            [fmt(v) for v in a[-edge:].tolist()]
    else:
        data = [fmt(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a: np.ndarray, indent: int, summarize: bool, fmt: Any) -> str:
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return fmt(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    n = a.shape[0]
    if summarize and n > 2 * edge:
        slices = [_nested(a[i], indent + 1, summarize, fmt) for i in range(edge)] + ["..."] + \
            [_nested(a[i], indent + 1, summarize, fmt) for i in range(n - edge, n)]
    else:
        slices = [_nested(a[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    linewidth = PRINT_OPTS.linewidth
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > linewidth:
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
        if d not in (default, _dtype.int64, _dtype.bool_) and not (
                d.is_complex and d is default.to_complex()):
            suffixes.append(f"dtype=lucid.{d.name}")
        summarize = a.size > PRINT_OPTS.threshold
        vals = _summarized(a) if summarize else a.reshape(-1)
        fmt = _ComplexFormatter(vals) if d.is_complex else _Formatter(vals, d.is_floating_point)
        body = _nested(a, indent, summarize, fmt)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
