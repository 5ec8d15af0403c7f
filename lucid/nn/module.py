"""``Module``: the base class of every layer and model.

A module finds its state by assignment: a ``Parameter``, a ``Buffer`` or a ``Module``
assigned to an attribute lands in ``_parameters``, ``_buffers`` or ``_modules``, and those
three registries are the one source of truth for iteration, ``state_dict``, ``to()`` and
``repr``. This file holds the class, registration, attribute routing, modes and ``repr``;
the rest lives in one mixin per concern, each in a file named for it:

    module_traversal.py        children / modules / named_* / get_submodule ...
    module_hooks.py            register_*_hook, ``__call__``, RemovableHandle
    module_state_dict.py       state_dict / load_state_dict and their hooks
    module_state_dict_load.py  reading checkpoint values, the staged (atomic) load
    module_to.py               _apply / to / cpu / gpu / float / double / half / type
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from .._tensor import Tensor
from ..ops.legacy import typename
from ._util import addindent
from .module_hooks import _ModuleHooks
from .module_state_dict import _ModuleStateDict
from .module_to import _ModuleTo
from .module_traversal import _ModuleTraversal
from .parameter import Buffer, Parameter

__all__ = ["Module"]

T = TypeVar("T", bound="Module")

_HOOK_DICTS = (
    "_backward_pre_hooks", "_backward_hooks", "_forward_hooks", "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called", "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
    "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
    "_load_state_dict_post_hooks",
)


def _forward_unimplemented(self: Module, *input: Any) -> None:
    """Define the computation performed at every call; every subclass overrides it."""
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function'
    )


class Module(_ModuleTraversal, _ModuleHooks, _ModuleStateDict, _ModuleTo):
    """Base class for all neural network modules.

    Subclasses call ``super().__init__()`` first, then assign parameters, buffers and
    submodules as attributes, and define ``forward``. Call the module (``model(x)``), not
    ``forward``, so that hooks run.

    Example::

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(4, 8)
                self.fc2 = nn.Linear(8, 2)

            def forward(self, x):
                return self.fc2(self.fc1(x).relu())

        net = Net()
        out = net(lucid.randn(3, 4))
    """

    _version: int = 1
    training: bool
    call_super_init: bool = False
    # Attribute names this module leaves out of its state_dict (and so neither saves nor
    # expects on load). PyTorch has no such attribute; subclasses set it to opt names out.
    _state_dict_pass_attr: frozenset[str] | tuple[str, ...] = frozenset()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.call_super_init is False and kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'"
            )
        if self.call_super_init is False and args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_is_full_backward_hook"] = None
        for name in _HOOK_DICTS:
            d[name] = OrderedDict()
        d["_modules"] = {}
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward: Callable[..., Any] = _forward_unimplemented

    # ---- registration ----------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True
                        ) -> None:
        """Add a buffer: module state that is not a parameter (e.g. a running mean).

        ``persistent=False`` keeps it out of ``state_dict``. ``None`` reserves the name.

        Example::

            self.register_buffer("running_mean", lucid.zeros(8))
        """
        self._check_new_name("buffer", "_buffers", name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                "(lucid Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter under ``name`` (``None`` reserves the name, e.g. a missing bias).

        Example::

            self.register_parameter("bias", None)
        """
        self._check_new_name("parameter", "_parameters", name)
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{typename(param)}' object to parameter '{name}' "
                "(lucid.nn.Parameter or None required)"
            )
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                f"be created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        else:
            self._parameters[name] = param

    def _check_new_name(self, kind: str, registry: str, name: Any) -> None:
        """PyTorch's checks on a name given to ``register_buffer`` / ``register_parameter``."""
        if registry not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in self.__dict__[registry]:
            raise KeyError(f"attribute '{name}' already exists")

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name``.

        Example::

            self.add_module("fc", nn.Linear(4, 2))
        """
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if "_modules" not in self.__dict__:
            raise AttributeError("cannot assign module before Module.__init__() call")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias of ``add_module``.

        Example::

            self.register_module("fc", nn.Linear(4, 2))
        """
        self.add_module(name, module)

    # ---- attribute routing -----------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        r = d.get("_parameters")
        if r is not None and name in r:
            return r[name]
        r = d.get("_buffers")
        if r is not None and name in r:
            return r[name]
        r = d.get("_modules")
        if r is not None and name in r:
            return r[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(name, d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as parameter '{name}' "
                    "(lucid.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(name, d, self._parameters, self._buffers,
                         self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as child module '{name}' "
                    "(lucid.nn.Module or None expected)"
                )
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{typename(value)}' as buffer '{name}' "
                    "(lucid.nn.Buffer, lucid.Tensor or None expected)"
                )
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            self.__dict__.setdefault(name, OrderedDict())
        self.__dict__.setdefault("_non_persistent_buffers_set", set())
        self.__dict__.setdefault("_is_full_backward_hook", None)

    # ---- modes and grads ------------------------------------------------------------------
    def train(self: T, mode: bool = True) -> T:
        """Set training mode (``False``: evaluation mode) here and in every descendant.

        Example::

            net.train(); net.eval()
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self: T) -> T:
        """``train(False)``.

        Example::

            net.eval()
        """
        return self.train(False)

    def requires_grad_(self: T, requires_grad: bool = True) -> T:
        """Set ``requires_grad`` on every parameter (e.g. to freeze part of a model).

        Example::

            net.encoder.requires_grad_(False)
        """
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter: to None (default) or to zeros in place.

        Example::

            net.zero_grad()
        """
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def apply(self: T, fn: Callable[[Module], None]) -> T:
        """Call ``fn`` on every submodule (children first, post-order) and then on self.

        Example::

            net.apply(lambda m: nn.init.zeros_(m.bias) if isinstance(m, nn.Linear) else None)
        """
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- printing -------------------------------------------------------------------------
    def _get_name(self) -> str:
        return self.__class__.__name__

    def extra_repr(self) -> str:
        """The part of ``repr`` inside the parentheses; override in subclasses.

        Example::

            def extra_repr(self):
                return f"in_features={self.in_features}"
        """
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            "(" + key + "): " + addindent(repr(m), 2) for key, m in self._modules.items()
        ]
        lines = extra_lines + child_lines
        s = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                s += extra_lines[0]
            else:
                s += "\n  " + "\n  ".join(lines) + "\n"
        return s + ")"

    def __dir__(self) -> list[str]:
        keys = (dir(self.__class__) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        return sorted(k for k in keys if not k[0].isdigit())


def _remove_from(name: str, *dicts_or_sets: Any) -> None:
    for d in dicts_or_sets:
        if name in d:
            if isinstance(d, dict):
                del d[name]
            else:
                d.discard(name)
