"""``Optimizer``: parameter groups, per-parameter state, state_dict — as ``torch.optim.Optimizer``.

``Optimizer.step`` owns the loop over groups and parameters; each optimizer defines only its
per-parameter rule (``apply_single``, as MLX's ``Optimizer.apply_single``), which calls one
backend update method (``p._be.adam_update(...)``, ...): the backend updates the arrays in
place where it can and returns them, so the same Python code serves every device.
"""

from __future__ import annotations

import copy
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

import numpy as np

from .. import _dtype
from .._convert import to_array
from .._tensor import Tensor, _make
from ..autograd import enable_grad
from ..backend import get_backend

__all__ = ["Optimizer", "required"]

StateDict = dict[str, Any]


class _RequiredParameter:
    """Singleton marking an option a parameter group must specify (as ``torch.optim.required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


class _Handle:
    """Returned by the ``register_*_hook`` methods; ``remove()`` unregisters the hook."""

    _next = 0

    def __init__(self, hooks: OrderedDict) -> None:
        self._hooks = hooks
        self.id = _Handle._next
        _Handle._next += 1

    def remove(self) -> None:
        self._hooks.pop(self.id, None)


def _scalar_dtype() -> _dtype.dtype:
    # torch: float64 step counters when the default dtype is float64, else float32
    return _dtype.float64 if _dtype.get_default_dtype() is _dtype.float64 else _dtype.float32


def scalar_tensor(value: float) -> Tensor:
    """A 0-d host ("cpu") tensor of the optimizer scalar dtype, as torch's ``state["step"]``."""
    d = _scalar_dtype()
    be = get_backend("cpu")
    return _make(be.from_numpy(np.array(value, dtype=d.np)), be, False, None)


def bump(t: Tensor) -> float:
    """``t += 1`` in place for a 0-d state tensor; returns the new value as a float."""
    a = t._data
    t._vc[0] += 1
    if isinstance(a, np.ndarray):
        # NOTE: not ``a += 1``: a ufunc on a 0-d array costs ~4 us here, this ~0.3 us; the
        # double sum is exact, so the stored value is the same correctly rounded one
        a[()] = float(a) + 1.0
        return float(a)
    t._data = t._be.assign(a, t._be.add(a, 1))
    return float(t._be.item(t._data))


def set_scalar(t: Tensor, value: float) -> float:
    """``t.fill_(value)`` for a 0-d host state tensor (rounded to its dtype); returns the
    stored value as a float."""
    a = t._data
    t._vc[0] += 1
    a[()] = value
    return float(a)


def zeros_state(p: Tensor, fill: float = 0.0) -> Tensor:
    """A C-contiguous tensor shaped and typed like ``p``, filled with ``fill``."""
    be = p._be
    d = be.dtype_of(p._data)
    data = be.zeros(p._data.shape, d) if fill == 0 else be.full(p._data.shape, fill, d)
    return _make(data, be, False, None)


def moment_group(group: dict[str, Any]) -> tuple[float, float, float, float, float]:
    """``(lr, beta1, beta2, decay, l2)`` of an Adam-family group: with
    ``decoupled_weight_decay`` the parameter is multiplied by ``decay = 1 - lr*wd``;
    otherwise ``l2 = wd`` and ``l2 * p`` is added to the gradient."""
    lr = float(group["lr"])
    beta1, beta2 = (float(b) for b in group["betas"])
    wd = group["weight_decay"]
    if group["decoupled_weight_decay"]:
        return lr, beta1, beta2, (1.0 - lr * wd if wd != 0 else 1.0), 0.0
    return lr, beta1, beta2, 1.0, wd


def init_moments(state: dict[str, Any], param: Tensor) -> None:
    """``step`` (0), ``exp_avg`` and ``exp_avg_sq`` (zeros like ``param``), in this order
    (the state_dict's, as PyTorch's Adam and RAdam)."""
    state["step"] = scalar_tensor(0.0)
    state["exp_avg"] = zeros_state(param)
    state["exp_avg_sq"] = zeros_state(param)


def _typename(obj: Any) -> str:
    t = type(obj)
    return f"{t.__module__}.{t.__qualname__}" if t.__module__ != "builtins" else t.__qualname__


def _to_state(param: Tensor, value: Any, keep_dtype: bool) -> Tensor:
    """A fresh copy of a state tensor (lucid, numpy or torch) on param's device, cast to a
    floating param's dtype (integer state too, as PyTorch's load_state_dict does) unless
    ``keep_dtype`` (the step counters)."""
    dt = None  # numpy arrays and torch tensors keep their dtype, as lucid tensors do
    if not keep_dtype and param.dtype.is_floating_point and getattr(
            value, "dtype", None) is not None and not _is_complex(value):
        dt = param.dtype
    be = get_backend("cpu") if keep_dtype else param._be
    return _make(to_array(value, dt, be), be, False, None)


def _is_complex(value: Any) -> bool:
    dt = value.dtype
    return bool(dt.is_complex) if hasattr(dt, "is_complex") else \
        np.issubdtype(np.dtype(dt), np.complexfloating)


def check_flags(defaults: dict[str, Any]) -> None:
    """The implementation switches PyTorch offers; lucid runs one fused kernel regardless."""
    if defaults.get("fused") and defaults.get("foreach"):
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if defaults.get("differentiable"):
        raise NotImplementedError("differentiable=True (autograd through the optimizer step) "
                                  "is not supported by lucid optimizers")
    if defaults.get("capturable"):
        raise NotImplementedError("capturable=True (graph capture) is not supported by lucid "
                                  "optimizers")


def check_lr_tensor(lr: Any) -> None:
    """PyTorch's check that a Tensor learning rate holds one element."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def check_range(lr: float, eps: float | None = None, betas: tuple | None = None,
                weight_decay: float | None = None) -> None:
    """PyTorch's constructor checks, with its messages."""
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if eps is not None and not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if betas is not None:
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if weight_decay is not None and not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Optimizer:
    """Base class of all optimizers, as ``torch.optim.Optimizer``.

    ``params`` is an iterable of Parameters (or ``(name, Parameter)`` pairs), or of dicts
    that each define a parameter group with its own options; ``defaults`` fills in the
    options a group leaves out. ``state`` maps each parameter to its state dict.

    lucid differs from PyTorch in one place: ``load_state_dict`` always copies the state
    tensors, so an optimizer never shares buffers with the dict it was loaded from.

    Example::

        opt = lucid.optim.SGD([{"params": net[0].parameters()},
                               {"params": net[2].parameters(), "lr": 1e-3}],
                              lr=1e-2, momentum=0.9)
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
    """

    # state entries kept as host scalars of their own dtype on load (as torch's "step")
    _scalar_state: tuple[str, ...] = ("step",)

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict[int, Callable] = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                "dicts, but got " + _typename(params)
            )
        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())
        for group in self.param_groups:  # options a saved group predates
            for k, v in self.defaults.items():
                if v is not required:
                    group.setdefault(k, v)

    def __repr__(self) -> str:
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # ---- groups -----------------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (the others come from ``defaults``).

        Example::

            opt.add_param_group({"params": head.parameters(), "lr": 1e-4})
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list "
                "instead."
            )
        else:
            params = list(params)
        tensors, names = [], []
        for item in params:
            if isinstance(item, tuple):
                names.append(item[0])
                tensors.append(item[1])
            else:
                tensors.append(item)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params "
                                "is " + _typename(p))
            if not self.defaults.get("differentiable", None) and not (
                    p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        ids = {id(p) for p in tensors}
        if len(ids) != len(tensors):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error", stacklevel=3)
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {txt} to the optimizer")
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ---- gradients and steps ----------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized parameters: to None (default) or to zeros.

        Example::

            opt.zero_grad()           # p.grad is None for every parameter
        """
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; returns the closure's loss, if any.

        ``closure`` re-evaluates the model and returns the loss (it runs with gradients
        enabled). The loop is the same for every optimizer: run the step pre-hooks and the
        closure; per group, read the hyper-parameters once (``prepare_group``); per parameter
        with a gradient, create its state when empty (``init_state``), apply the update rule
        (``apply_single``) and adopt the arrays it returns; then run the step post-hooks.

        Example::

            opt.step()
            loss = opt.step(lambda: loss_fn(net(x), y))   # closure re-evaluates the loss
        """
        if type(self).apply_single is Optimizer.apply_single:
            raise NotImplementedError
        for hook in list(self._optimizer_step_pre_hooks.values()):
            hook(self, (), {})
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        state = self.state
        init = self.init_state
        apply = self.apply_single
        for group in self.param_groups:
            hyper = self.prepare_group(group)
            stateful = self.has_state(group)
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                st = None
                if stateful:
                    st = state[p]
                    if not st:
                        init(st, p, group)
                tensors, arrays = apply(g, p, st, hyper)
                # adopt the results: identities stay, so references held elsewhere stay valid
                for t, a in zip(tensors, arrays):
                    if t is not None:
                        t._data = a
                        t._vc[0] += 1
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, (), {})
        return loss

    # ---- what each optimizer defines --------------------------------------------------------
    def prepare_group(self, group: dict[str, Any]) -> Any:
        """The group's hyper-parameters as ``apply_single`` reads them, computed once per
        group and step (the group itself unless an optimizer overrides it)."""
        return group

    def has_state(self, group: dict[str, Any]) -> bool:
        """Whether the parameters of ``group`` keep per-parameter state (SGD without
        momentum keeps none, as in PyTorch)."""
        return True

    def init_state(self, state: dict[str, Any], param: Tensor, group: dict[str, Any]) -> None:
        """Fill the empty ``state`` of ``param`` before its first update (nothing by default)."""

    def apply_single(self, grad: Tensor, param: Tensor, state: dict[str, Any] | None,
                     hyper: Any) -> tuple[tuple[Tensor | None, ...], tuple[Any, ...]]:
        """The update rule for one parameter: given its gradient, its state and the group's
        ``hyper`` (from ``prepare_group``), return the tensors it updates (``param`` first,
        then its state tensors, None where unused) and their new arrays in the same order,
        as the backend's ``*_update`` method returns them. ``step`` adopts the arrays.

        Example::

            def apply_single(self, grad, param, state, hyper):
                lr, maximize = hyper
                buf = state["buf"]
                return (param, buf), param._be.my_update(param._data, grad._data, buf._data,
                                                         lr=lr, maximize=maximize)
        """
        raise NotImplementedError

    def register_step_pre_hook(self, hook: Callable[..., None]) -> _Handle:
        """Call ``hook(optimizer, args, kwargs)`` before every ``step``; returns a handle."""
        h = _Handle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[h.id] = hook
        return h

    def register_step_post_hook(self, hook: Callable[..., None]) -> _Handle:
        """Call ``hook(optimizer, args, kwargs)`` after every ``step``; returns a handle."""
        h = _Handle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[h.id] = hook
        return h

    # ---- state_dict -------------------------------------------------------------------------
    def state_dict(self) -> StateDict:
        """The optimizer's state in PyTorch's layout: ``{"state": {index: {...}},
        "param_groups": [{..., "params": [indices]}]}``, parameters numbered in group order.
        State tensors are referenced, not copied.

        Example::

            lucid.save({"model": net.state_dict(), "optim": opt.state_dict()}, "ckpt")
        """
        mapping: dict[int, int] = {}
        start = 0

        def pack(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Load what ``state_dict`` returned (also after ``lucid.save``/``lucid.load``, and
        PyTorch's layout with numpy or torch tensors). Group count and sizes must match;
        state tensors are copied to each parameter's device and floating dtype (the step
        counters keep theirs). Nothing changes if loading fails.

        Example::

            opt.load_state_dict(lucid.load("ckpt")["optim"])
        """
        state_dict = dict(state_dict)
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        scalar_keys = self._scalar_state

        def cast(param: Tensor, value: Any, key: Any = None) -> Any:
            if isinstance(value, Tensor) or hasattr(value, "__array__") and \
                    hasattr(value, "shape") and not isinstance(value, (str, bytes)):
                return _to_state(param, value, key in scalar_keys)
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state: defaultdict[Any, Any] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v
        for param, st in state.items():
            if isinstance(param, Tensor):
                for key in scalar_keys:
                    if key in st and not isinstance(st[key], Tensor):
                        st[key] = scalar_tensor(float(st[key]))

        def update_group(group: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
            new["params"] = group["params"]
            if "param_names" in group and "param_names" not in new:
                new["param_names"] = group["param_names"]
            return new

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
