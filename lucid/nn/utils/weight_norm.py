"""Weight normalisation through a forward pre-hook (``torch.nn.utils.weight_norm``, the
legacy form of ``parametrizations.weight_norm``): ``weight`` is replaced by the parameters
``weight_g`` (magnitude) and ``weight_v`` (direction) and recomputed before every forward."""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from ..._dims import norm_dim
from ..._tensor import Tensor
from ..module import Module
from ..modules.lazy import UninitializedParameter
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm", "norm_except_dim"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dim but ``dim``, kept as size-1 dims (``dim=-1``:
    the norm of the whole tensor, 0-d), as ``torch.norm_except_dim``.

    Example::

        norm_except_dim(lucid.randn(4, 3), 2, 0).shape      # lucid.Size([4, 1])
    """
    if dim == -1:
        # NOTE: reshaped so the 0-d result holds an array, not a numpy scalar (a Parameter
        # over a numpy scalar cannot be written in place by load_state_dict)
        return v.norm(pow).reshape(1).reshape(())
    d = norm_dim(dim, v.ndim)
    others = [i for i in range(v.ndim) if i != d]
    if not others:
        return v.abs() if pow != 0 else (v != 0).to(v.dtype)
    return v.norm(pow, dim=others, keepdim=True)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * (g / ||v||)``, the norm taken over every dim but ``dim`` (``torch._weight_norm``)."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook installed by ``weight_norm``: it recomputes
    ``module.<name> = g * v / ||v||`` from ``<name>_g`` and ``<name>_v``.

    Example::

        m = nn.utils.weight_norm(nn.Linear(3, 4))
        [h for h in m._forward_pre_hooks.values()]     # [<WeightNorm ...>]
    """

    name: str
    dim: int

    def __init__(self, name: str, dim: int | None) -> None:
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module: Module) -> Any:
        """``g * v / ||v||`` from the module's ``<name>_g`` and ``<name>_v``.

        Example::

            fn.compute_weight(m)
        """
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        """Install weight normalisation of ``module.<name>``; returns the hook.

        Example::

            WeightNorm.apply(m, "weight", 0)
        """
        warnings.warn("`lucid.nn.utils.weight_norm` is deprecated in favor of "
                      "`lucid.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        """Fold ``g`` and ``v`` back into one Parameter ``module.<name>``.

        Example::

            fn.remove(m)
        """
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


T_module = TypeVar("T_module", bound=Module)


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Reparametrise ``module.<name>`` as ``g * v / ||v||`` with new parameters
    ``<name>_g`` and ``<name>_v`` (the norm over every dim but ``dim``; ``dim=None``: over the
    whole tensor); a forward pre-hook recomputes the weight. Deprecated (FutureWarning) in
    favour of ``parametrizations.weight_norm``, as in PyTorch.

    Example::

        m = nn.utils.weight_norm(nn.Linear(20, 40), name="weight")
        m.weight_g.shape, m.weight_v.shape     # (lucid.Size([40, 1]), lucid.Size([40, 20]))
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo ``weight_norm``: ``module.<name>`` becomes one Parameter again.

    Example::

        nn.utils.remove_weight_norm(m)
    """
    remove_norm_hook(module, WeightNorm, name, "weight_norm")
    return module


def remove_norm_hook(module: Module, hook_type: type, name: str, what: str) -> None:
    """Remove the ``hook_type`` forward pre-hook that recomputes ``module.<name>`` (restoring
    the plain parameter); ValueError naming ``what`` when there is none."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, hook_type) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return
    raise ValueError(f"{what} of '{name}' not found in {module}")
