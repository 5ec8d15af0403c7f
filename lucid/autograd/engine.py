"""The backward engine: iterative topological order over the graph of ``Op`` nodes.

No recursion anywhere, so a chain of any length backpropagates. Gradients flowing into
one node are summed before the node runs; leaves accumulate into ``.grad``.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Sequence
from typing import Any

from .._tensor import Tensor, _make
from . import grad_mode
from ._accumulate import (
    _accumulate,
    _accumulate_graph,
    _accumulate_leaf,
    _leaf_add,
    _leaf_done,
    _once,
    _scatter,
    fill,
    run_hook,
)
from ._batched_grad import grad_batched
from ._reach import useful as _useful
from .anomaly_mode import _state as _anomaly
from .anomaly_mode import checked_backward
from .function import Op

_grad_on = grad_mode._state

__all__ = ["backward", "grad", "tensor_backward", "queue_callback", "set_graph_backward"]

_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


def _as_list(x: Any) -> list:
    if x is None:
        return []
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _root_grads(outputs: list[Tensor], grads: Sequence[Any] | None,
                graph: bool = False) -> list[Any]:
    """The gradients the outputs start from: arrays, or Tensors when ``graph`` (which may
    themselves require grad: double-vjp tricks differentiate with respect to them)."""
    if grads is not None and len(grads) != len(outputs):
        raise RuntimeError(
            "grad can be implicitly created only for scalar outputs"
            if not grads else f"got {len(grads)} gradients for {len(outputs)} outputs"
        )
    res = []
    for i, out in enumerate(outputs):
        g = None if grads is None else grads[i]
        if not out._rg:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn"
            )
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            one = out._be.ones_like(out._data)
            res.append(_make(one, out._be, False, None) if graph else one)
            continue
        if not isinstance(g, Tensor):
            g = _make(out._be.asarray(g, out.dtype), out._be, False, None)
        if tuple(g._data.shape) != tuple(out._data.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and "
                f"output[{i}] has a shape of {tuple(out.shape)}."
            )
        if g._be is not out._be:
            raise RuntimeError(
                f"grad_output[{i}] is on device {g._be.name} but output[{i}] is on "
                f"{out._be.name}"
            )
        res.append(g if graph else g._data)
    return res


def _check_versions(fn: Op) -> None:
    for vc, v in fn._vcs:
        if vc[0] != v:
            _version_error(fn, vc[0], v)


def _version_error(fn: Op, now: int, expected: int) -> None:
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: a tensor saved by {fn.name()} is at version {now}; expected version "
        f"{expected} instead. Hint: the tensor was changed in place after it was saved for "
        "backward; use an out-of-place op (or .clone()) before modifying it."
    )


def _run(roots: list[tuple[Any, Any]], retain_graph: bool,
         capture: dict[Any, int] | None, captured: list | None, graph: bool = False) -> None:
    """Propagate ``roots`` ((node_or_leaf, grad) pairs) through the graph.

    A leaf's ``.grad`` is written as soon as every edge into it has delivered (so
    post-accumulate hooks can start work, such as a gradient all-reduce, while backward goes
    on). With ``capture`` (node or leaf id -> slot), gradients reaching those places are
    stored in ``captured`` instead. With ``graph`` (create_graph), gradients are Tensors and
    each node's backward is itself recorded (``_graph_backward``).
    """
    # count the edges into each node and leaf, so each runs once with its summed gradient
    deps: dict[Op, int] = {}
    leaf_deps: dict[int, int] = {}
    grads: dict[Any, Any] = {}
    leaf_grads: dict[int, list] = {}  # id -> [leaf, grad, adoptable]
    stack = []
    for n, g in roots:
        if isinstance(n, Op):
            if n not in deps:
                deps[n] = 0
                stack.append(n)
            prev = grads.get(n)
            grads[n] = g if prev is None else prev + g
        else:  # caller-owned gradients are never adopted
            _leaf_add(leaf_grads, n, g, False)
    ready = list(stack)
    useful = None if capture is None else _useful(stack, capture)
    while stack:
        fn = stack.pop()
        if useful is not None and fn not in useful:
            continue
        for p in fn.parents:
            if p is None:
                continue
            if isinstance(p, Op):
                if useful is not None and p not in useful and p not in capture:
                    continue
                c = deps.get(p)
                if c is None:
                    deps[p] = 1
                    stack.append(p)
                else:
                    deps[p] = c + 1
            else:
                k = id(p)
                leaf_deps[k] = leaf_deps.get(k, 0) + 1
    ready = [n for n in ready if deps[n] == 0]
    early = capture is None
    call = _graph_backward if graph else None
    if _anomaly.on:
        call = checked_backward(call)

    # nodes whose pending gradient is an array this loop made (further adds go in place)
    owned: set | None = None if graph else set()
    unfilled: dict = {}  # buffers split slices write into, not yet zeroed between them
    while ready:
        fn = ready.pop()
        if unfilled and fn in unfilled:
            fill(fn, grads, unfilled, fn.be)
        g = grads.pop(fn)
        if owned:
            owned.discard(fn)
        if fn._hooks:
            for h in list(fn._hooks):
                g = run_hook(h, g, fn.be, graph)
        if fn._retain is not None:
            _retain(fn, g, graph)
        if capture is not None:
            if fn in capture:
                captured[capture[fn]] = g  # type: ignore[index]
            if fn not in useful:  # type: ignore[operator]
                continue  # nothing wanted lies beyond this node
        if fn._released:
            raise RuntimeError(_FREED)
        if fn._vcs is not None:
            _check_versions(fn)
        if fn.scatters and early and owned is not None and fn.be.views_share_memory and \
                isinstance(fn.parents[0], Op) and fn.parents[0] in deps:
            # its gradient goes straight into the parent's pending buffer; nothing to pass on
            _scatter(fn, g, grads, owned, unfilled)
            in_grads = (None,) * len(fn.parents)
        else:
            in_grads = fn.backward(g) if call is None else call(fn, g)
        if not retain_graph and fn.saved:
            fn._released = True
            fn.saved = ()
            fn._ins = None
        if in_grads.__class__ is not tuple:
            in_grads = (in_grads,)
        for p, ig in zip(fn.parents, in_grads):
            if p is None:
                continue
            if isinstance(p, Op):
                c = deps.get(p)
                if c is None:  # pruned: leads to nothing captured
                    continue
                c -= 1
                deps[p] = c
                if ig is not None:
                    _accumulate(grads, owned, p, ig, fn.be, unfilled)
                if c == 0:
                    if p in grads:
                        ready.append(p)
                    else:
                        _skip(p, deps, grads, ready, leaf_deps, leaf_grads, early, graph, useful)
            else:
                if not early and id(p) not in capture:  # type: ignore[operator]
                    continue
                k = id(p)
                if ig is not None:  # an array this backward made for this leaf alone: adoptable
                    _leaf_add(leaf_grads, p, ig,
                              ig is not g and (len(in_grads) == 1 or _once(ig, in_grads)))
                c = leaf_deps[k] - 1
                leaf_deps[k] = c
                if c == 0 and early:
                    _leaf_done(leaf_grads, k, graph)

    if capture is None:
        for k in list(leaf_grads):
            _leaf_done(leaf_grads, k, graph)
        return
    for t, g, _ in leaf_grads.values():
        slot = capture.get(id(t))
        if slot is not None:
            if t._hooks:
                for h in list(t._hooks):
                    g = run_hook(h, g, t._be, graph)
            captured[slot] = g  # type: ignore[index]


def _retain(fn: Op, g: Any, graph: bool = False) -> None:
    t = fn._retain()
    if t is not None and t.grad_fn is fn:
        if graph:
            t._grad = g if t._grad is None else t._grad + g
        elif t._grad is None:
            t._grad = _make(fn.be.copy(g), fn.be, False, None)
        else:
            t._grad._data = fn.be.add(t._grad._data, g)


def _skip(fn: Op, deps: dict, grads: dict, ready: list, leaf_deps: dict, leaf_grads: dict,
          early: bool, graph: bool, useful: set | None) -> None:
    """A node that received no gradient at all: release its dependants without running it."""
    stack = [fn]
    while stack:
        f = stack.pop()
        if useful is not None and f not in useful:
            continue  # its edges were never counted
        for p in f.parents:
            if p is None:
                continue
            if isinstance(p, Op):
                if p not in deps:
                    continue
                deps[p] -= 1
                if deps[p] == 0:
                    if p in grads:
                        ready.append(p)
                    else:
                        stack.append(p)
            else:
                k = id(p)
                leaf_deps[k] -= 1
                if leaf_deps[k] == 0 and early:
                    _leaf_done(leaf_grads, k, graph)


_GRAPH_BACKWARD = None
_callbacks = threading.local()


def _graph_backward(fn: Op, g: Tensor) -> Any:
    """Run ``fn``'s backward so that it is itself recorded (create_graph=True). The ops layer
    installs the implementation (``set_graph_backward``): the engine knows no op."""
    if _GRAPH_BACKWARD is None:  # pragma: no cover - installed by ``import lucid``
        raise RuntimeError("create_graph=True needs lucid.ops to be imported")
    return _GRAPH_BACKWARD(fn, g)


def set_graph_backward(impl: Any) -> None:
    """Install ``impl(node, grad_tensor) -> tuple of Tensor | None``, used for create_graph."""
    global _GRAPH_BACKWARD
    _GRAPH_BACKWARD = impl


def queue_callback(callback: Any) -> None:
    """Run ``callback()`` once the backward pass in progress on this thread has finished
    (torch's ``Variable._execution_engine.queue_callback``); gradient synchronisation, such
    as DistributedDataParallel's, waits there for its last bucket."""
    q = getattr(_callbacks, "queue", None)
    if q is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    q.append(callback)


def _execute(roots: list, retain_graph: bool, capture: Any, captured: Any, graph: bool) -> None:
    """One backward pass under the right grad mode, then the queued final callbacks."""
    outer = getattr(_callbacks, "queue", None)
    q: list = []
    _callbacks.queue = q
    prev = _grad_on.on
    _grad_on.on = graph
    try:
        _run(roots, retain_graph, capture, captured, graph)
    finally:
        _grad_on.on = prev
        _callbacks.queue = outer
    for cb in q:  # may queue more
        cb()


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables: Any = None, inputs: Any = None
             ) -> None:
    """Compute the gradients of ``tensors`` and accumulate them into the leaves' ``.grad``.

    ``create_graph=True`` records the backward pass itself, so the gradients can be
    differentiated again (gradient penalties, Hessian-vector products); ``retain_graph``
    then defaults to True, as in torch. ``grad_variables`` is the deprecated name of
    ``grad_tensors`` (a FutureWarning, as in torch).

    Example::

        lucid.autograd.backward([loss], inputs=[w])     # only w.grad is written
    """
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments "
                               "both passed to `backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    if retain_graph is None:
        retain_graph = create_graph
    if grad_tensors is None and inputs is None and not create_graph \
            and tensors.__class__ is list and len(tensors) == 1:
        t = tensors[0]  # fast path: loss.backward()
        if t._rg and t._data.size == 1:
            _execute([(t.grad_fn or t, t._be.ones_like(t._data))], retain_graph, None, None,
                     False)
            return
    outs = _as_list(tensors)
    gl = None if grad_tensors is None else _as_list(grad_tensors)
    root_grads = _root_grads(outs, gl, create_graph)
    roots = [(t.grad_fn or t, g) for t, g in zip(outs, root_grads)]
    if inputs is None:
        _execute(roots, retain_graph, None, None, create_graph)
        return
    ins = _as_list(inputs)
    captured: list = [None] * len(ins)
    _execute(roots, retain_graph, _capture_map(ins), captured, create_graph)
    for t, g in zip(ins, captured):
        if g is None:
            continue
        if create_graph:
            if t.grad_fn is None:
                _accumulate_graph(t, g)
            else:
                t._grad = g
        elif t.grad_fn is None:
            _accumulate_leaf(t, g, hooks=False)
        else:
            t._grad = _make(g, t._be, False, None)


def _capture_map(inputs: list[Tensor]) -> dict[Any, int]:
    cap: dict[Any, int] = {}
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"inputs must be Tensors, got {type(t).__name__}")
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        cap[t.grad_fn if t.grad_fn is not None else id(t)] = i
    return cap


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False
         ) -> tuple[Tensor | None, ...]:
    """Return d(outputs)/d(inputs) without touching any ``.grad``.

    With ``create_graph=True`` the returned gradients are differentiable (their own
    ``grad_fn``), so they can be used in a loss and differentiated again.
    ``is_grads_batched=True`` reads the first dim of every ``grad_outputs`` tensor as a
    batch of vectors and returns one gradient per vector, stacked on a new first dim (the
    vector-Jacobian products run one after another; torch vmaps them). ``only_inputs`` is
    deprecated and ignored (a FutureWarning when False), as in torch.

    Example::

        (gx,) = lucid.autograd.grad((x * x).sum(), x, create_graph=True)
        (gxx,) = lucid.autograd.grad(gx.sum(), x)      # 2 everywhere
        (rows,) = lucid.autograd.grad(x * 2, x, lucid.eye(3), is_grads_batched=True)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=2)
    if retain_graph is None:
        retain_graph = create_graph
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    gl = None if grad_outputs is None else _as_list(grad_outputs)
    if is_grads_batched:
        return grad_batched(grad, outs, ins, gl, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    if gl is not None and all(g is None for g in gl):
        gl = None
    root_grads = _root_grads(outs, gl, create_graph)
    roots = [(t.grad_fn or t, g) for t, g in zip(outs, root_grads)]
    captured: list = [None] * len(ins)
    _execute(roots, retain_graph, _capture_map(ins), captured, create_graph)
    res: list[Tensor | None] = []
    for i, (t, g) in enumerate(zip(ins, captured)):
        if g is None:
            if materialize_grads:
                res.append(_make(t._be.zeros_like(t._data), t._be, False, None))
                continue
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
            res.append(None)
        elif create_graph:
            res.append(g if tuple(g.shape) == tuple(t._data.shape) else g.expand(t.shape))
        else:
            if tuple(g.shape) != tuple(t._data.shape):
                g = t._be.broadcast_to(g, t._data.shape)
            res.append(_make(g, t._be, False, None))
    return tuple(res)


def tensor_backward(self: Tensor, gradient: Tensor | None = None,
                    retain_graph: bool | None = None, create_graph: bool = False,
                    inputs: Any = None) -> None:
    """``Tensor.backward``: accumulate d(self)/d(leaf) into every leaf's ``.grad``.

    ``gradient`` is required unless self holds a single element.

    Example::

        x = lucid.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        x.grad            # tensor([2., 4.])
    """
    backward([self], None if gradient is None else [gradient], retain_graph, create_graph,
             inputs=inputs)
