"""Parametrizations of a module's parameters and buffers (``torch.nn.utils.parametrize``).

``register_parametrization(module, "weight", P)`` moves ``module.weight`` to
``module.parametrizations.weight.original`` and swaps the module's class for a subclass
``Parametrized<Name>`` whose ``weight`` is a property returning ``P(original)``. The
state_dict keys (``parametrizations.weight.original``) are PyTorch's, so a PyTorch
checkpoint of a parametrized model loads as is.

Example::

    import lucid.nn.utils.parametrize as P

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

    m = nn.Linear(5, 5)
    P.register_parametrization(m, "weight", Symmetric())
    lucid.allclose(m.weight, m.weight.mT)          # True
"""

from __future__ import annotations

import collections.abc
import copy
import copyreg
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..._tensor import Tensor
from ...autograd import no_grad
from ..module import Module
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor | None] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Inside this context each parametrized tensor is computed once, on first access, and
    reused until the (outermost) context exits.

    Example::

        with lucid.nn.utils.parametrize.cached():
            out = rnn(x)          # the parametrized recurrent weight is computed once
    """
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, X: Tensor) -> None:
    if isinstance(X, Parameter):
        module.register_parameter(name, X)
    else:
        module.register_buffer(name, X)


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    # as PyTorch's ``dest.set_(src)``: ``dest`` keeps its identity and takes ``src``'s values
    # (and shape), sharing its memory
    dest.data = src


class ParametrizationList(ModuleList):
    """The parametrizations registered on one tensor, with the original tensor(s): the type
    of ``module.parametrizations[tensor_name]``.

    When the first parametrization's ``right_inverse`` returns one tensor (or there is no
    ``right_inverse``), it is held under ``original``; when it returns a sequence, under
    ``original0``, ``original1``, ... Built by ``register_parametrization``; not meant to be
    instantiated by users.

    Example::

        m = nn.utils.parametrizations.weight_norm(nn.Linear(3, 4))
        m.parametrizations.weight.original0.shape     # lucid.Size([4, 1])
    """

    original: Tensor
    unsafe: bool

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False
                 ) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape = original.shape
        original_dtype = original.dtype
        with no_grad():
            new: Any = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, Tensor) and not isinstance(new, Sequence):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\n"
                    f"right_inverse(original).dtype: {new.dtype}")
            if original.device != new.device:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the device.\n"
                    f"original.device: {original.device}\n"
                    f"right_inverse(original).device: {new.device}")
            with no_grad():
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors "
                        "(list, tuple...). "
                        f"Got element {i} of the sequence with type {type(originali).__name__}.")
                if isinstance(original, Parameter):
                    originali = Parameter(originali, original.requires_grad)
                else:
                    originali = originali.detach()
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)
        if not self.unsafe:
            Z = self()
            if not isinstance(Z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(Z).__name__}.")
            if Z.dtype != original_dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized dtype: {original_dtype}\n"
                    f"parametrized dtype: {Z.dtype}")
            if Z.shape != original_shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized shape: {original_shape}\n"
                    f"parametrized shape: {Z.shape}")

    def right_inverse(self, value: Tensor) -> None:
        """Run the ``right_inverse`` of every parametrization, last registered first, and
        store the result in ``original`` (or ``original0``, ``original1``, ...).

        Example::

            m.parametrizations.weight.right_inverse(lucid.eye(4))   # same as m.weight = ...
        """
        with no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                        f"while `original` has dtype {self.original.dtype}")
                _maybe_set(self.original, value)
            else:
                if not isinstance(value, collections.abc.Sequence):
                    raise ValueError("'right_inverse' must return a sequence of tensors. "
                                     f"Got {type(value).__name__}.")
                if len(value) != self.ntensors:
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors of length "
                        f"{self.ntensors}. Got a sequence of length {len(value)}.")
                for i, t in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(t, Tensor):
                        raise ValueError(
                            "'right_inverse' must return a sequence of tensors. "
                            f"Got element {i} of type {type(t).__name__}.")
                    if original_i.dtype != t.dtype:
                        raise ValueError(
                            f"Tensor {i} returned by `right_inverse` has dtype {t.dtype} "
                            f"while `original{i}` has dtype {original_i.dtype}")
                    _maybe_set(original_i, t)

    def forward(self) -> Tensor:
        """The parametrized tensor: the parametrizations applied in registration order.

        Example::

            m.parametrizations.weight()       # the same values as m.weight
        """
        if self.is_tensor:
            x = self[0](self.original)
        else:
            originals = (getattr(self, f"original{i}") for i in range(self.ntensors))
            x = self[0](*originals)
        curr_idx = 1
        while str(curr_idx) in self._modules:
            x = self[curr_idx](x)
            curr_idx += 1
        return x


def _default_deepcopy(self: Module, memo: dict) -> Module:
    obj = memo.get(id(self), None)
    if obj is not None:
        return obj
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):  # type: ignore[attr-defined]
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _getstate(self: Module) -> Any:
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). See:\n"
        "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _inject_new_class(module: Module) -> None:
    """Swap the module's class for ``Parametrized<Name>``, a subclass that can hold
    properties."""
    cls = module.__class__
    dct: dict[str, Any] = {"__getstate__": _getstate}
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = _default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), dct)


def _inject_property(module: Module, tensor_name: str) -> None:
    """Make ``module.<tensor_name>`` a property computing the parametrization (read) and
    calling its ``right_inverse`` (write)."""
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_cached_parametrization(parametrization: ParametrizationList) -> Tensor:
        key = (id(module), tensor_name)
        t = _cache.get(key)
        if t is None:
            t = parametrization()
            _cache[key] = t
        return t

    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            return get_cached_parametrization(parametrization)
        return parametrization()

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def _check_consistent(module: Module, tensor_name: str, parametrization: Module) -> None:
    """PyTorch's checks when a further parametrization is chained on a parametrized
    tensor (``unsafe=False``)."""
    Y = getattr(module, tensor_name)
    X = parametrization(Y)
    if not isinstance(X, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(X).__name__}.")
    if X.dtype != Y.dtype:
        raise ValueError(
            "Registering a parametrization may not change the dtype of the tensor, unless the "
            "`unsafe` flag is enabled.\n"
            f"module.{tensor_name}.dtype: {Y.dtype}\n"
            f"parametrization(module.{tensor_name}).dtype: {X.dtype}")
    if X.shape != Y.shape:
        raise ValueError(
            "Registering a parametrization may not change the shape of the tensor, unless the "
            "`unsafe` flag is enabled.\n"
            f"module.{tensor_name}.shape: {Y.shape}\n"
            f"parametrization(module.{tensor_name}).shape: {X.shape}")
    if hasattr(parametrization, "right_inverse"):
        try:
            Z = parametrization.right_inverse(X)
        except NotImplementedError:
            return
        if not isinstance(Z, Tensor):
            raise ValueError("parametrization.right_inverse must return a tensor. Got: "
                             f"{type(Z).__name__}")
        if Z.dtype != Y.dtype:
            raise ValueError(
                "The tensor returned by parametrization.right_inverse must have the same dtype "
                f"as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                f"module.{tensor_name}.dtype: {Y.dtype}\n"
                f"returned dtype: {Z.dtype}")
        if Z.shape != Y.shape:
            raise ValueError(
                "The tensor returned by parametrization.right_inverse must have the same shape "
                f"as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                f"module.{tensor_name}.shape: {Y.shape}\n"
                f"returned shape: {Z.shape}")


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` return ``parametrization(original)``; returns ``module``.

    The first registration on a module swaps its class for ``Parametrized<Name>`` and adds a
    ``parametrizations`` ``ModuleDict``; the original tensor lives in
    ``module.parametrizations.<tensor_name>.original`` (or ``original0``, ``original1``, ...
    when ``right_inverse`` returns a sequence). Registering again on the same name chains
    the parametrizations. Assigning to ``module.<tensor_name>`` calls the ``right_inverse``
    methods. ``unsafe=True`` skips the dtype / shape consistency checks.

    Example::

        class Symmetric(nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).mT

        m = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
        list(m.state_dict())   # ['bias', 'parametrizations.weight.original']
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_consistent(module, tensor_name, parametrization)
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization on ``tensor_name`` (on any tensor when
    ``tensor_name`` is None).

    Example::

        P.is_parametrized(m, "weight")      # True
    """
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True
                            ) -> Module:
    """Remove the parametrizations on ``module.<tensor_name>``; returns ``module``.

    ``leave_parametrized=True`` keeps the current parametrized value (written into the
    original Parameter object, so optimizers stay valid); ``False`` restores the original
    tensor, which needs a single ``original``. The last removal restores the module's class.

    Example::

        P.remove_parametrizations(m, "weight")
        type(m).__name__             # 'Linear'
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                _maybe_set(original, t.detach())
    else:
        if leave_parametrized:
            t = getattr(module, tensor_name)
            original = Parameter(t) if t.requires_grad else t
        else:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                "parametrized in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization was registered (its class otherwise).

    Example::

        P.type_before_parametrizations(m)     # <class 'lucid.nn.Linear'>
    """
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register ``from_module``'s parametrizations (all, or those on ``tensor_name``) on
    ``to_module`` and make it share their original tensors; returns ``to_module``.

    Example::

        P.transfer_parametrizations_and_params(m, nn.Linear(3, 3))
    """
    if is_parametrized(from_module):
        names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
        for name in names:
            if not hasattr(to_module, name):
                setattr(to_module, name, Parameter(getattr(from_module, name)))
            for param_func in from_module.parametrizations[name]:
                register_parametrization(to_module, name, param_func)
            src = from_module.parametrizations[name]
            dst = to_module.parametrizations[name]
            if hasattr(src, "original"):
                dst.original = src.original
            else:
                num = 0
                while hasattr(src, f"original{num}"):
                    setattr(dst, f"original{num}", getattr(src, f"original{num}"))
                    num += 1
    return to_module
