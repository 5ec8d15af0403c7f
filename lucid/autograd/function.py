"""``Op``: the base of every differentiable op (forward and backward in one class), and the
public ``Function`` for user-defined ops written with tensors, as in PyTorch.

An ``Op`` instance is both the context of one call and the graph node it leaves behind.
``forward`` and ``backward`` work on backend arrays through ``self.be`` (never on a device
directly), so one backward serves every device.
"""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor, _make, _RemovableHandle
from . import grad_mode
from .anomaly_mode import _state as _anomaly
from .anomaly_mode import forward_stack

__all__ = ["Op", "Function", "FunctionCtx", "also_saved"]

_grad_on = grad_mode._state


def _device_mismatch(a: Any, b: Any) -> None:
    raise RuntimeError(
        "Expected all tensors to be on the same device, but found at least two devices, "
        f"{a.name} and {b.name}!"
    )


class Op:
    """One differentiable op. Subclasses define ``forward(*arrays, **params) -> array`` and
    ``backward(grad) -> grad or tuple of grads`` (one per positional input, None allowed).

    Tensor inputs arrive in ``forward`` as backend arrays; other positional inputs (Python
    numbers, index tuples) arrive as they are and never receive a gradient. ``self.parents``
    is set before ``forward`` runs (None where no gradient is wanted), so a forward can save
    only what the wanted gradients need. Arrays that the backward needs go in ``self.saved``
    (a tuple); backward checks that no input or output saved there (by identity) was changed
    in place since. An op that saves anything also has its integer and bool tensor inputs
    (indices, targets, masks) covered by that check, however it keeps them: a backward that
    read an edited index would compute wrong gradients or read out of bounds. Ops that read
    an index in backward therefore list it in ``saved``. ``saves_output`` marks ops whose
    backward uses a view of the output that is not itself in ``saved``. ``is_view`` marks
    ops whose output aliases their one tensor input: they subclass
    ``lucid.ops.views.ViewOp``, whose ``link`` makes the output a view.

    ``scatters`` marks ops whose input gradient is ``grad`` written into one region of zeros
    of the input's shape (a slice of a tensor); they define ``grad_shape`` and
    ``scatter_into(buf, grad, fresh) -> buf`` (write, or add when not ``fresh``). The engine
    then writes the gradients of several slices of one tensor (``split``, ``chunk``,
    ``q, k, v = x[..., 0], ...``) into one buffer instead of one zero-padded array per slice
    summed afterwards.
    """

    saved: tuple = ()
    saves_output = False
    is_view = False
    scatters = False
    _released = False
    _hooks: list | None = None
    _retain: Any = None
    _vcs: Any = None
    _ins: Any = None  # the positional inputs, kept by ops that save (create_graph needs them)
    _oslot = -1  # where the output sits in ``saved``, if it does

    @classmethod
    def apply(cls, *args: Any, **params: Any) -> Tensor:
        fn = cls.__new__(cls)
        be = None
        datas = []
        parents = []
        need = False
        held = None  # tensors that need no gradient: integer ones are covered below
        for a in args:
            if isinstance(a, Tensor):
                if be is None:
                    be = a._be
                elif a._be is not be:
                    _device_mismatch(be, a._be)
                datas.append(a._data)
                if a._rg:
                    need = True
                    parents.append(a.grad_fn or a)
                else:
                    parents.append(None)
                    if held is None:
                        held = [a]
                    else:
                        held.append(a)
            else:
                datas.append(a)
                parents.append(None)
        fn.be = be
        fn.parents = parents
        out = fn.forward(*datas, **params)
        if need and _grad_on.on:
            t = _make(out, be, True, fn)
            if fn.saved:
                _record_versions(fn, args, held, out, t)
            if _anomaly.on:
                fn._anomaly_trace = forward_stack()
        else:
            t = _make(out, be, False, None)
        if cls.is_view:
            fn.link(t, args, params)
        return t

    @property
    def needs_input_grad(self) -> tuple[bool, ...]:
        return tuple(p is not None for p in self.parents)

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        return tuple(
            (p if isinstance(p, Op) or p is None else _AccumulateGrad(p), 0) for p in self.parents
        )

    @classmethod
    def name(cls) -> str:
        return f"{cls.__name__}Backward0"

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"

    def register_hook(self, hook: Any) -> Any:
        if self._hooks is None:
            self._hooks = []
        return _RemovableHandle(self._hooks, hook)

    def forward(self, *args: Any, **params: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def backward(self, grad: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


def _record_versions(fn: Op, args: tuple, held: list | None, out: Any, t: Tensor) -> None:
    """Remember what the backward reads: the versions it must find unchanged (inputs and the
    output kept in ``fn.saved``, by identity, and every integer or bool input: indices,
    targets, masks), the inputs themselves and the output's slot in ``saved`` (create_graph
    turns saved arrays back into the Tensors they came from)."""
    be, saved = fn.be, fn.saved
    fn._ins = args
    vcs = [] if held is None else [(a._vc, a._vc[0]) for a in held
                                   if not be.dtype_of(a._data).is_floating_point]
    for a in args:
        if isinstance(a, Tensor):
            d = a._data
            for s in saved:
                if s is d:
                    vcs.append((a._vc, a._vc[0]))
                    break
    for i, s in enumerate(saved):
        if s is out:
            fn._oslot = i
            break
    if fn._oslot >= 0 or type(fn).saves_output:
        vcs.append((t._vc, 0))
    fn._vcs = vcs


def also_saved(out: Tensor, extra: Tensor) -> Tensor:
    """Cover ``extra``, a tensor returned beside ``out`` that ``out``'s backward reads (the
    indices of a max pool), by the version check; returns ``extra``."""
    fn = out.grad_fn
    if fn is not None and fn._vcs is not None:
        fn._vcs.append((extra._vc, extra._vc[0]))
    elif fn is not None:
        fn._vcs = [(extra._vc, extra._vc[0])]
    return extra


class _AccumulateGrad:
    """Stand-in node shown by ``next_functions`` for a leaf that accumulates ``.grad``."""

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    @classmethod
    def name(cls) -> str:
        return "AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {hex(id(self))}>"


class FunctionCtx:
    """The ``ctx`` of a user-defined ``Function``."""

    def __init__(self) -> None:
        self.saved_tensors: tuple[Tensor, ...] = ()
        self.needs_input_grad: tuple[bool, ...] = ()
        self._non_differentiable: set[int] = set()

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        self.saved_tensors = tensors  # type: ignore[assignment]

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors: Tensor) -> None:
        pass

    def set_materialize_grads(self, value: bool) -> None:
        pass


def typename(obj: Any) -> str:
    """A Python object's type as CPython names it in messages: ``str``, ``numpy.ndarray``, a
    class defined in Python by its bare name."""
    tp = type(obj)
    if tp.__flags__ & (1 << 9) or tp.__module__ == "builtins":  # Py_TPFLAGS_HEAPTYPE
        return tp.__name__
    return f"{tp.__module__}.{tp.__name__}"


def _expandable(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``to`` (a gradient of shape ``to`` sums back)."""
    return len(shape) <= len(to) and all(
        n == m or n == 1 for n, m in zip(reversed(shape), reversed(to)))


def _sum_to(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    lead = g.ndim - len(shape)
    gs = tuple(g.shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and gs[lead + i] != 1)
    if axes:
        g = g.sum(axes, keepdim=True)  # type: ignore[attr-defined]
    return g.reshape(shape)  # type: ignore[attr-defined]


class _UserFunctionOp(Op):
    def forward(self, *datas: Any, fcls: Any, targs: tuple) -> Any:  # type: ignore[override]
        ctx = FunctionCtx()
        self.metas = tuple((tuple(a._data.shape), a.dtype, a._be)
                           if isinstance(a, Tensor) else None for a in targs)
        ctx.needs_input_grad = tuple(
            isinstance(a, Tensor) and a.requires_grad for a in targs
        )
        with grad_mode.no_grad():
            out = fcls.forward(ctx, *targs)
        if not isinstance(out, Tensor):
            raise TypeError(f"{fcls.__name__}.forward must return a single Tensor")
        self.ctx, self.fcls, self.nargs = ctx, fcls, len(targs)
        # the saved tensors' arrays: their versions are checked before backward
        self.saved = tuple(t._data for t in ctx.saved_tensors if isinstance(t, Tensor))
        return out._data

    def backward(self, g: Any) -> Any:
        with grad_mode.no_grad():
            grads = self._checked(self.fcls.backward(self.ctx, _make(g, self.be, False, None)))
        return tuple(None if gr is None else gr._data for gr in grads)

    def _checked(self, grads: Any) -> tuple:
        if not isinstance(grads, tuple):
            grads = (grads,)
        if len(grads) != self.nargs:
            raise RuntimeError(
                f"function {self.fcls.__name__}Backward returned an incorrect number of "
                f"gradients (expected {self.nargs}, got {len(grads)})"
            )
        return tuple(self._valid(i, gr, meta) for i, (gr, meta) in
                     enumerate(zip(grads, self.metas)))

    def _valid(self, i: int, gr: Any, meta: Any) -> Any:
        """PyTorch's checks of one returned gradient: a Tensor (or None) for a tensor input,
        on its device, of its shape or one that sums to it; cast to its dtype."""
        if gr is None:
            return None
        name = f"{self.fcls.__name__}Backward"
        if meta is None:
            raise RuntimeError(
                f"function {name} returned a gradient different than None at position {i + 1}, "
                "but the corresponding forward input was not a Variable")
        if not isinstance(gr, Tensor):
            raise RuntimeError(f"expected Variable or None (got {typename(gr)})")
        shape, dtype, be = meta
        if gr._be is not be:
            raise RuntimeError(f"Function {name} returned an invalid gradient at index {i} - "
                               f"expected device {be.name} but got {gr._be.name}")
        gs = tuple(gr.shape)
        if gs != shape:
            if not _expandable(shape, gs):
                raise RuntimeError(
                    f"Function {name} returned an invalid gradient at index {i} - got "
                    f"{list(gs)} but expected shape compatible with {list(shape)}")
            gr = _sum_to(gr, shape)
        if gr.dtype is not dtype:
            gr = gr.to(dtype)  # type: ignore[attr-defined]
        return gr

    def graph_backward(self, g: Tensor, saved: tuple = ()) -> Any:
        """create_graph: the user's backward runs with grad mode on over the saved tensors,
        so it is recorded like any other computation (as in torch)."""
        with grad_mode.enable_grad():
            return self._checked(self.fcls.backward(self.ctx, g))

    def name(self) -> str:  # type: ignore[override]
        return f"{self.fcls.__name__}Backward"


class Function:
    """Base class for user-defined differentiable functions, as ``torch.autograd.Function``.

    Example::

        class Square(lucid.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return 2 * x * grad

        y = Square.apply(x)
    """

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        raise NotImplementedError

    @classmethod
    def apply(cls, *args: Any) -> Tensor:
        return _UserFunctionOp.apply(*args, fcls=cls, targs=args)
