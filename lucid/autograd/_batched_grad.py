"""``autograd.grad(..., is_grads_batched=True)``: one vector-Jacobian product per row of
the batched ``grad_outputs``, run one after another (torch vmaps them), the results stacked
on a new first dim (differentiably under ``create_graph``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._tensor import Tensor, _make
from ._stack import Stack

__all__ = ["grad_batched"]


def grad_batched(grad: Callable[..., Any], outs: list[Tensor], ins: list[Tensor],
                 gl: list | None, retain_graph: bool, create_graph: bool,
                 allow_unused: bool | None, materialize_grads: bool
                  ) -> tuple[Tensor | None, ...]:
    """``grad`` once per row of the batched ``grad_outputs``, the results stacked."""
    if gl is None or len(gl) != len(outs):
        raise RuntimeError(f"got {0 if gl is None else len(gl)} gradients for {len(outs)} "
                           "outputs; is_grads_batched=True needs one batched grad_output per "
                           "output")
    n = None
    for i, (o, g) in enumerate(zip(outs, gl)):
        if g is None:
            continue
        if not isinstance(g, Tensor) or g.ndim == 0 or \
                tuple(g.shape[1:]) != tuple(o.shape):
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of "
                f"{tuple(g.shape[1:]) if isinstance(g, Tensor) else ()} and output[{i}] has "
                f"a shape of {tuple(o.shape)}. If you only want some tensors in `grad_output` "
                "to be considered batched, consider using vmap.")
        if n is not None and g.shape[0] != n:
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {[g.shape[0] for g in gl if g is not None]}"
                             " for the mapped dimension")
        n = g.shape[0]
    if n is None:
        raise RuntimeError("is_grads_batched=True needs at least one batched grad_output")
    rows: list[list[Tensor | None]] = [[] for _ in ins]
    for b in range(n):
        res = grad(outs, ins, [None if g is None else g[b] for g in gl],
                   retain_graph=retain_graph or b < n - 1, create_graph=create_graph,
                   allow_unused=allow_unused or materialize_grads)
        for r, g in zip(rows, res):
            r.append(g)
    out: list[Tensor | None] = []
    for t, r in zip(ins, rows):
        if n and all(g is None for g in r):
            # as torch: an unused input's materialized gradient has no batch dim
            out.append(_make(t._be.zeros_like(t._data), t._be, False, None)
                       if materialize_grads else None)
            continue
        if n == 0:
            out.append(_make(t._be.zeros((0, *t._data.shape), t.dtype), t._be, False, None))
            continue
        if create_graph:
            out.append(Stack.apply(*r))
        else:
            out.append(_make(t._be.stack([g._data for g in r], 0), t._be, False, None))
    return tuple(out)
