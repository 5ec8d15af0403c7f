"""Spectral normalisation through a forward pre-hook (``torch.nn.utils.spectral_norm``, the
legacy form of ``parametrizations.spectral_norm``): ``weight`` becomes ``weight_orig /
sigma``, ``sigma`` estimated by power iteration with the buffers ``weight_u`` and
``weight_v``."""

from __future__ import annotations

from typing import Any, TypeVar

from ..._tensor import Tensor
from ...autograd import no_grad
from ...ops.linalg_misc import multi_dot, pinv
from ...ops.matmul import mv
from ...ops.normalization import normalize
from ..module import Module
from ..modules.conv import _ConvTransposeNd
from ..modules.lazy import UninitializedParameter
from ..parameter import Parameter
from .weight_norm import remove_norm_hook

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook installed by ``spectral_norm``: it sets ``module.<name>`` to
    ``<name>_orig / sigma``, running ``n_power_iterations`` steps of power iteration on
    ``<name>_u`` / ``<name>_v`` first when the module is training.

    Example::

        m = nn.utils.spectral_norm(nn.Linear(3, 4))
        m.weight_u.shape, m.weight_v.shape     # (lucid.Size([4]), lucid.Size([3]))
    """

    _version: int = 1
    name: str
    dim: int
    n_power_iterations: int
    eps: float

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        """``weight`` with ``dim`` moved first and the rest flattened: ``(size(dim), -1)``.

        Example::

            fn.reshape_weight_to_matrix(conv.weight_orig).shape
        """
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(
                self.dim, *[d for d in range(weight_mat.dim()) if d != self.dim])
        height = weight_mat.size(0)
        return weight_mat.reshape(height, -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        """``<name>_orig / sigma`` with ``sigma = u . (W v)``; updates ``u`` and ``v`` in
        place first when ``do_power_iteration``.

        Example::

            fn.compute_weight(m, do_power_iteration=False)
        """
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v = normalize(mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = normalize(mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                u = u.clone()
                v = v.clone()
        sigma = u.dot(mv(weight_mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        """Fold the normalised weight back into one Parameter ``module.<name>``.

        Example::

            fn.remove(m)
        """
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat: Tensor, u: Tensor, target_sigma: Tensor
                             ) -> Tensor:
        # a v with u = normalize(W v) and u . (W v) = target_sigma (old checkpoints)
        v = multi_dot([pinv(weight_mat.t().mm(weight_mat)), weight_mat.t(),
                       u.unsqueeze(1)]).squeeze(1)
        return v * (target_sigma / u.dot(mv(weight_mat, v)))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int, eps: float
              ) -> SpectralNorm:
        """Install spectral normalisation of ``module.<name>``; returns the hook.

        Example::

            SpectralNorm.apply(m, "weight", 1, 0, 1e-12)
        """
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `SpectralNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying spectral normalization")
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Load pre-hook that upgrades checkpoints saved before ``weight_v`` was stored (it
    solves for ``v`` from ``weight_orig``, ``weight`` and ``weight_u``).

    Example::

        m.load_state_dict(old_checkpoint)    # runs this hook
    """

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                 missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is None or version < 1:
            weight_key = prefix + fn.name
            if (version is None
                    and all(weight_key + s in state_dict for s in ("_orig", "_u", "_v"))
                    and weight_key not in state_dict):
                return
            has_missing_keys = False
            for suffix in ("_orig", "", "_u"):
                key = weight_key + suffix
                if key not in state_dict:
                    has_missing_keys = True
                    if strict:
                        missing_keys.append(key)
            if has_missing_keys:
                return
            with no_grad():
                weight_orig = state_dict[weight_key + "_orig"]
                weight = state_dict.pop(weight_key)
                sigma = (weight_orig / weight).mean()
                weight_mat = fn.reshape_weight_to_matrix(weight_orig)
                u = state_dict[weight_key + "_u"]
                state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """State-dict hook that records the spectral-norm format version in the metadata.

    Example::

        m.state_dict()._metadata[""]["spectral_norm"]     # {'weight.version': 1}
    """

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module: Module, state_dict: dict, prefix: str, local_metadata: dict
                 ) -> None:
        if "spectral_norm" not in local_metadata:
            local_metadata["spectral_norm"] = {}
        key = self.fn.name + ".version"
        if key in local_metadata["spectral_norm"]:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        local_metadata["spectral_norm"][key] = self.fn._version


T_module = TypeVar("T_module", bound=Module)


def spectral_norm(module: T_module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> T_module:
    """Divide ``module.<name>`` by its spectral norm, estimated by power iteration
    (``n_power_iterations`` steps per training forward; none in eval mode). Adds the
    parameter ``<name>_orig`` and the buffers ``<name>_u`` / ``<name>_v``. ``dim`` defaults
    to 1 for ConvTranspose modules and 0 otherwise.

    Example::

        m = nn.utils.spectral_norm(nn.Linear(20, 40))
        m.weight_orig.shape                 # lucid.Size([40, 20])
    """
    if dim is None:
        dim = 1 if isinstance(module, _ConvTransposeNd) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo ``spectral_norm``: ``module.<name>`` becomes one Parameter again.

    Example::

        nn.utils.remove_spectral_norm(m)
    """
    remove_norm_hook(module, SpectralNorm, name, "spectral_norm")
    for k, hook in module._state_dict_hooks.items():
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[k]
            break
    for k, hook in module._load_state_dict_pre_hooks.items():
        inner = getattr(hook, "hook", hook)
        if isinstance(inner, SpectralNormLoadStateDictPreHook) and inner.fn.name == name:
            del module._load_state_dict_pre_hooks[k]
            break
    return module
