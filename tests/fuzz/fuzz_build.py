"""Worker side: turn plain-data case descriptions into lucid tensors, edits and a backward.

A case is a JSON-able dict: ``{"op": name, "dev": device, "seed": int, ...op params}``.
Tensor specs inside it are dicts too:

- data tensor: ``{"shape": [..], "dtype": "float32", "layout": "c"|"t"|"s"|"e"|"f", "grad":
  bool}``; layout "t" is a permuted (reversed-axes) view, "s" a ``[..., ::2]`` slice, "e" an
  ``expand`` of a size-1 first dim (stride 0), "f" a ``flip(-1)``: all non-contiguous.
- index tensor: ``{"shape": [..], "values": [flat ints], "dtype": "int64", "make": "tensor"|
  "from_numpy"|"from_numpy_s"|"from_numpy_t"}``; the ``from_numpy`` forms (contiguous, a
  strided view, a transposed buffer) keep the numpy array so an edit can refill it.

An edit, applied after forward and before backward, is ``{"target": "index"|"input"|"out1",
"kind": "set"|"fill"|"add"|"numpy", "value": int}`` ("out1" is an op's returned indices).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import lucid

DTYPES = {
    "float32": lucid.float32, "float64": lucid.float64, "int64": lucid.int64,
    "int32": lucid.int32, "uint8": lucid.uint8, "bool": lucid.bool,
}
FLOATS = ("float32", "float64")


class Ctx:
    """Tensors of one case that an edit may target, and the numpy buffers behind them."""

    def __init__(self, case: dict[str, Any]) -> None:
        self.case = case
        self.dev = case["dev"]
        self.rng = np.random.default_rng(case.get("seed", 0))
        self.named: dict[str, Any] = {}
        self.buffers: dict[str, np.ndarray] = {}
        self.leaves: list[Any] = []

    def array(self, shape: list[int], dtype: str) -> np.ndarray:
        shape = tuple(shape)
        if dtype in FLOATS:
            return self.rng.standard_normal(shape).astype(dtype)
        if dtype == "bool":
            return self.rng.random(shape) < 0.5
        if dtype == "uint8":
            return self.rng.integers(0, 256, shape).astype(np.uint8)
        return self.rng.integers(-3, 10, shape).astype(dtype)

    def data(self, spec: dict[str, Any] | None, name: str = "input") -> Any:
        """A data tensor as ``spec`` says (``None`` passes through)."""
        if spec is None:
            return None
        shape, dtype = list(spec["shape"]), spec.get("dtype", "float32")
        layout = spec.get("layout", "c") if shape else "c"
        grad = bool(spec.get("grad", False)) and dtype in FLOATS
        if layout == "t":
            base = self.array(shape[::-1], dtype)
        elif layout == "s":
            base = self.array(shape[:-1] + [2 * shape[-1]], dtype)
        elif layout == "e":
            base = self.array([1] + shape[1:], dtype)
        else:
            base = self.array(shape, dtype)
        t = lucid.tensor(base, dtype=DTYPES[dtype], device=self.dev, requires_grad=grad)
        self.leaves.append(t)
        if layout == "t":
            t = t.permute(*range(len(shape) - 1, -1, -1))
        elif layout == "s":
            t = t[..., ::2]
        elif layout == "e":
            t = t.expand(*shape)
        elif layout == "f":
            t = t.flip(-1)
        self.named.setdefault(name, t)
        return t

    def index(self, spec: dict[str, Any] | None, name: str = "index") -> Any:
        """An integer (or bool) index tensor as ``spec`` says."""
        if spec is None:
            return None
        dtype = spec.get("dtype", "int64")
        raw = np.array(spec["values"], dtype=bool if dtype == "bool" else np.int64)
        arr = raw.astype(dtype).reshape(spec["shape"])  # int32 wraps huge values
        make = spec.get("make", "tensor")
        if make == "from_numpy_s" and arr.ndim:  # a strided view of a bigger buffer
            big = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1],), arr.dtype)
            big[..., ::2] = arr
            arr = big[..., ::2]
        elif make == "from_numpy_t":  # a transposed (Fortran-order) buffer
            arr = np.ascontiguousarray(arr.T).T
        if make.startswith("from_numpy"):
            t = lucid.from_numpy(arr)
            if self.dev != "cpu":
                t = t.to(self.dev)
            self.buffers[name] = arr
        else:
            t = lucid.tensor(arr, device=self.dev)
        self.named.setdefault(name, t)
        return t


def apply_edit(ctx: Ctx, edit: dict[str, Any] | None) -> None:
    """Change a tensor the graph may have saved: in place through lucid or through numpy."""
    if not edit:
        return
    target, kind, value = edit["target"], edit["kind"], edit.get("value", 0)
    if kind == "numpy":
        buf = ctx.buffers.get(target)
        if buf is not None and buf.size:
            buf.fill(value)
        return
    t = ctx.named.get(target)
    if not isinstance(t, lucid.Tensor):
        return
    if t.dtype is lucid.bool:
        value = bool(value)
    elif t.dtype is lucid.uint8:
        value = value % 256
    with lucid.no_grad():
        if kind == "set" and t.ndim and t.shape[0]:
            t[0] = value
        elif kind == "set" and t.ndim == 0:
            t.fill_(value)
        elif kind == "fill":
            t.fill_(value)
        elif kind == "add":
            t.add_(value)


def backward(out: Any) -> None:
    """Sum every float output that needs grad and backpropagate (once)."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    total = None
    for o in outs:
        if isinstance(o, lucid.Tensor) and o.requires_grad and o.dtype.is_floating_point:
            s = o.sum()
            total = s if total is None else total + s
    if total is not None:
        total.backward()


def finish(ctx: Ctx, out: Any) -> None:
    """Name the op's returned indices, apply the case's edit, then run backward."""
    if isinstance(out, (tuple, list)) and len(out) > 1 and isinstance(out[1], lucid.Tensor):
        ctx.named.setdefault("out1", out[1])
    apply_edit(ctx, ctx.case.get("edit"))
    if ctx.case.get("backward", True):
        backward(out)
    materialize([out, list(ctx.named.values()), ctx.leaves])


def materialize(obj: Any) -> None:
    """Read every tensor (and grad) back to the host: a lazy device (MLX) computes them now,
    so a death is blamed on this case rather than on a later one."""
    if isinstance(obj, (tuple, list)):
        for o in obj:
            materialize(o)
    elif isinstance(obj, lucid.Tensor):
        obj.detach().numpy(force=True)
        if obj.grad is not None:
            obj.grad.numpy(force=True)
