"""create_graph=True: running a node's backward so that it is itself recorded.

The engine calls ``graph_backward(node, grad)`` for each node when a graph of the backward
pass is wanted. There is still one backward per op: it runs on a twin of the node whose
backend is a ``GraphBackend`` (the backend interface over Tensors) and whose saved arrays
are the Tensors they came from: an input's array becomes that input again (so second
derivatives flow to it), the output's array a Tensor whose ``grad_fn`` is the node itself.

Ops whose backward reads values computed inside a fused forward (a mean and inverse standard
deviation, a log-sum-exp) define ``composite(inputs)``: the same function written with
differentiable ops. Their gradient is then that composite's, differentiated with
``create_graph=True``. Ops whose backward leaves the backend (host scipy calls) define
``graph_backward(grad, saved)`` over Tensors instead; user ``Function``s run their own
backward with grad mode on.
"""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor, _make
from ..autograd import engine
from ..autograd.function import Op
from ._graph_backend import GraphBackend

__all__ = ["graph_backward"]


class _Alias(Op):
    """The identity with a node of its own: where a composite's gradient is captured."""

    def forward(self, x):
        return x

    def backward(self, g):
        return g


def _input(fn: Op, i: int, a: Any) -> Any:
    """Input ``i`` of ``fn`` as a Tensor whose gradient reaches what fed the node."""
    p = fn.parents[i]
    if p is None or p is a or (isinstance(a, Tensor) and a.grad_fn is p):
        return a
    return _make(a._data, a._be, True, p)


def _saved(fn: Op, ins: tuple, k: int, s: Any) -> Any:
    if s is None or not hasattr(s, "shape"):
        return s
    if k == fn._oslot:
        return _make(s, fn.be, True, fn)
    for i, a in enumerate(ins):
        if isinstance(a, Tensor) and a._data is s:
            return _input(fn, i, a)
    return s  # an array computed in forward: a constant (GraphBackend wraps it)


def graph_backward(fn: Op, g: Tensor) -> tuple:
    """``fn``'s input gradients as Tensors recorded in the graph (None where not wanted)."""
    ins = fn._ins or ()
    if hasattr(fn, "composite"):
        return _composite(fn, ins, g)
    saved = tuple(_saved(fn, ins, k, s) for k, s in enumerate(fn.saved))
    gb = GraphBackend(fn.be)
    own = getattr(fn, "graph_backward", None)
    if own is not None:
        res = own(g, tuple(gb.t(s) for s in saved))
    else:
        twin = object.__new__(type(fn))
        twin.__dict__.update(fn.__dict__)
        twin.be = gb
        twin.saved = saved
        res = twin.backward(g)
    if not isinstance(res, tuple):
        res = (res,)
    return tuple(gb.t(r) for r in res)


def _composite(fn: Op, ins: tuple, g: Tensor) -> tuple:
    """The gradient of ``fn.composite`` (the op written with differentiable ops), captured at
    aliases of the inputs so that nothing beyond this node runs."""
    proxies = []
    wanted = []
    for i, a in enumerate(ins):
        if isinstance(a, Tensor) and fn.parents[i] is not None:
            a = _Alias.apply(_input(fn, i, a))
            wanted.append(i)
        proxies.append(a)
    out = fn.composite(proxies)
    grads = engine.grad([out], [proxies[i] for i in wanted], [g], create_graph=True,
                        allow_unused=True)
    res: list[Any] = [None] * len(fn.parents)
    for i, gi in zip(wanted, grads):
        res[i] = gi
    return tuple(res)


engine.set_graph_backward(graph_backward)
