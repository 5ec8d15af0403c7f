"""Views and in-place writes: lucid's aliasing semantics, in one module.

**Views.** An op whose output aliases its one tensor input (reshape/view, permute, expand,
basic indexing) subclasses ``ViewOp``. ``Op.apply`` hands its output to ``ViewOp.link``, which
makes it a view: it shares the input's version counter (``_vc``), points at the root tensor
(``_base``) and remembers the chain of view steps from the root (``_view_ops``, each
``(op class, args, params)``), so the view can be rebuilt from the root. A forward that had to
copy after all (reshape of a strided view) sets ``self.copied`` and gets no link, as in
PyTorch. ``detach()`` and ``.data`` are aliases: same array, same counter, no graph.

**Backends whose views are copies.** Under MLX a "view" holds its own array. Every such view
is remembered (weakly) by the array object of its root, so an in-place write to the root, to
an alias of it or to a sibling view is copied into every live view (``sync_views``): the user
sees shared memory either way.

**In-place writes.** ``inplace(t, fn)`` runs ``fn`` (an out-of-place op) and writes the result
into ``t``'s memory, bumping the version counter so a backward that saved the old values can
refuse to run. While a graph is recorded, ``fn`` runs on a copy that takes ``t``'s place in the
graph and ``t`` adopts the result's ``grad_fn``. On a view, the new values are written into
the root through ``ViewWrite`` (PyTorch's CopySlices): the root adopts that node, the view gets
a fresh node that reads it back, and every other live view of the root is re-pointed at it,
so gradients reach all of them. ``written(t)`` is the same bookkeeping for writes made outside
the graph (initialisers, in-place samplers). A fused node that reads an input torch's composed
ops would not save registers with ``keep_on_write``: it is handed a copy of the old values just
before such a write, which torch allows, instead of refusing to run backward.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from .. import _dtype
from .._tensor import Tensor, _make
from ..autograd import grad_mode
from ..autograd.function import Op
from ._util import cast

__all__ = ["ViewOp", "ViewWrite", "check_leaf", "inplace", "keep_on_write", "sync_views",
           "written"]

_grad_on = grad_mode._state

_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)
_READ_ONLY = (
    "cannot write into a tensor whose memory is read-only (a tensor made by from_numpy() or "
    "frombuffer() from a non-writable array shares that array's memory). Please clone() the "
    "tensor before performing the operation."
)


# ---- views --------------------------------------------------------------------------------------


class ViewOp(Op):
    """An op whose output aliases its one tensor input (see the module docstring).
    ``broadcasts`` marks a view in which several elements share one memory location
    (expand), which cannot be written through."""

    is_view = True
    copied = False  # set by a forward whose output had to be a copy after all
    broadcasts = False

    def link(self, t: Tensor, args: tuple, params: dict) -> None:
        """Make ``t`` (this op's output) a view of ``args[0]``."""
        if self.copied:
            return
        src = args[0]
        step = (type(self), args[1:], params)
        t._vc = src._vc
        base = src._base
        if base is not None:
            t._view_ops = src._view_ops + (step,)
        else:
            base = src
            t._view_ops = (step,)
        t._base = base
        if t._rg and base.grad_fn is not None:
            # an in-place op on the base (or another view) must renew this view's node
            views = base._views
            if views is None:
                views = base._views = []
            views.append(weakref.ref(t))
        if not self.be.views_share_memory:
            _copies.track(base._data, t)


class _CopyViews:
    """The live views of each array object, on backends whose views are copies; and, for each
    view's array, the view tensor holding it (so an alias of a view finds its chain)."""

    def __init__(self) -> None:
        self._views: dict[int, tuple[Any, list]] = {}
        self._owners: dict[int, tuple[Any, Any]] = {}

    def track(self, root: Any, view: Tensor) -> None:
        key = id(root)
        ent = self._views.get(key)
        if ent is None or ent[0]() is not root:
            ent = (weakref.ref(root, lambda _r, k=key: self._views.pop(k, None)), [])
            self._views[key] = ent
        refs = ent[1]
        refs.append(weakref.ref(view))
        arr = view._data
        k = id(arr)
        self._owners[k] = (weakref.ref(arr, lambda _r, k=k: self._owners.pop(k, None)),
                           weakref.ref(view))
        n = len(refs)
        if n >= 32 and not n & (n - 1):  # drop dead views as the list doubles
            refs[:] = [r for r in refs if r() is not None]

    def owner(self, arr: Any) -> Tensor | None:
        """The view tensor whose array object is ``arr`` (None if there is none)."""
        ent = self._owners.get(id(arr))
        if ent is None or ent[0]() is not arr:
            return None
        return ent[1]()

    def of(self, root: Any) -> list[Tensor]:
        """The live view tensors of the array object ``root``."""
        ent = self._views.get(id(root))
        if ent is None or ent[0]() is not root:
            return []
        return [v for v in (r() for r in ent[1]) if v is not None]


_copies = _CopyViews()


def sync_views(t: Tensor) -> None:
    """After ``t``'s values changed in place on a backend whose views are copies (MLX): write
    a view's values into its base, and give every live view of the base (or of an alias of
    it) its new values."""
    be = t._be
    if be.views_share_memory:
        return
    base, chain = t._base, t._view_ops
    if base is None:  # an alias (detach, .data) of a view holds the view's array object
        owner = _copies.owner(t._data)
        if owner is not None:
            base, chain = owner._base, owner._view_ops
    if base is not None:
        base._data = be.assign(base._data, _write_region(be, base._data, chain, t._data))
    else:
        base = t
    root = base._data  # aliases of the base hold the same array object
    for v in _copies.of(root):
        if v._data is not t._data and v._base is not None and v._base._data is root:
            v._data = be.assign(v._data, _view_of(be, root, v._view_ops))


def _view_of(be: Any, x: Any, chain: tuple) -> Any:
    """Replay a view chain on a backend array (each step's forward, no graph)."""
    for cls, args, params in chain:
        op = cls.__new__(cls)
        op.be = be
        op.parents = (None,) * (1 + len(args))
        x = op.forward(x, *args, **params)
    return x


def _replay(base: Tensor, chain: tuple) -> Tensor:
    """A view chain replayed on a tensor (recorded in the graph)."""
    v = base
    for cls, args, params in chain:
        v = cls.apply(v, *args, **params)
    return v


def _renew_views(base: Tensor, skip: Tensor | None) -> None:
    """Point every live view of ``base`` at its new node (PyTorch regenerates a view's
    grad_fn when its base changed in place)."""
    views, base._views = base._views, None  # replaying registers fresh views: not these
    alive = []
    for r in views or ():
        v = r()
        if v is None or v._base is not base:
            continue
        alive.append(r)
        if v is not skip and v._rg:
            v.grad_fn = _replay(base, v._view_ops).grad_fn
    base._views = alive


# ---- writing ------------------------------------------------------------------------------------


def _write_region(be: Any, base: Any, chain: tuple, value: Any) -> Any:
    """A copy of the array ``base`` with the region that ``chain`` selects set to ``value``."""
    out = be.copy(base)
    if be.views_share_memory:
        dst = _view_of(be, out, chain)
        if not be.shares_memory(dst, out):
            raise RuntimeError("in-place write through this view is not supported; clone() it "
                               "first")
        _assign(be, dst, value)
        return out
    if any(step[0].broadcasts for step in chain):
        raise RuntimeError(_OVERLAP)
    # no shared memory: find the view's elements in the base by replaying the chain on their
    # flat positions, then scatter the values there
    shape = tuple(base.shape)
    n = 1
    for s in shape:
        n *= s
    pos = _view_of(be, be.reshape(be.arange(0, n, 1, _dtype.int64), shape), chain)
    if not hasattr(value, "shape"):
        value = be.broadcast_to(be.asarray(value, be.dtype_of(base)), tuple(pos.shape))
    elif tuple(value.shape) != tuple(pos.shape):
        value = be.broadcast_to(value, tuple(pos.shape))
    flat = be.setitem(be.reshape(out, (n,)), be.reshape(pos, (-1,)), be.reshape(value, (-1,)))
    return be.reshape(flat, shape)


class ViewWrite(Op):
    """``base`` with the region that ``chain`` selects replaced by ``value``."""

    def forward(self, base, value, chain):
        self.chain = chain
        return _write_region(self.be, base, chain, value)

    def backward(self, g):
        be = self.be
        gb = gv = None
        if self.parents[0] is not None:
            gb = _write_region(be, g, self.chain, 0)
        if self.parents[1] is not None:
            gv = be.copy(_view_of(be, g, self.chain))
        return gb, gv


def check_leaf(t: Tensor) -> None:
    """Refuse an in-place write to a leaf that requires grad, or to a view of one."""
    if t.grad_fn is None and t._rg:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    base = t._base
    if base is not None and base._rg and base.grad_fn is None:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place "
            "operation."
        )


def _assign(be: Any, dst: Any, src: Any) -> Any:
    try:
        return be.assign(dst, src)
    except ValueError:  # a read-only broadcast (expanded) view, or read-only memory
        overlap = 0 in getattr(dst, "strides", ()) and dst.size > 1
        raise RuntimeError(_OVERLAP if overlap else _READ_ONLY) from None


def _check_result(r: Tensor, t: Tensor) -> None:
    """The result of an in-place op must fit its target's shape and dtype category."""
    rd, td = r.dtype, t.dtype
    if rd is not td and rd._cat > td._cat:
        raise RuntimeError(
            f"result type {_dtype.torch_name(rd)} can't be cast to the desired output type "
            f"{_dtype.torch_name(td)}"
        )
    if r._data.shape != t._data.shape:
        raise RuntimeError(
            f"output with shape {list(t.shape)} doesn't match the broadcast shape "
            f"{list(r.shape)}"
        )


def keep_on_write(fn: Op, i: int, slot: int) -> None:
    """Let node ``fn``, whose backward reads input ``i``'s array (``fn.saved[slot]``) where
    torch's composed ops save no such input (a fused cross-entropy reads its logits; torch
    keeps the log-softmax output), outlive an in-place write to that input: just before
    ``inplace`` or ``written`` writes into its memory (through any alias: views and detached
    tensors share its version counter), ``fn`` takes a copy of the old values and stops
    checking the input's version. A write made any other way still fails the version check
    in backward. The registrations ride on the version counter, after its count."""
    vc = fn._ins[i]._vc
    if len(vc) > 4:  # drop the nodes gone since
        vc[1:] = [k for k in vc[1:] if k[0]() is not None]
    vc.append((weakref.ref(fn), i, slot, vc[0]))


def _give_copies(t: Tensor) -> None:
    """Before a write into ``t``'s memory: hand every node registered by ``keep_on_write``
    on its version counter a copy of the array it saved (one not changed since)."""
    vc = t._vc
    if len(vc) == 1:
        return
    keep = vc[1:]
    del vc[1:]
    for ref, i, slot, version in keep:
        fn = ref()
        if fn is None or not fn.saved or fn._vcs is None or vc[0] != version:
            continue  # gone, released, or already written some other way (the check refuses)
        at = next((k for k, (c, v) in enumerate(fn._vcs) if c is vc and v == version), -1)
        if at < 0:
            continue
        src = fn._ins[i]
        copy = fn.be.copy(fn.saved[slot])
        fn.saved = (*fn.saved[:slot], copy, *fn.saved[slot + 1:])
        del fn._vcs[at]
        # create_graph reads the inputs themselves: give it the old values too
        fn._ins = (*fn._ins[:i], _make(copy, src._be, src._rg, src.grad_fn), *fn._ins[i + 1:])


def written(t: Tensor, data: Any = None) -> Tensor:
    """Record a write into ``t`` made outside the graph (``data``, when given, is assigned
    into its memory first): bump the version counter, keep copied views in step."""
    if data is not None:
        _give_copies(t)
        t._data = _assign(t._be, t._data, data)
    t._vc[0] += 1
    sync_views(t)
    return t


def inplace(t: Tensor, fn: Callable[[Tensor], Tensor], others: Any = ()) -> Tensor:
    """Run ``fn(t)`` (an out-of-place op) and write the result into ``t``; ``others`` are
    the op's other operands (a graph is recorded when any of them requires grad)."""
    if not (_grad_on.on and (t._rg or any(isinstance(o, Tensor) and o._rg for o in others))):
        r = fn(t)
        _check_result(r, t)
        return written(t, r._data)
    check_leaf(t)
    if t._base is not None:
        return _inplace_view(t, fn)
    be = t._be
    r = fn(_make(be.copy(t._data), be, t._rg, t.grad_fn))
    _check_result(r, t)
    _give_copies(t)
    t._data = _assign(be, t._data, r._data)
    t._vc[0] += 1
    if r.grad_fn is not None:
        t.grad_fn = r.grad_fn
        t._rg = True
        if t._views:
            _renew_views(t, None)
    sync_views(t)
    return t


def _inplace_view(t: Tensor, fn: Callable[[Tensor], Tensor]) -> Tensor:
    """``fn`` applied in place to the view ``t``, recorded as a write into its base."""
    be, base, chain = t._be, t._base, t._view_ops
    r = fn(_make(be.copy(t._data), be, t._rg, t.grad_fn))
    _check_result(r, t)
    r = cast(r, t.dtype)
    new = ViewWrite.apply(_make(be.copy(base._data), be, base._rg, base.grad_fn), r,
                          chain=chain)
    _give_copies(base)
    base._data = be.assign(base._data, new._data)  # the view sees the values through memory
    t._vc[0] += 1
    sync_views(base)  # ... or, where views are copies, is given them
    if new.grad_fn is not None:
        base.grad_fn = new.grad_fn
        base._rg = True
        t.grad_fn = _replay(base, chain).grad_fn  # the view, read back from the new base
        t._rg = True
        if base._views:
            _renew_views(base, t)
    return t
