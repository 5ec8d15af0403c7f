"""Higher-level derivatives of whole functions, as ``torch.autograd.functional``: ``vjp``,
``jvp``, ``jacobian``, ``hessian``, ``vhp`` and ``hvp``.

Each takes ``func`` (Tensors in, a Tensor or tuple of Tensors out) and ``inputs`` (a Tensor or
a tuple of Tensors). Inputs are used detached, so the results do not reach into the caller's
graph unless ``create_graph=True`` (then inputs that require grad are used as they are and the
results are differentiable). An input ``func`` does not use gets zeros, or an error with
``strict=True``. Built on ``autograd.grad``; ``jvp`` and ``hvp`` use the double-vjp trick.

Example::

    from lucid.autograd.functional import hessian, jacobian
    x = lucid.randn(3, dtype=lucid.float64)
    jacobian(lambda t: t.sin(), x)                 # diag(cos(x)), shape (3, 3)
    hessian(lambda t: (t ** 3).sum(), x)           # diag(6 x)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._tensor import Tensor, _make
from . import grad_mode
from ._stack import Stack
from .engine import grad as _grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _as_tuple(x: Any, arg: str, fn: str) -> tuple[bool, tuple]:
    if isinstance(x, Tensor):
        return False, (x,)
    if not isinstance(x, (tuple, list)):
        raise TypeError(f"The {arg} given to {fn} must be either a Tensor or a tuple of Tensors "
                        f"but the value given has type {type(x).__name__}.")
    for i, t in enumerate(x):
        if not isinstance(t, Tensor):
            raise TypeError(f"The {arg} given to {fn} must be either a Tensor or a tuple of "
                            f"Tensors but the value at index {i} has type {type(t).__name__}.")
    return True, tuple(x)


def _prepare(inputs: tuple, create_graph: bool) -> tuple:
    """Inputs to differentiate: views of the caller's tensors when a graph is wanted (so
    derivatives reach them), detached copies that require grad otherwise."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(True))
    return tuple(out)


def _outputs(func: Callable, inputs: tuple, fn: str) -> tuple[bool, tuple]:
    with grad_mode.enable_grad():
        out = func(*inputs)
    return _as_tuple(out, "outputs of the user-provided function", fn)


def _zeros(t: Tensor) -> Tensor:
    return _make(t._be.zeros(tuple(t.shape), t.dtype), t._be, False, None)


def _finish(grads: tuple, refs: tuple, create_graph: bool, strict: bool, what: str) -> tuple:
    out = []
    for i, (g, r) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode"
                                   f" when computing {what}.")
            g = _zeros(r)
        out.append(g if create_graph else g.detach())
    return tuple(out)


def _vjp(outputs: tuple, inputs: tuple, v: tuple, create_graph: bool) -> tuple:
    pairs = [(o, g) for o, g in zip(outputs, v) if o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([o for o, _ in pairs], list(inputs), [g for _, g in pairs],
                 create_graph=create_graph, retain_graph=True, allow_unused=True)


def _check_v(v: Any, outputs: tuple, fn: str, what: str) -> tuple:
    if v is None:
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
        return (_make(outputs[0]._be.ones_like(outputs[0]._data), outputs[0]._be, False, None),)
    _, vt = _as_tuple(v, "v", fn)
    if len(vt) != len(outputs):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(outputs)} but got "
                           f"{len(vt)}.")
    for i, (a, b) in enumerate(zip(vt, outputs)):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(f"Entry {i} in v has invalid size: should be {tuple(b.shape)} "
                               f"but got {tuple(a.shape)}.")
    return vt


def _ret(is_tuple: bool, xs: tuple) -> Any:
    return xs if is_tuple else xs[0]


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    Example::

        out, g = vjp(lambda x: x ** 2, x, lucid.ones(3))   # g = 2 x
    """
    in_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
    ins = _prepare(ins, create_graph)
    out_tuple, outs = _outputs(func, ins, "vjp")
    vt = _check_v(v, outs, "vjp", "vjp")
    grads = _vjp(outs, ins, vt, create_graph)
    res = _finish(grads, ins, create_graph, strict, "vjp")
    outs = tuple(o if create_graph else o.detach() for o in outs)
    return _ret(out_tuple, outs), _ret(in_tuple, res)


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-vjp trick.

    Example::

        out, t = jvp(lambda x: x ** 2, x, lucid.ones(3))   # t = 2 x
    """
    in_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
    ins = _prepare(ins, create_graph)
    if v is None:
        if len(ins) != 1 or ins[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single "
                               "element.")
        vt: tuple = (_make(ins[0]._be.ones_like(ins[0]._data), ins[0]._be, False, None),)
    else:
        _, vt = _as_tuple(v, "v", "jvp")
        for i, (a, b) in enumerate(zip(vt, ins)):
            if tuple(a.shape) != tuple(b.shape):
                raise RuntimeError(f"Entry {i} in v has invalid size: should be "
                                   f"{tuple(b.shape)} but got {tuple(a.shape)}.")
    out_tuple, outs = _outputs(func, ins, "jvp")
    dummies = tuple(_zeros(o).requires_grad_(True) for o in outs)
    grads = _vjp(outs, ins, dummies, True)
    used = [(g, t) for g, t in zip(grads, vt) if g is not None]
    if used:
        res = _grad([g for g, _ in used], list(dummies), [t for _, t in used],
                    create_graph=create_graph, retain_graph=True, allow_unused=True)
    else:
        res = (None,) * len(outs)
    res = _finish(res, outs, create_graph, strict, "jvp")
    outs = tuple(o if create_graph else o.detach() for o in outs)
    return _ret(out_tuple, outs), _ret(out_tuple, res)


def _jacobian_rows(out: Tensor, ins: tuple, create_graph: bool, strict: bool,
                   i: int) -> list[Tensor]:
    """d out / d ins[j] for every j, each of shape ``out.shape + ins[j].shape``."""
    n = out.numel()
    flat = out.reshape(-1)
    rows: list[list[Tensor]] = [[] for _ in ins]
    be = out._be
    for k in range(n):
        go = be.setitem(be.zeros((n,), out.dtype), k, 1)
        gs = (None,) * len(ins)
        if flat.requires_grad:
            gs = _grad([flat], list(ins), [_make(go, be, False, None)],
                       create_graph=create_graph, retain_graph=True, allow_unused=True)
        for j, (g, t) in enumerate(zip(gs, ins)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is "
                                       f"independent of input {j}. This is not allowed in "
                                       "strict mode.")
                g = _zeros(t)
            rows[j].append(g if create_graph else g.detach())
    res = []
    for j, t in enumerate(ins):
        if n == 0:
            res.append(_make(be.zeros(tuple(out.shape) + tuple(t.shape), t.dtype), be, False,
                             None))
        else:
            res.append(Stack.apply(*rows[j]).reshape(tuple(out.shape) + tuple(t.shape)))
    return res


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``: for one output and one input a Tensor of shape
    ``output.shape + input.shape``; tuples of them (outputs first) otherwise.
    ``vectorize`` is accepted and ignored (rows are computed one by one).

    Example::

        jacobian(lambda x: x @ w, x)     # w.T expanded over the batch axes
    """
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                         f'Hint: If your function has a single output, use "reverse-mode". '
                         f"Got {strategy}")
    in_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
    ins = _prepare(ins, create_graph)
    out_tuple, outs = _outputs(func, ins, "jacobian")
    jac = tuple(tuple(_jacobian_rows(o, ins, create_graph, strict, i))
                for i, o in enumerate(outs))
    if out_tuple:
        return jac if in_tuple else tuple(r[0] for r in jac)
    return jac[0] if in_tuple else jac[0][0]


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of the scalar function ``func`` at ``inputs``: a Tensor of shape
    ``input.shape + input.shape``, or a tuple of tuples for several inputs.

    Example::

        hessian(lambda x: (x ** 3).sum(), x)     # diag(6 x)
    """
    in_tuple, ins = _as_tuple(inputs, "inputs", "hessian")

    def scalar(*inp: Tensor) -> Tensor:
        out = func(*inp)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        if out_tuple or outs[0].numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor "
                               "with a single element.")
        return outs[0].reshape(())

    def gradient(*inp: Tensor) -> tuple:
        return jacobian(scalar, inp, create_graph=True, strict=strict)

    res = jacobian(gradient, ins, create_graph=create_graph, strict=strict)
    if in_tuple:
        return res
    return res[0][0]


def _vhp(func: Callable, inputs: Any, v: Any, create_graph: bool, strict: bool,
         name: str) -> tuple[Any, Any]:
    in_tuple, ins = _as_tuple(inputs, "inputs", name)
    ins = _prepare(ins, create_graph)
    out_tuple, outs = _outputs(func, ins, name)
    if out_tuple or outs[0].numel() != 1:
        raise RuntimeError(f"The function given to {name} should return a single Tensor with a "
                           "single element.")
    if v is None:
        if len(ins) != 1 or ins[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single "
                               "element.")
        vt: tuple = (_make(ins[0]._be.ones_like(ins[0]._data), ins[0]._be, False, None),)
    else:
        _, vt = _as_tuple(v, "v", name)
    ones = (_make(outs[0]._be.ones_like(outs[0]._data), outs[0]._be, False, None),)
    jac = _vjp(outs, ins, ones, True)
    used = [(g, t) for g, t in zip(jac, vt) if g is not None and g.requires_grad]
    res = (None,) * len(ins)
    if used:
        res = _grad([g for g, _ in used], list(ins), [t for _, t in used],
                    create_graph=create_graph, retain_graph=True, allow_unused=True)
    res = _finish(res, ins, create_graph, strict, name)
    out = outs[0] if create_graph else outs[0].detach()
    return out, _ret(in_tuple, res)


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)`` for a scalar ``func``.

    Example::

        out, r = vhp(lambda x: (x ** 3).sum(), x, lucid.ones(3))   # r = 6 x
    """
    return _vhp(func, inputs, v, create_graph, strict, "vhp")


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), H v)`` for a scalar ``func`` (equal to ``vhp``: H is symmetric).

    Example::

        out, r = hvp(lambda x: (x ** 3).sum(), x, lucid.ones(3))   # r = 6 x
    """
    return _vhp(func, inputs, v, create_graph, strict, "hvp")
