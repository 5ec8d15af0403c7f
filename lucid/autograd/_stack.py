"""``Stack``: Tensors of one shape stacked on a new leading dim, differentiably. Shared by
``grad(is_grads_batched=True)`` and ``functional.jacobian``, which both gather per-row
gradients."""

from __future__ import annotations

from typing import Any

from .function import Op

__all__ = ["Stack"]


class Stack(Op):
    """Rows (Tensors of one shape) stacked on a new leading dim, differentiably."""

    def forward(self, *rows: Any) -> Any:
        self.n = len(rows)
        return self.be.stack(list(rows), 0)

    def backward(self, g: Any) -> tuple:
        be = self.be
        return tuple(be.getitem(g, i) for i in range(self.n))
