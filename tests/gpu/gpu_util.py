"""Run the same computation on "cpu" and "gpu" and compare values and gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import lucid


def leaves(arrays: list[Any], device: str) -> list[Any]:
    """numpy arrays -> tensors on ``device`` (float arrays require grad); others pass through."""
    out = []
    for a in arrays:
        if isinstance(a, np.ndarray):
            t = lucid.tensor(a, device=device)
            if a.dtype.kind == "f":
                t.requires_grad_(True)
            out.append(t)
        else:
            out.append(a)
    return out


def run(fn: Callable, arrays: list[Any], device: str, seed: int = 0) -> tuple[list, list]:
    """Values of ``fn(*leaves)`` and the gradients of a weighted sum of its float outputs."""
    xs = leaves(arrays, device)
    lucid.manual_seed(seed)  # random ops draw the same numbers on both devices
    out = fn(*xs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    outs = [o for o in outs if isinstance(o, lucid.Tensor)]
    vals = [o.detach().numpy() for o in outs]
    rng = np.random.default_rng(1)
    total = None
    for o in outs:
        if o.requires_grad:
            w = lucid.tensor(rng.uniform(0.5, 1.5, tuple(o.shape)).astype(np.float32),
                             dtype=o.dtype, device=device)
            term = (o * w).sum()
            total = term if total is None else total + term
    grads = []
    if total is not None:
        total.backward()
        grads = [x.grad.numpy() if isinstance(x, lucid.Tensor) and x.grad is not None else None
                 for x in xs]
    return vals, grads


def close(a: Any, b: Any, what: str, rtol: float = 1e-4, atol: float = 2e-5) -> None:
    if a is None or b is None:
        assert a is None and b is None, what
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != {b.dtype}"
    if a.dtype.kind == "f":
        fin = b[np.isfinite(b)]
        scale = float(np.max(np.abs(fin), initial=1.0))
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol * scale, err_msg=what)
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


def same(fn: Callable, *arrays: Any, rtol: float = 1e-4, atol: float = 2e-5) -> None:
    """``fn`` gives the same values and gradients on "gpu" as on "cpu"."""
    cv, cg = run(fn, list(arrays), "cpu")
    gv, gg = run(fn, list(arrays), "gpu")
    assert len(cv) == len(gv)
    for k, (g, c) in enumerate(zip(gv, cv)):
        close(g, c, f"output {k}", rtol, atol)
    assert len(cg) == len(gg)
    for k, (g, c) in enumerate(zip(gg, cg)):
        close(g, c, f"gradient of argument {k}", rtol, atol)
