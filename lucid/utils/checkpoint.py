"""Activation checkpointing, as ``torch.utils.checkpoint``: trade compute for memory by not
keeping a segment's intermediate activations; its forward runs again during backward.

``checkpoint(fn, *args)`` runs ``fn`` without recording a graph and keeps only its inputs.
When the backward pass reaches its output, ``fn`` runs a second time with gradients on (and,
by default, the random-number state of the first run restored, so dropout masks repeat), and
the gradient flows through that recomputed graph: into the inputs and into every parameter
``fn`` used. The gradients equal those of running ``fn`` directly.

Both of PyTorch's variants are offered. ``use_reentrant=True`` behaves as PyTorch's
reentrant one: positional arguments only, and when no input requires a gradient the output
does not either (with PyTorch's warning). ``use_reentrant=False`` (recommended) also takes
keyword arguments and gives parameters used inside ``fn`` their gradients even when no input
requires one. Gradients are computed with ``backward()``: ``lucid.autograd.grad`` through a
checkpoint accumulates into ``.grad`` instead, as PyTorch's reentrant variant does.

Example::

    from lucid.utils.checkpoint import checkpoint, checkpoint_sequential
    h = checkpoint(block, x, use_reentrant=False)        # block's activations recomputed
    y = checkpoint_sequential(net, 2, x, use_reentrant=False)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .. import _dtype
from .._tensor import Tensor
from ..autograd import Function, backward, enable_grad, is_grad_enabled
from ..ops.creation import zeros
from ..ops.movement import cat
from ..ops.random import get_rng_state, set_rng_state

__all__ = ["checkpoint", "checkpoint_sequential"]


def _pack(out: Any, spec: dict[str, Any]) -> Tensor:
    """One tensor for the function's output: itself, or the floating tensors of a tuple or
    list flattened into one vector (``spec`` records how to take it apart)."""
    if isinstance(out, Tensor):
        spec["kind"] = "tensor"
        return out
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"checkpoint: the function must return a Tensor or a tuple/list of "
                        f"Tensors, got {type(out).__name__}")
    floats = [o for o in out if isinstance(o, Tensor) and o.dtype.is_floating_point]
    if len({o.dtype for o in floats}) > 1:
        raise NotImplementedError("checkpoint: outputs of different floating dtypes")
    spec["kind"] = type(out)
    spec["items"] = [(o.shape, o.numel()) if isinstance(o, Tensor) and
                     o.dtype.is_floating_point else ("const", o.detach() if
                                                     isinstance(o, Tensor) else o)
                     for o in out]
    if not floats:
        return zeros(0)
    return cat([o.reshape(-1) for o in floats])


def _unpack(flat: Tensor, spec: dict[str, Any]) -> Any:
    if spec["kind"] == "tensor":
        return flat
    out, off = [], 0
    for item in spec["items"]:
        if item[0] == "const":
            out.append(item[1])
            continue
        shape, n = item
        out.append(flat[off:off + n].reshape(shape))
        off += n
    return spec["kind"](out)


class _Checkpoint(Function):
    """Runs the function without a graph; its backward recomputes it and backpropagates."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable[..., Any], preserve_rng_state: bool,
                kwargs: dict[str, Any], spec: dict[str, Any], _dummy: Any,
                *args: Any) -> Tensor:
        ctx.run_function, ctx.kwargs, ctx.spec = run_function, kwargs, spec
        ctx.rng = get_rng_state() if preserve_rng_state else None
        ctx.args = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        return _pack(run_function(*args, **kwargs), spec)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
        saved = iter(ctx.saved_tensors)
        args = []
        for a in ctx.args:
            if a is None:
                t = next(saved)
                d = t.detach()
                d.requires_grad_(t.requires_grad)
                args.append(d)
            else:
                args.append(a)
        now = get_rng_state() if ctx.rng is not None else None
        try:
            if ctx.rng is not None:
                set_rng_state(ctx.rng)
            with enable_grad():
                outs = ctx.run_function(*args, **ctx.kwargs)
        finally:
            if now is not None:
                set_rng_state(now)
        if isinstance(outs, Tensor):
            pairs = [(outs, grad)]
        else:
            pairs, off = [], 0
            for o, item in zip(outs, ctx.spec["items"]):
                if item[0] == "const":
                    continue
                shape, n = item
                pairs.append((o, grad[off:off + n].reshape(shape)))
                off += n
        pairs = [(o, g) for o, g in pairs if o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        with enable_grad():
            backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = tuple(a.grad if isinstance(a, Tensor) else None for a in args)
        return (None, None, None, None, None, *grads)


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], Any] | None = None, determinism_check: str = "default",
               debug: bool = False, early_stop: bool = True, **kwargs: Any) -> Any:
    """Run ``function(*args, **kwargs)`` without keeping its activations; recompute them in
    backward (see this module's docstring). ``preserve_rng_state`` (a keyword, default True)
    replays the random-number state during the recomputation.

    Example::

        y = checkpoint(lambda t: net(t).relu(), x, use_reentrant=False)
        y.sum().backward()          # net's forward runs again here
    """
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant is None:
        warnings.warn("lucid.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly. Starting in PyTorch 2.9, calling checkpoint without "
                      "use_reentrant will raise an exception. use_reentrant=False is "
                      "recommended, but if you need to preserve the current default "
                      "behavior, you can pass use_reentrant=True.", stacklevel=2)
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if use_reentrant:
        if context_fn is not None or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if not is_grad_enabled():
        return function(*args, **kwargs)
    needs = any(isinstance(a, Tensor) and a.requires_grad for a in args)
    if use_reentrant and not needs:
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)
    dummy = None
    if not use_reentrant:
        # NOTE: a leaf that requires grad, so the output joins the graph and the backward
        # reaches parameters used inside ``function`` even when no input requires grad
        dummy = zeros(0, dtype=_dtype.float32, requires_grad=True)
    spec: dict[str, Any] = {}
    flat = _Checkpoint.apply(function, preserve, kwargs, spec, dummy, *args)
    return _unpack(flat, spec)


def checkpoint_sequential(functions: Any, segments: int, input: Tensor,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Tensor:
    """Checkpoint a sequential model (an ``nn.Sequential`` or a list of modules) in
    ``segments`` chunks; the last chunk runs normally (as PyTorch).

    Example::

        y = checkpoint_sequential(nn.Sequential(*blocks), 2, x, use_reentrant=False)
    """
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant is None:
        warnings.warn("lucid.utils.checkpoint.checkpoint_sequential: the use_reentrant "
                      "parameter should be passed explicitly. use_reentrant=False is "
                      "recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True.", stacklevel=2)
        use_reentrant = True
    children = getattr(functions, "children", None)
    funcs: Sequence[Any] = list(children()) if callable(children) else list(functions)

    def run(start: int, end: int) -> Callable[[Tensor], Tensor]:
        def forward(x: Tensor) -> Tensor:
            for j in range(start, end + 1):
                x = funcs[j](x)
            return x
        return forward

    size = len(funcs) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(funcs) - 1)(input)
